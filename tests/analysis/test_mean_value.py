"""The mean-value model: hand-computed limits, monotonicity, break-even properties, bad inputs."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest

from speedtrap.analysis import (
    TaskTimeBreakdown,
    break_even_failure_multiplier,
    break_even_grid,
    expected_task_time,
)
from speedtrap.analysis.break_even import backends_compared
from speedtrap.analysis.mean_value import ANALYTIC_RULES, scope_problems
from speedtrap.config import Scenario
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.serving.pricing import request_cost_usd
from speedtrap.serving.replica import ReplicaPhysics

HEADLINE = Scenario().with_overrides(ANALYTIC_RULES)  # the defaults under the model's rules


def deterministic(**overrides: object) -> Scenario:
    """Every draw fixed (σ = 0): ten turns, contexts on the model's 250-token grid, no mistakes."""
    base = Scenario(
        developers=1,
        backends={
            "gpu": {
                "preset": "gpu-batched",
                "quality": {"horizon_min": 1e15, "horizon_slope": 10.0, "tool_error_prob": 0.0},
            }
        },
        task_mix={
            "sizing": "difficulty",
            "difficulties": {"only": {"share": 1.0, "turns_mean": 10.0, "human_length_s": 1800.0}},
            "turns_log_sd": 0.0,
            "initial_context_tokens": {"median": 50_000.0},
            "output_tokens": {"median": 250.0},
            "tool_result_tokens": {"median": 1_000.0},
            "tool_s": {"median": 5.0},
            "shared_prefix_tokens": 0,
        },
        developer={
            "prompt_s": {"median": 60.0},
            "checkin_every_turns": 4,
            "checkin_random": False,
            "attention": {"rule": "threshold", "other_work_prob": 0.5},
            "checkin_s": {"median": 20.0},
            "review": {"base_s": 30.0, "s_per_kilotoken": 10.0, "sigma": 0.0},
        },
    )
    return base.with_overrides(overrides)


def test_deterministic_task_matches_a_hand_computation() -> None:
    # Ten turns of input 50 000 + 1 250·k tokens, each: 1 s overhead + prefill of the uncached
    # input (all of it on turn 0, the 1 250 new tokens after), 250 tokens at the physics' rate at
    # the preset's typical batch (the agent's stream + its background streams), a 5 s tool call.
    # The developer never leaves (θ = ∞), checks in after turns 4 and 8, reviews 30 s + 10 s per
    # 1 000 output tokens.
    scenario = deterministic(**{"developer.attention.flow_threshold_s": math.inf})
    spec = scenario.backends["gpu"]
    physics = ReplicaPhysics.from_backend(spec)
    inputs = [50_000 + 1_250 * k for k in range(10)]
    uncached = [inputs[0]] + [1_250] * 9
    ttft = sum(physics.prefill_s(u) for u in uncached)
    batch = spec.background_streams_per_replica + 1
    generation = sum(250 / physics.decode_rate_tok_s(batch, float(i)) for i in inputs)
    usd = sum(
        request_cost_usd(spec.price, uncached_input_tokens=u, cached_input_tokens=i - u, output_tokens=250)
        for i, u in zip(inputs, uncached, strict=True)
    )
    result = expected_task_time(scenario)
    expected = {
        "prompting": 60.0 + 2 * 20.0,
        "waiting_ttft": ttft,
        "waiting_generation": generation,
        "waiting_tool": 10 * 5.0,
        "reviewing": 30.0 + 10.0 * 2.5,
    }
    for category, seconds in result.seconds.items():
        assert seconds == pytest.approx(expected.get(category, 0.0), rel=1e-9, abs=1e-9), category
    assert result.turns == pytest.approx(10.0)
    assert result.usd_per_task == pytest.approx(usd, rel=1e-9)
    assert result.input_tokens == pytest.approx(sum(inputs))
    assert result.cached_tokens == pytest.approx(sum(inputs[:-1]))
    assert result.tasks_per_dev_day == pytest.approx(scenario.workday_s / sum(expected.values()), rel=1e-9)


