"""History matching through the experiment engine: one parameter point on both calibration
scenarios, stored and resumable waves, the executors, the quick script end to end, and the
ensemble file."""

from __future__ import annotations

import dataclasses
import json
import math
import runpy
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.intervals import MIN_MEMBERS
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.calibration import (
    calibration_setup,
    carrier_scenario,
    run_history_matching,
    workflow_statistics,
)
from speedtrap.experiments.calibration_outputs import (
    ENSEMBLE_AIM,
    calibration_finding,
    stored_members,
    write_calibration,
)
from speedtrap.experiments.ensemble import load_ensemble, write_ensemble
from speedtrap.experiments.share_sensitivity import load_calibration_runs
from speedtrap.models.workflow import simulate
from speedtrap.validation.parameters import calibration_targets, load_parameters, scenario_value
from speedtrap.validation.workflow import HEADLINE_SHARES, accepted_range, default_scenarios, load_targets

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "experiments" / "calibrate.py"
PATIENCE = "developer.attention.patience_s.median"
DELEGATED = "developer.delegated_fraction"
HORIZON = "backends.sonnet-2025.quality.horizon_min"


def tiny(developers: int = 2, days: float = 0.5) -> dict[str, Scenario]:
    return {
        name: s.with_overrides({"developers": developers, "horizon_s": days * s.workday_s})
        for name, s in default_scenarios(ROOT).items()
    }


def test_one_point_reaches_each_scenario_it_applies_to() -> None:
    scenarios = tiny()
    setup = calibration_setup(scenarios)
    carrier = setup.carrier
    for p in setup.parameters:  # every parameter path exists in the carrier
        scenario_value(carrier, p.name)
    point = carrier.with_overrides({PATIENCE: 25.0, DELEGATED: 0.3, HORIZON: 45.0})
    both = setup.model.scenarios(point)
    assert scenario_value(both["headline"], PATIENCE) == 25.0 == scenario_value(both["metr"], PATIENCE)
    assert scenario_value(both["metr"], DELEGATED) == 0.3
    assert scenario_value(both["headline"], DELEGATED) == 1.0  # metr only: the headline keeps its own
    assert scenario_value(both["metr"], HORIZON) == 45.0
    assert "sonnet-2025" not in both["headline"].backends
    assert both["headline"].policy == scenarios["headline"].policy and both["metr"].name == "metr"
    assert carrier_scenario(scenarios).name == "calibration"


def test_workflow_statistics_returns_every_target_statistic() -> None:
    scenarios = tiny(developers=2, days=1.0)
    stats = workflow_statistics(scenarios["headline"], scenarios["metr"], seed=3)
    assert set(load_targets()["statistic"]) <= set(stats)
    assert all(isinstance(v, float) for v in stats.values())
    assert math.isfinite(stats["agent_stretch_median"]) and math.isfinite(stats["manual_task_time_median"])
    # The carrier holds every varied parameter at its range's low end (the scenarios' own values of
    # those never reach a run), so its own point runs the scenarios with those values.
    setup = calibration_setup(scenarios)
    low = workflow_statistics(setup.unvaried("headline"), setup.unvaried("metr"), seed=3)
    assert setup.model(setup.carrier, 3) == low
    table = load_parameters()
    first = table.iloc[0]
    assert scenario_value(setup.unvaried("metr"), str(first.path)) == pytest.approx(float(first.low))


def test_the_identity_ignores_the_scenarios_values_of_varied_parameters() -> None:
    """A scenario file may hold a calibrated member's values: the identity (and the carrier the run
    stores see) change with what the calibration keeps fixed, not with what it varies."""
    scenarios = tiny(developers=2, days=1.0)
    setup = calibration_setup(scenarios)
    table = load_parameters()
    varied = str(table.loc[table["scenarios"] == "both", "path"].iloc[0])
    moved = {
        name: s.with_overrides({varied: scenario_value(s, varied) * 1.5}) for name, s in scenarios.items()
    }
    again = calibration_setup(moved)
    assert again.identity() == setup.identity() and again.carrier == setup.carrier
    fixed = {**scenarios, "metr": scenarios["metr"].with_overrides({"developers": 3})}
    assert calibration_setup(fixed).identity() != setup.identity()


