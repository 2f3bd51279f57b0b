"""``fast_share``: a share of the developers buys fast mode; everyone shares one fleet.

The first ``round(share × developers)`` developers send every turn to ``fast_tier``, the others
to ``standard_tier`` of the same backend. Which developers adopt is fixed by index, so the task
stream of each developer is unchanged across shares (common random numbers): only the routing
and the contention differ. This is the fast-mode externality question of DESIGN.md §1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.always import AlwaysPolicy
from speedtrap.policies.base import Route, RoutingPolicy, only_backend, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class FastShareSpec(PolicySpec):
    """``share`` of the developers (0–1) on ``fast_tier`` of ``backend`` (default: the scenario's
    only backend), the rest on ``standard_tier`` (default: the backend's default tier)."""

    kind: Literal["fast_share"] = "fast_share"
    share: float = Field(default=0.0, ge=0.0, le=1.0, description="Share of developers on the fast tier.")
    backend: str | None = None
    fast_tier: str = Field(default="fast", min_length=1)
    standard_tier: str | None = None

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        backend = self.backend if self.backend is not None else only_backend(backends, "backend")
        return {"fast_tier": (backend, self.fast_tier), "standard_tier": (backend, self.standard_tier)}

    def build(self, backends: Mapping[str, Backend]) -> FastSharePolicy:
        refs = self.references(backends)
        fast = resolve(backends, RouteSpec(backend=refs["fast_tier"][0], tier=self.fast_tier))
        standard = resolve(backends, RouteSpec(backend=refs["standard_tier"][0], tier=self.standard_tier))
        return FastSharePolicy(self.share, fast, standard)


class FastSharePolicy(RoutingPolicy):
    """Hands each developer an ``always`` policy on the fast or the standard route."""

    def __init__(self, share: float, fast: Route, standard: Route) -> None:
        self.share = share
        self.fast = AlwaysPolicy(fast)
        self.standard = AlwaysPolicy(standard)

    def adopters(self, developers: int) -> int:
        """How many of ``developers`` are on the fast tier: ``round(share × developers)``."""
        return round(self.share * developers)

    def for_developer(self, index: int, developers: int) -> RoutingPolicy:
        return self.fast if index < self.adopters(developers) else self.standard

    def for_session(self, difficulty: str, attempt: int) -> Route:
        """Without a developer: the standard route (the model asks :meth:`for_developer` first)."""
        return self.standard.route
