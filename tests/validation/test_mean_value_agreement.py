"""The mean-value model against the simulation, in the settings where the model's assumptions
hold (seeded replications, |simulation mean − model| ≤ 4 standard errors of the mean).

Settings: no more developers than the backend has replicas (every request then has a replica's
own-stream slots to itself: no queue, a decode batch of 1 + background streams), one agent session
at a time, and a horizon long against the escaped-defect delay. The model is the steady state;
a run starts with no escaped defect in flight and stops at its horizon H, so it misses the reworks
of defects that surface after H — about escape_delay_s / H of them
(:func:`test_a_short_horizon_misses_reworks` shows the size of that difference). With a 1 h delay
and a 20-day horizon the miss is 0.2 %, far inside the tolerances.

Categories that differ systematically, and why (see ``speedtrap.analysis.mean_value``): the
fixing share and tasks per day over short horizons (above); and, at very high rework loads (a
third of the developer's time and more), switching by a few percent, because not every chain of
reworks interrupting reworks is followed. Neither applies in these settings. A difference not yet
explained: in three of the seven slow settings the watched time-to-first-token share (about 0.4% of
the day) is 1.2–1.9% above the model's, beyond 4 standard errors (:data:`TTFT_MISS`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis import expected_task_time
from speedtrap.analysis.mean_value import ANALYTIC_RULES
from speedtrap.config import Scenario
from speedtrap.models import simulate_summary

UNCONTENDED = {
    "developers": 4,  # = the presets' replicas: no queueing, no shared batches
    "horizon_s": 20 * 28_800.0,
    "developer.fixing.escape_delay_s": 3_600.0,
}
KEYS = (
    "tasks_per_dev_day",
    "share_prompting",
    "share_waiting_ttft",
    "share_waiting_generation",
    "share_waiting_tool",
    "waiting_share",
    "share_reviewing",
    "share_fixing",
    "share_switching",
    "away_share",
    "usd_per_task",
    "ok_share",
    "escaped_share",
)


def headline(backend: str = "gpu-batched") -> Scenario:
    """The defaults under the rules the analytic model follows (its scope)."""
    return Scenario().with_overrides(ANALYTIC_RULES).with_backend(backend)


def replications(scenario: Scenario, seeds: range) -> pd.DataFrame:
    rows = []
    for seed in seeds:
        summary = simulate_summary(scenario, seed)
        summary["away_share"] = summary["share_other_work"] + summary["share_idle"]
        # The model's steady state counts every accepted task, since every escaped defect is
        # reworked in the end; the simulation's completed tasks exclude those whose rework the
        # horizon cut off, so compare with its accepted tasks.
        summary["tasks_per_dev_day"] = summary["accepted_per_dev_day"]
        rows.append(summary)
    return pd.DataFrame(rows)


def model_values(scenario: Scenario) -> dict[str, float]:
    values = expected_task_time(scenario).summary()
    values["away_share"] = values["share_other_work"] + values["share_idle"]
    return values


def assert_agrees(scenario: Scenario, sim: pd.DataFrame, keys: tuple[str, ...] = KEYS) -> None:
    """Every key's simulation mean over the replications ``sim`` within 4 standard errors of the model."""
    model = model_values(scenario)
    r = len(sim)
    failures = []
    for key in keys:
        mean = float(sim[key].mean())
        se = float(sim[key].std(ddof=1)) / math.sqrt(r)
        if not abs(mean - model[key]) <= 4.0 * se:
            failures.append(f"{key}: simulation {mean:.6g} ± {se:.2g} (SE, R = {r}), model {model[key]:.6g}")
    assert not failures, "\n".join(failures)


@pytest.mark.slow  # ten seeded replications of a developer population: about 10 s (make test-slow)
def test_model_agrees_with_the_simulation_uncontended() -> None:
    scenario = headline().with_overrides(UNCONTENDED)
    # The watched time-to-first-token share is the known miss of TTFT_MISS here too since failure
    # follows the success curve (seeds 0–9: simulation 0.003669 ± 2.2e-05, model 0.003578, +2.5%,
    # 4.1 SE), checked by test_watched_ttft_share_is_a_known_miss_uncontended.
    keys = tuple(k for k in KEYS if k != "share_waiting_ttft")
    assert_agrees(scenario, replications(scenario, range(10)), keys)


@pytest.mark.slow  # the same replications: about 10 s (make test-slow)
@pytest.mark.xfail(strict=True, reason="measured: watched TTFT share 2.5% above the model (4.1 SE)")
def test_watched_ttft_share_is_a_known_miss_uncontended() -> None:
    scenario = headline().with_overrides(UNCONTENDED)
    assert_agrees(scenario, replications(scenario, range(10)), ("share_waiting_ttft",))