def test_deterministic_task_with_flow_breaks_matches_a_hand_computation() -> None:
    # θ = 10 s: each segment (4, 4 and 2 turns, all longer than 10 s) is waited on for 10 s, then
    # the developer is away D − 10 s and pays R(D − 10) = 750·(1 − e^(−(D − 10)/1800)) to come back.
    scenario = deterministic(**{"developer.attention.resumption_random": False})
    physics = ReplicaPhysics.from_backend(scenario.backends["gpu"])
    batch = scenario.backends["gpu"].background_streams_per_replica + 1
    inputs = [50_000 + 1_250 * k for k in range(10)]
    turn = [
        physics.prefill_s(i if k == 0 else 1_250) + 250 / physics.decode_rate_tok_s(batch, float(i)) + 5.0
        for k, i in enumerate(inputs)
    ]
    segments = [sum(turn[0:4]), sum(turn[4:8]), sum(turn[8:10])]
    assert min(segments) > 10.0
    switching = sum(750.0 * -math.expm1(-(d - 10.0) / 1800.0) for d in segments)
    away = sum(segments) - 3 * 10.0
    result = expected_task_time(scenario)
    waiting = sum(result.seconds[c] for c in ("waiting_ttft", "waiting_generation", "waiting_tool"))
    assert waiting == pytest.approx(30.0, abs=1e-6)
    # the post-check-in segments share one class, whose per-token time mixes the contexts of both
    # check-ins (turns 4 and 8) instead of telling them apart: a documented approximation
    assert result.seconds["switching"] == pytest.approx(switching, rel=1e-4)
    assert result.seconds["other_work"] + result.seconds["idle"] == pytest.approx(away, rel=1e-6)
    assert result.seconds["other_work"] == pytest.approx(result.seconds["idle"])  # other_work_prob 0.5
    # the first 10 s of each segment, phase by phase (a turn lasts about 9 s: the window also
    # holds the start of the second turn)
    phases = {"waiting_ttft": 0.0, "waiting_generation": 0.0, "waiting_tool": 0.0}
    for first, last in ((0, 4), (4, 8), (8, 10)):
        t = 0.0
        for k in range(first, last):
            uncached = inputs[k] if k == 0 else 1_250
            for key, length in (
                ("waiting_ttft", physics.prefill_s(uncached)),
                ("waiting_generation", 250 / physics.decode_rate_tok_s(batch, float(inputs[k]))),
                ("waiting_tool", 5.0),
            ):
                phases[key] += min(max(10.0 - t, 0.0), length)
                t += length
    for key, seconds in phases.items():
        assert result.seconds[key] == pytest.approx(seconds, abs=1e-3), key


def test_breakdown_adds_up() -> None:
    result = expected_task_time(HEADLINE)
    assert isinstance(result, TaskTimeBreakdown)
    assert set(result.seconds) == set(LEDGER_CATEGORIES)
    assert all(s >= 0.0 for s in result.seconds.values())
    assert sum(result.shares().values()) == pytest.approx(1.0)
    assert result.total_s == pytest.approx(sum(result.seconds.values()))
    assert result.tasks_per_dev_day == pytest.approx(HEADLINE.workday_s / result.total_s)
    assert result.seconds["waiting_queue"] == 0.0
    assert result.ok_share + result.fixed_share + result.escaped_share == pytest.approx(1.0)
    summary = result.summary()
    assert summary["waiting_share"] == pytest.approx(result.waiting_s / result.total_s)
    assert summary["usd_per_dev_day"] == pytest.approx(result.usd_per_task * result.tasks_per_dev_day)


def test_faster_decoding_never_costs_time() -> None:
    backend = HEADLINE.backends["gpu-batched"]
    results = [
        expected_task_time(HEADLINE, backend.with_overrides({"decode_speedup": s}))
        for s in (0.5, 1.0, 2.5, 15.0)
    ]
    totals = [r.total_s for r in results]
    generation = [r.seconds["waiting_generation"] for r in results]
    assert all(a > b for a, b in itertools.pairwise(totals))
    assert all(a > b for a, b in itertools.pairwise(generation))
    # the work does not depend on the decode rate
    assert results[0].turns == pytest.approx(results[-1].turns)
    assert results[0].output_tokens == pytest.approx(results[-1].output_tokens)


def test_more_failures_never_more_tasks_or_cheaper_tasks() -> None:
    backend = HEADLINE.backends["gpu-batched"]
    results = [
        expected_task_time(HEADLINE, backend.with_overrides({"quality.failure_multiplier": m}))
        for m in (0.0, 0.5, 1.0, 1.5, 3.0)
    ]
    tasks = [r.tasks_per_dev_day for r in results]
    usd = [r.usd_per_task for r in results]
    fixing = [r.seconds["fixing"] for r in results]
    assert all(a > b for a, b in itertools.pairwise(tasks))
    assert all(a < b for a, b in itertools.pairwise(usd))
    assert all(a < b for a, b in itertools.pairwise(fixing))


