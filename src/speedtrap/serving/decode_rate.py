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

from collections.abc import Callable

from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import SpeedModel

__all__ = ["pool_decode_rate"]


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
    verify_tokens = speed.draft_tokens + 1  # tokens per stream of a verify step (as decode_step_s)
    draft_share = speed.draft_tokens * speed.draft_cost  # speculative_step_s's factor on the plain step

    def step(batch: int, tokens_per_stream: float, attended: float) -> float:
        """roofline.step_s with no prefill tokens: step_parts, then _combine."""
        decode_tokens = batch * tokens_per_stream
        tokens = decode_tokens + 0.0
        weights_s = shared_read_s
        if experts:
            weights_s += experts * (1.0 - expert_keep ** max(tokens, 1.0)) * expert_read_s
        memory_s = weights_s + batch * attended * kv_read_s
        compute_s = decode_tokens * (matmul_s + attended * attention_s) + matmul_fixed_s
        latency_s = fixed_s + tokens * collective_s
        exchange = tokens * exchange_s
        core = max(memory_s, compute_s) + 0.0
        core += exchange - overlap * min(core, exchange)
        return max(core + latency_s, floor_s)

    if not speed.draft_tokens:

        def decode_rate_tok_s(batch: int, context_tokens: float) -> float:
            """Output tokens/s of each of ``batch`` streams of mean context ``context_tokens``."""
            if batch < 1:
                batch = 1
            attended = full_layers * context_tokens + window_layers * min(context_tokens, window)
            return scale / step(batch, 1.0, attended)

        return decode_rate_tok_s

    def speculative_rate_tok_s(batch: int, context_tokens: float) -> float:
        """Output tokens/s of each of ``batch`` streams drafting and verifying together."""
        if batch < 1:
            batch = 1
        attended = full_layers * context_tokens + window_layers * min(context_tokens, window)
        plain_s = step(batch, 1.0, attended)
        return scale / (step(batch, verify_tokens, attended) + draft_share * plain_s)

    return speculative_rate_tok_s
