"""``manual``: no AI — the developer does every task by hand (the baseline every backend is
compared with, paired by seed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from speedtrap.config.policy import PolicySpec
from speedtrap.policies.base import Route, RoutingPolicy

if TYPE_CHECKING:
    from speedtrap.config.backend import Backend


class ManualSpec(PolicySpec):
    """Every task is done by hand in its human-effort time (``task_mix.effort_s``); a hand-made
    change ships a defect with ``developer.manual.escape_prob``. The scenario's backends stay idle."""

    kind: Literal["manual"] = "manual"

    def references(self, backends: Mapping[str, Backend]) -> dict[str, tuple[str, str | None]]:
        return {}

    def build(self, backends: Mapping[str, Backend]) -> ManualPolicy:
        return ManualPolicy()


class ManualPolicy(RoutingPolicy):
    """Routes nothing: the developer never opens an agent session."""

    manual = True

    def for_session(self, difficulty: str, attempt: int) -> Route:
        raise RuntimeError("policy 'manual' opens no agent sessions")
