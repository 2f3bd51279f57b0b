"""One inference request as the serving pool sees it, and the schema of its record."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

NAN = math.nan


@dataclass(slots=True, eq=False)
class Request:
    """A request's sizes and its timeline through the pool (all times in simulated seconds).

    The pool fills in the timeline: ``arrival_s`` (submitted), ``admitted_s`` (got a slot and KV
    room on ``replica``), ``first_token_s`` (prefill done), ``done_s`` (last output token).
    ``cost_usd`` is what the user is charged (list price × tier multiplier). Times not reached
    yet are NaN; ``replica`` is ``None`` until admitted.
    """

    id: int
    tier: str
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    tag: object = None
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


def requests_frame(requests: list[Request]) -> pd.DataFrame:
    """A tidy DataFrame (schema :data:`REQUEST_COLUMNS`) of finished requests, in completion order."""
    arrival = [r.arrival_s for r in requests]
    admitted = [r.admitted_s for r in requests]
    first = [r.first_token_s for r in requests]
    done = [r.done_s for r in requests]
    data = {
        "id": [r.id for r in requests],
        "tier": [r.tier for r in requests],
        "tag": [r.tag for r in requests],
        "replica": [r.replica for r in requests],
        "input_tokens": [r.input_tokens for r in requests],
        "cached_tokens": [r.cached_tokens for r in requests],
        "output_tokens": [r.output_tokens for r in requests],
        "arrival_s": arrival,
        "admitted_s": admitted,
        "first_token_s": first,
        "done_s": done,
        "queue_wait_s": [b - a for a, b in zip(arrival, admitted, strict=True)],
        "ttft_s": [b - a for a, b in zip(arrival, first, strict=True)],
        "prefill_s": [b - a for a, b in zip(admitted, first, strict=True)],
        "decode_s": [b - a for a, b in zip(first, done, strict=True)],
        "sojourn_s": [b - a for a, b in zip(arrival, done, strict=True)],
        "cost_usd": [r.cost_usd for r in requests],
    }
    return pd.DataFrame({name: pd.Series(data[name], dtype=dtype) for name, dtype in REQUEST_COLUMNS.items()})
