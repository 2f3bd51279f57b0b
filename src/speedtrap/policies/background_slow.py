"""``background_slow``: turns the developer is waiting on go to the interactive tier; background
turns — those of sessions the developer is not attending — go to the discounted slow tier.

The slow mode people ask for ("give me a slow mode that's cheaper instead"): an agent that runs while
its developer is away (in another session, at other work, resuming) does not make anyone wait, so its
turns can queue behind everyone else's at half the price. Whether a turn is background is decided when
it starts, as for ``interactive_fast``; a developer who comes back waits for the slow turn in flight.
The default tiers are those of the ``gpu-slow`` preset (``standard`` and ``slow``,
:mod:`speedtrap.config.presets`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from speedtrap.config.policy import PolicySpec, RouteSpec
from speedtrap.policies.base import Route, RoutingPolicy, only_backend, resolve

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class BackgroundSlowSpec(PolicySpec):
    """One backend (default: the scenario's only one); turns started while the developer attends the
    session use ``interactive_tier``, the others ``background_tier``."""

    kind: Literal["background_slow"] = "background_slow"
    backend: str | None = None
    interactive_tier: str = Field(default="standard", min_length=1)
    background_tier: str = Field(default="slow", min_length=1)

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        backend = self.backend if self.backend is not None else only_backend(backends, "backend")
        return {
            "interactive_tier": (backend, self.interactive_tier),
            "background_tier": (backend, self.background_tier),
        }

    def build(self, backends: Mapping[str, Backend]) -> BackgroundSlowPolicy:
        refs = self.references(backends)
        interactive = resolve(
            backends, RouteSpec(backend=refs["interactive_tier"][0], tier=self.interactive_tier)
        )
        background = resolve(
            backends, RouteSpec(backend=refs["background_tier"][0], tier=self.background_tier)
        )
        return BackgroundSlowPolicy(interactive, background)


class BackgroundSlowPolicy(RoutingPolicy):
    """Full price while a person waits; the slow tier while nobody does."""

    def __init__(self, interactive: Route, background: Route) -> None:
        self.interactive = interactive
        self.background = background

    def for_session(self, difficulty: str, attempt: int) -> Route:
        return self.interactive

    def for_turn(self, session: Route, attending: bool) -> Route:
        return self.interactive if attending else self.background
