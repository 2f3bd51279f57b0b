"""``escalate``: first sessions on one backend; repairs after a detected failure on a stronger one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.base import Route, RoutingPolicy, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class EscalateSpec(PolicySpec):
    """``first`` serves every task's first session; ``then`` serves every repair session."""

    kind: Literal["escalate"] = "escalate"
    first: RouteSpec
    then: RouteSpec

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        return {"first": (self.first.backend, self.first.tier), "then": (self.then.backend, self.then.tier)}

    def build(self, backends: Mapping[str, Backend]) -> EscalatePolicy:
        return EscalatePolicy(resolve(backends, self.first), resolve(backends, self.then))


class EscalatePolicy(RoutingPolicy):
    """Cheap or fast first; the strong backend once review has caught a mistake."""

    def __init__(self, first: Route, then: Route) -> None:
        self.first = first
        self.then = then

    def for_session(self, difficulty: str, attempt: int) -> Route:
        return self.first if attempt == 0 else self.then
