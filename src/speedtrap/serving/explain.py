"""Why a fast tier is fast: each mechanism's share of the change in time per output token.

A fast tier (Anthropic's fast mode; the ``gpu-fast`` preset) can differ from its standard tier in four
ways, taken here one after another from the standard tier's operating point:

1. **smaller batch** — fewer streams per replica, so a step reads less KV cache, touches fewer routed
   experts, computes less and carries fewer prompt chunks;
2. **priority admission** — its requests jump the queue for a slot: this shortens the wait *before*
   the first token, not the step, so its share of the step-time change is zero by construction;
3. **speculative decoding** — tokens drafted and verified per step;
4. **newer hardware** — another chip (bandwidth, FLOP/s, links).

:func:`explain_fast_mode` returns each mechanism's time per output token before and after and its
share of the total change, and :func:`step_terms` splits a step into its terms (weights, experts, KV,
compute, prompts, collectives, per-layer and per-step latencies), so that the share resting on
assumed rather than fitted or datasheet numbers can be read off.
"""

from __future__ import annotations

from dataclasses import dataclass

from speedtrap.config.backend import Backend
from speedtrap.serving.pareto import steady_load
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import step_parts

__all__ = ["MechanismShare", "StepTerms", "explain_fast_mode", "step_terms", "token_time_s"]


@dataclass(frozen=True, slots=True)
class MechanismShare:
    """One mechanism: seconds per output token before and after it, and its share of the total change."""

    mechanism: str
    token_s_before: float
    token_s_after: float
    share: float
    note: str


@dataclass(frozen=True, slots=True)
class StepTerms:
    """One decode step split into its terms, s (memory terms overlap the compute ones: the step takes
    the longer of ``weights + experts + kv`` and ``compute``, plus the rest)."""

    batch: float
    weights_s: float
    experts_s: float
    kv_s: float
    compute_s: float
    prompts_s: float
    exchange_s: float
    collectives_s: float
    collective_latency_s: float
    layer_latency_s: float
    step_overhead_s: float
    step_s: float


def _load_step(
    physics: ReplicaPhysics, batch: int, context: float, isl: float | None, osl: float | None, cached: float
) -> tuple[float, float, float]:
    """(step seconds, context, prompt tokens per step) of ``batch`` streams under the chosen rule."""
    if isl is None or osl is None:
        return physics.decode_step_s(batch, context), context, 0.0
    load = steady_load(physics, batch, context_tokens=0.0, isl=isl, osl=osl, cached_tokens=cached)
    mean = cached + isl + osl / 2.0
    prompts = (max(load.decoding, 1.0) - 1.0) * isl * physics.tokens_per_step / osl
    return load.step_s, mean, 0.0 if physics.prefill_pool is not None else prompts


def token_time_s(
    backend: Backend,
    batch: int | None = None,
    *,
    isl: float | None = None,
    osl: float | None = None,
    cached_tokens: float = 0.0,
) -> float:
    """Seconds per output token of one stream of ``backend`` at ``batch`` (default: its typical batch):
    decode-only at the typical context, or under the steady-load rule with ``isl``/``osl``."""
    physics = ReplicaPhysics.from_backend(backend)
    b = backend.typical_batch if batch is None else batch
    step, _, _ = _load_step(physics, b, backend.typical_context_tokens, isl, osl, cached_tokens)
    return step / (physics.tokens_per_step * physics.decode_speedup)


def step_terms(
    backend: Backend,
    batch: int | None = None,
    *,
    isl: float | None = None,
    osl: float | None = None,
    cached_tokens: float = 0.0,
) -> StepTerms:
    """The terms of one plain (non-speculative) step of ``backend`` at ``batch`` (default: typical):
    a backend that drafts is split as if it did not (its verify steps carry γ + 1 tokens per stream)."""
    backend = backend.model_copy(update={"speculative": None})
    physics = ReplicaPhysics.from_backend(backend)
    b = backend.typical_batch if batch is None else batch
    step, context, prompts = _load_step(physics, b, backend.typical_context_tokens, isl, osl, cached_tokens)
    c = physics.steps
    parts = step_parts(c, b, context, prompts, 2.0 * cached_tokens + (isl or 0.0))
    tokens = b + prompts
    experts = 0.0
    if c.experts:
        experts = c.experts * (1.0 - c.expert_keep ** max(tokens, 1.0)) * c.expert_read_s
    hardware, llm = backend.hardware, backend.llm
    per_layer = hardware.layer_latency_s + (hardware.multichip_layer_latency_s if backend.chips > 1 else 0.0)
    return StepTerms(
        batch=b,
        weights_s=c.shared_read_s,
        experts_s=experts,
        kv_s=parts.memory_s - c.shared_read_s - experts,
        compute_s=parts.compute_s,
        prompts_s=parts.prefill_s,
        exchange_s=parts.exchange_s,
        collectives_s=tokens * c.collective_s_per_token,
        collective_latency_s=c.collective_fixed_s,
        layer_latency_s=llm.layers * per_layer,
        step_overhead_s=hardware.step_overhead_s,
        step_s=step,
    )


def explain_fast_mode(
    fast: Backend,
    standard: Backend,
    *,
    isl: float | None = None,
    osl: float | None = None,
    cached_tokens: float = 0.0,
) -> list[MechanismShare]:
    """Each mechanism's share of the change in time per output token from ``standard`` (its typical
    batch, hardware, decoding) to ``fast`` (module docstring), taken in the order listed there."""

    def time_of(backend: Backend) -> float:
        return token_time_s(backend, isl=isl, osl=osl, cached_tokens=cached_tokens)

    start = time_of(standard)
    smaller = standard.model_copy(update={"typical_batch": fast.typical_batch})
    after_batch = time_of(smaller)
    drafted = smaller.model_copy(update={"speculative": fast.speculative})
    after_spec = time_of(drafted)
    end = time_of(fast)
    total = start - end

    def share(before: float, after: float) -> float:
        return (before - after) / total if total else 0.0

    same_priority = fast.tier().priority == standard.tier().priority
    return [
        MechanismShare(
            "smaller batch",
            start,
            after_batch,
            share(start, after_batch),
            f"{standard.typical_batch} → {fast.typical_batch} streams per replica",
        ),
        MechanismShare(
            "priority admission",
            after_batch,
            after_batch,
            0.0,
            "same priority" if same_priority else "shortens the wait for a slot, not the step",
        ),
        MechanismShare(
            "speculative decoding",
            after_batch,
            after_spec,
            share(after_batch, after_spec),
            "none in either tier"
            if fast.speculative is None and standard.speculative is None
            else f"{fast.speculative}",
        ),
        MechanismShare(
            "newer hardware",
            after_spec,
            end,
            share(after_spec, end),
            "the same hardware"
            if fast.hardware == standard.hardware
            else f"{standard.hardware.name} → {fast.hardware.name}",
        ),
    ]