def test_the_recorded_shares_are_the_headline_runs_own() -> None:
    scenarios = tiny(developers=2, days=1.0)
    stats = workflow_statistics(scenarios["headline"], scenarios["metr"], seed=3)
    summary = simulate(scenarios["headline"], 3).summary()
    for name, key in HEADLINE_SHARES.items():
        assert stats[name] == summary[key] and 0.0 < stats[name] < 1.0


MICRO: dict[str, Any] = {
    "waves": 1,
    "points": 4,
    "check_points": 2,
    "check_replications": 2,
    "candidates": 512,
    "restarts": 0,
    "folds": 2,
    "progress": False,
}


def test_runs_are_the_same_on_every_executor_and_a_changed_input_is_refused(tmp_path: Path) -> None:
    scenarios = tiny(developers=1, days=0.25)
    serial = run_history_matching(scenarios, **MICRO, results_dir=tmp_path / "s")
    for kind in ("processes", "dask"):
        other = run_history_matching(
            scenarios, **MICRO, executor=kind, workers=2, results_dir=tmp_path / kind
        )
        pd.testing.assert_frame_equal(other.runs, serial.runs)
        pd.testing.assert_frame_equal(other.check, serial.check)
    targets = load_targets()
    targets.loc[0, "obs_sd"] *= 2
    with pytest.raises(ValueError, match=r"targets changed"):
        run_history_matching(scenarios, **MICRO, targets=targets, results_dir=tmp_path / "s")
    with pytest.raises(ValueError, match=r"settings.points changed"):
        run_history_matching(scenarios, **{**MICRO, "points": 5}, results_dir=tmp_path / "s")
    with pytest.raises(ValueError, match="check_replications ≥ 2"):
        run_history_matching(scenarios, **{**MICRO, "check_replications": 1}, results_dir=tmp_path / "x")


def test_the_final_check_grows_on_a_rerun_and_keeps_its_runs(tmp_path: Path) -> None:
    scenarios = tiny(developers=1, days=0.25)
    small = run_history_matching(scenarios, **MICRO, results_dir=tmp_path)
    design = tmp_path / "calibration" / "check1-design.csv"
    before = pd.read_csv(design)
    assert len(before) == 2 and len(small.check) == 2
    grown = run_history_matching(scenarios, **{**MICRO, "check_points": 5}, results_dir=tmp_path)
    after = pd.read_csv(design)
    assert len(after) == 5 and len(grown.check) == 5
    pd.testing.assert_frame_equal(after.iloc[:2], before)  # the points already run stay first
    names = [t.name for t in grown.setup.targets]
    pd.testing.assert_frame_equal(grown.check.iloc[:2][names], small.check[names])  # their runs reused
    unit = after.filter(like="u:").to_numpy()
    assert len(np.unique(unit.round(12), axis=0)) == 5  # no point chosen twice
    assert (grown.waves[-1].cut(unit[2:])[0]).all()  # the new ones from the last wave's candidates
    # asking for fewer reads the first points of the file (a maximin prefix)
    cut = run_history_matching(scenarios, **{**MICRO, "check_points": 3}, results_dir=tmp_path)
    assert len(cut.check) == 3 and len(pd.read_csv(design)) == 5


def test_one_command_grows_the_check_when_too_few_sets_pass(tmp_path: Path) -> None:
    scenarios = tiny(developers=1, days=0.25)
    kept = run_history_matching(
        scenarios, **MICRO, grow_check_to=5, accepted_aim=0, results_dir=tmp_path / "a"
    )
    assert len(kept.check) == 2  # enough accepted (aim 0): no growth
    grown = run_history_matching(
        scenarios, **MICRO, grow_check_to=5, accepted_aim=10**6, results_dir=tmp_path / "b"
    )
    assert len(grown.check) == 5  # too few: grown once, to 5
    # the same as a run of 2 points rerun with 5 (the README's two-step form)
    two = run_history_matching(scenarios, **MICRO, results_dir=tmp_path / "c")
    five = run_history_matching(scenarios, **{**MICRO, "check_points": 5}, results_dir=tmp_path / "c")
    assert len(two.check) == 2
    pd.testing.assert_frame_equal(grown.check, five.check)
    with pytest.raises(ValueError, match="grow_check_to must be at least check_points"):
        run_history_matching(scenarios, **MICRO, grow_check_to=1, results_dir=tmp_path / "d")