def test_no_failures_means_no_fixing() -> None:
    backend = HEADLINE.backends["gpu-batched"].with_overrides({"quality.failure_multiplier": 0.0})
    result = expected_task_time(HEADLINE, backend)
    assert result.seconds["fixing"] == 0.0
    assert result.ok_share == 1.0
    assert result.escaped_share == 0.0
    assert result.sessions == 1.0


def test_certain_detection_means_no_escapes_and_no_rework() -> None:
    result = expected_task_time(HEADLINE.with_overrides({"developer.review.detect_prob": 1.0}))
    assert result.escaped_share == 0.0
    fixing = HEADLINE.developer.fixing
    rework = expected_task_time(HEADLINE).seconds["fixing"] - result.seconds["fixing"]
    escapes = expected_task_time(HEADLINE).escaped_share
    # the rework of escaped defects (3× a mean hand fix each) is part of the difference
    assert rework > 0.5 * escapes * fixing.rework_multiplier * fixing.hand_fix_s.mean


def test_the_flow_threshold_decides_who_waits() -> None:
    never_leaves = expected_task_time(
        HEADLINE.with_overrides({"developer.attention.flow_threshold_s": math.inf})
    )
    leaves_at_once = expected_task_time(
        HEADLINE.with_overrides({"developer.attention.flow_threshold_s": 0.0})
    )
    assert never_leaves.seconds["other_work"] + never_leaves.seconds["idle"] < 1.0  # only around reworks
    assert leaves_at_once.waiting_s == 0.0
    assert never_leaves.waiting_s > 20 * expected_task_time(HEADLINE).waiting_s
    assert leaves_at_once.seconds["switching"] > expected_task_time(HEADLINE).seconds["switching"]


def test_break_even_is_one_without_a_speed_up() -> None:
    assert break_even_failure_multiplier(HEADLINE, speedup=1.0) == 1.0
    assert break_even_failure_multiplier(HEADLINE, speedup=1.0, metric="usd_per_task") == 1.0


def test_break_even_grows_with_the_speed_up() -> None:
    values = [break_even_failure_multiplier(HEADLINE, speedup=s, xtol=1e-3) for s in (1.5, 3.0, 10.0)]
    assert 1.0 < values[0] < values[1] < values[2] < math.inf


def test_at_the_break_even_the_metrics_are_equal() -> None:
    for metric, speedup, price in (("tasks_per_dev_day", 2.5, 1.0), ("usd_per_task", 15.0, 1.0)):
        m_star = break_even_failure_multiplier(
            HEADLINE, speedup=speedup, price_multiplier=price, metric=metric
        )
        assert 1.0 < m_star < math.inf
        base, fast = backends_compared(HEADLINE, None, None, speedup, price)
        fast = fast.with_overrides({"quality.failure_multiplier": m_star})
        baseline = expected_task_time(HEADLINE, base).summary()[metric]
        at_m_star = expected_task_time(HEADLINE, fast).summary()[metric]
        assert at_m_star == pytest.approx(baseline, rel=1e-5)
        worse = expected_task_time(
            HEADLINE, fast.with_overrides({"quality.failure_multiplier": 1.1 * m_star})
        )
        better_for_base = (
            worse.summary()[metric] < baseline
            if metric == "tasks_per_dev_day"
            else (worse.summary()[metric] > baseline)
        )
        assert better_for_base


def test_price_changes_only_the_cost_break_even() -> None:
    tasks = break_even_failure_multiplier(HEADLINE, speedup=2.5, price_multiplier=6.0, xtol=1e-5)
    assert tasks == pytest.approx(break_even_failure_multiplier(HEADLINE, speedup=2.5, xtol=1e-5), rel=1e-4)
    # six times the price for 2.5× the decode speed: dearer per task even with no mistakes at all
    assert (
        break_even_failure_multiplier(HEADLINE, speedup=2.5, price_multiplier=6.0, metric="usd_per_task")
        == 0.0
    )


def test_break_even_below_one_when_the_fast_backend_must_err_less() -> None:
    m_star = break_even_failure_multiplier(HEADLINE, speedup=2.0, price_multiplier=1.2, metric="usd_per_task")
    assert 0.0 < m_star < 1.0


def test_break_even_without_failures_is_all_or_nothing() -> None:
    data = HEADLINE.model_dump(mode="python")
    # A horizon far beyond every task: the failure probability rounds to 0 (nothing is clipped).
    data["backends"]["gpu-batched"]["quality"].update(horizon_min=1e15, horizon_slope=10.0)
    flawless = Scenario.model_validate(data)
    assert break_even_failure_multiplier(flawless, speedup=2.0) == math.inf
    assert break_even_failure_multiplier(flawless, speedup=0.5) == 0.0


