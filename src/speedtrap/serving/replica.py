"""The speed of one serving replica, from its backend's hardware and model (a ``SpeedModel``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from speedtrap.config.backend import Backend, SpeculativeDecoding
from speedtrap.config.hardware import BYTES_PER_GB, Hardware
from speedtrap.config.llm import LLM
from speedtrap.config.parallel import Disaggregation, Parallelism
from speedtrap.serving.roofline import (
    Bound,
    StepConstants,
    kv_batch_cap,
    kv_capacity_tokens,
    step_bound,
    step_parts,
    step_s,
)
from speedtrap.serving.speculative import expected_tokens_per_step, speculative_step_s


@dataclass(frozen=True, slots=True)
class PrefillPool:
    """A separate prefill pool (prefill/decode disaggregation) as seen by one decode replica."""

    steps: StepConstants
    """Step constants of one prefill instance."""
    instances: int
    """Prefill instances, each prefilling one prompt at a time."""
    chips: int
    """Chips of the pool counted against the replica's throughput (0: not counted)."""
    transfer_s_per_token: float
    """Time to move one prompt token's KV cache to the decode replica, s."""
    chunk_tokens: int | None = None


def _chunks(tokens: float, chunk_tokens: int | None) -> int:
    return 1 if chunk_tokens is None or tokens <= 0 else max(1, math.ceil(tokens / chunk_tokens))


