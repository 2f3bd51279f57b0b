"""Boxes that survive resampling: a PRIM box is reported only when it is more than the samples' noise.

:func:`stable_prim_box` finds the PRIM box of the cases as
:func:`speedtrap.analysis.scenario_discovery.prim_box` does, peeling no further than
:data:`MIN_BOX_MASS` of the samples, and keeps it as **stable** only when all of these hold:

1. **Enough samples**: at least :data:`MIN_STABLE_SAMPLES`.
2. **Mass**: the box holds at least :data:`MIN_BOX_MASS` of the samples.
3. **Quasi-p values** (Bryant & Lempert 2010, "Thinking inside the box", Technological Forecasting
   and Social Change 77(1); the EMA Workbench's ``PrimBox.p_values``: a one-sided binomial test of the
   box's density against the box with that restriction removed): every restricted input's is at most
   :data:`MAX_QUASI_P`.
4. **Resampling** (the EMA Workbench's ``PrimBox.resample``: PRIM rerun on :data:`RESAMPLE_ITERATIONS`
   random halves of the samples): every restricted input is restricted again in at least
   :data:`MIN_REPRODUCED` of them, in the rerun's box of the nearest coverage or of the nearest density
   (either: the nearest coverage is the rerun's first step of that coverage, which is often the
   unrestricted box when coverage stays 1 for many peeling steps).
5. **Bootstrap**: PRIM rerun on :data:`BOOTSTRAPS` bootstrap resamples (samples drawn with
   replacement); the median Jaccard overlap between the samples each bootstrap box holds and those the
   box holds is at least :data:`MIN_BOOTSTRAP_OVERLAP`.

A box that fails any of them is reported as "no stable box", with the reasons. Every random draw is
seeded (:data:`STABILITY_SEED`), so the answer is the same on every run.

Pure: numbers and DataFrames in, a :class:`StableBox` out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.scenario_discovery import (
    DEFAULT_MIN_DENSITY,
    DEFAULT_PEEL_ALPHA,
    PRIM_NOTICES,
    Box,
    checked_inputs,
    everywhere_box,
    measured_box,
    prim_bounds,
    prim_box,
    prim_trajectory,
)

MIN_BOX_MASS = 0.10
"""Smallest share of the samples a reported box may hold (assumption: one sample in ten; twice the EMA
Workbench's peeling floor of 5%, so that a box is a region rather than a few samples)."""
MIN_STABLE_SAMPLES = 20
"""Fewest samples from which a box is judged stable: a box of :data:`MIN_BOX_MASS` then holds at least
two samples, and each half-sample resample has ten (assumption)."""
MAX_QUASI_P = 0.05
"""Largest quasi-p value of a restricted input (Bryant & Lempert 2010 use 0.05)."""
RESAMPLE_ITERATIONS = 10
"""Half-sample reruns of PRIM (the EMA Workbench's ``resample`` default)."""
MIN_REPRODUCED = 0.5
"""Each restricted input must be restricted again in at least this share of the reruns (assumption: a
majority)."""
BOOTSTRAPS = 20
"""Bootstrap reruns of PRIM (assumption: a median of 20 overlaps settles which side of
:data:`MIN_BOOTSTRAP_OVERLAP` a box lies on unless it is close; each rerun takes about 0.3 s on 100
samples, so more would slow every claim)."""
MIN_BOOTSTRAP_OVERLAP = 0.5
"""Median Jaccard overlap of the bootstrap boxes with the box (assumption: they share more samples
than they do not)."""
STABILITY_SEED = 0
"""Seed of the resampling and the bootstrap."""
NO_STABLE_BOX = "no stable box"


@dataclass(frozen=True)
class StableBox:
    """A PRIM box and whether it survives resampling (module docstring). ``box`` is ``None`` when there
    is no case; ``quasi_p`` and ``reproduced`` are per restricted input; ``bootstrap_overlap`` is the
    median Jaccard overlap (NaN when not computed); ``reasons`` say why it is not stable."""

    box: Box | None
    stable: bool
    quasi_p: dict[str, float] = field(default_factory=dict)
    reproduced: dict[str, float] = field(default_factory=dict)
    bootstrap_overlap: float = math.nan
    reasons: tuple[str, ...] = ()

    def describe(self, what: str, labels: Mapping[str, str] | None = None) -> str:
        """The box in words when it is stable, else "no stable box (why)"."""
        if self.box is None:
            return f"{NO_STABLE_BOX} (no sample {what})"
        if not self.stable:
            reasons = "; ".join(self.reasons)
            for path, label in sorted((labels or {}).items(), key=lambda kv: -len(kv[0])):
                reasons = reasons.replace(path, label)  # inputs named as the claim file labels them
            return f"{NO_STABLE_BOX} ({reasons})"
        return self.box.describe(what, labels) + f", stable: bootstrap overlap {self.bootstrap_overlap:.2f}"

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for JSON)."""
        return {
            "box": self.box.as_dict() if self.box is not None else None,
            "stable": self.stable,
            "quasi_p": dict(self.quasi_p),
            "reproduced": dict(self.reproduced),
            "bootstrap_overlap": self.bootstrap_overlap,
            "reasons": list(self.reasons),
            "rule": STABILITY_RULE,
        }


STABILITY_RULE = (
    f"a box is reported when it holds ≥ {MIN_BOX_MASS:.0%} of ≥ {MIN_STABLE_SAMPLES} samples, every "
    f"restricted input has quasi-p ≤ {MAX_QUASI_P:g} and is restricted again in ≥ {MIN_REPRODUCED:.0%} "
    f"of {RESAMPLE_ITERATIONS} half-sample PRIM reruns, and the median Jaccard overlap of {BOOTSTRAPS} "
    f"bootstrap boxes with it is ≥ {MIN_BOOTSTRAP_OVERLAP:g}"
)


def _jaccard(a: np.ndarray, b: np.ndarray) -> float:
    either = int((a | b).sum())
    return int((a & b).sum()) / either if either else 0.0


def _bootstrap_overlap(x: pd.DataFrame, flags: np.ndarray, box: Box, *, min_density: float) -> float:
    rng = np.random.default_rng(STABILITY_SEED)
    inside = box.contains(x)
    overlaps = []
    for _ in range(BOOTSTRAPS):
        index = rng.integers(0, len(flags), len(flags))
        y = flags[index]
        if not y.any():
            overlaps.append(0.0)
            continue
        other = prim_box(
            x.iloc[index].reset_index(drop=True), y, min_density=min_density, mass_min=MIN_BOX_MASS
        )
        overlaps.append(_jaccard(inside, other.contains(x)) if other is not None else 0.0)
    return float(np.median(overlaps))


def _quasi_p(found: Any, pick: int, restricted: Sequence[str]) -> dict[str, float]:
    values = found.p_values[pick]
    out = {}
    for path in restricted:
        sides = [float(p) for p in values.get(path, []) if float(p) >= 0]  # −1: that side is open
        out[path] = max(sides) if sides else math.nan
    return out


def _reproduced(found: Any, pick: int, restricted: Sequence[str]) -> dict[str, float]:
    with warnings.catch_warnings():
        for notice in PRIM_NOTICES:
            warnings.filterwarnings("ignore", message=notice)
        scores = found.resample(i=pick, iterations=RESAMPLE_ITERATIONS, p=0.5, rng=STABILITY_SEED)
    out = {}
    for path in restricted:
        row = scores.loc[path] if path in scores.index else None
        out[path] = (
            float(max(row["reproduce coverage"], row["reproduce density"])) / 100 if row is not None else 0.0
        )
    return out


def stable_prim_box(
    x: pd.DataFrame,
    y: Sequence[bool] | np.ndarray | pd.Series,
    *,
    min_density: float = DEFAULT_MIN_DENSITY,
    peel_alpha: float = DEFAULT_PEEL_ALPHA,
) -> StableBox:
    """The PRIM box of the cases ``y`` over the numeric inputs ``x`` and whether it is stable (module
    docstring)."""
    x, flags = checked_inputs(x, y)
    if not flags.any():
        return StableBox(None, False, reasons=("no case",))
    if flags.all():  # every sample a case: the box is everywhere, stable given enough samples
        few = len(flags) < MIN_STABLE_SAMPLES
        why = (f"{len(flags)} samples, fewer than {MIN_STABLE_SAMPLES}",) if few else ()
        return StableBox(everywhere_box(x, flags, "prim"), not few, bootstrap_overlap=1.0, reasons=why)
    reasons: list[str] = []
    if len(flags) < MIN_STABLE_SAMPLES:
        box = prim_box(x, flags, min_density=min_density, peel_alpha=peel_alpha, mass_min=MIN_BOX_MASS)
        return StableBox(box, False, reasons=(f"{len(flags)} samples, fewer than {MIN_STABLE_SAMPLES}",))
    found, pick = prim_trajectory(
        x, flags, min_density=min_density, peel_alpha=peel_alpha, mass_min=MIN_BOX_MASS
    )
    bounds = prim_bounds(found, pick, x)
    box = measured_box(bounds, x, flags, "prim")
    restricted = [b.path for b in bounds]
    if box.mass < MIN_BOX_MASS:
        reasons.append(f"mass {box.mass:.2f} < {MIN_BOX_MASS:g}")
    if not restricted:
        reasons.append("PRIM restricts no input")
    quasi = _quasi_p(found, pick, restricted)
    weak = [p for p, q in quasi.items() if not q <= MAX_QUASI_P]
    if weak:
        reasons.append(f"quasi-p > {MAX_QUASI_P:g} for {', '.join(weak)}")
    try:
        reproduced = _reproduced(found, pick, restricted) if restricted else {}
    except (ValueError, IndexError, KeyError, ZeroDivisionError) as exc:  # a half-sample with no case
        reproduced = {}
        reasons.append(f"the half-sample reruns failed ({type(exc).__name__})")
    rare = [p for p, r in reproduced.items() if r < MIN_REPRODUCED]
    if rare:
        reasons.append(f"restricted in < {MIN_REPRODUCED:.0%} of half-sample reruns: {', '.join(rare)}")
    overlap = _bootstrap_overlap(x, flags, box, min_density=min_density)
    if not overlap >= MIN_BOOTSTRAP_OVERLAP:
        reasons.append(f"bootstrap overlap {overlap:.2f} < {MIN_BOOTSTRAP_OVERLAP:g}")
    return StableBox(box, not reasons, quasi, reproduced, overlap, tuple(reasons))


__all__ = [
    "BOOTSTRAPS",
    "MAX_QUASI_P",
    "MIN_BOOTSTRAP_OVERLAP",
    "MIN_BOX_MASS",
    "MIN_REPRODUCED",
    "MIN_STABLE_SAMPLES",
    "NO_STABLE_BOX",
    "RESAMPLE_ITERATIONS",
    "STABILITY_RULE",
    "STABILITY_SEED",
    "StableBox",
    "stable_prim_box",
]
