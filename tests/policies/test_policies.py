"""Routing policies: decisions, spec validation against the scenario, the registry."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from speedtrap.config import Scenario
from speedtrap.config.policy import PolicySpec, policy_spec_class
from speedtrap.policies import (
    AlwaysSpec,
    ByDifficultySpec,
    EscalateSpec,
    InteractiveFastSpec,
    Route,
    RoutingPolicy,
    build_policy,
    known_policy_kinds,
)

BACKENDS = {"gpu": "gpu-batched", "fast": "gpu-fast", "wafer": "wafer-distilled"}


def scenario(policy: dict) -> Scenario:
    return Scenario(backends=BACKENDS, policy=policy)


def test_always_routes_everything_to_one_backend_and_its_default_tier() -> None:
    s = scenario({"kind": "always", "backend": "fast"})
    policy = build_policy(s.policy, s.backends)
    assert isinstance(s.policy, AlwaysSpec)
    for difficulty in ("easy", "hard"):
        for attempt in (0, 1, 2):
            assert policy.for_session(difficulty, attempt) == Route("fast", "fast")
    assert policy.for_turn(Route("fast", "fast"), attending=False) == Route("fast", "fast")
    explicit = scenario({"kind": "always", "backend": "gpu", "tier": "fast"})
    assert build_policy(explicit.policy, explicit.backends).for_session("easy", 0) == Route("gpu", "fast")


def test_always_defaults_to_the_only_backend_but_not_among_several() -> None:
    single = Scenario(backends={"w": "wafer-distilled"}, policy={"kind": "always"})
    assert build_policy(single.policy, single.backends).for_session("easy", 0) == Route("w", "standard")
    with pytest.raises(ValidationError, match=r"policy.backend: required when the scenario has several"):
        scenario({"kind": "always"})


def test_by_difficulty_routes_each_class_and_falls_back_to_default() -> None:
    s = scenario(
        {"kind": "by_difficulty", "routes": {"easy": "wafer", "hard": {"backend": "gpu"}}, "default": "fast"}
    )
    policy = build_policy(s.policy, s.backends)
    assert isinstance(s.policy, ByDifficultySpec)
    assert policy.for_session("easy", 0) == Route("wafer", "standard")
    assert policy.for_session("hard", 1) == Route("gpu", "standard")
    assert policy.for_session("medium", 0) == Route("fast", "fast")


def test_by_difficulty_must_cover_the_task_mix() -> None:
    with pytest.raises(ValidationError, match=r"no route for difficulty 'medium' and no policy\.default"):
        scenario({"kind": "by_difficulty", "routes": {"easy": "wafer", "hard": "gpu"}})
    with pytest.raises(ValidationError, match=r"policy\.routes: unknown difficulty 'epic'"):
        scenario({"kind": "by_difficulty", "routes": {"epic": "wafer"}, "default": "gpu"})


def test_escalate_moves_repairs_to_the_stronger_backend() -> None:
    s = scenario({"kind": "escalate", "first": "wafer", "then": "gpu"})
    policy = build_policy(s.policy, s.backends)
    assert isinstance(s.policy, EscalateSpec)
    assert policy.for_session("medium", 0) == Route("wafer", "standard")
    assert policy.for_session("medium", 1) == Route("gpu", "standard")
    assert policy.for_session("hard", 2) == Route("gpu", "standard")


def test_interactive_fast_pays_for_speed_only_while_attended() -> None:
    s = scenario({"kind": "interactive_fast", "backend": "gpu"})
    policy = build_policy(s.policy, s.backends)
    assert isinstance(s.policy, InteractiveFastSpec)
    session = policy.for_session("easy", 0)
    assert session == Route("gpu", "standard")
    assert policy.for_turn(session, attending=True) == Route("gpu", "fast")
    assert policy.for_turn(session, attending=False) == Route("gpu", "standard")


def test_interactive_fast_needs_a_fast_tier() -> None:
    with pytest.raises(ValidationError, match=r"policy.fast_tier: backend 'wafer' has no tier 'fast'"):
        scenario({"kind": "interactive_fast", "backend": "wafer"})


def test_unknown_backend_is_named() -> None:
    with pytest.raises(
        ValidationError, match=r"policy.then: unknown backend 'opus' \(known: fast, gpu, wafer\)"
    ):
        scenario({"kind": "escalate", "first": "wafer", "then": "opus"})


def test_registry_lists_known_kinds_for_an_unknown_one() -> None:
    assert {"always", "by_difficulty", "escalate", "interactive_fast"} <= set(known_policy_kinds())
    with pytest.raises(
        KeyError,
        match=r"unknown policy kind 'round_robin' \(known: always, background_slow, best_of_n, by_difficulty",
    ):
        policy_spec_class("round_robin")
    with pytest.raises(
        ValidationError, match=r"policy.kind: unknown policy kind 'round_robin' \(known: always"
    ):
        scenario({"kind": "round_robin"})


def test_a_new_policy_registers_by_subclassing() -> None:
    from typing import Literal

    class FirstTryFast(PolicySpec):
        kind: Literal["test_first_try_fast"] = "test_first_try_fast"

        def references(self, backends):  # type: ignore[no-untyped-def]
            return {}

        def build(self, backends):  # type: ignore[no-untyped-def]
            class _Policy(RoutingPolicy):
                def for_session(self, difficulty: str, attempt: int) -> Route:
                    return Route("wafer", "standard") if attempt == 0 else Route("gpu", "standard")

            return _Policy()

    try:
        s = scenario({"kind": "test_first_try_fast"})
        assert isinstance(s.policy, FirstTryFast)
        assert build_policy(s.policy, s.backends).for_session("easy", 1) == Route("gpu", "standard")
        # the policy survives a dump/validate round trip (with_overrides)
        assert isinstance(s.with_overrides({"developers": 3}).policy, FirstTryFast)
    finally:
        del PolicySpec.registry["test_first_try_fast"]


def test_policy_fields_are_validated_with_their_path() -> None:
    with pytest.raises(ValidationError, match=r"policy.then\n  Field required"):
        scenario({"kind": "escalate", "first": "wafer"})
    with pytest.raises(ValidationError, match=r"policy\.tiers"):
        scenario({"kind": "always", "backend": "gpu", "tiers": "x"})


def test_fast_share_puts_the_first_share_of_developers_on_the_fast_tier() -> None:
    s = Scenario(backends={"fleet": "gpu-batched"}, policy={"kind": "fast_share", "share": 0.25})
    policy = build_policy(s.policy, s.backends)
    routes = [policy.for_developer(i, 10).for_session("easy", 0) for i in range(10)]
    assert routes[:2] == [Route("fleet", "fast")] * 2  # round(0.25 × 10) = 2 adopters
    assert routes[2:] == [Route("fleet", "standard")] * 8
    none = Scenario(backends={"fleet": "gpu-batched"}, policy={"kind": "fast_share", "share": 0.0})
    policy = build_policy(none.policy, none.backends)
    assert policy.for_developer(0, 10).for_session("hard", 1).tier == "standard"


def test_fast_share_is_validated() -> None:
    with pytest.raises(ValidationError, match=r"policy.share"):
        Scenario(backends={"fleet": "gpu-batched"}, policy={"kind": "fast_share", "share": 1.5})
    with pytest.raises(ValidationError, match=r"policy.fast_tier: backend 'w' has no tier 'fast'"):
        Scenario(backends={"w": "wafer-distilled"}, policy={"kind": "fast_share", "share": 0.5})


def test_fast_share_routes_requests_in_the_simulation() -> None:
    from speedtrap.models import simulate

    s = Scenario(
        developers=4,
        horizon_s=3600.0,
        backends={"fleet": "gpu-batched"},
        policy={"kind": "fast_share", "share": 0.5},
    )
    requests = simulate(s, 1).requests
    tiers = requests.groupby("developer")["tier"].unique().map(list).to_dict()
    assert tiers == {0: ["fast"], 1: ["fast"], 2: ["standard"], 3: ["standard"]}


def test_build_policy_refuses_a_spec_that_cannot_build() -> None:
    """The spec registry (config) knows nothing of runnable policies: a registered spec class without
    a ``build`` method is refused by name when the policy is built, not when it is read."""
    from typing import Literal

    class Unbuildable(PolicySpec):
        kind: Literal["unbuildable-test"] = "unbuildable-test"

        def references(self, backends):  # type: ignore[no-untyped-def]
            return {}

    try:
        spec = Unbuildable()
        with pytest.raises(TypeError, match=r"unbuildable-test.*no build method"):
            build_policy(spec, scenario({"kind": "always", "backend": "gpu"}).backends)
    finally:
        del PolicySpec.registry["unbuildable-test"]
