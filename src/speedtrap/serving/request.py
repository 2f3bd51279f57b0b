"""One inference request as the serving pool sees it, and the schema of its record."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.exact import CHUNK, ExactSum

NAN = math.nan


@dataclass(slots=True, eq=False)
class Request:
    """A request's sizes and its timeline through the pool (all times in simulated seconds).

    Build it with keywords (``Request(id=..., tier=..., ...)``): the field list may grow. Only the
    pool's ``submit`` passes them by position, in field order (in pure Python a call with eleven
    keywords costs twice as much, once per agent turn).

    The pool fills in the timeline: ``arrival_s`` (submitted), ``admitted_s`` (got a slot and KV
    room on ``replica``), ``first_token_s`` (prefill done), ``done_s`` (last output token).
    ``cost_usd`` is what the user is charged (list price × tier multiplier). Times not reached
    yet are NaN, except that ``first_token_s`` may be set at admission when the pool folds the
    prefill end of a replica's lone stream (its time is fixed at admission); ``replica`` is
    ``None`` until admitted.
    """

    id: int
    tier: str
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    tag: Any = None  # the caller's object (Any, not object: a compiled dataclass cannot name object)
    arrival_s: float = NAN
    admitted_s: float = NAN
    first_token_s: float = NAN
    done_s: float = NAN
    replica: int | None = None
    cost_usd: float = 0.0
    on_done: Callable[[Request], None] | None = field(default=None, repr=False)
    priority: int = field(default=0, repr=False)
    batch_cap: int = field(default=1, repr=False)

    @property
    def uncached_tokens(self) -> int:
        """Input tokens that must be prefilled (input − cached)."""
        return self.input_tokens - self.cached_tokens

    @property
    def kv_tokens(self) -> int:
        """KV-cache tokens the request holds while admitted: its whole input and output."""
        return self.input_tokens + self.output_tokens

    @property
    def queue_wait_s(self) -> float:
        """Seconds from arrival to admission (waiting for a slot and KV room)."""
        return self.admitted_s - self.arrival_s

    @property
    def ttft_s(self) -> float:
        """Time to first token: seconds from arrival to the first output token."""
        return self.first_token_s - self.arrival_s

    @property
    def prefill_s(self) -> float:
        """Seconds from admission to the first output token."""
        return self.first_token_s - self.admitted_s

    @property
    def decode_s(self) -> float:
        """Seconds from the first to the last output token."""
        return self.done_s - self.first_token_s

    @property
    def sojourn_s(self) -> float:
        """Seconds from arrival to the last output token (time in system)."""
        return self.done_s - self.arrival_s


REQUEST_COLUMNS: dict[str, str] = {
    "id": "int64",
    "tier": "str",
    "tag": "object",
    "replica": "int64",
    "input_tokens": "int64",
    "cached_tokens": "int64",
    "output_tokens": "int64",
    "arrival_s": "float64",
    "admitted_s": "float64",
    "first_token_s": "float64",
    "done_s": "float64",
    "queue_wait_s": "float64",
    "ttft_s": "float64",
    "prefill_s": "float64",
    "decode_s": "float64",
    "sojourn_s": "float64",
    "cost_usd": "float64",
}
"""Columns (and dtypes) of :func:`requests_frame`: one row per finished request.

``id`` is the pool's sequence number, ``tier`` the tier name, ``tag`` the caller's object,
``replica`` the replica index; token counts are per request; times are simulated seconds
(``*_s`` durations as in :class:`Request`); ``cost_usd`` is the user's charge in US dollars.
"""


RECORD_FIELDS: tuple[str, ...] = (
    "id",
    "tier",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "arrival_s",
    "admitted_s",
    "first_token_s",
    "done_s",
    "replica",
    "cost_usd",
    "priority",
    "batch_cap",
)
"""Fields of a finished request's record (:func:`record`): every :class:`Request` field but ``tag``
and ``on_done``. The one place that defines the record layout. A record is a tuple of numbers and
the tier's name, which the garbage collector stops tracking the first time it sees it; the caller's
``tag`` (any object, often a tuple) is kept beside the record (:func:`tag_of`). A record holding a
tuple tag would stay tracked: the collector untracks a tuple only when its items are untracked, and
it reaches a tag held only by its record after the record, so every record would be traversed
again by the collector's older generations."""

