"""Runs that advance in chunks, so that a page can show them while they run.

:class:`LiveComparison` holds one :class:`~speedtrap.models.workflow.WorkflowModel` per arm, all
with the same seed (common random numbers: the same developers meet the same tasks on every
arm), and advances them together one chunk of simulated time at a time. Each chunk ends with a
:class:`Snapshot`: every arm's results so far (developers charged up to the chunk's end). No
Solara here: the page calls :meth:`LiveComparison.step` from a worker thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from speedtrap.config.scenario import Scenario
from speedtrap.models.results import RunResult
from speedtrap.models.workflow import WorkflowModel

__all__ = ["CHUNKS_PER_RUN", "HINT", "LiveComparison", "Snapshot", "View", "view_of"]

CHUNKS_PER_RUN = 24
"""A run is shown in this many steps of equal simulated time."""

HINT = "Choose a scenario and backends, then Run (to the end) or Step (one chunk at a time)."
"""What the page says before anything has run (and only then)."""


@dataclass(frozen=True)
class Snapshot:
    """Every arm's results at simulated time ``now_s`` of ``horizon_s``."""

    now_s: float
    horizon_s: float
    results: dict[str, RunResult]

    @property
    def progress(self) -> float:
        """Share of the horizon simulated (0–1)."""
        return self.now_s / self.horizon_s if self.horizon_s > 0 else 1.0

    @property
    def done(self) -> bool:
        return self.now_s >= self.horizon_s


class LiveComparison:
    """The arms' models, advanced together (``scenarios`` by arm name, one ``seed``)."""

    def __init__(self, scenarios: dict[str, Scenario], seed: int | None, *, chunks: int = CHUNKS_PER_RUN):
        if not scenarios:
            raise ValueError("nothing to run: no arms")
        horizons = {s.horizon_s for s in scenarios.values()}
        if len(horizons) != 1:
            raise ValueError("every arm must have the same horizon")
        self.horizon_s = horizons.pop()
        self.chunk_s = self.horizon_s / chunks
        self.seed = seed
        self.models = {name: WorkflowModel(s, rng=seed, trace=True) for name, s in scenarios.items()}
        self.now_s = 0.0

    @property
    def done(self) -> bool:
        return self.now_s >= self.horizon_s

    def step(self) -> Snapshot:
        """Advance every arm by one chunk (to the horizon at most) and return the snapshot."""
        target = min(self.horizon_s, self.now_s + self.chunk_s)
        if math.isclose(target, self.horizon_s, rel_tol=1e-12):
            target = self.horizon_s
        for model in self.models.values():
            model.run_until(target)
        self.now_s = target
        return self.snapshot()

    def snapshot(self) -> Snapshot:
        """The arms' results as of now."""
        return Snapshot(
            now_s=self.now_s,
            horizon_s=self.horizon_s,
            results={name: model.result() for name, model in self.models.items()},
        )


@dataclass(frozen=True)
class View:
    """What the page shows: a ``state`` (idle, starting, running, paused or done), a status line
    with the progress, and the snapshot to draw (None before the first chunk has ended)."""

    state: str
    status: str
    snapshot: Snapshot | None
    percent: float = 0.0
    """The share of the horizon simulated (0–100), the status line's share."""

    @property
    def bar(self) -> float | bool:
        """The progress bar's value (``solara.ProgressLinear``: 0–100, True indeterminate, False
        hidden): hidden before any run, indeterminate until the first chunk ends, then the status
        line's share of the horizon, so that the bar is full when the status says 100%."""
        if self.state == "idle":
            return False
        if self.state == "starting":
            return True
        return self.percent


def view_of(comparison: LiveComparison | None, snapshot: Snapshot | None, *, running: bool) -> View:
    """The page's view of a run: the hint only when there is no run; while one runs, the simulated
    time it has reached of its horizon (hours) and, when the views drawn lag behind it (they are
    redrawn about once a second), the time they show; the views of the latest snapshot drawn."""
    if comparison is None:
        return View("idle", HINT, None)
    now_s, horizon_s = comparison.now_s, comparison.horizon_s
    share = now_s / horizon_s if horizon_s > 0 else 1.0
    if snapshot is None and running:
        state = "starting"
    elif comparison.done and (snapshot is None or snapshot.done):
        state = "done"
    else:
        state = "running" if running else "paused"
    shown = "running" if state == "starting" else state
    line = f"{shown}: {now_s / 3600:.2f} of {horizon_s / 3600:g} h simulated ({100 * share:.0f}%)"
    if snapshot is None:
        if state == "starting":
            line += f"; the views appear when the first {comparison.chunk_s / 3600:.2f} h are simulated"
    elif snapshot.now_s < now_s:
        line += f"; the views show the first {snapshot.now_s / 3600:.2f} h"
    return View(state, line, snapshot, 100 * share)
