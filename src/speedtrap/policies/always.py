"""``always``: every session and turn goes to one backend and tier."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.base import Route, RoutingPolicy, only_backend, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class AlwaysSpec(PolicySpec):
    """Route everything to ``backend`` (default: the scenario's only backend) on ``tier``
    (default: the backend's default tier)."""

    kind: Literal["always"] = "always"
    backend: str | None = None
    tier: str | None = None

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        backend = self.backend if self.backend is not None else only_backend(backends, "backend")
        return {"backend": (backend, self.tier)}

    def build(self, backends: Mapping[str, Backend]) -> AlwaysPolicy:
        backend, tier = self.references(backends)["backend"]
        return AlwaysPolicy(resolve(backends, RouteSpec(backend=backend, tier=tier)))


class AlwaysPolicy(RoutingPolicy):
    """One route for everything."""

    def __init__(self, route: Route) -> None:
        self.route = route

    def for_session(self, difficulty: str, attempt: int) -> Route:
        return self.route