Record = tuple[Any, ...]
"""A finished request's values, in :data:`RECORD_FIELDS` order."""

record: Callable[[Request], Record] = attrgetter(*RECORD_FIELDS)
"""``record(request)``: a finished request as a plain tuple of :data:`RECORD_FIELDS` (C-speed)."""

tag_of: Callable[[Request], Any] = attrgetter("tag")
"""``tag_of(request)``: the caller's object of a request, kept beside its record."""


def from_record(rec: Record, tag: Any = None) -> Request:
    """The :class:`Request` of a record and its caller's ``tag`` (without its spent ``on_done``)."""
    return Request(tag=tag, **dict(zip(RECORD_FIELDS, rec, strict=True)))


_NUMERIC = ("int64", "float64")
_RECORD_DTYPE = np.dtype(
    [
        (name, REQUEST_COLUMNS[name] if REQUEST_COLUMNS.get(name) in _NUMERIC else object)
        for name in RECORD_FIELDS
    ]
)
"""A record as one row of a structured array (numpy converts a list of records in one pass in C): each
numeric field in its column's dtype (:data:`REQUEST_COLUMNS`), every other field a Python object.
``replica`` is an integer in every finished request's record (set at admission)."""


def records_frame(records: list[Record], tags: Sequence[Any] | None = None) -> pd.DataFrame:
    """A tidy DataFrame (schema :data:`REQUEST_COLUMNS`) of finished requests' records (:func:`record`)
    and their tags (:func:`tag_of`, in the same order; ``None``: every tag ``None``)."""
    rows = np.array(records, dtype=_RECORD_DTYPE)
    column = {
        name: np.ascontiguousarray(rows[name])
        for name in RECORD_FIELDS
        if _RECORD_DTYPE[name] != np.dtype(object)
    }
    arrival, admitted, first, done = (
        column[t] for t in ("arrival_s", "admitted_s", "first_token_s", "done_s")
    )
    data = {
        **column,
        "tier": pd.Series(rows["tier"], dtype="str"),
        # one object per row, even where the tags are tuples of one length (np.array: a 2-D array)
        "tag": np.fromiter([None] * len(records) if tags is None else tags, dtype=object, count=len(records)),
        "queue_wait_s": admitted - arrival,
        "ttft_s": first - arrival,
        "prefill_s": first - admitted,
        "decode_s": done - first,
        "sojourn_s": done - arrival,
    }
    return pd.DataFrame({name: pd.Series(data[name], dtype=dtype) for name, dtype in REQUEST_COLUMNS.items()})


def requests_frame(requests: list[Request]) -> pd.DataFrame:
    """A tidy DataFrame (schema :data:`REQUEST_COLUMNS`) of finished requests, in completion order."""
    return records_frame([record(r) for r in requests], [r.tag for r in requests])


def decode_rate_tok_s(output_tokens: pd.Series | np.ndarray, decode_s: pd.Series | np.ndarray) -> np.ndarray:
    """Per-request decode speed, tok/s: the first token comes with the prefill, so a request of N
    output tokens decodes N − 1 of them in ``decode_s``; NaN where nothing was decoded (N = 1 or
    ``decode_s`` = 0)."""
    tokens = np.asarray(output_tokens, dtype=float) - 1.0
    seconds = np.asarray(decode_s, dtype=float)
    ok = (tokens > 0) & (seconds > 0)
    return np.where(ok, tokens / np.where(ok, seconds, 1.0), np.nan)