@dataclass(frozen=True, slots=True)
class ReplicaPhysics:
    """Decode and prefill times of one replica: :func:`speedtrap.serving.roofline.step_s` over the
    replica's precomputed :class:`~speedtrap.serving.roofline.StepConstants`.

    Implements :class:`speedtrap.serving.speed.SpeedModel`; the serving pool, ``speedtrap pareto``
    and ``speedtrap validate serving`` all time steps with this one function. Build it with
    :meth:`from_backend` or :meth:`from_parts`.
    """

    chips: int
    steps: StepConstants
    kv_capacity_tokens: float
    layers: int
    ttft_overhead_s: float = 0.0
    """The part of time to first token that does not occupy the replica: the backend's network and API
    time plus the hardware's request scheduling time (``Hardware.request_overhead_s``), s."""
    prefill_chunk_tokens: int | None = None
    """Chunked prefill's prompt tokens per step (None: a prompt prefills in one step)."""
    prefill_pool: PrefillPool | None = None
    """A separate prefill pool (None: prompts prefill on this replica)."""
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
        parallel: Parallelism | None = None,
        disaggregation: Disaggregation | None = None,
    ) -> ReplicaPhysics:
        """Physics of ``chips`` chips of ``hardware`` running ``llm`` in ``parallel``'s layout (default:
        tensor parallel over all chips), with a separate prefill pool when ``disaggregation`` is given."""
        layout = Parallelism() if parallel is None else parallel
        draft_tokens, draft_cost, tokens_per_step = 0, 0.0, 1.0
        if speculative is not None:
            draft_tokens, draft_cost = speculative.draft_tokens, speculative.draft_cost
            tokens_per_step = expected_tokens_per_step(speculative.acceptance_rate, speculative.draft_tokens)
        pool = None
        if disaggregation is not None:
            instance = disaggregation.prefill_instance_chips
            link = min(hardware.scale_out_bandwidth_gb_s, hardware.interconnect_bandwidth_gb_s) * BYTES_PER_GB
            pool = PrefillPool(
                steps=StepConstants.of(hardware, llm, instance, disaggregation.prefill_parallel),
                instances=disaggregation.prefill_instances,
                chips=disaggregation.prefill_chips,
                transfer_s_per_token=llm.kv_bytes_per_token / (link * instance),
                chunk_tokens=disaggregation.prefill_parallel.prefill_chunk_tokens,
            )
        return cls(
            chips=chips,
            steps=StepConstants.of(hardware, llm, chips, layout),
            kv_capacity_tokens=kv_capacity_tokens(hardware, llm, chips, layout),
            layers=llm.layers,
            ttft_overhead_s=ttft_overhead_s + hardware.request_overhead_s,
            prefill_chunk_tokens=layout.prefill_chunk_tokens,
            prefill_pool=pool,
            draft_tokens=draft_tokens,
            draft_cost=draft_cost,
            tokens_per_step=tokens_per_step,
            decode_speedup=decode_speedup,
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
            parallel=backend.parallel,
            disaggregation=backend.disaggregation,
        )

    # --- the roofline's constants, for inspection ----------------------------------------------

    @property
    def weight_read_s(self) -> float:
        """Time to read the weights one token uses (a dense model: all of them), s."""
        c = self.steps
        return c.shared_read_s + (c.experts * (1.0 - c.expert_keep)) * c.expert_read_s

    @property
    def kv_read_s_per_token(self) -> float:
        """Time to read one context token's KV cache in every full-attention layer, s."""
        return self.steps.full_layers * self.steps.kv_read_s_per_attended

    @property
    def compute_s_per_token(self) -> float:
        """Matrix-multiply time of one token's forward pass, s."""
        return self.steps.matmul_s_per_token

    @property
    def fixed_s(self) -> float:
        """Batch-independent latency per step (overheads, per-layer latencies, collective latency), s."""
        return self.steps.fixed_s + self.steps.collective_fixed_s

    @property
    def floor_s(self) -> float:
        """Minimum time of a decode step, s."""
        return self.steps.floor_s

    # --- steps -----------------------------------------------------------------------------------

    def decode_step_s(
        self,
        batch: float,
        context_tokens: float,
        prefill_tokens: float = 0.0,
        prefill_context_tokens: float | None = None,
    ) -> float:
        """Seconds of one decode step of ``batch`` streams (at least 1) of mean context ``context_tokens``,
        carrying ``prefill_tokens`` prompt tokens of other requests (chunked prefill; 0 by default) from
        prompts ``prefill_context_tokens`` long."""
        b = max(batch, 1)
        c = self.steps
        plain_s = step_s(c, b, context_tokens, prefill_tokens, prefill_context_tokens)
        if self.draft_tokens == 0:
            return plain_s
        verify_s = step_s(
            c,
            b,
            context_tokens,
            prefill_tokens,
            prefill_context_tokens,
            tokens_per_stream=self.draft_tokens + 1,
        )
        return speculative_step_s(
            verify_step_s=verify_s,
            plain_step_s=plain_s,
            draft_tokens=self.draft_tokens,
            draft_cost=self.draft_cost,
        )

    def decode_rate_tok_s(self, batch: int, context_tokens: float, prefill_tokens: float = 0.0) -> float:
        """Output tokens/s of each of ``batch`` streams decoding together."""
        step = self.decode_step_s(batch, context_tokens, prefill_tokens)
        return self.decode_speedup * self.tokens_per_step / step

    def throughput_tok_s(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s of the whole replica (``batch`` × per-stream rate)."""
        return max(batch, 1) * self.decode_rate_tok_s(batch, context_tokens)

    @property
    def counted_chips(self) -> int:
        """Chips throughput per chip is counted against: the replica's and its counted prefill pool's."""
        return self.chips + (0 if self.prefill_pool is None else self.prefill_pool.chips)

    def throughput_tok_s_per_chip(self, batch: int, context_tokens: float) -> float:
        """Output tokens/s per chip of the replica (its prefill pool's chips counted too)."""
        return self.throughput_tok_s(batch, context_tokens) / self.counted_chips

    def bound(self, batch: int, context_tokens: float, prefill_tokens: float = 0.0) -> Bound:
        """What limits a plain decode step at this load: ``memory``, ``compute`` or ``latency``."""
        parts = step_parts(self.steps, max(batch, 1), context_tokens, prefill_tokens)
        core = max(parts.memory_s, parts.compute_s + parts.prefill_s)
        exchange = parts.exchange_s - self.steps.overlap * min(parts.exchange_s, core)
        return step_bound(
            memory_s=parts.memory_s,
            compute_s=parts.compute_s + parts.prefill_s,
            fixed_s=parts.latency_s + exchange,
            floor_s=self.floor_s,
        )

    def max_batch(self, context_tokens: float) -> int:
        """Most streams of mean context ``context_tokens`` whose KV cache fits the replica."""
        return kv_batch_cap(self.kv_capacity_tokens, context_tokens)

    def prefill_compute_s(self, uncached_tokens: float, cached_tokens: float = 0.0) -> float:
        """Seconds to prefill ``uncached_tokens`` new input tokens alone (0 for none), after
        ``cached_tokens`` already in the cache: one step with no decode streams per prefill chunk —
        compute-bound for long prompts, never faster than one read of the weights, plus latencies (on a
        wafer: the pipeline fill). With a separate prefill pool: on one prefill instance, plus moving the
        KV cache to this replica."""
        if uncached_tokens <= 0:
            return 0.0
        pool = self.prefill_pool
        steps, chunk = (
            (self.steps, self.prefill_chunk_tokens) if pool is None else (pool.steps, pool.chunk_tokens)
        )
        n = _chunks(uncached_tokens, chunk)
        prompt = 2.0 * cached_tokens + uncached_tokens  # mean attended span: cached + half the new tokens
        compute = n * step_s(steps, 0, 0.0, uncached_tokens / n, prompt)
        if pool is not None:
            compute += uncached_tokens * pool.transfer_s_per_token
        return compute

    def prefill_s(self, uncached_tokens: int) -> float:
        """Seconds from admission to the first output token: ``ttft_overhead_s`` plus prefill."""
        return self.ttft_overhead_s + self.prefill_compute_s(uncached_tokens)

    def ttft_s(self, uncached_tokens: int) -> float:
        """Time to first token without queueing, s (the same as :meth:`prefill_s`)."""
        return self.prefill_s(uncached_tokens)
