"""Where a calibration's stages keep their points (pure file handling; no Mesa): each stage's design
is written before its runs, with each parameter's value and, in ``u:<path>`` columns, its unit
coordinate, and read back so that a fresh run and a resumed one see the same numbers; the final
check's design can grow on a rerun (:mod:`speedtrap.experiments.calibration`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from speedtrap.analysis.history_matching import Wave, candidate_sample, non_implausible_mask
from speedtrap.analysis.sensitivity import points_from_unit
from speedtrap.analysis.space_filling import space_filling_subset
from speedtrap.config.experiment import Experiment

__all__ = ["UNIT_PREFIX", "grown_check_design", "stage_design"]

UNIT_PREFIX = "u:"
"""Design files hold each parameter's value and, in ``u:<path>`` columns, its unit coordinate."""

GROWN_CHECK_BATCHES = 128
"""At most this many seeded batches of candidates are drawn to grow a final check (each cut by every
wave). With 8 (until 2026-12-07) the 2026-12-07 calibration's check could not grow past 737 points:
about 1% of a batch in the last wave's box survives its emulators, ≈ 43 points a batch."""


def stage_design(
    path: Path, design: Experiment, names: Sequence[str], make: Callable[[], np.ndarray]
) -> tuple[np.ndarray, pd.DataFrame]:
    """A stage's unit coordinates and points: read from ``path``, or made by ``make()`` and written
    there first (read back, so a fresh run and a resumed one see the same numbers)."""
    if not path.exists():
        unit = np.asarray(make(), dtype=float)
        frame = points_from_unit(design, unit)
        for j, name in enumerate(names):
            frame[UNIT_PREFIX + name] = unit[:, j]
        frame.to_csv(path, index=False)
    frame = pd.read_csv(path)
    unit = frame[[UNIT_PREFIX + name for name in names]].to_numpy(dtype=float)
    return unit, points_from_unit(design, unit)


def grown_check_design(
    path: Path,
    design: Experiment,
    names: Sequence[str],
    make: Callable[[], np.ndarray],
    waves: Sequence[Wave],
    n: int,
    *,
    candidates: int,
    seed: int,
) -> tuple[np.ndarray, pd.DataFrame]:
    """The final check's design: as :func:`stage_design`, then grown to ``n`` points where a rerun asks
    for more than the file holds, or cut to its first ``n`` (a greedy maximin design's prefix is one
    itself). The new points are a maximin subset of the last wave's candidates, kept away from the
    points already there (whose runs stay valid); where fewer than twice as many new candidates as
    needed are left, batches of ``candidates`` more are drawn in the last wave's box and cut by every
    wave (at most :data:`GROWN_CHECK_BATCHES`, seeded)."""
    unit, pts = stage_design(path, design, names, make)
    if n > len(unit):
        last = waves[-1]
        pool = [last.non_implausible]
        for batch in range(GROWN_CHECK_BATCHES):
            if sum(map(len, pool)) - len(unit) >= 2 * (n - len(unit)):
                break
            sample = candidate_sample(candidates, *last.box, seed=seed + 7919 * (100_000 + batch))
            pool.append(sample[non_implausible_mask(sample, waves)])
        left = np.vstack(pool)
        more = left[space_filling_subset(left, n - len(unit), seed=len(unit), beside=unit)]
        frame = pd.read_csv(path)
        added = points_from_unit(design, more)
        for j, name in enumerate(names):
            added[UNIT_PREFIX + name] = more[:, j]
        pd.concat([frame, added[frame.columns]], ignore_index=True).to_csv(path, index=False)
        unit, pts = stage_design(path, design, names, make)
    return unit[:n], pts.iloc[:n].reset_index(drop=True)