class RequestTally:
    """The few per-request numbers a run's summary needs, folded as they come (O(1) memory).

    What a pool keeps instead of full records when no request table is asked for: the count of
    finished requests and the exactly rounded sums (:class:`speedtrap.exact.ExactSum`) of their
    queue waits, times to first token, decode speeds (:func:`decode_rate_tok_s`; requests that
    decoded nothing are left out) and costs. Values are buffered in one packed array and folded
    every :data:`speedtrap.exact.CHUNK` requests. :func:`tally_means` gives exactly the numbers
    the request table gives (:func:`request_sums`): exact sums depend on the values only, not on
    their order.
    """

    __slots__ = ("_buffer", "n", "sums")

    def __init__(self) -> None:
        self.n = 0
        self.sums = {
            "queue_wait_s": ExactSum(),
            "ttft_s": ExactSum(),
            "decode_tok_s": ExactSum(skip_nan=True),
            "cost_usd": ExactSum(),
        }
        self._buffer = array("d")  # per request: queue wait, ttft, decode speed, cost (in ``sums`` order)

    def __len__(self) -> int:
        return self.n

    def add(self, requests: Sequence[Request]) -> None:
        """Tally finished requests (their timeline complete)."""
        buffer = self._buffer
        for req in requests:
            arrival, first = req.arrival_s, req.first_token_s
            tokens = float(req.output_tokens) - 1.0
            seconds = req.done_s - first
            buffer.extend(
                (
                    req.admitted_s - arrival,
                    first - arrival,
                    tokens / seconds if tokens > 0 and seconds > 0 else NAN,
                    req.cost_usd,
                )
            )
        self.n += len(requests)
        if len(buffer) >= 4 * CHUNK:
            self.fold()

    def add_values(self, values: array[float]) -> None:
        """Tally finished requests given as their packed values: four per request (queue wait, time to
        first token, decode speed or NaN, cost), computed as :meth:`add` computes them (the typed core,
        ``speedtrap.models._typed_core``, hands them over in blocks)."""
        buffer = self._buffer
        buffer.extend(values)
        self.n += len(values) // 4
        if len(buffer) >= 4 * CHUNK:
            self.fold()

    def fold(self) -> None:
        """Fold the buffered values into the exact sums."""
        buffer = self._buffer
        for i, acc in enumerate(self.sums.values()):
            acc.extend(buffer[i::4])
        self._buffer = array("d")


def _request_keys(n: int, sums: dict[str, ExactSum]) -> dict[str, float]:
    out = {"requests": float(n), "usd_total": sums["cost_usd"].total}
    for key, name in (("mean_queue_wait_s", "queue_wait_s"), ("mean_ttft_s", "ttft_s")):
        out[key] = sums[name].mean()
    out["mean_decode_tok_s"] = sums["decode_tok_s"].mean()
    return out


def tally_means(tallies: Sequence[RequestTally]) -> dict[str, float]:
    """``requests``, ``usd_total``, ``mean_queue_wait_s``, ``mean_ttft_s`` and ``mean_decode_tok_s``
    of the requests of ``tallies``: bit for bit what :func:`request_sums` gives for the request
    table of the same requests (exactly rounded sums over counts; NaN means when there are none)."""
    merged = {
        "queue_wait_s": ExactSum(),
        "ttft_s": ExactSum(),
        "decode_tok_s": ExactSum(skip_nan=True),
        "cost_usd": ExactSum(),
    }
    for tally in tallies:
        tally.fold()
        for name, acc in merged.items():
            acc.merge(tally.sums[name])
    return _request_keys(sum(t.n for t in tallies), merged)


def request_sums(
    queue_wait_s: np.ndarray, ttft_s: np.ndarray, decode_rate: np.ndarray, cost_usd: np.ndarray
) -> dict[str, float]:
    """The summary's request keys from whole columns (one value per finished request), as
    :func:`tally_means` gives them from tallies."""
    columns = {
        "queue_wait_s": queue_wait_s,
        "ttft_s": ttft_s,
        "decode_tok_s": decode_rate,
        "cost_usd": cost_usd,
    }
    sums = {name: ExactSum(skip_nan=name == "decode_tok_s") for name in columns}
    for name, values in columns.items():
        sums[name].extend(values)
    return _request_keys(len(cost_usd), sums)
