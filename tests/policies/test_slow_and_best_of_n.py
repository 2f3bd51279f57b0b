"""The background_slow and best_of_n policies: routing, the slow-tier preset served like gpu-batched,
best-of-N with one trajectory being ``always`` bit for bit, and N trajectories' tokens and cost."""

from __future__ import annotations

import pandas as pd
import pytest
from pydantic import ValidationError

from speedtrap.config import Scenario
from speedtrap.models.workflow import simulate, simulate_summary
from speedtrap.policies import (
    AlwaysPolicy,
    BackgroundSlowSpec,
    BestOfNPolicy,
    BestOfNSpec,
    Route,
    build_policy,
)
from speedtrap.policies.best_of_n import failure_multiplier

SMALL = {"developers": 2, "horizon_s": 4 * 3600.0}


def test_background_slow_sends_unattended_turns_to_the_slow_tier() -> None:
    s = Scenario(backends={"gpu": "gpu-slow"}, policy={"kind": "background_slow"})
    assert isinstance(s.policy, BackgroundSlowSpec)
    policy = build_policy(s.policy, s.backends)
    assert policy.for_session("hard", 0) == Route("gpu", "standard")
    assert policy.for_turn(Route("gpu", "standard"), attending=True) == Route("gpu", "standard")
    assert policy.for_turn(Route("gpu", "standard"), attending=False) == Route("gpu", "slow")


def test_background_slow_needs_the_tiers() -> None:
    with pytest.raises(ValidationError, match=r"policy.background_tier: backend 'gpu' has no tier 'slow'"):
        Scenario(backends={"gpu": "gpu-batched"}, policy={"kind": "background_slow"})


def test_gpu_slow_on_its_standard_tier_serves_as_gpu_batched() -> None:
    batched = Scenario(**SMALL, backends={"gpu": "gpu-batched"})
    slow_fleet = Scenario(
        **SMALL, backends={"gpu": "gpu-slow"}, policy={"kind": "always", "tier": "standard"}
    )
    ours, theirs = simulate_summary(slow_fleet, 3), simulate_summary(batched, 3)
    # utilization is own streams over replicas × the largest tier cap: the slow tier's cap is twice
    # the standard tier's, so the same streams read as half the utilization
    assert ours.pop("backend_utilization") == pytest.approx(theirs.pop("backend_utilization") / 2, rel=1e-12)
    assert ours == theirs


def test_background_slow_is_cheaper_per_request_when_developers_leave() -> None:
    # one prompt cache for both tiers: the comparison is of the tiers' prices, not of the cold caches
    # that switching tiers starts when the tier is part of the cache key (the default)
    base = Scenario(
        **SMALL,
        backends={"gpu": "gpu-slow"},
        policy={"kind": "always", "tier": "standard"},
        task_mix={"cache_per_tier": False},
    )
    mixed = base.with_overrides({"policy": {"kind": "background_slow"}})
    requests = simulate(mixed, 3).requests
    assert set(requests["tier"]) == {"standard", "slow"}  # some turns ran while the developer was away
    per_token = requests.groupby("tier")["cost_usd"].sum() / requests.groupby("tier")["output_tokens"].sum()
    assert per_token["slow"] < per_token["standard"]


def test_best_of_one_is_always_bit_for_bit() -> None:
    always = Scenario(**SMALL, backends={"gpu": "gpu-batched"})
    one = always.with_overrides({"policy": {"kind": "best_of_n", "trajectories": 1}})
    assert isinstance(build_policy(one.policy, one.backends), AlwaysPolicy)
    a, b = simulate(always, 5), simulate(one, 5)
    assert a.summary() == b.summary()
    pd.testing.assert_frame_equal(a.requests, b.requests)
    pd.testing.assert_frame_equal(a.tasks, b.tasks)


def test_failure_multiplier_follows_the_published_best_of_n_curve() -> None:
    # OpenHands' critic: 60.6% -> 66.4% resolved from 1 to 5 trajectories (failures x 0.853)
    assert failure_multiplier(5, 0.099) == pytest.approx((1 - 0.664) / (1 - 0.606), abs=0.002)
    # SWE-Lego's verifier at 16 trajectories: 52.6% -> 58.8% (failures x 0.869)
    assert failure_multiplier(16, 0.05) == pytest.approx((1 - 0.588) / (1 - 0.526), abs=0.005)
    assert failure_multiplier(1, 0.099) == 1.0
    assert failure_multiplier(4, 0.1, refine=0.9) == pytest.approx(0.9 * 4**-0.1)
    spec = BestOfNSpec(trajectories=4, distill_tokens_per_trajectory=1500, refine_turns=2)
    fan_out = spec.fan_out()
    assert fan_out is not None
    assert (fan_out.trajectories, fan_out.distill_tokens, fan_out.refine_turns) == (4, 6000, 2)


def test_n_trajectories_put_n_times_the_tokens_and_cost_on_the_fleet() -> None:
    # No wrong results and no malformed tool calls: every task's turns are the same at every N.
    n, refine = 3, 1
    quality = {"horizon_min": 1e15, "horizon_slope": 10.0, "tool_error_prob": 0.0}  # failure rounds to 0
    # a prompt cache that never expires: cache hits then do not depend on when the developer comes back
    base = Scenario(
        **SMALL,
        backends={"gpu": {"preset": "gpu-batched", "quality": quality}},
        task_mix={"cache_ttl_s": 1e9},
    )
    fanned = base.with_overrides(
        {
            "policy": {
                "kind": "best_of_n",
                "trajectories": n,
                "refine_turns": refine,
                "distill_tokens_per_trajectory": 2000,
            }
        }
    )
    assert isinstance(build_policy(fanned.policy, fanned.backends), BestOfNPolicy)
    one, many = simulate(base, 2), simulate(fanned, 2)
    done = one.tasks[one.tasks["outcome"] == "ok"].merge(
        many.tasks[many.tasks["outcome"] == "ok"], on=["developer", "task"], suffixes=("_1", "_n")
    )
    assert len(done) >= 2
    for row in done.itertuples():
        mine_1 = one.requests[
            (one.requests["developer"] == row.developer) & (one.requests["task"] == row.task)
        ]
        mine_n = many.requests[
            (many.requests["developer"] == row.developer) & (many.requests["task"] == row.task)
        ]
        turns = mine_1["turn"].nunique()
        per_turn = mine_n.groupby("turn")
        assert mine_n["turn"].nunique() == turns + 1 + refine  # the distill and refine turns
        assert (per_turn.size().iloc[:turns] == n).all() and (per_turn.size().iloc[turns:] == 1).all()
        # the parallel phase: each turn N copies of the single trajectory's request
        first = mine_n[mine_n["turn"] < turns].groupby("turn")
        out_1 = mine_1.set_index("turn")["output_tokens"]
        assert (first["output_tokens"].sum() == n * out_1).all()
        assert (first["cost_usd"].nunique() == 1).all()
        assert len(mine_n) == n * turns + 1 + refine
        # the distill request reads the N results on top of its context
        distill = mine_n[mine_n["turn"] == turns].iloc[0]
        last = mine_n[mine_n["turn"] == turns - 1].iloc[0]
        assert distill["input_tokens"] >= last["input_tokens"] + last["output_tokens"] + n * 2000
        assert row.cost_usd_n == pytest.approx(mine_n["cost_usd"].sum(), rel=1e-9)
        assert row.cost_usd_n > n * row.cost_usd_1 * 0.99
