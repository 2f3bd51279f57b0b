"""The app's economics without a browser: the developer-cost field, its source, the live run's
economics (one seed, no interval) and the replicated ones (the seeds and numbers of compare)."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.value import net_value_per_dev_day
from speedtrap.app.economics import arm_values, economics_lines, replicate, runs_of, value_source
from speedtrap.app.live import LiveComparison
from speedtrap.app.settings import Settings, build_arms, dev_hour_value, load_base, settings_for
from speedtrap.cli.compare import analyse, compare_runs
from speedtrap.config import Scenario
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR, Value
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models import simulate

SMALL = Settings(developers=2, horizon_h="2", seed="3")
"""Two developers for two hours of the headline population."""


def test_the_developer_cost_field_defaults_to_the_scenarios_value_and_is_validated() -> None:
    assert Settings().usd_per_dev_hour == f"{LOADED_USD_PER_DEV_HOUR:g}" == "90.58"
    base = Value(usd_per_task=400.0)
    typed = dev_hour_value(dataclasses.replace(SMALL, usd_per_dev_hour=" 120 "), base)
    assert typed.usd_per_dev_hour == 120.0 and typed.usd_per_task == 400.0  # the rest kept
    for text, message in (
        ("abc", "'abc' is not a number"),
        ("0", "more than $0 per hour"),
        ("-5", "more than $0 per hour"),
        ("inf", "more than $0 per hour"),
    ):
        with pytest.raises(ValueError, match=re.escape(message)):
            dev_hour_value(dataclasses.replace(SMALL, usd_per_dev_hour=text), base)
    arms = build_arms(dataclasses.replace(SMALL, usd_per_dev_hour="150"))
    assert [s.value.usd_per_dev_hour for s in arms.scenarios.values()] == [150.0, 150.0]
    bad = build_arms(dataclasses.replace(SMALL, usd_per_dev_hour="lots"))
    assert bad.errors == {"usd_per_dev_hour": "'lots' is not a number"}
    own = Scenario.model_validate({"value": {"usd_per_dev_hour": 140.0}})
    assert settings_for(own, SMALL).usd_per_dev_hour == "140"


def test_the_value_source_names_the_bls_default_or_the_scenario() -> None:
    default = value_source(load_base(SMALL).value)
    assert default.startswith("default $90.58 per developer-hour") and "BLS" in default and "63.59" in default
    own = Scenario.model_validate({"value": {"usd_per_dev_hour": 140.0}}).value
    assert value_source(own) == "$140 per developer-hour from the scenario (value.usd_per_dev_hour)"


def test_the_live_runs_economics_are_one_seed_without_an_interval() -> None:
    arms = build_arms(SMALL)
    results = LiveComparison(arms.scenarios, arms.seed, chunks=1).step().results
    runs = runs_of(results, 3)
    assert list(runs["arm"]) == ["gpu-batched", "wafer-distilled"]
    a, b = (results[name].summary() for name in runs["arm"])
    base = load_base(SMALL).value
    for usd in (90.58, 200.0):
        value = dev_hour_value(dataclasses.replace(SMALL, usd_per_dev_hour=str(usd)), base)
        (got,) = arm_values(runs, value, 28800.0)
        expected = net_value_per_dev_day(  # output counts other work, in task-equivalents
            np.array([a["value_tasks_per_dev_day"]]),
            np.array([a["usd_per_dev_day"]]),
            np.array([b["value_tasks_per_dev_day"]]),
            np.array([b["usd_per_dev_day"]]),
            value=value,
            workday_s=28800.0,
        )[0]
        assert got.arm == "wafer-distilled" and got.n == 1
        assert got.net_usd_per_dev_day == pytest.approx(expected)
        assert math.isnan(got.net_ci_low) and math.isnan(got.net_ci_high)
        (line,) = economics_lines([got], "gpu-batched", usd)
        assert line.startswith(f"wafer-distilled at ${usd:g} per developer-hour: net ")
        assert "against gpu-batched (no interval from 1 value)" in line and "nan" not in line


def test_replicated_economics_are_those_of_compare_on_the_same_seeds() -> None:
    arms = build_arms(SMALL)
    assert arms.seed is not None
    runs = replicate(arms.scenarios, arms.seed, 3)
    seeds = replication_seeds(3, 3)
    assert sorted(set(runs["seed"])) == sorted(seeds) and len(runs) == 6
    first = arms.scenarios["gpu-batched"]
    (ours,) = arm_values(runs, first.value, first.workday_s)
    by_compare = compare_runs(arms.scenarios, seeds, lambda s, sd: simulate(s, sd).summary(), progress=False)
    _, (theirs,) = analyse(by_compare, arms.scenarios)
    assert ours == theirs  # the same arms, seeds and value: the same numbers, bit for bit
    assert ours.n == 3 and ours.net_ci_low <= ours.net_usd_per_dev_day <= ours.net_ci_high
    (line,) = economics_lines([ours], "gpu-batched", first.value.usd_per_dev_hour)
    assert "95% CI" in line and "only 3 replications" in line


def test_replicated_economics_under_an_ensemble_are_those_of_compare(tmp_path: Path) -> None:
    """Under an ensemble the app runs what ``compare`` runs — the same members, seeds and values —
    and keeps a behavioural parameter the user moved at the user's value."""
    from speedtrap.cli.behaviour import behaviour_runs, plan_behaviour
    from speedtrap.experiments.ensemble import load_ensemble, write_ensemble

    patience, detect = "developer.attention.patience_s.median", "developer.review.detect_prob"
    frame = pd.DataFrame(
        {
            "member": [0, 1, 2, 3, 4, 5],
            patience: [20.0, 400.0, 90.0, 45.0, 200.0, 600.0],
            detect: [0.5, 0.65, 0.6, 0.55, 0.62, 0.68],
        }
    )
    path = write_ensemble(frame, tmp_path / "ens.csv")
    members = load_ensemble(path)
    arms = build_arms(SMALL)
    assert arms.seed is not None
    runs = replicate(arms.scenarios, arms.seed, 10, members=members)
    assert sorted(set(runs["member"])) == [0, 1, 2, 4, 5] and len(runs) == 5 * 2 * 2  # K 5 × r 2 × 2 arms
    plan = plan_behaviour(arms.scenarios, 10, ensemble=path, single=False)
    theirs_runs = behaviour_runs(
        plan, replication_seeds(arms.seed, 10), lambda s, sd: simulate(s, sd).summary(), progress=False
    )
    first = arms.scenarios["gpu-batched"]
    (ours,) = arm_values(runs, first.value, first.workday_s)
    (theirs,) = arm_values(theirs_runs, first.value, first.workday_s)
    assert ours == theirs and ours.members == 5 and math.isfinite(ours.net_behaviour_low)
    (line,) = economics_lines([ours], "gpu-batched", first.value.usd_per_dev_hour)
    assert "behavioural interval over the ensemble" in line and "dominates" in line
    # a value the user set stays: every run of the replicated arms has the user's detection probability
    kept = replicate(
        arms.scenarios, arms.seed, 4, members=members, keep={a: [detect] for a in arms.scenarios}
    )
    same_seeds = replicate(arms.scenarios, arms.seed, 4, members=[{patience: m[patience]} for m in members])
    pd.testing.assert_frame_equal(kept, same_seeds)


def test_the_sliders_a_user_moved_are_kept_from_the_ensemble() -> None:
    from speedtrap.app.settings import user_set_paths

    base = load_base(SMALL)
    own = settings_for(base, SMALL)
    assert user_set_paths(own, base) == []  # the scenario's own values: the members' replace them
    moved = dataclasses.replace(own, patience_s=own.patience_s * 2)
    assert user_set_paths(moved, base) == ["developer.attention.patience_s.median"]
