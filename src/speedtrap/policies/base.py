"""What a routing policy is: given a session (and, per turn, the developer's attention), a route."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from speedtrap.config.policy import PolicySpec, RouteSpec

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request goes: a backend of the scenario and one of its tiers."""

    backend: str
    tier: str


@dataclass(frozen=True, slots=True)
class FanOut:
    """How a session runs as several parallel trajectories (``best_of_n``): ``trajectories`` requests
    per agent turn, the failure probability times ``failure_multiplier``, then one distill request
    reading ``distill_tokens`` more input tokens and ``refine_turns`` single-trajectory turns."""

    trajectories: int
    failure_multiplier: float
    distill_tokens: int
    refine_turns: int


class RoutingPolicy(ABC):
    """Chooses the backend for each agent session and the tier for each turn.

    The session's backend fixes its quality (failure and tool-error probabilities); a policy
    may change the tier from turn to turn but not the backend. ``fan_out`` (default ``None``: one
    trajectory) makes every session it routes run several trajectories (:class:`FanOut`).
    """

    fan_out: FanOut | None = None

    @abstractmethod
    def for_session(self, difficulty: str, attempt: int) -> Route:
        """Route of a session on a task of ``difficulty``; ``attempt`` is 0 for the first session
        and ``k`` for the ``k``-th repair after a detected failure."""

    def for_developer(self, index: int, developers: int) -> RoutingPolicy:
        """The policy developer ``index`` (of ``developers``) follows; default: this one, shared.
        Policies that treat developers differently (e.g. ``fast_share``) return their own."""
        return self

    def for_turn(self, session: Route, attending: bool) -> Route:
        """Route of one turn of a session routed to ``session``; ``attending`` is true while the
        developer is waiting on (or working with) this session. Default: the session's route."""
        return session


def resolve(backends: Mapping[str, Backend], route: RouteSpec) -> Route:
    """A :class:`Route` with the tier filled in (``None`` → the backend's default tier)."""
    backend = backends[route.backend]
    return Route(route.backend, route.tier if route.tier is not None else backend.default_tier)


def only_backend(backends: Mapping[str, Backend], field: str) -> str:
    """The single backend's name, for policies whose ``field`` may be left out; ``ValueError`` naming
    ``policy.<field>`` when the scenario has several."""
    if len(backends) != 1:
        raise ValueError(
            f"policy.{field}: required when the scenario has several backends ({', '.join(sorted(backends))})"
        )
    return next(iter(backends))


@runtime_checkable
class BuildsPolicy(Protocol):
    """A policy spec that knows its runnable policy (every spec of :mod:`speedtrap.policies` does)."""

    def build(self, backends: Mapping[str, Backend]) -> RoutingPolicy: ...


def build_policy(spec: PolicySpec, backends: Mapping[str, Backend]) -> RoutingPolicy:
    """The runnable policy of ``spec`` for these backends; ``TypeError`` for a registered spec class
    that declares no ``build`` method or builds something that is not a :class:`RoutingPolicy`."""
    if not isinstance(spec, BuildsPolicy):
        raise TypeError(
            f"policy kind {spec.kind!r}: its spec class {type(spec).__name__} has no build method"
        )
    policy = spec.build(backends)
    if not isinstance(policy, RoutingPolicy):
        raise TypeError(
            f"policy kind {spec.kind!r}: build returned {type(policy).__name__}, not a RoutingPolicy"
        )
    return policy
