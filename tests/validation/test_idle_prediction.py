"""scripts/idle_prediction.py: the ensemble's declared prediction of METR's idle share of task time
(docs/heldout_studies.md, "A declared prediction: idle time")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("idle_prediction", ROOT / "scripts" / "idle_prediction.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_prediction_is_each_members_idle_share_of_task_time_and_lines_up_with_a_headline_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    headline = pd.DataFrame(
        {
            "member": [0, 1, 2],
            script.HEADLINE_IDLE: [0.05, 0.30, 0.60],
            script.AI_NET: [120.0, -10.0, -200.0],
        }
    )
    headline.to_csv(tmp_path / "members.csv", index=False)
    per_member = script.main(["--members", "3", "--seeds", "1", "--decisions", str(tmp_path)])
    out = " ".join(capsys.readouterr().out.split())
    assert list(per_member.index) == [0, 1, 2]
    assert ((per_member["of_the_day"] <= per_member["of_task_time"]) & (per_member["of_task_time"] < 1)).all()
    assert "of task time (the day less other work): mean" in out and "central 95%" in out
    assert "Against the headline (3 members of" in out and "Spearman's rho" in out
    with pytest.raises(SystemExit, match="no such file"):
        script.main(["--members", "1", "--seeds", "1", "--decisions", str(tmp_path / "missing")])
