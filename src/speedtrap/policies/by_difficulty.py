"""``by_difficulty``: the task's difficulty class picks the backend (e.g. easy work on the fast one)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.base import Route, RoutingPolicy, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class ByDifficultySpec(PolicySpec):
    """``routes`` maps a difficulty class to a route; classes not listed go to ``default``."""

    kind: Literal["by_difficulty"] = "by_difficulty"
    routes: dict[str, RouteSpec] = Field(default_factory=dict)
    default: RouteSpec | None = None

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        refs = {f"routes.{d}": (r.backend, r.tier) for d, r in self.routes.items()}
        if self.default is not None:
            refs["default"] = (self.default.backend, self.default.tier)
        return refs

    def check(self, backends: Mapping[str, Backend], difficulties: list[str]) -> None:
        super().check(backends, difficulties)
        unknown = sorted(set(self.routes) - set(difficulties))
        if unknown:
            raise ValueError(
                f"policy.routes: unknown difficulty {unknown[0]!r} (task mix has: {', '.join(difficulties)})"
            )
        missing = [d for d in difficulties if d not in self.routes]
        if missing and self.default is None:
            raise ValueError(f"policy.routes: no route for difficulty {missing[0]!r} and no policy.default")

    def build(self, backends: Mapping[str, Backend]) -> ByDifficultyPolicy:
        routes = {d: resolve(backends, r) for d, r in self.routes.items()}
        default = resolve(backends, self.default) if self.default is not None else None
        return ByDifficultyPolicy(routes, default)


class ByDifficultyPolicy(RoutingPolicy):
    """A fixed route per difficulty class (every attempt of a task goes to the same route)."""

    def __init__(self, routes: dict[str, Route], default: Route | None) -> None:
        self.routes = routes
        self.default = default

    def for_session(self, difficulty: str, attempt: int) -> Route:
        route = self.routes.get(difficulty, self.default)
        if route is None:
            raise KeyError(f"no route for difficulty {difficulty!r}")
        return route
