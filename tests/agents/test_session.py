"""The coding-agent Session: turns, malformed tool calls, context growth, prompt cache, compaction."""

from __future__ import annotations

import math

import pytest

from fixed_scenarios import bare_task, run, seconds, tiny
from speedtrap.agents import Session
from speedtrap.config import BACKEND_PRESETS, Scenario
from speedtrap.config.tier import success_prob
from speedtrap.models import WorkflowModel, simulate


def test_context_grows_turn_by_turn_and_the_previous_input_is_cached() -> None:
    requests = run(tiny({"horizon_s": 200.0})).requests
    first = requests[requests["task"] == 0]
    # 1000 initial tokens; each turn adds its 101 output tokens and a 10-token tool result
    assert first["input_tokens"].tolist() == [1000, 1111]
    assert first["cached_tokens"].tolist() == [0, 1000]
    # the next task starts a new conversation: nothing of it is cached
    assert requests[requests["task"] == 1]["cached_tokens"].iloc[0] == 0


def test_a_new_conversation_reads_the_shared_head_while_the_developer_kept_it_warm() -> None:
    """The first request of the next task's conversation reads ``shared_prefix_tokens`` from the cache
    (the developer's last request was within the TTL), the rest of its context is new; with the head
    longer than the context, the whole context; with a TTL shorter than the gap, nothing."""
    requests = run(tiny({"horizon_s": 200.0, "task_mix.shared_prefix_tokens": 400})).requests
    second = requests[requests["task"] == 1]
    assert second["input_tokens"].iloc[0] == 1000
    assert second["cached_tokens"].tolist()[:2] == [400, 1000]  # the head, then the conversation's own
    whole = run(tiny({"horizon_s": 200.0, "task_mix.shared_prefix_tokens": 5000})).requests
    assert whole[whole["task"] == 1]["cached_tokens"].iloc[0] == 1000
    gaps = run(tiny({"horizon_s": 200.0, "task_mix.shared_prefix_tokens": 400})).requests
    first_of_task_1 = float(gaps[gaps["task"] == 1]["arrival_s"].iloc[0])
    last_of_task_0 = float(gaps[gaps["task"] == 0]["done_s"].max())
    ttl = (first_of_task_1 - last_of_task_0) * 0.99  # expires just before the next conversation starts
    cold = run(tiny({"horizon_s": 200.0, "task_mix.shared_prefix_tokens": 400, "task_mix.cache_ttl_s": ttl}))
    assert cold.requests[cold.requests["task"] == 1]["cached_tokens"].iloc[0] == 0


def test_a_cache_living_beyond_five_minutes_bills_its_writes_at_the_one_hour_rate() -> None:
    """Same requests (every gap is shorter than either lifetime); each uncached token costs the tier's
    multiple of $10 instead of $6.25 per million."""
    short = run(tiny({"horizon_s": 200.0, "task_mix.cache_ttl_s": 300.0})).requests
    long = run(tiny({"horizon_s": 200.0, "task_mix.cache_ttl_s": 3600.0})).requests
    tokens = ["input_tokens", "cached_tokens", "output_tokens", "tier"]
    assert short[tokens].equals(long[tokens])
    uncached = (short["input_tokens"] - short["cached_tokens"]).to_numpy()
    multiple = BACKEND_PRESETS["gpu-fast"].tiers[0].price_multiplier
    extra = (long["cost_usd"] - short["cost_usd"]).to_numpy()
    assert extra == pytest.approx(uncached * (10.0 - 6.25) / 1e6 * multiple, rel=1e-12)
    assert extra.sum() > 0


def test_cache_expires_after_its_ttl() -> None:
    requests = run(tiny({"task_mix.cache_ttl_s": 4.0, "horizon_s": 100.0})).requests
    assert requests[requests["task"] == 0]["cached_tokens"].tolist() == [0, 0]  # 5 s of tool > 4 s TTL


def test_switching_tier_starts_a_cold_cache_unless_tiers_share_it() -> None:
    overrides = {
        "policy": {"kind": "interactive_fast"},
        "developer.attention.flow_threshold_s": 2.5,
        "horizon_s": 100.0,
    }
    requests = run(tiny(overrides)).requests
    first = requests[requests["task"] == 0]
    assert first["tier"].tolist() == ["fast", "standard"]  # attended, then the developer left
    assert first["cached_tokens"].tolist() == [0, 0]
    shared = run(tiny({**overrides, "task_mix.cache_per_tier": False})).requests
    assert shared[shared["task"] == 0]["cached_tokens"].tolist() == [0, 1000]


def test_agent_compacts_near_the_context_window() -> None:
    scenario = tiny(
        {
            "task_mix.initial_context_tokens.median": 150_000.0,
            "task_mix.tool_result_tokens.median": 5_000.0,
            "task_mix.compact_at_fraction": 0.76,  # 152k of the 200k window
            "horizon_s": 100.0,
        }
    )
    first = run(scenario).requests.query("task == 0")
    assert first["input_tokens"].tolist() == [150_000, 40_000]
    assert first["cached_tokens"].tolist() == [0, 0]


