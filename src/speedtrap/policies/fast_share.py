"""``fast_share``: a share of the developers buys fast mode; everyone shares one fleet.

The first ``round(share × developers)`` developers send every turn to ``fast_tier``, the others
to ``standard_tier`` of the same backend. Which developers adopt is fixed by index, so the task
stream of each developer is unchanged across shares (common random numbers): only the routing
and the contention differ. This is the fast-mode externality question of docs/design.md §1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.policies.always import AlwaysPolicy
from speedtrap.policies.base import Route, RoutingPolicy
from speedtrap.policies.interactive_fast import InteractiveFastSpec

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class FastShareSpec(InteractiveFastSpec):
    """``share`` of the developers (0–1) on ``fast_tier`` of ``backend`` (default: the scenario's
    only backend), the rest on ``standard_tier`` (default: the backend's default tier); the tier
    fields and their checks are those of ``interactive_fast``."""

    kind: Literal["fast_share"] = "fast_share"  # type: ignore[assignment]
    share: float = Field(default=0.0, ge=0.0, le=1.0, description="Share of developers on the fast tier.")

    def build(self, backends: Mapping[str, Backend]) -> FastSharePolicy:  # type: ignore[override]
        return FastSharePolicy(self.share, *self.routes(backends))


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
