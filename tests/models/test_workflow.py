"""WorkflowModel: hand-computed timelines, determinism, common random numbers, garbage collection."""

from __future__ import annotations

import gc
import math
import weakref
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from fixed_scenarios import ALWAYS_WRONG_HORIZON_MIN, TURN
from fixed_scenarios import tiny as fixed_tiny
from speedtrap.config import Scenario
from speedtrap.models import LEDGER_CATEGORIES, SUMMARY_KEYS, WorkflowModel, simulate, simulate_summary
from speedtrap.models.workflow import PROGRESS_SLICES


def tiny(overrides: dict[str, Any] | None = None) -> Scenario:
    """One developer, one difficulty, two turns per session, every duration deterministic
    (the shared fixed scenario with the default rework multiplier)."""
    default_rework = Scenario().developer.fixing.rework_multiplier
    return fixed_tiny({"developer.fixing.rework_multiplier": default_rework, **(overrides or {})})


def run(scenario: Scenario, seed: int = 1) -> Any:
    model = WorkflowModel(scenario, rng=seed, speeds=dict.fromkeys(scenario.backends, TURN), trace=True)
    model.run_until(scenario.horizon_s)
    return model.result()


def ledger_of(result: Any, developer: int = 0) -> dict[str, float]:
    rows = result.ledger[result.ledger["developer"] == developer]
    return {str(c): float(s) for c, s in zip(rows["category"], rows["seconds"], strict=True)}


def expect(**seconds: float) -> dict[str, float]:
    return {c: seconds.get(c, 0.0) for c in LEDGER_CATEGORIES}


def assert_ledger(result: Any, expected: dict[str, float]) -> None:
    got = ledger_of(result)
    assert got == pytest.approx(expected, abs=1e-9)
    assert sum(got.values()) == pytest.approx(result.horizon_s, rel=1e-12)


def test_attending_developer_waits_through_every_phase() -> None:
    # Task = prompt 60 + 2 turns x (1 ttft + 2 generation + 5 tool) + review 30 = 106 s.
    result = run(tiny())
    assert_ledger(
        result,
        expect(prompting=60 + 60 + 38, waiting_ttft=4, waiting_generation=8, waiting_tool=20, reviewing=60),
    )
    tasks = result.tasks
    assert tasks["outcome"].tolist() == ["ok", "ok", "open"]
    assert tasks["start_s"].tolist() == pytest.approx([0.0, 106.0, 212.0])
    assert tasks["lead_time_s"].iloc[:2].tolist() == pytest.approx([106.0, 106.0])
    assert tasks["turns"].iloc[:2].tolist() == [2, 2]
    assert len(result.requests) == 4
    assert result.requests["output_tokens"].eq(101).all()


def test_flow_break_sends_developer_to_other_work_and_return_costs_resumption() -> None:
    result = run(tiny({"developer.attention.flow_threshold_s": 2.5}))
    # Task 1: prompt [0,60]; waits 1 s ttft + 1.5 s generation; other work [62.5,76]; the result is
    # ready at 76 after 2 turns of 8 s; returning after 13.5 s away costs 100·(1 − e^(−1.35)).
    switch = 100.0 * (1.0 - math.exp(-13.5 / 10.0))
    end_1 = 76.0 + switch + 30.0
    # Task 2: prompt [end_1, end_1 + 60], waits 2.5 s, other work until the horizon.
    other_2 = 250.0 - (end_1 + 60.0 + 2.5)
    assert_ledger(
        result,
        expect(
            prompting=120,
            waiting_ttft=2,
            waiting_generation=3,
            switching=switch,
            reviewing=30,
            other_work=13.5 + other_2,
        ),
    )
    assert result.tasks["end_s"].iloc[0] == pytest.approx(end_1)


def test_idle_instead_of_other_work_when_none_is_available() -> None:
    result = run(
        tiny({"developer.attention.flow_threshold_s": 2.5, "developer.attention.other_work_prob": 0.0})
    )
    got = ledger_of(result)
    assert got["other_work"] == 0.0
    assert got["idle"] > 13.5


def test_checkin_is_prompting_and_keeps_the_developer_in_flow() -> None:
    result = run(tiny({"developer.checkin_every_turns": 1, "horizon_s": 126.0}))
    # prompt 60, turn 8, check-in 20, turn 8, review 30 = 126 s
    assert_ledger(
        result, expect(prompting=80, waiting_ttft=2, waiting_generation=4, waiting_tool=10, reviewing=30)
    )
    assert result.tasks["outcome"].iloc[0] == "ok"