def stored_files(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns for p in directory.rglob("*") if p.is_file()}


def test_quick_script_runs_end_to_end_and_a_rerun_recomputes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = runpy.run_path(str(SCRIPT), run_name="calibrate")  # defines main without running it
    assert module["main"](["--quick", "--results-dir", str(tmp_path)]) == 0
    state = tmp_path / "calibration-quick"
    out = state / "outputs"
    for name in (
        "waves.csv",
        "emulators.csv",
        "wave1.csv",
        "wave2.csv",
        "emulator_check.csv",
        "check.csv",
        "ensemble.csv",
        "least_implausible.csv",
    ):
        assert (out / name).is_file(), name
    for figure in ("ruled_out.png", "emulator_check.png", "non_implausible_pairs.png"):
        assert (out / figure).stat().st_size > 10_000, figure
    waves = pd.read_csv(out / "waves.csv")
    assert list(waves["wave"]) == [1, 2] and (waves["ruled_out_share"].diff().dropna() >= 0).all()
    emulators = pd.read_csv(out / "emulators.csv")
    assert len(emulators) == 2 * len(calibration_targets())  # the fitted roles: held-out targets never
    assert {"q2", "coverage", "false_exclusions", "used", "obs_sd", "discrepancy_sd"} <= set(
        emulators.columns
    )
    check = pd.read_csv(out / "check.csv")
    assert len(check) == 4 and {"kept", "max_implausibility"} <= set(check.columns)
    ensemble = pd.read_csv(out / "ensemble.csv")
    assert list(ensemble.columns) == ["member", *load_parameters()["path"]]
    assert len(ensemble) == int(check["kept"].sum())
    first = capsys.readouterr().out
    assert "History matching: wave 1:" in first and "min wall (serial)" in first
    with pytest.raises(SystemExit):  # a smoke run is never kept as the calibrated ensemble
        module["main"](["--quick", "--store", "--results-dir", str(tmp_path)])
    assert "--store keeps a full calibration" in capsys.readouterr().err

    stored = stored_files(state / "wave1") | stored_files(state / "check2")
    designs = {p.name: p.read_text() for p in state.glob("*-design.csv")}
    assert set(designs) == {"wave1-design.csv", "wave2-design.csv", "check2-design.csv"}
    assert module["main"](["--quick", "--results-dir", str(tmp_path)]) == 0  # resumes: nothing to run
    assert stored_files(state / "wave1") | stored_files(state / "check2") == stored
    assert {p.name: p.read_text() for p in state.glob("*-design.csv")} == designs
    pd.testing.assert_frame_equal(pd.read_csv(out / "waves.csv"), waves)  # the same fits, the same region
    for bad in (["--points", "2"], ["--waves", "0"], ["--replications", "0"], ["--workers", "2"]):
        with pytest.raises(SystemExit):
            module["main"](["--quick", *bad, "--results-dir", str(tmp_path)])


