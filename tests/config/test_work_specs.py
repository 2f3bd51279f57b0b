"""Work and developer specs: distributions know their moments; defaults match their sources."""

from __future__ import annotations

import math

import numpy as np
import pytest

from speedtrap.config import Attention, Developer, LogNormal, Review, TaskMix
from speedtrap.config.work import TURNS_LOG_SD


def test_lognormal_samples_match_its_analytic_moments() -> None:
    dist = LogNormal(median=213.0, sigma=1.0)
    rng = np.random.default_rng(1)
    reps = 40
    means = np.array([dist.sample(rng, 2000).mean() for _ in range(reps)])
    se = means.std(ddof=1) / math.sqrt(reps)
    assert abs(means.mean() - dist.mean) <= 4 * se
    x = dist.sample(rng, 200_000)
    assert np.median(x) == pytest.approx(213.0, rel=0.02)
    assert dist.quantile(0.5) == pytest.approx(213.0)


def test_lognormal_from_mean_and_degenerate_case() -> None:
    assert LogNormal.from_mean(900.0, 0.8).mean == pytest.approx(900.0)
    fixed = LogNormal(median=5.0)
    assert fixed.variance == 0.0
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    assert fixed.sample(rng_a, 4).tolist() == [5.0] * 4
    rng_b.standard_normal(4)  # a degenerate draw still consumes the stream, keeping it aligned
    assert rng_a.random() == rng_b.random()


def test_turns_log_sd_reproduces_gpt5_mean_and_p90() -> None:
    # GPT-5 on SWE-bench (mini-SWE-agent): mean 13, p90 21.
    turns = LogNormal.from_mean(13.0, TURNS_LOG_SD)
    assert turns.quantile(0.9) == pytest.approx(21.0, abs=0.1)


def test_default_task_mix_matches_swe_bench_buckets() -> None:
    mix = TaskMix(sizing="difficulty")
    assert mix.difficulty_names == ["easy", "medium", "hard"]
    assert mix.shares() == pytest.approx([194 / 500, 261 / 500, 45 / 500])
    assert mix.output_tokens.median == 213.0  # SemiAnalysis


def test_effort_sizing_buckets_meters_tasks_by_swe_bench_time_classes() -> None:
    mix = TaskMix()
    assert mix.sizing == "effort"
    assert mix.effort_s.median == pytest.approx(74.9 * 60, rel=1e-3)  # METR, AI-disallowed issues
    z = [(math.log(b) - math.log(mix.effort_s.median)) / mix.effort_s.sigma for b in (900.0, 3600.0)]
    cdf = [0.5 * math.erfc(-v / math.sqrt(2)) for v in z]
    assert mix.shares() == pytest.approx([cdf[0], cdf[1] - cdf[0], 1 - cdf[1]])
    assert mix.difficulty_of(600.0) == "easy" and mix.difficulty_of(3600.0) == "medium"
    assert mix.difficulty_of(1e6) == "hard"
    # the turn law reproduces the per-class turn means at the buckets' geometric middles
    assert mix.turns_median(450.0) == pytest.approx(22.0, rel=0.02)
    assert mix.turns_median(7200.0) == pytest.approx(65.0, rel=0.03)


def test_effort_sizing_needs_increasing_bounds() -> None:
    with pytest.raises(ValueError, match=r"difficulties\.easy\.max_effort_s"):
        TaskMix(difficulties={"easy": {"share": 1.0}, "hard": {}})
    with pytest.raises(ValueError, match="bounds must increase"):
        TaskMix(difficulties={"a": {"max_effort_s": 100.0}, "b": {"max_effort_s": 50.0}, "c": {}})
    with pytest.raises(ValueError, match="turns_mean: required"):
        TaskMix(sizing="difficulty", difficulties={"a": {"share": 1.0}})


def test_effort_sizing_needs_a_positive_effort() -> None:
    # a zero median made every task's effort 0 and the task source divide 0 by 0 (found by the fuzz test)
    with pytest.raises(ValueError, match=r"effort_s\.median: must be positive with sizing = 'effort'"):
        TaskMix(effort_s={"median": 0.0, "sigma": 0.8})
    unused = TaskMix(sizing="difficulty", effort_s={"median": 0.0, "sigma": 0.8})  # effort_s unused there
    assert unused.effort_s.median == 0.0


def test_resumption_after_short_waits_is_seconds_and_after_long_breaks_parnin() -> None:
    att = Attention()
    assert att.rule == "expected_wait"
    assert att.resumption_mean_s(0.0) == 0.0
    assert att.resumption_mean_s(180.0) < 20.0  # a three-minute wait: a lag of seconds
    assert 600.0 <= att.resumption_mean_s(2 * 3600.0) <= 900.0  # 10–15 min after a long break
    values = [att.resumption_mean_s(t) for t in (1.0, 10.0, 100.0, 1000.0, 10_000.0)]
    assert values == sorted(values)


def test_resumption_overhead_saturates() -> None:
    att = Attention(rule="threshold")
    assert att.resumption_mean_s(0.0) == 0.0
    assert att.resumption_mean_s(60.0) < 30.0
    assert att.resumption_mean_s(10 * 3600.0) == pytest.approx(750.0, rel=1e-6)  # 12.5 min: Parnin & Rugaber
    values = [att.resumption_mean_s(t) for t in (10.0, 100.0, 1000.0, 10_000.0)]
    assert values == sorted(values)
    # an exponential lag with the long-break mean puts ≈8% of resumptions under a minute (~10% reported)
    assert 1 - math.exp(-60.0 / att.resumption_max_s) == pytest.approx(0.077, abs=0.005)


def test_review_time_grows_with_output() -> None:
    review = Review()
    assert review.mean_s(0) == review.base_s
    assert review.mean_s(10_000) == pytest.approx(review.base_s + 10 * review.s_per_kilotoken)


def test_developer_defaults_cite_their_sources() -> None:
    dev = Developer()
    assert dev.attention.flow_threshold_s == 10.0  # Nielsen
    assert dev.checkin_every_turns == 4 and dev.checkin_random  # ≈40 s stretches (TraceLab, Anthropic)
    assert dev.fixing.hand_fix_s.mean == pytest.approx(900.0)  # METR: ≈15 min
    for spec in (dev, dev.attention, dev.review, dev.fixing, TaskMix()):
        for name, field in type(spec).model_fields.items():
            if name in {"attention", "review", "fixing", "manual", "difficulties"}:
                continue
            assert field.description, f"{type(spec).__name__}.{name} has no documented source"
