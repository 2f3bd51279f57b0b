"""The workflow model in its limits, and its draws against their theory (seeded replications)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from speedtrap.config import Scenario
from speedtrap.models import WorkflowModel, simulate
from speedtrap.models.tasks import TaskSource
from speedtrap.serving.speed import FixedRate

SEEDS = range(6)
WAFER = {"w": "wafer-distilled"}


def small(overrides: dict | None = None, **fields: object) -> Scenario:
    base = Scenario(developers=3, horizon_s=4 * 3600.0, backends=WAFER, **fields)
    return base.with_overrides(overrides or {})


def test_no_failures_means_no_fixing() -> None:
    # A horizon far beyond every task at a steep slope: the failure probability rounds to 0.
    scenario = small(
        {
            "backends.w.quality.horizon_min": 1e15,
            "backends.w.quality.horizon_slope": 10.0,
            "backends.w.quality.failure_multiplier": 1.0,
            "horizon_s": 8 * 3600.0,
        }
    )
    for seed in SEEDS[:3]:
        result = simulate(scenario, seed)
        summary = result.summary()
        assert summary["share_fixing"] == 0.0
        assert summary["ok_share"] == 1.0
        assert (result.tasks["wrong_attempts"] == 0).all()
        assert summary["tasks_completed"] > 20


def test_instant_backend_and_tools_leave_nothing_to_wait_for() -> None:
    # a developer who expects a near-instant turn from the start
    scenario = small({"task_mix.tool_s.median": 0.0, "developer.attention.turn_prior_s": 1e-6})
    for seed in SEEDS[:3]:
        model = WorkflowModel(scenario, rng=seed, speeds={"w": FixedRate(1e12)})
        model.run_until(scenario.horizon_s)
        summary = model.result().summary()
        assert summary["share_waiting_generation"] < 1e-9
        assert summary["share_waiting_tool"] == 0.0
        assert summary["share_waiting_queue"] == 0.0
        assert summary["share_waiting_ttft"] == 0.0
        # the agent is never slower than anyone's patience: nobody leaves, nobody pays to come back
        assert summary["share_switching"] == 0.0
        assert summary["share_other_work"] == 0.0 and summary["share_idle"] == 0.0


def test_certain_failure_and_certain_detection_fix_every_task() -> None:
    scenario = small(
        {
            # A horizon far below every task at a steep slope: the failure probability rounds to 1.
            "backends.w.quality.horizon_min": 1e-12,
            "backends.w.quality.horizon_slope": 10.0,
            "backends.w.quality.failure_multiplier": 1.0,
            "developer.review.detect_prob": 1.0,
            "horizon_s": 16 * 3600.0,
        }
    )
    for seed in SEEDS[:3]:
        result = simulate(scenario, seed)
        done = result.tasks[result.tasks["outcome"] != "open"]
        assert len(done) > 10
        assert (done["outcome"] == "fixed").all()
        assert (done["fixed_by"] == "hand").all()  # every repair fails too, so hand fixes end them
        # a large part of the time on tasks (other work and breaks aside) goes to fixing: every task's
        # diagnoses and hand fix (waiting on the repairs is waiting)
        summary = result.summary()
        on_tasks = 1.0 - summary["share_other_work"] - summary["share_idle"]
        assert summary["fixing_share"] / on_tasks > 0.1


def test_share_of_wrong_first_attempts_matches_the_failure_probabilities() -> None:
    # A first session is wrong with the success curve's failure probability at its task's length
    # (the whole effort is delegated here), independently across tasks: the count of tasks whose
    # first session was wrong is a sum of Bernoullis, within 4 standard deviations of its mean.
    scenario = small({"backends.w.quality.failure_multiplier": 1.0})
    quality = scenario.backends["w"].quality
    wrong = expected = variance = 0.0
    for seed in range(8):
        tasks = simulate(scenario, seed).tasks
        p = np.array([quality.failure_prob_at(e / 60.0) for e in tasks["effort_s"]])
        wrong += float((tasks["wrong_attempts"] > 0).sum())
        expected += float(p.sum())
        variance += float((p * (1.0 - p)).sum())
    assert abs(wrong - expected) <= 4.0 * math.sqrt(variance)


def test_task_source_draws_match_the_task_mix() -> None:
    scenario = Scenario().with_overrides({"task_mix.sizing": "difficulty"})
    mix = scenario.task_mix
    reps = 10
    per_rep: dict[str, list[float]] = {d: [] for d in mix.difficulty_names}
    share_easy = []
    for rep in range(reps):
        source = TaskSource(np.random.SeedSequence(rep), 0, mix, scenario.developer)
        tasks = [source.next() for _ in range(1600)]
        share_easy.append(sum(t.difficulty == "easy" for t in tasks) / len(tasks))
        for d in mix.difficulty_names:
            per_rep[d].append(float(np.mean([t.base_turns for t in tasks if t.difficulty == d])))
    for d, means in per_rep.items():
        se = np.std(means, ddof=1) / math.sqrt(reps)
        assert (
            abs(np.mean(means) - mix.difficulties[d].turns_mean) <= 4 * se + 0.5
        )  # + rounding to whole turns
    se = np.std(share_easy, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(share_easy) - mix.shares()[0]) <= 4 * se


def test_effort_sized_tasks_match_their_buckets_and_turn_law() -> None:
    # With effort sizing a task's class is its METR-sized effort's bucket, and log(turns) − the law's
    # log median is the turns' normal noise (mean 0, sd turns_log_sd), whatever the effort.
    scenario = Scenario()
    mix = scenario.task_mix
    assert mix.sizing == "effort"
    reps = 10
    shares: list[list[float]] = []
    residual_means, residual_sds = [], []
    for rep in range(reps):
        source = TaskSource(np.random.SeedSequence(rep), 0, mix, scenario.developer)
        tasks = [source.next() for _ in range(1600)]
        shares.append([sum(t.difficulty == d for t in tasks) / len(tasks) for d in mix.difficulty_names])
        for t in tasks:
            assert t.difficulty == mix.difficulty_of(t.effort_s)
        big = [t for t in tasks if mix.turns_median(t.effort_s) >= 20]  # rounding to whole turns negligible
        z = [math.log(t.base_turns / mix.turns_median(t.effort_s)) for t in big]
        residual_means.append(float(np.mean(z)))
        residual_sds.append(float(np.std(z, ddof=1)))
    observed = np.array(shares)
    se = observed.std(axis=0, ddof=1) / math.sqrt(reps)
    assert (np.abs(observed.mean(axis=0) - np.array(mix.shares())) <= 4 * se + 1e-9).all()
    m_se = np.std(residual_means, ddof=1) / math.sqrt(reps)
    assert abs(np.mean(residual_means)) <= 4 * m_se + 0.01  # + rounding to whole turns
    assert (
        abs(np.mean(residual_sds) - mix.turns_log_sd)
        <= 4 * np.std(residual_sds, ddof=1) / math.sqrt(reps) + 0.01
    )


def test_attending_developers_wait_exactly_the_pool_timelines() -> None:
    # Ten developers who never leave their agent share one two-slot replica: requests queue, and
    # every second of each request's queue, prefill and decode is someone's wait.
    tight = {
        "preset": "gpu-batched",
        "replicas": 1,
        "tiers": [{"name": "standard", "batch_cap": 2}],
        "typical_batch": 2,
        "background_streams_per_replica": 0,
    }
    scenario = Scenario(developers=10, horizon_s=3 * 3600.0, backends={"gpu": tight}).with_overrides(
        {
            "developer.attention.rule": "threshold",
            "developer.attention.flow_threshold_s": float("inf"),
            "developer.fixing.escape_delay_s": 1e9,  # no rework takes anyone away from their agent
        }
    )
    result = simulate(scenario, 3)
    requests, ledger = result.requests, result.ledger_wide()
    assert requests["queue_wait_s"].sum() > 60.0  # there is contention
    for developer, rows in requests.groupby("developer"):
        slack = scenario.horizon_s - rows["done_s"].max()  # the turn in flight at the horizon
        for category, column in (
            ("waiting_queue", "queue_wait_s"),
            ("waiting_ttft", "prefill_s"),
            ("waiting_generation", "decode_s"),
        ):
            excess = ledger.loc[developer, category] - rows[column].sum()
            assert -1e-6 <= excess <= slack + 1e-6, (developer, category)


def test_median_request_matches_agent_traces() -> None:
    # SemiAnalysis agent traces: median input ≈96k tokens (mostly cached), median output ≈213.
    scenario = Scenario(
        developers=6,
        horizon_s=8 * 3600.0,
        backends={"gpu": {"preset": "gpu-fast", "default_tier": "standard"}},
    )
    requests = WorkflowModel(scenario, rng=1, speeds={"gpu": FixedRate(66.0)})
    requests.run_until(scenario.horizon_s)
    frame = requests.result().requests
    assert frame["input_tokens"].median() == pytest.approx(96_000, rel=0.1)
    assert frame["output_tokens"].median() == pytest.approx(213, rel=0.1)
    assert frame["cached_tokens"].sum() / frame["input_tokens"].sum() > 0.85
