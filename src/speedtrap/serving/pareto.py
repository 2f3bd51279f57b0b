"""The throughput-per-chip versus tokens/s-per-user Pareto curve, traced by sweeping the batch."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from speedtrap.serving.replica import ReplicaPhysics

PARETO_COLUMNS = ["batch", "tok_s_per_user", "tok_s_per_replica", "tok_s_per_chip", "step_s", "bound"]
"""Columns of :func:`pareto_frontier`: batch (streams), per-stream and replica/chip output tok/s,
decode step seconds, and what bounds the step (``memory``, ``compute`` or ``latency``)."""


def default_batches(max_batch: int) -> list[int]:
    """Powers of two up to ``max_batch``, plus ``max_batch`` itself."""
    batches = [1 << i for i in range(max(max_batch, 1).bit_length()) if 1 << i <= max_batch]
    if max_batch >= 1 and batches[-1] != max_batch:
        batches.append(max_batch)
    return batches


def pareto_frontier(
    physics: ReplicaPhysics, context_tokens: float, batches: Iterable[int] | None = None
) -> pd.DataFrame:
    """One row per batch size (default: powers of two up to the KV-memory cap, plus the cap).

    Raises ``ValueError`` when not even one stream of ``context_tokens`` fits beside the weights,
    or when a requested batch exceeds the KV-memory cap.
    """
    cap = physics.max_batch(context_tokens)
    if cap < 1:
        raise ValueError(f"no stream of {context_tokens:g} context tokens fits beside the weights")
    chosen = default_batches(cap) if batches is None else sorted(set(batches))
    too_big = [b for b in chosen if b > cap or b < 1]
    if too_big:
        raise ValueError(
            f"batches {too_big} outside 1..{cap} (the KV-memory cap at {context_tokens:g} tokens)"
        )
    rows = []
    for batch in chosen:
        rate = physics.decode_rate_tok_s(batch, context_tokens)
        rows.append(
            {
                "batch": batch,
                "tok_s_per_user": rate,
                "tok_s_per_replica": batch * rate,
                "tok_s_per_chip": batch * rate / physics.chips,
                "step_s": physics.decode_step_s(batch, context_tokens),
                "bound": physics.bound(batch, context_tokens),
            }
        )
    return pd.DataFrame(rows, columns=PARETO_COLUMNS)