def test_write_calibration_and_the_finding_from_a_micro_run(tmp_path: Path) -> None:
    result = run_history_matching(tiny(developers=1, days=0.25), **MICRO, results_dir=tmp_path)
    written = write_calibration(result, tmp_path / "out")
    assert {p.name for p in written} >= {"waves.csv", "wave1.csv", "parameters.csv", "ruled_out.png"}
    text = calibration_finding(result)
    assert text.startswith("History matching: wave 1: ") and "of the space ruled out" in text
    # the least implausible checked sets, least first, and what --store keeps
    least = pd.read_csv(tmp_path / "out" / "least_implausible.csv")
    check = result.check
    assert len(least) == min(ENSEMBLE_AIM, len(check))
    assert least["max_implausibility"].is_monotonic_increasing
    assert least["max_implausibility"].iloc[0] == pytest.approx(check["max_implausibility"].min())
    first = check.iloc[int(least["point"].iloc[0])]
    for p in result.setup.parameters:
        assert least[p.name].iloc[0] == pytest.approx(first[p.name])
    members, why = stored_members(result)
    assert list(members.columns) == ["member", *[p.name for p in result.setup.parameters]]
    assert len(members) == len(least) and "stand-in" in why  # fewer accepted than the 50 aimed at
    kept_none = dataclasses.replace(result, ensemble=result.ensemble.iloc[0:0])
    members, why = stored_members(kept_none)
    path0 = result.setup.parameters[0].name
    assert why.startswith("no parameter set is accepted") and members[path0].tolist() == least[path0].tolist()
    one = dataclasses.replace(result, ensemble=members.iloc[:1])  # one accepted: topped up, least first
    members, why = stored_members(one)
    assert why.startswith("1 parameter set accepted by every target, topped up with the next")
    assert len(members) == len(least)
    many = pd.concat([members.iloc[:1]] * ENSEMBLE_AIM, ignore_index=True).assign(member=range(ENSEMBLE_AIM))
    members, why = stored_members(dataclasses.replace(result, ensemble=many))
    assert why == f"the {ENSEMBLE_AIM} parameter sets every target accepts" and len(members) == ENSEMBLE_AIM
    few = many.iloc[:MIN_MEMBERS]  # at least the fewest a behavioural interval needs: kept alone
    members, why = stored_members(dataclasses.replace(result, ensemble=few))
    assert len(members) == MIN_MEMBERS and "no rejected set is added" in why
    # the recorded shares travel with the runs, and the outputs read back on their own ranges
    wave1 = pd.read_csv(tmp_path / "out" / "wave1.csv")
    for share in HEADLINE_SHARES:
        assert wave1[share].between(0.0, 1.0).all() and share in result.check.columns
    runs = load_calibration_runs(tmp_path / "out")
    assert [p.name for p in runs.parameters] == [p.name for p in result.setup.parameters]
    pd.testing.assert_series_equal(runs.outputs["headline_waiting_share"], wave1["headline_waiting_share"])
    # a store made before the shares were recorded is refused, not resumed without them
    stored = json.loads((tmp_path / "calibration" / "calibration.json").read_text())
    del stored["recorded"]
    (tmp_path / "calibration" / "calibration.json").write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="recorded changed"):
        run_history_matching(tiny(developers=1, days=0.25), **MICRO, results_dir=tmp_path)


def ensemble_frame(**columns: list[Any]) -> pd.DataFrame:
    data = {"member": [0, 1], PATIENCE: [30.0, 120.0], "developer.checkin_every_turns": [4, 9]}
    data.update(columns)
    return pd.DataFrame(data)


