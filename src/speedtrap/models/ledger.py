"""The ledger: every developer-second of the horizon belongs to exactly one category.

Developers charge each interval between two of their transitions to the activity they were in
(:class:`speedtrap.agents.activity.Activity`); the ledger maps activities to categories and
splits a wait on an agent turn into queue, time-to-first-token, generation and tool time from
the turn's timestamps. Because a developer's intervals tile ``[0, now]``, the categories of each
developer sum to the elapsed time (the horizon, at the end of a run), up to float rounding.
"""

from __future__ import annotations

import pandas as pd

from speedtrap.agents.activity import Activity
from speedtrap.config.ledger import LEDGER_CATEGORIES

_COLUMN: dict[Activity, int] = {
    Activity.PROMPTING: 0,
    Activity.REVIEWING: 5,
    Activity.FIXING: 6,
    Activity.SWITCHING: 7,
    Activity.MANUAL: 8,
    Activity.OTHER_WORK: 9,
    Activity.IDLE: 10,
}


def split_wait(
    start_s: float, end_s: float, admitted_s: float, first_token_s: float, done_s: float
) -> tuple[float, float, float, float]:
    """Split a wait ``[start_s, end_s]`` on one turn into (queue, ttft, generation, tool) seconds.

    The turn's request was admitted at ``admitted_s``, produced its first token at
    ``first_token_s`` and its last at ``done_s`` (``inf`` for instants not reached); everything
    after ``done_s`` is tool time. The parts are non-negative and sum to ``end_s − start_s``.
    """
    b1 = min(max(admitted_s, start_s), end_s)
    b2 = min(max(first_token_s, b1), end_s)
    b3 = min(max(done_s, b2), end_s)
    return (b1 - start_s, b2 - b1, b3 - b2, end_s - b3)


class Ledger:
    """Seconds per developer and category, and optionally the full activity trace.

    ``seconds[d][c]`` accumulates developer ``d``'s time in category ``LEDGER_CATEGORIES[c]``.
    With ``trace=True`` every charged interval is kept as a row (developer, task, category,
    start_s, end_s) for timelines and checks.
    """

    def __init__(self, developers: int, *, trace: bool = False) -> None:
        self.seconds: list[list[float]] = [[0.0] * len(LEDGER_CATEGORIES) for _ in range(developers)]
        self._trace: list[tuple[int, int, int, float, float]] | None = [] if trace else None

    def record(self, developer: int, activity: Activity, start_s: float, end_s: float, task: int) -> None:
        """Charge ``[start_s, end_s)`` to the category of ``activity`` (not ``WAITING``)."""
        column = _COLUMN[activity]
        self.seconds[developer][column] += end_s - start_s
        if self._trace is not None:
            self._trace.append((developer, task, column, start_s, end_s))

    def record_wait(
        self,
        developer: int,
        start_s: float,
        end_s: float,
        phases: tuple[float, float, float, float],
        task: int,
    ) -> None:
        """Charge a wait on one agent turn, split by :func:`split_wait` (``phases``: admitted,
        first token, done, tool end; the tool end only bounds the turn and is not needed)."""
        # split_wait, inlined (once per agent turn): queue, ttft, generation, tool in columns 1-4;
        # max(a, b) and min(a, b) written out (``b if b > a else a``, ``b if b < a else a``: the
        # built-ins' value, without their calls)
        admitted, first, done = phases[0], phases[1], phases[2]
        b1 = start_s if start_s > admitted else admitted
        if end_s < b1:
            b1 = end_s
        b2 = b1 if b1 > first else first
        if end_s < b2:
            b2 = end_s
        b3 = b2 if b2 > done else done
        if end_s < b3:
            b3 = end_s
        row = self.seconds[developer]
        trace = self._trace
        if trace is None:
            if b1 > start_s:
                row[1] += b1 - start_s
            if b2 > b1:
                row[2] += b2 - b1
            if b3 > b2:
                row[3] += b3 - b2
            if end_s > b3:
                row[4] += end_s - b3
            return
        t = start_s
        for column, part in ((1, b1 - start_s), (2, b2 - b1), (3, b3 - b2), (4, end_s - b3)):
            if part > 0.0:
                row[column] += part
                trace.append((developer, task, column, t, t + part))
                t += part

    def frame(self) -> pd.DataFrame:
        """Tidy ledger: one row per (developer, category) with ``seconds`` (every category present)."""
        n = len(self.seconds)
        return pd.DataFrame(
            {
                "developer": [d for d in range(n) for _ in LEDGER_CATEGORIES],
                "category": pd.Categorical(
                    [c for _ in range(n) for c in LEDGER_CATEGORIES], categories=list(LEDGER_CATEGORIES)
                ),
                "seconds": [s for row in self.seconds for s in row],
            }
        )

    def trace_frame(self) -> pd.DataFrame | None:
        """The activity trace (``None`` unless built with ``trace=True``), in charge order."""
        if self._trace is None:
            return None
        rows = self._trace
        return pd.DataFrame(
            {
                "developer": pd.Series([r[0] for r in rows], dtype="int64"),
                "task": pd.Series([r[1] for r in rows], dtype="int64"),
                "category": pd.Categorical(
                    [LEDGER_CATEGORIES[r[2]] for r in rows], categories=list(LEDGER_CATEGORIES)
                ),
                "start_s": pd.Series([r[3] for r in rows], dtype="float64"),
                "end_s": pd.Series([r[4] for r in rows], dtype="float64"),
            }
        )
