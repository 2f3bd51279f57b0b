"""Exactly rounded sums and means of float streams, in memory that does not grow with the stream.

A run's summary reports means over every request and task of the run. Summing in arrival order
(pairwise, as numpy does) ties the result's last bits to the order and the grouping of the values,
so a summary built without the request table would have to keep every value to the end. An
exactly rounded sum (:func:`math.fsum`: the float nearest the exact sum of the values) depends on
the values only, never on their order or grouping, so :class:`ExactSum` folds a stream chunk by
chunk into a few floats whose exact sum is the exact sum of everything added so far, and
:func:`exact_sum` gives the same bits from a whole array at once.

Non-finite values follow IEEE arithmetic: any NaN makes the sum NaN, +inf and −inf give inf of
their sign or NaN together. With ``skip_nan`` NaN values are left out and not counted (as
``numpy.nanmean`` and pandas' ``mean`` do).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable

import numpy as np

CHUNK = 4096
"""Values buffered before they are folded into the exact partials (memory per sum: 32 KiB)."""


def _partials(values: list[float]) -> list[float]:
    """Floats whose exact sum equals the exact sum of the finite ``values``: each is the correctly
    rounded remainder of the exact sum after the ones before it (usually two or three)."""
    out: list[float] = []
    rest = values
    while True:
        s = math.fsum(rest)  # exactly rounded; 0.0 only when the exact remainder is 0
        if s == 0.0:
            return out
        out.append(s)
        rest.append(-s)


class ExactSum:
    """The exactly rounded sum and the count of a stream of floats, in O(1) memory.

    ``add`` appends to a buffer of at most :data:`CHUNK` values; a full buffer is folded into a
    short list of partials that carries the exact sum. ``total`` is ``math.fsum`` of every value
    added, bit for bit, whatever the order and grouping of the additions.
    """

    __slots__ = ("_buffer", "_count", "_partials", "_special", "skip_nan")

    def __init__(self, *, skip_nan: bool = False) -> None:
        self.skip_nan = skip_nan
        self._buffer = array("d")
        self._partials: list[float] = []
        self._special: float | None = None  # IEEE sum of the non-finite values seen, if any
        self._count = 0  # values folded so far (the buffer's are added in ``count``)

    def add(self, x: float) -> None:
        """Add one value."""
        buffer = self._buffer
        buffer.append(x)
        if len(buffer) >= CHUNK:
            self._fold()

    def extend(self, values: Iterable[float] | np.ndarray) -> None:
        """Add many values."""
        self._buffer.extend(np.asarray(values, dtype=np.float64).ravel().tolist())
        self._fold()

    def _fold(self) -> None:
        values = np.frombuffer(self._buffer, dtype=np.float64)
        finite = np.isfinite(values)
        if not finite.all():
            odd = values[~finite]
            if self.skip_nan:
                odd = odd[~np.isnan(odd)]
            for x in odd.tolist():  # plain IEEE additions: inf − inf is NaN, without a warning
                self._special = x if self._special is None else self._special + x
            self._count += len(odd)
            values = values[finite]
        self._count += len(values)
        self._partials = _partials(self._partials + values.tolist())
        self._buffer = array("d")

    @property
    def count(self) -> int:
        """Values summed (NaN left out with ``skip_nan``)."""
        self._fold()
        return self._count

    @property
    def total(self) -> float:
        """The exactly rounded sum (0.0 when empty; IEEE inf or NaN when non-finite values came)."""
        self._fold()
        exact = math.fsum(self._partials)
        return exact if self._special is None else exact + self._special

    def mean(self) -> float:
        """``total / count``; NaN when nothing was summed."""
        n = self.count
        return self.total / n if n else math.nan

    def merge(self, other: ExactSum) -> None:
        """Add everything ``other`` holds (its partials carry its exact sum)."""
        other._fold()
        self._fold()
        self._partials = _partials(self._partials + other._partials)
        self._count += other._count
        if other._special is not None:
            self._special = other._special if self._special is None else self._special + other._special


def exact_sum(values: Iterable[float] | np.ndarray, *, skip_nan: bool = False) -> float:
    """The exactly rounded sum of ``values``: :attr:`ExactSum.total` of them, bit for bit."""
    acc = ExactSum(skip_nan=skip_nan)
    acc.extend(values)
    return acc.total


def exact_mean(values: Iterable[float] | np.ndarray, *, skip_nan: bool = False) -> float:
    """The exactly rounded sum of ``values`` divided by their count (NaN when there are none)."""
    acc = ExactSum(skip_nan=skip_nan)
    acc.extend(values)
    return acc.mean()
