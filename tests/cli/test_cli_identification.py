"""``speedtrap validate workflow --identification``: each parameter's span over the ensemble."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from speedtrap.cli import app

runner = CliRunner()


def test_identification_reports_each_parameters_span_of_a_given_ensemble(tmp_path: Path) -> None:
    ensemble = tmp_path / "ensemble.csv"
    pd.DataFrame(
        {
            "member": [0, 1, 2],
            "developer.attention.patience_s.median": [10.0, 60.0, 600.0],  # all of 10–600 s
            "developer.review.detect_prob": [0.5, 0.55, 0.5],  # 0.2 of 0.45–0.7
        }
    ).to_csv(ensemble, index=False)
    result = runner.invoke(
        app, ["validate", "workflow", "--identification", "--ensemble", str(ensemble), "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    spans = {row["path"]: row["span"] for row in payload["parameters"]}
    assert payload["members"] == 3 and payload["unidentified"] == 1
    assert abs(spans["developer.attention.patience_s.median"] - 1.0) < 1e-12
    assert abs(spans["developer.review.detect_prob"] - 0.2) < 1e-9
    printed = runner.invoke(app, ["validate", "workflow", "--identification", "--ensemble", str(ensemble)])
    assert "1 of the 2 behaviour parameters span at least 80%" in printed.output
