"""The speed of one serving replica, from its backend's hardware and model (a ``SpeedModel``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from speedtrap.config.backend import Backend, SpeculativeDecoding
from speedtrap.config.hardware import Hardware
from speedtrap.config.llm import LLM
from speedtrap.serving.roofline import (
    Bound,
    fixed_latency_s,
    kv_batch_cap,
    kv_capacity_tokens,
    replica_bandwidth_bytes_s,
    replica_flop_s,
    roofline_step_s,
    step_bound,
)
from speedtrap.serving.speculative import expected_tokens_per_step, speculative_step_s


@dataclass(frozen=True, slots=True)
class ReplicaPhysics:
    """Decode and prefill times of one replica, with the roofline's constants precomputed.

    Implements :class:`speedtrap.serving.speed.SpeedModel`. Build it with :meth:`from_backend` or
    :meth:`from_parts`; the fields are the precomputed constants (seconds, bytes, tokens).
    """

    chips: int
    weight_read_s: float
    """Time to read the active weights once, s."""
    kv_read_s_per_token: float
    """Time to read one token of one stream's KV cache, s."""
    compute_s_per_token: float
    """Compute time of one token's forward pass, s."""
    fixed_s: float
    """Batch-independent latency per step, s."""
    floor_s: float
    """Minimum time of a decode step, s."""
    kv_capacity_tokens: float
    ttft_overhead_s: float = 0.0
    draft_tokens: int = 0
    """Tokens drafted per step (γ; 0 without speculative decoding)."""
    draft_cost: float = 0.0
    """Cost of one draft step as a fraction of a plain target step."""
    tokens_per_step: float = 1.0
    """Expected tokens emitted per stream per step."""
    decode_speedup: float = 1.0
    """What-if multiplier on the decode rate (``Backend.decode_speedup``; 1 = the roofline as is)."""

    @classmethod
    def from_parts(
        cls,
        hardware: Hardware,
        llm: LLM,
        chips: int,
        *,
        speculative: SpeculativeDecoding | None = None,
        ttft_overhead_s: float = 0.0,
        decode_speedup: float = 1.0,
    ) -> ReplicaPhysics:
        """Physics of ``chips`` chips of ``hardware`` running ``llm``."""
        bandwidth = replica_bandwidth_bytes_s(hardware, chips)
        flop_s = replica_flop_s(hardware, llm, chips)
        spec: dict[str, Any] = {}
        if speculative is not None:
            spec = {
                "draft_tokens": speculative.draft_tokens,
                "draft_cost": speculative.draft_cost,
                "tokens_per_step": expected_tokens_per_step(
                    speculative.acceptance_rate, speculative.draft_tokens
                ),
            }
        return cls(
            chips=chips,
            weight_read_s=llm.active_weight_bytes / bandwidth,
            kv_read_s_per_token=llm.kv_bytes_per_token / bandwidth,
            compute_s_per_token=llm.flops_per_token / flop_s,
            fixed_s=fixed_latency_s(hardware, llm, chips),
            floor_s=hardware.token_latency_floor_s,
            kv_capacity_tokens=kv_capacity_tokens(hardware, llm, chips),
            ttft_overhead_s=ttft_overhead_s,
            decode_speedup=decode_speedup,
            **spec,
        )

    @classmethod
    def from_backend(cls, backend: Backend) -> ReplicaPhysics:
        """Physics of one replica of ``backend``."""
        return cls.from_parts(
            backend.hardware,
            backend.llm,
            backend.chips,
            speculative=backend.speculative,
            ttft_overhead_s=backend.ttft_overhead_s,
            decode_speedup=backend.decode_speedup,
        )

    def _memory_s(self, batch: int, context_tokens: float) -> float:
        return self.weight_read_s + batch * context_tokens * self.kv_read_s_per_token

    def decode_step_s(self, batch: int, context_tokens: float) -> float:
        """Seconds of one decode step of ``batch`` streams (at least 1) of mean context ``context_tokens``."""
        b = max(batch, 1)
        memory_s = self._memory_s(b, context_tokens)
        compute_s = b * self.compute_s_per_token
        plain_s = roofline_step_s(
            memory_s=memory_s, compute_s=compute_s, fixed_s=self.fixed_s, floor_s=self.floor_s
        )
        if self.draft_tokens == 0:
            return plain_s
        verify_s = roofline_step_s(
            memory_s=memory_s,
            compute_s=compute_s * (self.draft_tokens + 1),
            fixed_s=self.fixed_s,
            floor_s=self.floor_s,
        )
        return speculative_step_s(
            verify_step_s=verify_s,
            plain_step_s=plain_s,
            draft_tokens=self.draft_tokens,
            draft_cost=self.draft_cost,
        )

    def decode_rate_tok_s(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s of each of ``batch`` streams decoding together."""
        return self.decode_speedup * self.tokens_per_step / self.decode_step_s(batch, context_tokens)

    def throughput_tok_s(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s of the whole replica (``batch`` × per-stream rate)."""
        return max(batch, 1) * self.decode_rate_tok_s(batch, context_tokens)

    def throughput_tok_s_per_chip(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s per chip of the replica."""
        return self.throughput_tok_s(batch, context_tokens) / self.chips

    def bound(self, batch: int, context_tokens: float) -> Bound:
        """What limits a plain decode step at this load: ``memory``, ``compute`` or ``latency``."""
        b = max(batch, 1)
        return step_bound(
            memory_s=self._memory_s(b, context_tokens),
            compute_s=b * self.compute_s_per_token,
            fixed_s=self.fixed_s,
            floor_s=self.floor_s,
        )

    def max_batch(self, context_tokens: float) -> int:
        """Most streams of mean context ``context_tokens`` whose KV cache fits the replica."""
        return kv_batch_cap(self.kv_capacity_tokens, context_tokens)

    def prefill_compute_s(self, uncached_tokens: int) -> float:
        """Seconds to prefill ``uncached_tokens`` new input tokens (0 for none): compute-bound,
        never faster than one read of the active weights, plus the step's fixed latencies."""
        if uncached_tokens <= 0:
            return 0.0
        return roofline_step_s(
            memory_s=self.weight_read_s,
            compute_s=uncached_tokens * self.compute_s_per_token,
            fixed_s=self.fixed_s,
            floor_s=self.floor_s,
        )

    def prefill_s(self, uncached_tokens: int) -> float:
        """Seconds from admission to the first output token: ``ttft_overhead_s`` plus prefill."""
        return self.ttft_overhead_s + self.prefill_compute_s(uncached_tokens)

    def ttft_s(self, uncached_tokens: int) -> float:
        """Time to first token without queueing, s (the same as :meth:`prefill_s`)."""
        return self.prefill_s(uncached_tokens)
