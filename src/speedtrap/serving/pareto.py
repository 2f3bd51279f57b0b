"""The throughput-per-chip versus tokens/s-per-user Pareto curve, traced by sweeping the batch.

Each point is a steady load of ``B`` streams (:func:`steady_load`): every request brings ``isl``
uncached prompt tokens and decodes ``osl`` output tokens, so each decode step also carries its
share of the other requests' prompts (chunked prefill, ``(B − 1)·isl/osl`` tokens), time to first
token is one step of the other ``B − 1`` streams plus the whole prompt, and a request takes TTFT
plus ``osl − 1`` inter-token steps. Without ``isl``/``osl`` the steps are decode-only at the given
context (what the frontier showed before prompts shared the step) and TTFT is a prompt of the
whole context. Throughput counts output tokens only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from speedtrap.serving.economics import cost_usd_per_mtok
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import step_s

__all__ = ["PARETO_COLUMNS", "SteadyLoad", "default_batches", "pareto_frontier", "steady_load"]

PARETO_COLUMNS = [
    "batch",
    "tok_s_per_user",
    "tok_s_per_replica",
    "tok_s_per_chip",
    "step_s",
    "bound",
    "ttft_s",
    "cost_usd_per_mtok",
]
"""Columns of :func:`pareto_frontier`: batch (streams), per-stream and replica/chip output tok/s,
inter-token step seconds, what bounds the step (``memory``, ``compute`` or ``latency``), time to
first token without queueing (s) and the chip cost of a million output tokens (USD; NaN without a
chip price)."""


@dataclass(frozen=True, slots=True)
class SteadyLoad:
    """One operating point of a replica: seconds per output token, TTFT, output tok/s per user and chip."""

    step_s: float
    ttft_s: float
    tok_s_per_user: float
    tok_s_per_chip: float


def steady_load(
    physics: ReplicaPhysics,
    batch: int,
    *,
    context_tokens: float,
    isl: float | None = None,
    osl: float | None = None,
) -> SteadyLoad:
    """The steady load of ``batch`` streams (module docstring). With ``isl`` and ``osl`` the mean
    context is ``isl + osl/2`` and prompts share the steps; without, steps are decode-only at
    ``context_tokens``."""
    b = max(batch, 1)
    if isl is None or osl is None:
        step = physics.decode_step_s(b, context_tokens)
        ttft = physics.ttft_overhead_s + step_s(physics.steps, b - 1, context_tokens, context_tokens)
        per_user = physics.decode_speedup * physics.tokens_per_step / step
        return SteadyLoad(step, ttft, per_user, b * per_user / physics.chips)
    context = isl + osl / 2.0
    step = physics.decode_step_s(b, context, (b - 1) * isl / osl, isl)
    ttft = physics.ttft_overhead_s + step_s(physics.steps, b - 1, context, isl, isl)
    per_user = physics.decode_speedup * physics.tokens_per_step / step
    request_s = ttft + (osl - 1.0) / per_user
    return SteadyLoad(step, ttft, per_user, b * osl / request_s / physics.chips)


def default_batches(max_batch: int) -> list[int]:
    """Powers of two up to ``max_batch``, plus ``max_batch`` itself."""
    batches = [1 << i for i in range(max(max_batch, 1).bit_length()) if 1 << i <= max_batch]
    if max_batch >= 1 and batches[-1] != max_batch:
        batches.append(max_batch)
    return batches


def pareto_frontier(
    physics: ReplicaPhysics,
    context_tokens: float,
    batches: Iterable[int] | None = None,
    *,
    isl: float | None = None,
    osl: float | None = None,
    usd_per_chip_hour: float | None = None,
) -> pd.DataFrame:
    """One row per batch size (default: powers of two up to the KV-memory cap, plus the cap).

    With ``isl`` and ``osl`` the KV cap and the steps use the mean context ``isl + osl/2`` (and
    ``context_tokens`` is ignored). Raises ``ValueError`` when not even one stream fits beside the
    weights, or when a requested batch exceeds the KV-memory cap.
    """
    context = context_tokens if isl is None or osl is None else isl + osl / 2.0
    cap = physics.max_batch(context)
    if cap < 1:
        raise ValueError(f"no stream of {context:g} context tokens fits beside the weights")
    chosen = default_batches(cap) if batches is None else sorted(set(batches))
    too_big = [b for b in chosen if b > cap or b < 1]
    if too_big:
        raise ValueError(f"batches {too_big} outside 1..{cap} (the KV-memory cap at {context:g} tokens)")
    rows = []
    for batch in chosen:
        load = steady_load(physics, batch, context_tokens=context, isl=isl, osl=osl)
        prefill = 0.0 if isl is None or osl is None else (batch - 1) * isl / osl
        cost = math.nan
        if usd_per_chip_hour is not None and load.tok_s_per_chip > 0:
            cost = cost_usd_per_mtok(usd_per_chip_hour, load.tok_s_per_chip)
        rows.append(
            {
                "batch": batch,
                "tok_s_per_user": load.tok_s_per_user,
                "tok_s_per_replica": load.tok_s_per_chip * physics.chips,
                "tok_s_per_chip": load.tok_s_per_chip,
                "step_s": load.step_s,
                "bound": physics.bound(batch, context, prefill),
                "ttft_s": load.ttft_s,
                "cost_usd_per_mtok": cost,
            }
        )
    return pd.DataFrame(rows, columns=PARETO_COLUMNS)
