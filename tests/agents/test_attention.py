"""The attention rule on its own: traits, learnt turn times and decisions, without Mesa."""

from __future__ import annotations

import math

import numpy as np
import pytest

from speedtrap.agents.attention import AttentionRule
from speedtrap.config import Attention


def rule(seed: int = 1, **fields: object) -> AttentionRule:
    return AttentionRule(Attention.model_validate(fields), np.random.default_rng(seed))


def test_traits_are_drawn_first_from_the_stream_patience_then_sessions() -> None:
    spec = Attention.model_validate({"parallel_sessions_probs": [0.2, 0.5, 0.3]})
    r = AttentionRule(spec, np.random.default_rng(7))
    check = np.random.default_rng(7)
    assert r.patience_s == float(spec.patience_s.sample(check, 1)[0])
    u = float(check.random())
    assert r.max_sessions == (1 if u < 0.2 else 2 if u < 0.7 else 3)
    assert r.episode_patience_s == r.patience_s


def test_sessions_without_probabilities_are_the_fixed_number() -> None:
    assert rule(max_parallel_sessions=3).max_sessions == 3


def test_turn_estimate_is_the_prior_then_an_exponentially_weighted_mean() -> None:
    r = rule(turn_prior_s=12.0, turn_memory=0.25)
    assert r.expected_wait_s(3, "a") == 36.0
    r.learn_turn("a", 20.0)
    assert r.expected_wait_s(1, "a") == 20.0
    r.learn_turn("a", 40.0)
    assert r.expected_wait_s(2, "a") == 2 * (20.0 + 0.25 * (40.0 - 20.0))
    assert r.expected_wait_s(1, "b") == 12.0  # kept per backend and tier


def test_within_patience_the_developer_stays() -> None:
    r = rule()
    assert not r.leaves(r.episode_patience_s, only_other_work=False, since_other_work_s=0.0)
    assert r.leaves(r.episode_patience_s * 1.01, only_other_work=False, since_other_work_s=0.0)


def test_other_work_must_pay_its_round_trip() -> None:
    r = rule(other_work_prob=1.0, other_work_resumption_max_s=750.0)
    wait_s = max(2 * r.episode_patience_s, 1.0)
    round_trip = r.spec.other_work_resumption_mean_s(3600.0) + r.spec.resumption_mean_s(wait_s)
    assert round_trip >= wait_s  # an hour from deep other work makes going back to it dear
    assert not r.leaves(wait_s, only_other_work=True, since_other_work_s=3600.0)
    # somewhere else to go (a new session, something pending): the round trip does not apply
    assert r.leaves(wait_s, only_other_work=False, since_other_work_s=3600.0)
    # a long enough wait is worth the round trip
    long_s = 100 * round_trip
    assert r.leaves(long_s, only_other_work=True, since_other_work_s=3600.0)


def test_other_work_not_yet_done_today_costs_nothing_to_start() -> None:
    # The resumption of other work never counts from the start of the day: before any other work
    # there is nothing to resume, so only the way back to the session weighs against leaving.
    r = rule(
        other_work_prob=1.0, other_work_resumption_max_s=750.0, patience_s={"median": 20.0, "sigma": 0.0}
    )
    r.new_episode()
    wait_s = 300.0
    assert r.spec.other_work_resumption_mean_s(None) == 0.0
    assert r.spec.resumption_mean_s(wait_s) < wait_s
    assert r.leaves(wait_s, only_other_work=True, since_other_work_s=None)
    assert not r.leaves(wait_s, only_other_work=True, since_other_work_s=3 * 3600.0)
    assert r.other_work_resumption_s(None) == 0.0


def test_other_work_resumption_grows_with_time_away_up_to_its_own_maximum() -> None:
    spec = Attention.model_validate({"other_work_resumption_max_s": 120.0})
    costs = [spec.other_work_resumption_mean_s(t) for t in (1.0, 60.0, 600.0, 3600.0, 36_000.0)]
    assert costs == sorted(costs) and costs[0] > 0.0
    assert costs[-1] == pytest.approx(120.0 + spec.resumption_short_s * math.log1p(36_000.0 / 30.0), rel=1e-3)
    assert Attention.model_validate({"rule": "threshold"}).other_work_resumption_mean_s(3600.0) == 0.0


def test_away_episodes_are_drawn_from_their_lognormal_and_only_under_expected_waits() -> None:
    r = rule(seed=5, away_s={"median": 90.0, "sigma": 1.2})
    draws = np.array([r.away_episode_s() for _ in range(4000)])
    assert float(np.median(draws)) == pytest.approx(90.0, rel=0.08)
    assert float(np.std(np.log(draws))) == pytest.approx(1.2, rel=0.05)
    assert rule(away_s=None).away_episode_s() == math.inf
    assert rule(rule="threshold").away_episode_s() == math.inf


