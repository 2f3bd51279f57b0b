"""The serving pool's decode-rate function: one flat function for its most frequent physics call.

The pool asks for the per-stream decode rate of a replica whenever its streams change (about once
and a half per agent turn). :meth:`ReplicaPhysics.decode_rate_tok_s` answers through five nested
calls (``decode_rate_tok_s`` → ``decode_step_s`` → ``roofline.step_s`` → ``roofline.step_parts`` and
``roofline._combine``); :func:`pool_decode_rate` gives the pool the same arithmetic, operation for
operation, in one function over the replica's step constants. ``tests/serving/test_decode_rate.py``
holds the two equal, bit for bit, for every backend preset and every catalogued model on every
catalogued chip in several layouts (tensor, attention-data and expert parallel, overlapped
all-to-alls, SRAM pipelines): a change to the roofline that is not made here too fails there.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import SpeedModel

__all__ = ["pool_decode_rate", "pool_prefill_s"]


def pool_decode_rate(speed: SpeedModel) -> Callable[[int, float], float]:
    """``speed.decode_rate_tok_s`` as the pool calls it, ``(batch, context_tokens)``: for a
    :class:`ReplicaPhysics` (with or without speculative decoding), a flat function that gives the same
    value bit for bit; for any other speed model its own method."""
    if type(speed) is not ReplicaPhysics:
        return speed.decode_rate_tok_s
    c = speed.steps
    shared_read_s = c.shared_read_s
    experts = c.experts
    expert_keep = c.expert_keep
    expert_read_s = c.expert_read_s
    full_layers = c.full_layers
    window_layers = c.window_layers
    window = c.window_tokens
    kv_read_s = c.kv_read_s_per_attended
    matmul_s = c.matmul_s_per_token
    matmul_fixed_s = c.matmul_fixed_s
    attention_s = c.attention_s_per_attended
    fixed_s = c.fixed_s + c.collective_fixed_s  # the first two terms of the step's latency, as summed there
    collective_s = c.collective_s_per_token
    exchange_s = c.exchange_s_per_token
    overlap = c.overlap
    floor_s = c.floor_s
    scale = speed.decode_speedup * speed.tokens_per_step
    # tokens per stream of a verify step, as decode_step_s passes them (0: the replica does not draft)
    verify_tokens = speed.draft_tokens + 1 if speed.draft_tokens else 0
    draft_share = speed.draft_tokens * speed.draft_cost  # speculative_step_s's factor on the plain step

    def decode_rate_tok_s(batch: int, context_tokens: float) -> float:
        """Output tokens/s of each of ``batch`` streams of mean context ``context_tokens`` (drafting and
        verifying together where the replica drafts)."""
        # The physics' max(a, b) and min(a, b) are written ``b if b > a else a`` (or ``a < b``) and ``b
        # if b < a else a``: the built-ins' value (the first argument unless the second compares greater,
        # or less), without a call per term in the pool's most frequent physics call.
        if batch < 1:
            batch = 1
        attended = full_layers * context_tokens + window_layers * (
            window if window < context_tokens else context_tokens
        )
        kv_s = batch * attended * kv_read_s
        per_token_s = matmul_s + attended * attention_s
        # roofline.step_parts with one token per stream and no prefill tokens, then roofline._combine
        tokens = batch * 1.0 + 0.0
        weights_s = shared_read_s
        if experts:
            weights_s += experts * (1.0 - expert_keep ** (1.0 if tokens < 1.0 else tokens)) * expert_read_s
        compute_s = batch * 1.0 * per_token_s + matmul_fixed_s
        memory_s = weights_s + kv_s
        core = (compute_s if compute_s > memory_s else memory_s) + 0.0
        exchange = tokens * exchange_s
        core += exchange - overlap * (exchange if exchange < core else core)
        plain_s = core + (fixed_s + tokens * collective_s)
        if floor_s > plain_s:
            plain_s = floor_s
        if not verify_tokens:
            return scale / plain_s
        # the verify step: verify_tokens per stream (speculative.speculative_step_s adds the drafts)
        tokens = batch * verify_tokens + 0.0
        weights_s = shared_read_s
        if experts:
            weights_s += experts * (1.0 - expert_keep ** (1.0 if tokens < 1.0 else tokens)) * expert_read_s
        compute_s = batch * verify_tokens * per_token_s + matmul_fixed_s
        memory_s = weights_s + kv_s
        core = (compute_s if compute_s > memory_s else memory_s) + 0.0
        exchange = tokens * exchange_s
        core += exchange - overlap * (exchange if exchange < core else core)
        verify_s = core + (fixed_s + tokens * collective_s)
        if floor_s > verify_s:
            verify_s = floor_s
        return scale / (verify_s + draft_share * plain_s)

    return decode_rate_tok_s


def pool_prefill_s(speed: SpeedModel) -> Callable[[int], float]:
    """``speed.prefill_s`` as the pool calls it, ``(uncached_tokens)``: for a :class:`ReplicaPhysics`,
    a flat function giving the same value bit for bit (``ReplicaPhysics.prefill_compute_s`` with no
    cached tokens: chunks of one step each with no decode streams, on the replica or on its prefill
    pool, plus the KV transfer, after the first-token overhead); for any other speed model its own
    method."""
    if type(speed) is not ReplicaPhysics:
        return speed.prefill_s
    pool = speed.prefill_pool
    c, chunk = (speed.steps, speed.prefill_chunk_tokens) if pool is None else (pool.steps, pool.chunk_tokens)
    transfer_s = 0.0 if pool is None else pool.transfer_s_per_token
    overhead_s = speed.ttft_overhead_s
    fixed_s = c.fixed_s + c.collective_fixed_s  # the first two terms of the step's latency, as summed there
    # a step's decode terms with no decode streams (batch 0, context 0), as step_parts computes them
    attended_idle = c.full_layers * 0.0 + c.window_layers * min(0.0, c.window_tokens)
    compute_idle = 0.0 * (c.matmul_s_per_token + attended_idle * c.attention_s_per_attended)
    kv_idle = 0 * attended_idle * c.kv_read_s_per_attended
    shared_read_s = c.shared_read_s
    experts = c.experts
    expert_keep = c.expert_keep
    expert_read_s = c.expert_read_s
    full_layers = c.full_layers
    window_layers = c.window_layers
    window = c.window_tokens
    prefill_matmul_s = c.prefill_matmul_s_per_token
    prefill_attention_s = c.prefill_attention_s_per_attended
    matmul_fixed_s = c.matmul_fixed_s
    collective_s = c.collective_s_per_token
    exchange_s = c.exchange_s_per_token
    overlap = c.overlap
    floor_s = c.floor_s

    def prefill_s(uncached_tokens: int) -> float:
        """Seconds from admission to the first token of a prompt of ``uncached_tokens`` new tokens."""
        # max and min written out, as in pool_decode_rate (a third of the turns miss the pool's memo)
        if uncached_tokens <= 0:
            return overhead_s + 0.0
        n = 1
        if chunk is not None:
            steps = math.ceil(uncached_tokens / chunk)
            if steps > n:
                n = steps
        prompt = 2.0 * 0.0 + uncached_tokens
        tokens = uncached_tokens / n
        # roofline.step_parts(steps, 0, 0.0, tokens, prompt), then roofline._combine
        weights_s = shared_read_s
        if experts:
            weights_s += experts * (1.0 - expert_keep ** (1.0 if tokens < 1.0 else tokens)) * expert_read_s
        memory_s = weights_s + kv_idle
        half = prompt / 2.0
        seen = full_layers * half + window_layers * (window if window < half else half)
        prefill = tokens * (prefill_matmul_s + seen * prefill_attention_s)
        prefill += matmul_fixed_s
        latency_s = fixed_s + tokens * collective_s
        exchange = tokens * exchange_s
        core = (compute_idle if compute_idle > memory_s else memory_s) + prefill
        core += exchange - overlap * (exchange if exchange < core else core)
        step_s = core + latency_s
        compute = n * (floor_s if floor_s > step_s else step_s)
        if pool is not None:
            compute += uncached_tokens * transfer_s
        return overhead_s + compute

    return prefill_s
