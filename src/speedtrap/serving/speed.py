"""The contract between inference physics and the serving pool.

The pool asks a :class:`SpeedModel` how fast one replica decodes and prefills; it knows
nothing of hardware. Physics (``ReplicaPhysics``) and the queueing test doubles below
implement it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class SpeedModel(Protocol):
    """Speed of one serving replica."""

    @property
    def kv_capacity_tokens(self) -> float:
        """Tokens of KV cache the replica can hold across all its streams (``inf`` if unbounded)."""
        ...

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s of *each* stream when ``batch`` streams of mean context
        ``context_tokens`` decode together on one replica."""
        ...

    def prefill_s(self, uncached_tokens: int) -> float:
        """Seconds from admission to the first output token for ``uncached_tokens`` new input.

        A pure function of ``uncached_tokens``: the pool caches it per token count. A speed model
        may also have a ``ttft_overhead_s`` attribute: the part of every prefill that does not
        occupy the replica (network, scheduling); the rest is compute, which prompts prefilling on
        one replica at once take turns at."""
        ...


@dataclass(frozen=True, slots=True)
class FixedRate:
    """Every stream decodes at ``rate_tok_s`` whatever the batch: with exponential output
    lengths and ``c`` slots in all, a pool of these is an M/M/c queue."""

    rate_tok_s: float
    kv_capacity_tokens: float = math.inf

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        return self.rate_tok_s

    def prefill_s(self, uncached_tokens: int) -> float:
        return 0.0


@dataclass(frozen=True, slots=True)
class SharedRate:
    """A replica whose total ``capacity_tok_s`` is shared evenly among its streams: one such
    replica with unbounded batch is an M/M/1 processor-sharing queue."""

    capacity_tok_s: float
    kv_capacity_tokens: float = math.inf

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        return self.capacity_tok_s / max(batch, 1)

    def prefill_s(self, uncached_tokens: int) -> float:
        return 0.0
