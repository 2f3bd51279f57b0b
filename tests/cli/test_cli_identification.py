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


def test_study_holdout_reports_each_refit_without_a_study(tmp_path: Path) -> None:
    """``--study-holdout`` prints the final check's leave-one-study-out table and, beside it, each
    calibration refitted without a study (``leave-out/<study>/refit_prediction.csv``), with the count
    of studies a calibration that never saw them predicts."""
    import shutil

    from speedtrap.experiments.calibration_outputs import REFIT_FILE

    root = Path(__file__).resolve().parents[2]
    shutil.copy(root / "experiments" / "calibration" / "check.csv", tmp_path / "check.csv")
    alone = runner.invoke(app, ["validate", "workflow", "--study-holdout", "--calibration", str(tmp_path)])
    assert alone.exit_code == 0, alone.output
    assert "No study has been refitted without" in alone.output
    columns = ["study", "target", "statistic", "members", "published", "predicted"]
    bounds = ["member_low", "member_high", "accept_low", "accept_high", "predicted_within"]
    for slug, study, within in (("a", "Study A", [True, True]), ("b", "Study B", [True, False])):
        (tmp_path / "leave-out" / slug).mkdir(parents=True)
        pd.DataFrame(
            [
                dict(
                    zip(
                        columns + bounds,
                        [study, f"{slug}{k}", "x", 9, 1.0, 1.1, 0.9, 1.3, 0.8, 1.2, ok],
                        strict=True,
                    )
                )
                for k, ok in enumerate(within)
            ]
        ).to_csv(tmp_path / "leave-out" / slug / REFIT_FILE, index=False)
    printed = runner.invoke(app, ["validate", "workflow", "--study-holdout", "--calibration", str(tmp_path)])
    assert printed.exit_code == 0, printed.output
    assert "Refitted without each study" in printed.output
    assert "Studies predicted by a calibration that never saw them: 1 of 2" in printed.output
    assert "Study A: predicted; Study B: not predicted" in printed.output
    payload = json.loads(
        runner.invoke(
            app, ["validate", "workflow", "--study-holdout", "--calibration", str(tmp_path), "--json"]
        ).output
    )
    assert [r["target"] for r in payload["refits"]] == ["a0", "a1", "b0", "b1"]
    assert payload["studies"], "the final check's table is still given"
