"""How far a calibration identifies each behaviour parameter: the span of the accepted members over
the parameter's sourced range (pure functions; docs/validation.md, "What the data leave open").

A parameter's **span share** is the range its members cover, ``max − min``, over its sourced range
``high − low``, both on the parameter's own scale (the log for ``scale = log``, as the calibration
samples it). A parameter whose members still span :data:`UNIDENTIFIED_SPAN` or more of its range is
**unidentified**: the published targets rule out little of it. The measure is crude (one outlying
member widens it; with few members it understates the spread a larger ensemble would show), which is
why the member count is printed beside it.

**A test that does not depend on the member count.** The span of ``n`` members drawn uniformly over
the range (on its scale, as the calibration's Latin hypercubes draw them) is the range of ``n``
uniform draws, whose distribution is known: ``P(span ≤ r) = n·r^(n−1) − (n−1)·r^n`` (the sample
range of the uniform distribution). ``p_uniform`` is that probability at the observed span: small when
the members are more concentrated than members the data said nothing about would be. A parameter
is **concentrated** when ``p_uniform`` < :data:`CONCENTRATED_P` — the targets have pinned part of its
range, whatever the ensemble's size. With few members the 80% span rule calls parameters identified
by chance (13 uniform draws span less than 80% of their range 23% of the time; 34 draws 0.5%), so the
two are printed together.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = [
    "CONCENTRATED_P",
    "IDENTIFICATION_COLUMNS",
    "UNIDENTIFIED_SPAN",
    "parameter_spans",
    "uniform_range_cdf",
]

UNIDENTIFIED_SPAN = 0.8
"""A parameter whose members span at least this share of its sourced range is unidentified."""

CONCENTRATED_P = 0.05
"""A parameter whose members' span is smaller than ``n`` uniform draws' would be with probability
below this is concentrated (module docstring)."""

IDENTIFICATION_COLUMNS = (
    "path",
    "low",
    "high",
    "scale",
    "member_min",
    "member_max",
    "span",
    "unidentified",
    "p_uniform",
    "concentrated",
)
"""Columns of :func:`parameter_spans`: the sourced range and scale, the members' extremes (in the
parameter's unit), the span share (0–1), whether it is at least :data:`UNIDENTIFIED_SPAN`, the
probability that as many uniform draws span no more (:func:`uniform_range_cdf`) and whether that is
below :data:`CONCENTRATED_P`."""


def uniform_range_cdf(span: float, n: int) -> float:
    """``P(R ≤ span)`` for the range ``R`` of ``n`` independent uniform draws on [0, 1]:
    ``n·span^(n−1) − (n−1)·span^n`` (1 for ``n`` < 2, where the range is 0)."""
    if not 0.0 <= span <= 1.0:
        raise ValueError(f"span must lie in [0, 1], got {span}")
    if n < 2:
        return 1.0
    return float(n * span ** (n - 1) - (n - 1) * span**n)


def _on_scale(values: np.ndarray, scale: str) -> np.ndarray:
    return np.log(values) if scale == "log" else values


def parameter_spans(members: pd.DataFrame, parameters: pd.DataFrame) -> pd.DataFrame:
    """One row per parameter of ``parameters`` (the behaviour parameters table's ``path``, ``low``,
    ``high``, ``scale``) that ``members`` (one column per path) holds, widest span first
    (:data:`IDENTIFICATION_COLUMNS`)."""
    rows = []
    for row in parameters.itertuples(index=False):
        path, low, high, scale = str(row.path), float(row.low), float(row.high), str(row.scale)
        if path not in members.columns:
            continue
        values = members[path].to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if len(values) == 0:
            span = math.nan
            lo = hi = math.nan
        else:
            lo, hi = float(values.min()), float(values.max())
            ends = _on_scale(np.array([low, high]), scale)
            covered = _on_scale(np.array([lo, hi]), scale)
            span = float(np.clip((covered[1] - covered[0]) / (ends[1] - ends[0]), 0.0, 1.0))
        p_uniform = uniform_range_cdf(span, len(values)) if len(values) else math.nan
        rows.append(
            {
                "path": path,
                "low": low,
                "high": high,
                "scale": scale,
                "member_min": lo,
                "member_max": hi,
                "span": span,
                "unidentified": bool(span >= UNIDENTIFIED_SPAN),
                "p_uniform": p_uniform,
                "concentrated": bool(p_uniform < CONCENTRATED_P),
            }
        )
    table = pd.DataFrame(rows, columns=list(IDENTIFICATION_COLUMNS))
    return table.sort_values("span", ascending=False, kind="stable").reset_index(drop=True)