def test_a_short_horizon_misses_reworks() -> None:
    # One working day with defects surfacing 8 h (mean) after their task: about a third of the
    # steady state's reworks never surface within the run, so the simulation shows less fixing
    # and more tasks per day than the steady-state model.
    scenario = headline().with_overrides({"developers": 4, "horizon_s": 28_800.0})
    sim = replications(scenario, range(10))
    model = model_values(scenario)
    se = sim["share_fixing"].std(ddof=1) / math.sqrt(len(sim))
    assert sim["share_fixing"].mean() < model["share_fixing"] - 4.0 * se
    fixing = scenario.developer.fixing
    rework_share = model["escaped_share"] * fixing.rework_multiplier * fixing.hand_fix_s.mean
    rework_share /= expected_task_time(scenario).total_s
    assert model["share_fixing"] - sim["share_fixing"].mean() < rework_share  # only reworks are missing


SETTINGS = [
    ("gpu-batched", {}),
    ("gpu-fast", {}),
    ("wafer-distilled", {}),
    ("gpu-batched", {"developer.review.detect_prob": 1.0}),
    ("gpu-batched", {"developer.attention.flow_threshold_s": math.inf}),
    (
        "gpu-batched",
        {
            "developer.attention.flow_threshold_s": 60.0,
            "developer.checkin_every_turns": 5,
            "developer.attention.resumption_random": False,
        },
    ),
    (
        "gpu-batched",
        {
            "developer.fixing.hand_fix_prob": 0.0,
            "developer.fixing.max_repair_sessions": 3,
            "developer.review.detect_prob": 0.3,
            "task_mix.cache_ttl_s": 60.0,
        },
    ),
]
TTFT_MISS = {0, 1, 3}
"""Settings (indices of SETTINGS) where the simulation's watched time-to-first-token share exceeds
the model's by more than 4 standard errors (measured with seeds 100–129 on the presets of the
2026-11-27 serving fit: +1.9% (5.7 SE), +1.6% (5.5 SE), +1.2% (5.9 SE); setting 6, a miss on the
presets before, is +1.7% at 3.8 SE, inside the tolerance). In the first setting the mean TTFT per request was
0.3% above the model's (seeds 100–105; warm turns within 0.05%), and counting N rather than N − 1
decode steps in the pool left the share unchanged, so the difference lies mostly in which TTFTs the
developer watches. A known miss, checked by
:func:`test_watched_ttft_share_is_a_known_miss_in_some_settings`."""
_RUNS: dict[str, pd.DataFrame] = {}  # replications by scenario, shared by the two slow tests


def slow_setting(index: int) -> tuple[Scenario, tuple[str, ...], pd.DataFrame]:
    """Setting ``index`` of SETTINGS: its scenario, the keys it checks and its 30 replications."""
    backend, overrides = SETTINGS[index]
    scenario = headline(backend).with_overrides({**UNCONTENDED, **overrides})
    keys = KEYS
    if overrides.get("developer.attention.flow_threshold_s") == math.inf:
        # the developer leaves only for reworks: time away is ~1e-5 of the day and its standard
        # error can be 0 (no such moment in a run)
        keys = tuple(k for k in KEYS if k != "away_share")
    key = scenario.model_dump_json()
    if key not in _RUNS:
        _RUNS[key] = replications(scenario, range(100, 130))
    return scenario, keys, _RUNS[key]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(SETTINGS)))
def test_model_agrees_with_the_simulation_in_many_settings(index: int) -> None:
    scenario, keys, sim = slow_setting(index)
    if index in TTFT_MISS:
        keys = tuple(k for k in keys if k != "share_waiting_ttft")
    assert_agrees(scenario, sim, keys)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="measured: watched TTFT share 1.2–1.9% above the model (5.5–5.9 SE)")
@pytest.mark.parametrize("index", sorted(TTFT_MISS))
def test_watched_ttft_share_is_a_known_miss_in_some_settings(index: int) -> None:
    scenario, _, sim = slow_setting(index)
    assert_agrees(scenario, sim, ("share_waiting_ttft",))


def test_uncontended_setting_has_no_queue() -> None:
    # the premise of the comparison: no request waits for a slot
    scenario = headline().with_overrides({**UNCONTENDED, "horizon_s": 28_800.0})
    assert simulate_summary(scenario, 0)["mean_queue_wait_s"] == 0.0
    assert np.isclose(model_values(scenario)["mean_queue_wait_s"], 0.0)
