"""A run's trace-structure statistics (speedtrap.validation.trace_statistics): tool calls per agent
stretch counted from the requests, the human gaps as the run written as logs has them, the cache
statistic following the cache's lifetime, and METR's halves partitioning its statistic."""

import math

import numpy as np
import pytest

from speedtrap.config import Scenario
from speedtrap.models.tallies import ACCEPTED_OUTCOMES
from speedtrap.models.workflow import simulate
from speedtrap.sessions import trace_from_result
from speedtrap.sessions.targets import trace_targets
from speedtrap.validation.trace_statistics import request_human_gaps, stretch_tool_calls, structure_statistics
from speedtrap.validation.workflow import HALVES, effort_ratio, metr_statistics


def _headline(**update: object) -> Scenario:
    scenario = Scenario.from_toml("experiments/scenarios/headline.toml")
    return scenario.model_copy(update={"developers": 3, "horizon_s": 2 * scenario.workday_s, **update})


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    return simulate(_headline(), 3)


def test_requests_per_stretch_are_the_requests_sent_inside_it(run) -> None:  # type: ignore[no-untyped-def]
    """Every finished stretch's requests, counted by hand from the request table, and the tool calls
    one fewer."""
    calls = stretch_tool_calls(run)
    st = run.stretches[run.stretches["need_s"].notna()]
    req = run.requests
    by_hand = [
        int(
            (
                (req["developer"] == s.developer)
                & (req["task"] == s.task)
                & (req["attempt"] == s.attempt)
                & (req["arrival_s"] >= s.handoff_s)
                & (req["arrival_s"] < s.need_s)
            ).sum()
        )
        for s in st.itertuples()
    ]
    assert calls["requests"].tolist() == by_hand
    assert (calls["tool_calls"] == np.maximum(np.array(by_hand) - 1, 0)).all()
    assert calls["requests"].min() >= 1


def test_human_gaps_are_those_of_the_run_written_as_logs(run) -> None:  # type: ignore[no-untyped-def]
    """The cache statistic reads the gaps the exported trace has, request for request."""
    gaps = request_human_gaps(run)
    trace = trace_from_result(run)
    assert len(gaps) == len(trace)
    np.testing.assert_array_equal(gaps["cached_tokens"].to_numpy(), trace["cached_tokens"].to_numpy())
    np.testing.assert_allclose(
        gaps["human_gap_s"].to_numpy(), trace["human_gap_s"].to_numpy(), equal_nan=True
    )


def test_one_definition_for_logs_and_runs(run) -> None:  # type: ignore[no-untyped-def]
    """The run written as logs and read back gives the logs' figures the run's own: the cache share
    exactly, the tool-call share of stretches with none exactly (a stretch is a human turn to the next
    on both sides)."""
    own = structure_statistics(run)
    logs = trace_targets(trace_from_result(run), n_boot=10).set_index("statistic")["value"]
    assert logs["cached_share_after_long_gap"] == pytest.approx(
        own["cached_share_after_long_gap"], nan_ok=True
    )
    assert logs["zero_tool_call_span_share"] == pytest.approx(own["zero_tool_call_span_share"], abs=0.05)


def test_a_longer_cache_lifetime_keeps_more_after_a_pause() -> None:
    """At a 5-minute lifetime nothing a pause of 5–30 minutes left is warm; at an hour most of it is."""
    short = structure_statistics(simulate(_headline(), 1))["cached_share_after_long_gap"]
    scenario = _headline()
    long_lived = scenario.model_copy(
        update={"task_mix": scenario.task_mix.model_copy(update={"cache_ttl_s": 3600.0})}
    )
    long = structure_statistics(simulate(long_lived, 1))["cached_share_after_long_gap"]
    assert short < 0.05
    assert long > 0.5


def test_metr_halves_partition_the_statistic() -> None:
    """The log of METR's statistic on all paired tasks is the task-weighted mean of its logs on the
    two halves; the short half holds the smaller tasks."""
    trial = Scenario.from_toml("experiments/scenarios/metr.toml")
    trial = trial.model_copy(update={"developers": 4, "horizon_s": 4 * trial.workday_s})
    ai, manual = simulate(trial, 2), simulate(trial.with_backend("manual"), 2)
    stats = metr_statistics(ai, manual)
    accepted = set(ACCEPTED_OUTCOMES)
    both = ai.tasks.merge(manual.tasks, on=["developer", "task"], suffixes=("_ai", "_m"))
    both = both[both["outcome_ai"].isin(accepted) & both["outcome_m"].isin(accepted)]
    both = both[(both["human_s_ai"] > 0) & (both["human_s_m"] > 0)]
    median = both["effort_s_ai"].median()
    n_short = int((both["effort_s_ai"] <= median).sum())
    n_long = len(both) - n_short
    assert n_short > 0 and n_long > 0
    combined = (
        n_short * math.log(stats["ai_vs_manual_time_ratio_short_half"])
        + n_long * math.log(stats["ai_vs_manual_time_ratio_long_half"])
    ) / (n_short + n_long)
    assert combined == pytest.approx(math.log(stats["ai_vs_manual_time_ratio"]))
    assert set(HALVES) == {"short", "long"}
    with pytest.raises(ValueError, match="half must be"):
        effort_ratio(ai, manual, "middle")
