"""The parameter ranges and target errors that history matching reads (src/speedtrap/validation/data/)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.validation.parameters import (
    PARAMETER_COLUMNS,
    applies_to,
    calibration_parameters,
    calibration_targets,
    check_parameter_paths,
    load_parameters,
    scenario_value,
)
from speedtrap.validation.workflow import default_scenarios, load_targets

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def scenarios():  # type: ignore[no-untyped-def]
    return default_scenarios(ROOT)


def test_every_parameter_is_a_scenario_field_with_a_sourced_range(scenarios) -> None:  # type: ignore[no-untyped-def]
    table = load_parameters()
    assert list(table.columns) == list(PARAMETER_COLUMNS)
    assert len(table) >= 15 and table["path"].is_unique
    assert (table["low"] < table["high"]).all()
    check_parameter_paths(table, scenarios)  # raises on a path that is no numeric field, or a bad end
    for row in table.itertuples():
        assert row.source.strip() and (not row.url or row.url.startswith("http"))
        for name in applies_to(row.scenarios):  # the scenario files' values lie in the ranges
            value = scenario_value(scenarios[name], row.path)
            assert row.low <= value <= row.high, (
                f"{row.path} = {value} in {name}, outside [{row.low}, {row.high}]"
            )
    parameters = calibration_parameters(table, scenarios)
    assert [p.name for p in parameters] == list(table["path"])
    integers = [p.name for p in parameters if p.integer]
    assert integers == ["developer.checkin_every_turns"]
    metr_only = set(table.loc[table["scenarios"] == "metr", "path"])
    curve = ("horizon_min", "horizon_slope", "acceptance_scale")
    assert metr_only == {
        "developer.delegated_fraction",
        "developer.reject_prob",
        *(f"backends.sonnet-2025.quality.{f}" for f in curve),
        "backends.sonnet-2025.quality.autonomy",  # the METR era's shorter agent stretches
    }
    headline_only = set(table.loc[table["scenarios"] == "headline", "path"])
    assert headline_only == {f"backends.gpu-batched.quality.{f}" for f in curve}


def test_targets_state_their_observation_error_and_discrepancy() -> None:
    table = load_targets()
    assert {"obs_sd", "discrepancy_sd", "error_note"} <= set(table.columns)
    assert (table["obs_sd"] > 0).all() and (table["discrepancy_sd"] > 0).all()
    assert (
        table["error_note"].str.contains("obs:").all()
        and table["error_note"].str.contains("discrepancy:").all()
    )
    ratio = table.set_index("id").loc["metr_time_ratio"]  # a 95% CI: sd = half-width / 1.96
    assert ratio["obs_sd"] == pytest.approx((ratio["high"] - ratio["low"]) / (2 * 1.96), abs=1e-4)
    for row in table.itertuples():  # a tolerance read as 3 sd of the discrepancy, where the note says so
        if "read as 3 sd" in row.error_note and row.tolerance_kind != "inside_interval":
            half = row.tolerance * (row.published if row.tolerance_kind == "relative" else 1.0)
            assert row.discrepancy_sd == pytest.approx(half / 3, rel=0.01), row.id
    targets = calibration_targets()
    fitted = table[table["role"] != "validation"]  # held-out targets are never fitted
    assert [t.name for t in targets] == list(fitted["statistic"])
    assert all(math.isfinite(t.variance) and t.variance > 0 for t in targets)
    # a relative tolerance is an error on the log scale: those targets' emulators are fitted there
    relative = set(fitted.loc[fitted["tolerance_kind"] == "relative", "statistic"])
    assert {t.name for t in targets if t.scale == "log"} == relative
    assert {"human_response_p90", "agent_stretch_p90"} <= relative
    with pytest.raises(ValueError, match="obs_sd"):
        calibration_targets(table.drop(columns="obs_sd"))


def write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    base = {"scale": "linear", "scenarios": "both", "source": "assumption: test", "url": "", "note": ""}
    path = tmp_path / "p.csv"
    pd.DataFrame([{**base, **r} for r in rows], columns=list(PARAMETER_COLUMNS)).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"path": "developer.review.detect_prob", "low": 0.7, "high": 0.5}], "low < high"),
        ([{"path": "developer.review.detect_prob", "low": 0.1, "high": 0.5, "scale": "cubic"}], "scale"),
        ([{"path": "developer.review.base_s", "low": 0, "high": 5, "scale": "log"}], "low > 0"),
        ([{"path": "developer.review.base_s", "low": 1, "high": 5, "scenarios": "all"}], "scenarios"),
        ([{"path": "developer.review.base_s", "low": 1, "high": 5, "source": " "}], "source"),
        ([{"path": "developer.review.base_s", "low": 1, "high": 5}] * 2, "twice"),
    ],
)
def test_bad_tables_are_refused(tmp_path: Path, rows: list[dict[str, object]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_parameters(write(tmp_path, rows))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"path": "developer.review.detect", "low": 0.1, "high": 0.5}, "unknown scenario field"),
        ({"path": "developer.review", "low": 0.1, "high": 0.5}, "not a number"),
        ({"path": "developer.review.detect_prob", "low": 0.1, "high": 1.5}, "1.5 is not a valid value"),
        ({"path": "developer.checkin_every_turns", "low": 1.5, "high": 4}, "not a valid value"),
        ({"path": "backends.sonnet-2025.quality.horizon_min", "low": 30, "high": 120}, "headline"),
    ],
)
def test_paths_are_checked_against_the_scenarios(tmp_path: Path, scenarios, row, message: str) -> None:  # type: ignore[no-untyped-def]
    table = load_parameters(write(tmp_path, [row]))
    with pytest.raises(ValueError, match=message):
        check_parameter_paths(table, scenarios)
