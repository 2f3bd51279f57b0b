"""``interactive_fast``: the fast tier while the developer is attending, the standard tier while away."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.base import Route, RoutingPolicy, only_backend, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class InteractiveFastSpec(PolicySpec):
    """One backend (default: the scenario's only one); turns started while the developer waits on
    the session use ``fast_tier``, the others ``standard_tier`` (default: the backend's default)."""

    kind: Literal["interactive_fast"] = "interactive_fast"
    backend: str | None = None
    fast_tier: str = Field(default="fast", min_length=1)
    standard_tier: str | None = None

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        backend = self.backend if self.backend is not None else only_backend(backends, "backend")
        return {"fast_tier": (backend, self.fast_tier), "standard_tier": (backend, self.standard_tier)}

    def routes(self, backends: Mapping[str, Backend]) -> tuple[Route, Route]:
        """The (fast, standard) routes, tiers resolved."""
        refs = self.references(backends)
        fast = resolve(backends, RouteSpec(backend=refs["fast_tier"][0], tier=self.fast_tier))
        standard = resolve(backends, RouteSpec(backend=refs["standard_tier"][0], tier=self.standard_tier))
        return fast, standard

    def build(self, backends: Mapping[str, Backend]) -> InteractiveFastPolicy:
        return InteractiveFastPolicy(*self.routes(backends))


class InteractiveFastPolicy(RoutingPolicy):
    """Pay for speed only while a person is watching."""

    def __init__(self, fast: Route, standard: Route) -> None:
        self.fast = fast
        self.standard = standard

    def for_session(self, difficulty: str, attempt: int) -> Route:
        return self.standard

    def for_turn(self, session: Route, attending: bool) -> Route:
        return self.fast if attending else self.standard