def test_ensemble_file_round_trip_and_checks(tmp_path: Path) -> None:
    scenarios = default_scenarios(ROOT)
    path = write_ensemble(ensemble_frame(), tmp_path / "ensemble.csv")
    members = load_ensemble(path, parameters=load_parameters(), scenario=scenarios)
    assert members == [
        {PATIENCE: 30.0, "developer.checkin_every_turns": 4.0},
        {PATIENCE: 120.0, "developer.checkin_every_turns": 9.0},
    ]
    assert (
        scenarios["metr"].with_overrides(members[1]).developer.checkin_every_turns == 9
    )  # applies as overrides
    assert load_ensemble(path, scenario=scenarios["headline"]) == members
    shuffled = ensemble_frame().iloc[::-1]
    shuffled.to_csv(tmp_path / "s.csv", index=False)
    assert load_ensemble(tmp_path / "s.csv") == members  # in member order

    def refused(frame: pd.DataFrame, message: str, **kwargs: Any) -> None:
        frame.to_csv(tmp_path / "bad.csv", index=False)
        with pytest.raises(ValueError, match=message):
            load_ensemble(tmp_path / "bad.csv", **kwargs)

    refused(ensemble_frame().drop(columns="member"), "first column must be 'member'")
    refused(ensemble_frame(member=[0, 0]), "unique whole numbers")
    refused(ensemble_frame(**{PATIENCE: [30.0, math.nan]}), "not a finite number")
    refused(ensemble_frame(**{PATIENCE: [30.0, "slow"]}), "not a finite number")
    refused(ensemble_frame().iloc[:0], "no members")
    refused(
        ensemble_frame(**{PATIENCE: [30.0, 900.0]}),
        r"outside its range \[10, 600\]",
        parameters=load_parameters(),
    )
    refused(
        ensemble_frame(**{"developer.review.detect_probability": [0.5, 0.5]}),
        "field of no scenario",
        scenario=scenarios,
    )
    refused(
        ensemble_frame(**{"developer.review.detect_prob": [0.5, 1.5]}),
        "member 1 on headline",
        scenario=scenarios,
    )
    refused(
        ensemble_frame(**{"developer.review.detect_prob": [0.5, 0.6]}),
        "not a parameter of the ranges table",
        parameters=load_parameters().iloc[:3],
    )
    with pytest.raises(FileNotFoundError, match=r"calibrate\.py"):
        load_ensemble(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="first column"):
        write_ensemble(ensemble_frame()[[PATIENCE, "member"]], tmp_path / "w.csv")


def test_a_calibration_without_one_study_records_its_statistics_unjudged_and_says_if_it_predicts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from speedtrap.experiments.calibration_outputs import refit_prediction, study_statistics
    from speedtrap.validation.workflow import load_targets

    study, targets = "TraceLab 2026", load_targets()
    left = targets[(targets["study"] == study) & (targets["role"] != "validation")]
    recorded = study_statistics(targets, study)
    assert recorded == list(left["statistic"])
    result = run_history_matching(
        tiny(developers=1, days=0.25),
        **MICRO,
        targets=targets[targets["study"] != study],
        also_record=recorded,
        results_dir=tmp_path,
    )
    assert not {t.name for t in result.setup.targets} & set(recorded)  # never fitted
    assert len(result.setup.targets) == len(calibration_targets()) - len(left)
    check = result.check
    for statistic in recorded:  # recorded for the prediction, never judged
        assert statistic in check.columns and f"se:{statistic}" in check.columns
        assert f"I:{statistic}" not in check.columns
    prediction = refit_prediction(check, targets, study)
    assert list(prediction["target"]) == list(left["id"])
    kept = check[check["kept"]]
    for row in prediction.itertuples():
        values = kept[row.statistic].dropna()
        assert row.members == len(values)
        if len(values):
            assert row.predicted == pytest.approx(values.mean())
            assert row.predicted_within == (row.accept_low <= row.predicted <= row.accept_high)
        else:
            assert not row.predicted_within
    # a check whose kept set is known: the mean of the kept rows only, judged against the range
    statistic, target = recorded[0], left.iloc[0]
    low, high = accepted_range(target)
    fake = pd.DataFrame({statistic: [low, high, 10 * high + 1.0], "kept": [True, True, False]})
    row = refit_prediction(fake, targets, study).iloc[0]
    assert row["members"] == 2 and row["predicted"] == pytest.approx((low + high) / 2)
    assert row["predicted_within"]

    module = runpy.run_path(str(SCRIPT), run_name="calibrate")
    for bad, message in (
        (["--leave-out", "No such study"], "no fitted study 'No such study'"),
        (["--leave-out", study, "--store"], "--leave-out makes a calibration to test"),
        (["--leave-out", "MPIsaac Claude Code corpus 2026"], "no fitted study"),  # held out, never fitted
    ):
        with pytest.raises(SystemExit):
            module["main"](["--quick", *bad, "--results-dir", str(tmp_path)])
        assert message in capsys.readouterr().err
