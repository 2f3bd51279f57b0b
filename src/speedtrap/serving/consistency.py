"""The backend presets under the rule the serving fit uses.

The serving pool (``speedtrap.serving.pool``) times decode steps that carry no prompt tokens, and the
presets' speeds (``speedtrap backends``; docs/design.md §2) are such decode-only steps at the typical
batch and context. The serving physics is fitted and validated with the steady-load rule of
:func:`speedtrap.serving.pareto.steady_load`, in which the decode steps also carry the other
requests' prompts (``(B − 1)·uncached/output`` tokens per step on average, in whole chunks: a share of
the steps carries one) unless a separate prefill pool takes them, and time to first token queues for
the prefill. :func:`preset_under_steady_load` evaluates a
preset both ways, so that a test can hold them equal: the GPU presets prefill on a separate pool
(disaggregated), which makes the two rules agree. :func:`batch_for_speed` finds the load that would
give a target speed under the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from speedtrap.config.backend import Backend
from speedtrap.serving.pareto import steady_load
from speedtrap.serving.replica import ReplicaPhysics

__all__ = ["ConsistentSpeed", "batch_for_speed", "preset_under_steady_load"]


@dataclass(frozen=True, slots=True)
class ConsistentSpeed:
    """A backend's per-stream speed as the pool times it (decode-only) and under the steady-load rule."""

    name: str
    batch: int
    decode_only_tok_s: float
    """tok/s per stream, decode-only steps at the typical batch and context."""
    steady_tok_s: float
    """tok/s per stream under the steady-load rule."""
    steady_ttft_s: float
    """Time to first token under the steady-load rule, s (queueing for the prefill included)."""
    steady_tok_s_per_chip: float
    """Output tok/s per chip under the steady-load rule (a separate prefill pool's chips counted)."""


def _steady(backend: Backend, batch: int, uncached: float, output: float) -> tuple[float, float, float]:
    physics = ReplicaPhysics.from_backend(backend)
    cached = max(backend.typical_context_tokens - uncached - output / 2.0, 0.0)
    load = steady_load(physics, batch, context_tokens=0.0, isl=uncached, osl=output, cached_tokens=cached)
    return load.tok_s_per_user, load.ttft_s, load.tok_s_per_chip


def preset_under_steady_load(
    backend: Backend, *, uncached_tokens: float, output_tokens: float
) -> ConsistentSpeed:
    """``backend`` at its typical batch and context: decode-only (as the pool times it) and under the
    steady-load rule with requests of ``uncached_tokens`` new input tokens on top of a cached prefix
    (the rest of the typical context) and ``output_tokens`` output tokens."""
    physics = ReplicaPhysics.from_backend(backend)
    batch = backend.typical_batch
    per_user, ttft, per_chip = _steady(backend, batch, uncached_tokens, output_tokens)
    return ConsistentSpeed(
        name=backend.name,
        batch=batch,
        decode_only_tok_s=physics.decode_rate_tok_s(batch, backend.typical_context_tokens),
        steady_tok_s=per_user,
        steady_ttft_s=ttft,
        steady_tok_s_per_chip=per_chip,
    )


def batch_for_speed(
    backend: Backend, target_tok_s: float, *, uncached_tokens: float, output_tokens: float
) -> int | None:
    """The largest batch per replica (up to the KV-memory cap at the typical context) at which a stream
    of ``backend`` runs at ``target_tok_s`` or faster under the steady-load rule (``None`` when not even
    one stream does)."""
    cap = ReplicaPhysics.from_backend(backend).max_batch(backend.typical_context_tokens)
    best = None
    for batch in range(1, max(cap, 1) + 1):
        if _steady(backend, batch, uncached_tokens, output_tokens)[0] >= target_tok_s:
            best = batch
        else:
            break
    return best
