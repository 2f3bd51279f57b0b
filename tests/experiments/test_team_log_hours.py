"""The log-hours curve (experiments/team_log_hours.py): what the README and docs/sessions.md state is
the committed CSV, drawn on the stored ensemble, and the script runs (its quick size, slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.analysis.intervals import MIN_MEMBERS
from speedtrap.experiments.ensemble import default_ensemble_path

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "docs" / "team_log_hours.csv"
COLUMNS = ["fraction", "hours", "kept", "of", "behaviour_low", "behaviour_high", "width"]


def _curve() -> pd.DataFrame:
    return pd.read_csv(CSV)


def test_the_curve_is_drawn_on_the_stored_ensemble() -> None:
    curve = _curve()
    members = len(pd.read_csv(default_ensemble_path()))
    assert set(COLUMNS) <= set(curve.columns)
    assert (curve["of"] == members).all()  # regenerate the curve when the ensemble changes
    assert (curve["kept"] <= curve["of"]).all()
    # an interval where enough members are kept, none below (compare's "too few members (n)")
    enough = curve["kept"] >= MIN_MEMBERS
    assert (curve.loc[enough, "width"] > 0).all() and curve.loc[~enough, "width"].isna().all()
    assert curve.loc[enough, "width"].to_numpy() == pytest.approx(
        (curve.loc[enough, "behaviour_high"] - curve.loc[enough, "behaviour_low"]).to_numpy()
    )


def test_the_readme_and_the_walkthrough_state_the_curve() -> None:
    curve = _curve().set_index("fraction")
    prior, full, half = curve.loc[0.0], curve.loc[1.0], curve.loc[0.5]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sessions = (ROOT / "docs" / "sessions.md").read_text(encoding="utf-8")
    interval = f"{prior['behaviour_low']:.2f} to +{prior['behaviour_high']:.2f}".replace("-", "−")
    for text in (readme, sessions):
        assert interval in text
        assert f"{prior['width']:.2f}" in text and f"{half['width']:.2f}" in text
        assert (
            f"{int(half['kept'])} of the {int(half['of'])}" in text or f"{int(half['kept'])} are kept" in text
        )
    assert f"all {full['hours']:.2f} h" in readme
    if full["kept"] < MIN_MEMBERS:
        assert f"all {full['hours']:.2f} h keep {int(full['kept'])}, too few for an interval" in readme
    assert f"{half['width'] / prior['width']:.2f}×" in readme


@pytest.mark.slow
def test_the_quick_curve_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "experiments" / "team_log_hours.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    curve = pd.read_csv(tmp_path / "team_log_hours.csv")
    assert curve["fraction"].tolist() == [0.0, 0.25, 1.0]
    enough = curve["kept"] >= MIN_MEMBERS
    assert (curve["kept"] <= curve["of"]).all() and (curve.loc[enough, "width"] > 0).all()
    assert (tmp_path / "figures" / "team_log_hours.png").stat().st_size > 0
