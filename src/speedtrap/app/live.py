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

__all__ = ["CHUNKS_PER_RUN", "LiveComparison", "Snapshot"]

CHUNKS_PER_RUN = 24
"""A run is shown in this many steps of equal simulated time."""


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