def test_caught_mistake_fixed_by_hand() -> None:
    result = run(tiny({"backends.b.quality.horizon_min": ALWAYS_WRONG_HORIZON_MIN}))
    # A wrong session runs 2 x 2 turns: prompt 60 + 32 + review 30 + hand fix 100 = 222 s.
    assert_ledger(
        result,
        expect(
            prompting=60 + 28, waiting_ttft=4, waiting_generation=8, waiting_tool=20, reviewing=30, fixing=100
        ),
    )
    first = result.tasks.iloc[0]
    assert (first["outcome"], first["fixed_by"], first["turns"], first["wrong_attempts"]) == (
        "fixed",
        "hand",
        4,
        1,
    )


def test_repair_session_then_hand_fix() -> None:
    result = run(
        tiny(
            {
                "backends.b.quality.horizon_min": ALWAYS_WRONG_HORIZON_MIN,
                "developer.fixing.hand_fix_prob": 0.0,
                "horizon_s": 320.0,
            }
        )
    )
    # prompt 60, 4 turns [60,92], review 30, diagnose 40 (fixing), repair: round(0.5·2)=1 turn x2
    # (wrong again) [162,178], its review 30 (fixing), out of repairs: hand fix 100 → ends at 308.
    assert_ledger(
        result,
        expect(
            prompting=60 + 12,
            waiting_ttft=6,
            waiting_generation=12,
            waiting_tool=30,
            reviewing=30,
            fixing=40 + 30 + 100,
        ),
    )
    first = result.tasks.iloc[0]
    assert (first["attempts"], first["wrong_attempts"], first["turns"]) == (2, 2, 6)
    assert first["end_s"] == pytest.approx(308.0)
    assert result.requests["attempt"].tolist() == [0, 0, 0, 0, 1, 1]


def test_repair_that_succeeds_counts_as_fixed_by_repair() -> None:
    scenario = tiny({"developer.fixing.hand_fix_prob": 0.0, "horizon_s": 2000.0})
    # Quality by attempt is a property of the backend, so route repairs to a flawless backend.
    scenario = Scenario.model_validate(
        {
            **scenario.model_dump(),
            "backends": {
                "bad": scenario.backends["b"].with_overrides(
                    {"quality.horizon_min": ALWAYS_WRONG_HORIZON_MIN}
                ),
                "b": scenario.backends["b"],
            },
            "policy": {"kind": "escalate", "first": "bad", "then": "b"},
        }
    )
    model = WorkflowModel(scenario, rng=1, speeds={"bad": TURN, "b": TURN})
    model.run_until(scenario.horizon_s)
    tasks = model.result().tasks
    done = tasks[tasks["outcome"] != "open"]
    assert set(done["outcome"]) == {"fixed"} and set(done["fixed_by"]) == {"repair"}
    assert set(done["backend"]) == {"bad+b"}


def test_trace_tiles_the_horizon_without_gaps_or_overlaps() -> None:
    result = run(tiny({"developer.attention.flow_threshold_s": 2.5, "horizon_s": 3000.0}))
    trace = result.trace.sort_values("start_s", kind="stable")
    assert trace["start_s"].iloc[0] == 0.0
    assert trace["end_s"].iloc[-1] == pytest.approx(3000.0)
    gaps = trace["start_s"].to_numpy()[1:] - trace["end_s"].to_numpy()[:-1]
    assert abs(gaps).max() < 1e-9


def test_same_seed_same_frames_and_different_seed_differs() -> None:
    scenario = Scenario(developers=3, horizon_s=4 * 3600.0, backends={"w": "wafer-distilled"})
    a, b, c = simulate(scenario, 7), simulate(scenario, 7), simulate(scenario, 8)
    for frame in ("ledger", "tasks", "requests", "backend_stats"):
        pd.testing.assert_frame_equal(getattr(a, frame), getattr(b, frame))
    assert not a.tasks["difficulty"].equals(c.tasks["difficulty"]) or not a.ledger.equals(c.ledger)


def test_a_run_reporting_progress_in_slices_is_the_same_run() -> None:
    """``simulate(progress=...)`` advances the horizon in PROGRESS_SLICES slices: the callback sees
    rising fractions ending at 1, and every table and the summary equal those of one uninterrupted run
    (a parallel-session, queueing scenario, so that slice ends fall among many pending events)."""
    scenario = Scenario(
        developers=6, horizon_s=3 * 3600.0 + 17.5, backends={"g": "gpu-batched"}
    ).with_overrides({"backends.g.replicas": 1, "developer.attention.max_parallel_sessions": 2})
    seen: list[float] = []
    sliced = simulate(scenario, 11, progress=seen.append)
    whole = simulate(scenario, 11)
    assert len(seen) == PROGRESS_SLICES and seen[-1] == 1.0 and seen == sorted(seen) and seen[0] > 0
    for frame in ("ledger", "tasks", "requests", "backend_stats"):
        pd.testing.assert_frame_equal(getattr(sliced, frame), getattr(whole, frame))
    assert sliced.summary() == whole.summary()


