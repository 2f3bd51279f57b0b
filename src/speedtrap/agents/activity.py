"""What a developer is doing at any instant: exactly one activity."""

from __future__ import annotations

from enum import IntEnum
from typing import Protocol


class Activity(IntEnum):
    """A developer's activity. ``WAITING`` is split by the ledger into queue, time-to-first-token,
    generation and tool time using the awaited turn's timestamps."""

    PROMPTING = 0
    WAITING = 1
    REVIEWING = 2
    FIXING = 3
    SWITCHING = 4
    OTHER_WORK = 5
    IDLE = 6
    MANUAL = 7


class ActivityRecorder(Protocol):
    """Where a developer charges elapsed time (the model's ledger)."""

    def record(self, developer: int, activity: Activity, start_s: float, end_s: float, task: int) -> None:
        """Charge ``[start_s, end_s)`` to ``activity`` (``task``: the task index it served, or -1)."""
        ...

    def record_wait(
        self,
        developer: int,
        start_s: float,
        end_s: float,
        phases: tuple[float, float, float, float],
        task: int,
    ) -> None:
        """Charge ``[start_s, end_s)`` of waiting on one agent turn whose request was admitted,
        produced its first token, finished, and whose tool call ended at ``phases`` (``inf`` for
        instants not reached yet)."""
        ...