def test_malformed_tool_calls_cost_extra_turns_without_tool_time() -> None:
    result = run(tiny({"backends.b.quality.tool_error_prob": 0.5, "horizon_s": 3000.0}), seed=3)
    requests = result.requests.sort_values(["task", "turn"])
    tasks = result.tasks[result.tasks["outcome"] == "ok"]
    assert len(tasks) >= 10
    malformed = 0
    for task in tasks["task"]:
        turns = requests[requests["task"] == task]
        # a malformed call returns at once: the next request arrives when the last one finished
        gaps = turns["arrival_s"].to_numpy()[1:] - turns["done_s"].to_numpy()[:-1]
        bad = int((abs(gaps) < 1e-9).sum())
        assert len(turns) == 2 + bad
        malformed += bad
    assert malformed >= 5
    assert tasks["turns"].sum() == 2 * len(tasks) + malformed
    # tool time is charged only for the good turns (5 s each), all of them attended here
    good_turns = int(result.tasks["turns"].sum()) - malformed
    assert seconds(result, "waiting_tool") <= 5.0 * good_turns + 1e-6


def test_finished_sessions_leave_the_model() -> None:
    scenario = tiny({"horizon_s": 2000.0})
    model = WorkflowModel(scenario, rng=1)
    model.run_until(scenario.horizon_s)
    sessions = model.agents_by_type.get(Session)
    assert sessions is None or len(sessions) <= 1  # only the session in progress remains
    assert len(model.tasks) >= 15
    assert model.developers[0].sessions and len(model.developers[0].sessions) == 1


def test_turn_draws_do_not_depend_on_which_attempt_was_drawn_first() -> None:
    from speedtrap.agents import Task, TurnDraws

    scenario = tiny()

    def task() -> Task:
        return bare_task(5)

    a, b = task(), task()
    mix = scenario.task_mix.with_overrides({"output_tokens.sigma": 1.0, "tool_s.sigma": 1.0})
    draws_a1 = TurnDraws(a, 1, mix, scenario.developer)
    draws_a0 = TurnDraws(a, 0, mix, scenario.developer)
    draws_b0 = TurnDraws(b, 0, mix, scenario.developer)
    draws_a1.ensure(40)
    draws_a0.ensure(3)
    draws_b0.ensure(70)
    assert draws_a0.out[:3] == draws_b0.out[:3]
    assert draws_a0.tool_s[:3] == pytest.approx(draws_b0.tool_s[:3])
    assert draws_a1.out[:3] != draws_a0.out[:3]


# ---------------------------------------------------------------------------- the success curve

CURVE_SEEDS = range(4)
CURVE_SD_TOLERANCE = 4.0
"""Fixed before running: each count of wrong first sessions lies within 4 binomial standard
deviations (of the sum of the tasks' own Bernoullis) of its expectation."""


def test_failure_draw_follows_the_success_curve_at_the_delegated_length() -> None:
    """A seeded run: a first session is wrong with 1 − P(success) at its task's delegated human
    minutes, so tasks longer than the horizon fail more often than shorter ones, and the counts in
    each group match the curve within the binomial tolerance fixed above."""
    horizon_min, delegated = 40.0, 0.5
    scenario = Scenario(
        developers=3,
        horizon_s=6 * 3600.0,
        backends={
            "w": {
                "preset": "wafer-distilled",
                "quality": {
                    "horizon_min": horizon_min,
                    "horizon_slope": 0.6,
                    "acceptance_scale": 1.0,
                    "failure_multiplier": 1.0,
                },
            }
        },
        developer={"delegated_fraction": delegated},
    )
    quality = scenario.backends["w"].quality
    groups = {"short": [0.0, 0.0, 0.0, 0], "long": [0.0, 0.0, 0.0, 0]}  # wrong, expected, variance, n
    for seed in CURVE_SEEDS:
        tasks = simulate(scenario, seed).tasks
        for effort_s, wrong in zip(tasks["effort_s"], tasks["wrong_attempts"] > 0, strict=True):
            t_min = delegated * effort_s / 60.0
            p = quality.failure_prob_at(t_min)
            assert p == 1.0 - success_prob(t_min, horizon_min, 0.6)
            g = groups["long" if t_min > horizon_min else "short"]
            g[0] += float(wrong)
            g[1] += p
            g[2] += p * (1.0 - p)
            g[3] += 1
    for wrong, expected, variance, n in groups.values():
        assert n >= 20
        assert abs(wrong - expected) <= CURVE_SD_TOLERANCE * math.sqrt(variance)
    (short_wrong, _, _, short_n), (long_wrong, _, _, long_n) = groups["short"], groups["long"]
    assert long_wrong / long_n > short_wrong / short_n