def test_task_stream_is_identical_across_backends_and_policies() -> None:
    base = Scenario(
        developers=3,
        horizon_s=6 * 3600.0,
        backends={"gpu": {"preset": "gpu-fast", "default_tier": "standard"}, "wafer": "wafer-distilled"},
        policy={"kind": "always", "backend": "gpu"},
    )
    variants = [
        base,
        base.with_overrides({"policy.backend": "wafer"}),
        base.with_overrides({"policy": {"kind": "interactive_fast", "backend": "gpu"}}),
    ]
    results = [simulate(s, 11) for s in variants]
    ref_tasks, ref_requests = results[0].tasks, results[0].requests
    keys = ["developer", "task", "attempt", "turn"]
    for other in results[1:]:
        tasks = ref_tasks.merge(other.tasks, on=["developer", "task"], suffixes=("", "_o"))
        assert len(tasks) >= 8
        assert tasks["difficulty"].equals(tasks["difficulty_o"])
        assert tasks["effort_s"].equals(tasks["effort_s_o"])
        assert tasks["base_turns"].equals(tasks["base_turns_o"])
        requests = ref_requests.merge(other.requests, on=keys, suffixes=("", "_o"))
        assert len(requests) >= 300
        assert requests["output_tokens"].equals(requests["output_tokens_o"])
    # the variants really differ in timing
    assert not results[0].tasks["end_s"].equals(results[1].tasks["end_s"])


def test_model_is_garbage_collectable_after_a_run() -> None:
    scenario = Scenario(developers=2, horizon_s=3600.0, backends={"w": "wafer-distilled"})
    model = WorkflowModel(scenario, rng=3)
    model.run_until(scenario.horizon_s)
    result = model.result()
    ref = weakref.ref(model)
    developer_ref = weakref.ref(model.developers[0])
    del model
    gc.collect()
    assert ref() is None
    assert developer_ref() is None
    assert len(result.tasks) > 0  # the results outlive the model


def test_summary_has_the_documented_keys_and_consistent_shares() -> None:
    scenario = Scenario(developers=2, horizon_s=2 * 3600.0, backends={"w": "wafer-distilled"})
    summary = simulate_summary(scenario, 5)
    assert tuple(summary) == SUMMARY_KEYS
    assert all(isinstance(v, float) for v in summary.values())
    shares = sum(summary[f"share_{c}"] for c in LEDGER_CATEGORIES)
    assert shares == pytest.approx(1.0, rel=1e-12)
    assert summary["developer_days"] == pytest.approx(2 * 2 / 8)
    assert summary["tasks_per_dev_day"] == pytest.approx(
        summary["tasks_completed"] / summary["developer_days"]
    )
    assert summary["waiting_share"] == pytest.approx(
        sum(summary[f"share_{c}"] for c in LEDGER_CATEGORIES if c.startswith("waiting_"))
    )


def test_speeds_must_name_scenario_backends() -> None:
    with pytest.raises(KeyError, match="unknown backend 'x'"):
        WorkflowModel(tiny(), rng=1, speeds={"x": TURN})


def test_queueing_delay_shows_up_as_waiting_never_as_idleness() -> None:
    """One replica that serves two streams at a time: a crowd of 80 developers queues for it,
    two developers never do (80: enough load to queue with away episodes). The queue's delay
    must appear in the ledger as waiting on the queue and
    time away (developers who will not sit through the longer expected waits leave), never as
    idleness. Seeds 11–14, each crowd against the pair. (Before away episodes the crowd also switched
    more than the pair by three standard errors; with away episodes both switch on every return,
    so that difference is no longer a property of the queue.)"""
    headline = Scenario.from_toml(
        Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"
    )
    one_small_replica = {
        "horizon_s": 28_800.0,
        "backends.gpu-batched.replicas": 1,
        "backends.gpu-batched.typical_batch": 2,
        "backends.gpu-batched.tiers": [{"name": "standard", "batch_cap": 2}],
        # one session each: two developers then never need more than the replica's two streams
        "developer.attention.parallel_sessions_probs": None,
        "developer.attention.max_parallel_sessions": 1,
    }
    runs = {
        developers: pd.DataFrame(
            [
                simulate_summary(
                    headline.with_overrides({**one_small_replica, "developers": developers}), seed
                )
                for seed in (11, 12, 13, 14)
            ]
        )
        for developers in (2, 80)
    }
    pair, crowd = runs[2], runs[80]
    assert (pair["mean_queue_wait_s"] == 0).all()
    assert crowd["mean_queue_wait_s"].min() > 5.0
    # Part of the delay is sat through (waiting on the queue); with away episodes much of the rest is
    # spent away from the session (the switching below, and the other work it leads to).
    assert (crowd["share_waiting_queue"] > 0.01).all()
    assert (crowd["share_idle"] == 0).all()  # the delay is never booked as idleness
