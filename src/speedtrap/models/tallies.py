"""What a run's summary needs from its tasks, from the task table or folded as tasks finish.

:class:`TaskCounts` holds the aggregates of the tasks started in a run that the summary uses.
:func:`task_counts` takes them from the ``tasks`` table of a result; :class:`TaskTally` folds them
as the run goes, so a summary-only run (the sweeps' path) does not keep a finished task once
nothing can change it any more (outcome ``ok``, ``fixed`` or ``reworked``): its memory grows with
the tasks in progress, plus 8 bytes per completed task for the lead-time quantiles. Both give the
same numbers bit for bit: sums are exactly rounded (:mod:`speedtrap.exact`), and quantiles depend on
the values, not their order.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from speedtrap.exact import ExactSum

if TYPE_CHECKING:
    from speedtrap.agents.task import Task

COMPLETED_OUTCOMES = ("ok", "fixed", "reworked")
"""Task outcomes that count as completed: done right (``open``: still in progress at the horizon;
``escaped``: accepted with an undetected mistake, rework not done)."""
ACCEPTED_OUTCOMES = ("ok", "fixed", "escaped", "reworked")
"""Task outcomes of accepted tasks, right or defective."""
FINAL_OUTCOMES = frozenset(COMPLETED_OUTCOMES)
"""Outcomes after which nothing in a run changes a task's record (an ``escaped`` task is reworked
when its defect surfaces)."""


@dataclass(frozen=True)
class TaskCounts:
    """The task aggregates of a run's summary."""

    started: int
    outcomes: dict[str, int]
    """Tasks per outcome (``open``, ``ok``, ``fixed``, ``escaped``, ``reworked``)."""
    defects_surfaced: int
    """Tasks whose escaped defect surfaced and was reworked (``rework_done_s`` set)."""
    rework_cut_off_s: float
    """Exactly rounded sum of ``rework_s`` over ``escaped`` tasks (NaN left out)."""
    mean_effort_s: float
    """Exactly rounded mean of ``effort_s`` over the tasks started (NaN left out; NaN if none)."""
    lead_times_s: np.ndarray
    """``end_s − start_s`` of the completed tasks, in no particular order."""

    def count(self, outcomes: Iterable[str]) -> int:
        """Tasks with any of ``outcomes``."""
        return sum(self.outcomes.get(o, 0) for o in outcomes)


def task_counts(tasks: pd.DataFrame) -> TaskCounts:
    """The aggregates of a ``tasks`` table (schema ``speedtrap.models.results.TASK_COLUMNS``)."""
    outcome = tasks["outcome"]
    escaped = outcome == "escaped"
    done = outcome.isin(COMPLETED_OUTCOMES)
    effort = ExactSum(skip_nan=True)
    effort.extend(tasks["effort_s"].to_numpy(dtype=np.float64))
    cut_off = ExactSum(skip_nan=True)
    cut_off.extend(tasks.loc[escaped, "rework_s"].to_numpy(dtype=np.float64))
    return TaskCounts(
        started=len(tasks),
        outcomes={str(k): int(v) for k, v in outcome.value_counts().items()},
        defects_surfaced=int(tasks["rework_done_s"].notna().sum()),
        rework_cut_off_s=cut_off.total,
        mean_effort_s=effort.mean(),
        lead_times_s=tasks.loc[done, "lead_time_s"].to_numpy(dtype=np.float64),
    )


class TaskTally:
    """Tasks folded into :class:`TaskCounts` as they become final.

    ``started`` is the model's ``on_task_started`` hook. Tasks are kept in a list that is swept
    when it has doubled since the last sweep: final tasks are folded and dropped, the others kept,
    so the list holds about twice the tasks in progress (at least :data:`SWEEP_MIN`).
    """

    SWEEP_MIN = 1024

    __slots__ = ("_defects", "_effort", "_lead", "_next_sweep", "_outcomes", "_started", "live")

    def __init__(self) -> None:
        self.live: list[Task] = []
        self._next_sweep = self.SWEEP_MIN
        self._started = 0
        self._outcomes: dict[str, int] = {}
        self._defects = 0
        self._effort = ExactSum(skip_nan=True)
        self._lead = array("d")

    def started(self, task: Task) -> None:
        """A task was begun."""
        self.live.append(task)
        if len(self.live) >= self._next_sweep:
            self._sweep()

    def _sweep(self) -> None:
        keep = []
        for task in self.live:
            if task.outcome in FINAL_OUTCOMES:
                self._fold(task)
            else:
                keep.append(task)
        self.live = keep
        self._next_sweep = max(self.SWEEP_MIN, 2 * len(keep))

    def _fold(self, task: Task) -> None:
        self._started += 1
        outcome = task.outcome
        self._outcomes[outcome] = self._outcomes.get(outcome, 0) + 1
        if not math.isnan(task.rework_done_s):
            self._defects += 1
        self._effort.add(task.effort_s)
        if outcome in FINAL_OUTCOMES:
            self._lead.append(task.end_s - task.start_s)

    def counts(self) -> TaskCounts:
        """The aggregates of every task started so far (the tally itself is not changed)."""
        live = task_counts_of(self.live)
        outcomes = dict(self._outcomes)
        for outcome, n in live.outcomes.items():
            outcomes[outcome] = outcomes.get(outcome, 0) + n
        effort = ExactSum(skip_nan=True)
        effort.merge(self._effort)
        effort.extend([t.effort_s for t in self.live])
        return TaskCounts(
            started=self._started + live.started,
            outcomes=outcomes,
            defects_surfaced=self._defects + live.defects_surfaced,
            rework_cut_off_s=live.rework_cut_off_s,  # only live tasks can be escaped
            mean_effort_s=effort.mean(),
            lead_times_s=np.concatenate([np.frombuffer(self._lead, dtype=np.float64), live.lead_times_s]),
        )


def task_counts_of(tasks: list[Task]) -> TaskCounts:
    """The aggregates of a list of tasks, as :func:`task_counts` gives them for their table."""
    return task_counts(
        pd.DataFrame(
            {
                "outcome": pd.Series([t.outcome for t in tasks], dtype="str"),
                "effort_s": pd.Series([t.effort_s for t in tasks], dtype="float64"),
                "rework_s": pd.Series([t.rework_s for t in tasks], dtype="float64"),
                "rework_done_s": pd.Series([t.rework_done_s for t in tasks], dtype="float64"),
                "lead_time_s": pd.Series([t.end_s - t.start_s for t in tasks], dtype="float64"),
            }
        )
    )