def test_breaks_only_never_block_leaving() -> None:
    r = rule(other_work_prob=0.0)
    assert r.leaves(2 * r.episode_patience_s + 1.0, only_other_work=True, since_other_work_s=3600.0)


def test_episode_patience_is_lognormal_around_the_trait() -> None:
    fixed = rule(patience_episode_sigma=0.0)
    fixed.new_episode()
    assert fixed.episode_patience_s == fixed.patience_s
    r = rule(seed=3, patience_episode_sigma=0.5)
    logs = []
    for _ in range(4000):
        r.new_episode()
        logs.append(math.log(r.episode_patience_s / r.patience_s))
    mean, sd = float(np.mean(logs)), float(np.std(logs))
    assert abs(mean) <= 4 * 0.5 / math.sqrt(len(logs))
    assert sd == pytest.approx(0.5, rel=0.05)


def test_a_break_is_not_time_away_under_expected_waits_only() -> None:
    assert rule(rule="expected_wait").time_away_s(100.0, 30.0) == 70.0
    assert rule(rule="expected_wait").time_away_s(100.0, 130.0) == 0.0
    assert rule(rule="threshold").time_away_s(100.0, 30.0) == 100.0


def test_resumption_is_the_mean_or_exponential_around_it() -> None:
    r = rule(resumption_random=False)
    assert r.resumption_s(600.0) == r.spec.resumption_mean_s(600.0)
    drawn = rule(seed=5, resumption_random=True)
    mean = drawn.spec.resumption_mean_s(600.0)
    draws = np.array([drawn.resumption_s(600.0) for _ in range(4000)])
    assert abs(draws.mean() - mean) <= 4 * mean / math.sqrt(len(draws))  # exponential: sd = mean


def test_other_work_or_a_break_follows_its_probability() -> None:
    assert all(rule(other_work_prob=1.0).chooses_other_work() for _ in range(10))
    assert not any(rule(other_work_prob=0.0).chooses_other_work() for _ in range(10))
    r = rule(seed=9, other_work_prob=0.3)
    share = np.mean([r.chooses_other_work() for _ in range(4000)])
    assert abs(share - 0.3) <= 4 * math.sqrt(0.3 * 0.7 / 4000)


def test_noticing_follows_its_probability_and_draws_only_between_0_and_1() -> None:
    assert not any(rule(notice_prob=0.0).notices() for _ in range(10))
    assert all(rule(notice_prob=1.0).notices() for _ in range(10))
    for p in (0.0, 1.0):  # no draw: the stream is where it was
        r, fresh = rule(seed=4, notice_prob=p), rule(seed=4)
        r.notices()
        assert r.away_episode_s() == fresh.away_episode_s()
    r = rule(seed=9, notice_prob=0.2)
    share = np.mean([r.notices() for _ in range(4000)])
    assert abs(share - 0.2) <= 4 * math.sqrt(0.2 * 0.8 / 4000)


def test_a_cued_resumption_is_the_short_lag_alone() -> None:
    """``cued_resumption``: a return a noticed notification prompts pays r·ln(1 + t/s) and not the
    long-interruption part; without it, or under the threshold rule, the whole resumption."""
    spec = Attention.model_validate({"resumption_short_s": 4.0, "resumption_short_scale_s": 30.0})
    for away in (0.0, 60.0, 600.0, 3600.0):
        assert spec.cued_resumption_mean_s(away) == pytest.approx(4.0 * math.log1p(away / 30.0))
        assert spec.cued_resumption_mean_s(away) <= spec.resumption_mean_s(away)
    assert spec.cued_resumption_mean_s(3600.0) < 0.1 * spec.resumption_mean_s(3600.0)
    uncued = spec.model_copy(update={"cued_resumption": False})
    threshold = spec.model_copy(update={"rule": "threshold"})
    for s in (uncued, threshold):
        assert s.cued_resumption_mean_s(600.0) == s.resumption_mean_s(600.0)
    r = rule(resumption_random=False)
    assert r.resumption_s(600.0, cued=True) == r.spec.cued_resumption_mean_s(600.0)
    drawn = rule(seed=6, resumption_random=True)
    mean = drawn.spec.cued_resumption_mean_s(600.0)
    draws = np.array([drawn.resumption_s(600.0, cued=True) for _ in range(4000)])
    assert abs(draws.mean() - mean) <= 4 * mean / math.sqrt(len(draws))  # exponential: sd = mean
