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
    mix = TaskMix()
    assert mix.difficulty_names == ["easy", "medium", "hard"]
    assert mix.shares() == pytest.approx([194 / 500, 261 / 500, 45 / 500])
    assert mix.output_tokens.median == 213.0  # SemiAnalysis


def test_resumption_overhead_saturates() -> None:
    att = Attention()
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
    assert 10 <= dev.checkin_every_turns <= 21  # Anthropic: 10–21 tool calls between human turns
    assert dev.fixing.hand_fix_s.mean == pytest.approx(900.0)  # METR: ≈15 min
    for spec in (dev, dev.attention, dev.review, dev.fixing, TaskMix()):
        for name, field in type(spec).model_fields.items():
            if name in {"attention", "review", "fixing", "difficulties"}:
                continue
            assert field.description, f"{type(spec).__name__}.{name} has no documented source"