def test_break_even_grid_is_tidy() -> None:
    grid = break_even_grid(
        HEADLINE, speedups=[1.0, 3.0], price_multipliers=[1.0, 2.0], metrics=["usd_per_task"]
    )
    assert isinstance(grid, pd.DataFrame)
    assert list(grid.columns) == [
        "speedup",
        "price_multiplier",
        "metric",
        "m_star",
        "baseline_value",
        "fast_value",
    ]
    assert len(grid) == 4
    one = grid[(grid.speedup == 1.0) & (grid.price_multiplier == 1.0)].iloc[0]
    assert one.m_star == 1.0 and one.fast_value == pytest.approx(one.baseline_value)
    doubled = grid[(grid.speedup == 1.0) & (grid.price_multiplier == 2.0)].iloc[0]
    assert doubled.fast_value == pytest.approx(2.0 * doubled.baseline_value, rel=1e-9)


def test_the_backend_can_be_named_or_given() -> None:
    by_preset = expected_task_time(HEADLINE, "wafer-distilled")
    assert by_preset.backend == "wafer-distilled"
    fast_tier = expected_task_time(HEADLINE.with_backend("gpu-fast"))
    assert fast_tier.tier == "fast"
    assert fast_tier.usd_per_task > 5.0 * expected_task_time(HEADLINE).usd_per_task  # six times the price
    assert fast_tier.mean_decode_tok_s > 2.0 * expected_task_time(HEADLINE).mean_decode_tok_s


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"developer.attention.max_parallel_sessions": 2}, "one agent session at a time"),
        ({"backends.gpu-batched.quality.tool_error_prob": 1.0}, "no session ever ends"),
    ],
)
def test_out_of_scope_inputs_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expected_task_time(HEADLINE.with_overrides(overrides))


def test_the_calibrated_rules_are_outside_the_scope_and_named() -> None:
    problems = scope_problems(Scenario())
    assert any("task_mix.sizing" in p for p in problems)
    assert any("developer.attention.rule" in p for p in problems)
    assert any("task_mix.shared_prefix_tokens" in p for p in problems)
    with pytest.raises(ValueError, match=r"outside the analytic model's scope: task_mix\.sizing"):
        expected_task_time(Scenario())
    assert scope_problems(HEADLINE) == []
    shorter = HEADLINE.with_overrides({"backends.gpu-batched.quality.autonomy": 0.5})
    assert scope_problems(shorter) == [
        "backends.gpu-batched.quality.autonomy must be 1 (agent stretches scaled per backend are not covered)"
    ]
    with pytest.raises(ValueError, match=r"quality\.autonomy must be 1"):
        expected_task_time(shorter)
    with pytest.raises(ValueError, match="policy 'manual'"):
        expected_task_time(
            Scenario().with_overrides({**ANALYTIC_RULES, "task_mix.sizing": "effort"}).with_backend("manual")
        )


def test_bad_arguments_are_refused() -> None:
    two = Scenario(
        backends={"a": "gpu-batched", "b": "wafer-distilled"}, policy={"kind": "always", "backend": "a"}
    ).with_overrides(ANALYTIC_RULES)
    assert expected_task_time(two).backend == "a"
    routed = Scenario(
        backends={"a": "gpu-batched", "b": "wafer-distilled"},
        policy={"kind": "by_difficulty", "routes": {"easy": "b", "medium": "a", "hard": "a"}},
    ).with_overrides(ANALYTIC_RULES)
    with pytest.raises(ValueError, match="several backends"):
        expected_task_time(routed)
    assert expected_task_time(routed, "b").backend == "b"
    with pytest.raises(ValueError, match="neither a backend"):
        expected_task_time(HEADLINE, "no-such-backend")
    with pytest.raises(ValueError, match="speedup"):
        break_even_failure_multiplier(HEADLINE, speedup=0.0)
    with pytest.raises(ValueError, match="price_multiplier"):
        break_even_failure_multiplier(HEADLINE, speedup=2.0, price_multiplier=-1.0)
    with pytest.raises(ValueError, match="unknown metric"):
        break_even_failure_multiplier(HEADLINE, speedup=2.0, metric="joy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="m_max"):
        break_even_failure_multiplier(HEADLINE, speedup=2.0, m_max=0.5)
