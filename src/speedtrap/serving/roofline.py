"""The step-time roofline (docs/design.md §2): one forward step of a replica, memory or compute bound,
plus communication and fixed latencies.

One step serves ``B`` decoding streams of mean context ``L`` and, with chunked prefill, ``P`` prompt
tokens of other requests (``T = B + P`` tokens). The replica's ``n`` chips run a layout
(:class:`speedtrap.config.parallel.Parallelism`): attention as ``d`` data-parallel groups of
``t = n/d`` tensor-parallel chips, routed experts tensor-parallel over all chips or split whole over
``e`` chips. Every term is the time of the busiest chip (balanced load); a step takes

``max(memory, compute) + prefill + exchange + collectives + fixed``, at least the latency floor; with
overlapped communication the hardware's ``overlap_efficiency`` φ of the shorter of ``max(memory,
compute) + prefill`` and ``exchange`` is hidden (φ = 1: the longer of the two):

* memory = what one chip reads: its ``1/t`` share of the always-read weights (each attention group
  holds a copy), its share of the distinct experts that the step's T tokens route to,
  ``E·(1 − (1 − k/E)^T)/n`` per layer (:meth:`speedtrap.config.llm.LLM.distinct_experts`), and the KV
  cache of its group's ``B/d`` streams — split over the ``min(t, KV heads)`` chips that hold distinct
  heads (more chips than KV heads hold copies; MLA's one latent is read whole by every chip of its
  group). Sliding-window layers read at most the window. All over the chip's bandwidth × η_mem.
* compute = (2 · active matmul parameters · B + attention FLOPs of the B decode tokens at L) / n, each
  at its dtype's FLOP/s × η_f (dense layers, experts and attention may use different dtypes); a matrix
  multiply over M tokens runs at ``M / (M + M½)`` of that (``Hardware.gemm_half_tokens``), which adds the
  cost of M½ tokens per step to each: M½·d tokens through the always-read weights (each attention
  group multiplies its own tokens) and M½·E/k through the routed experts (each expert sees k/E of the
  tokens).
* prefill = the same for the P prompt tokens (attention in its prefill form), added to the step rather
  than overlapped with its memory traffic: prompt chunks run as compute-bound kernels that delay the
  decode (what separates serving benchmarks' inter-token times from decode-only speeds).
* collectives: tensor-parallel all-reduces within each attention group, two per layer (after attention
  and after the MLP; one when the experts are expert-parallel), each ``α·⌈log2 t⌉`` plus the ring
  transfer ``2(t−1)/t`` of the group's ``T/d`` activations.
* exchange (expert parallelism): per MoE layer a dispatch and a combine, each chip sending its own
  ``T/n`` tokens to the k experts' chips — ``k·width·(dispatch + combine bytes)·(e−1)/e`` per token —
  and paying one latency per collective.
* Links: a collective within the scale-up domain runs at its bandwidth and latency; the share of an
  all-to-all's traffic bound for chips outside the domain runs over the scale-out network at the same
  time (the slower of the two sets the time); an all-reduce spanning domains runs at scale-out speed.
* fixed = per-step overhead + per-layer latency · layers (a multi-chip GPU replica adds
  ``multichip_layer_latency_s`` per layer).

SRAM machines (``memory_kind="sram"``) have no collectives and pay ``wafer_hop_s`` per chip (wafer)
boundary, ``n − 1`` per step; with ``spatial_layers`` each layer holds ``n/layers`` of the replica's
bandwidth and FLOP/s (a dataflow pipeline), so a decode step — one pass of the batch through every
layer in turn — depends on the active parameters, the batch and the context through the capacity one
layer has, while prompts fill every layer of the pipeline at once and use the whole replica's compute;
without it a step uses the whole replica's capacity (the model the backend presets were calibrated
with).

Prefill alone (time to first token) is the same step with ``B = 0``: its compute plus one read of
the weights, and on a wafer the pipeline fill (layers and hops) on top. All functions are pure; times
in seconds, sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

from speedtrap.config.hardware import BYTES_PER_GB, Hardware
from speedtrap.config.llm import LLM
from speedtrap.config.parallel import Parallelism

Bound = Literal["memory", "compute", "latency"]

__all__ = [
    "Bound",
    "StepConstants",
    "StepParts",
    "activation_workspace_bytes",
    "fixed_latency_s",
    "kv_batch_cap",
    "kv_capacity_tokens",
    "replica_bandwidth_bytes_s",
    "replica_flop_s",
    "roofline_step_s",
    "step_bound",
    "step_parts",
    "step_s",
]

_DEFAULT_LAYOUT = Parallelism()


def replica_bandwidth_bytes_s(hardware: Hardware, chips: int) -> float:
    """Achieved memory bandwidth of a replica of ``chips`` chips, bytes/s."""
    return chips * hardware.effective_bandwidth_bytes_s


def replica_flop_s(hardware: Hardware, llm: LLM, chips: int) -> float:
    """Achieved FLOP/s of a replica in the model's compute dtype."""
    return chips * hardware.effective_flop_s(llm.compute_dtype)


def fixed_latency_s(hardware: Hardware, llm: LLM, chips: int) -> float:
    """Batch-independent time of one step: per-step overhead plus per-layer latencies
    (with the multi-chip per-layer latency when the replica spans more than one chip)."""
    per_layer_s = hardware.layer_latency_s + (hardware.multichip_layer_latency_s if chips > 1 else 0.0)
    return hardware.step_overhead_s + llm.layers * per_layer_s


def _distinct_kv_shards(llm: LLM, tensor_parallel: int) -> int:
    """Chips of one attention group that hold distinct parts of a stream's KV cache."""
    return max(1, min(tensor_parallel, llm.kv_heads))


def kv_capacity_tokens(
    hardware: Hardware, llm: LLM, chips: int, parallel: Parallelism | None = None
) -> float:
    """Tokens of KV cache that fit beside the weights in a replica's usable memory (0 if none).

    Each attention group holds a copy of the always-read weights; on GPUs a stream's KV cache is copied
    on the chips of its group beyond the distinct KV heads (tensor parallelism wider than the KV heads;
    MLA's one latent on every chip of the group). SRAM machines split layers, not heads. A GPU layout
    with a per-step token budget (``prefill_chunk_tokens``) also keeps the activations of a step of that
    many tokens out of the KV cache (:func:`activation_workspace_bytes`)."""
    layout = _DEFAULT_LAYOUT if parallel is None else parallel
    d = layout.attention_data_parallel if hardware.memory_kind == "hbm" else 1
    t = max(chips // d, 1)
    resident = llm.weight_bytes + (d - 1) * llm.shared_weight_bytes
    if hardware.memory_kind == "hbm":
        resident += activation_workspace_bytes(llm, chips, layout)
    room_bytes = chips * hardware.usable_memory_bytes - resident
    copies = t / _distinct_kv_shards(llm, t) if hardware.memory_kind == "hbm" else 1.0
    return max(0.0, room_bytes / (llm.kv_bytes_per_token * copies))


def activation_workspace_bytes(llm: LLM, chips: int, parallel: Parallelism | None = None) -> float:
    """Bytes a replica's chips keep for the activations of one step of the layout's token budget
    (``prefill_chunk_tokens``; 0 without one), all chips together.

    A serving engine sizes its KV cache after a trial forward pass of its per-step token budget
    (vLLM's ``max_num_batched_tokens`` profile run, TensorRT-LLM's ``max_num_tokens``): the memory
    that pass peaks at is not available to the KV cache (vLLM docs, "Memory profiling":
    docs.vllm.ai/en/latest/configuration/conserving_memory.html; ``gpu_memory_utilization`` bounds
    weights, activations and KV cache together). The peak is the layer's widest live tensors — the
    MLP's gate/up output, its activation and the residual stream — about ``active parameters per
    layer / width`` values per token (Llama 3.1 70B: 2·28672 + 28672 + 2·8192 = 102k values against
    70.6e9 / 80 / 8192 = 108k), in 16-bit activations (``LLM.activation_bytes``), sharded over the
    tensor-parallel chips of each attention group; each group runs its own share of the budget."""
    layout = _DEFAULT_LAYOUT if parallel is None else parallel
    budget = layout.prefill_chunk_tokens
    if budget is None:
        return 0.0
    values_per_token = llm.active_params / (llm.layers * llm.width)
    return budget * values_per_token * llm.activation_bytes


def kv_batch_cap(kv_capacity: float, context_tokens: float) -> int:
    """Most streams of ``context_tokens`` context whose KV cache fits in ``kv_capacity`` tokens."""
    return int(kv_capacity // max(context_tokens, 1.0))


def roofline_step_s(*, memory_s: float, compute_s: float, fixed_s: float, floor_s: float) -> float:
    """``max(max(memory_s, compute_s) + fixed_s, floor_s)``: the roofline plus latencies, floored."""
    return max(max(memory_s, compute_s) + fixed_s, floor_s)


def step_bound(*, memory_s: float, compute_s: float, fixed_s: float, floor_s: float) -> Bound:
    """Which term dominates a step: the latency floor/fixed latencies, memory, or compute."""
    if floor_s >= max(memory_s, compute_s) + fixed_s or fixed_s >= max(memory_s, compute_s):
        return "latency"
    return "memory" if memory_s >= compute_s else "compute"


def _log2_steps(n: int) -> int:
    return math.ceil(math.log2(n)) if n > 1 else 0


def _link(hardware: Hardware, chips: int) -> tuple[float, float]:
    """(bandwidth B/s per chip and direction, latency s) of a collective over ``chips`` chips."""
    domain = hardware.scale_up_domain_chips
    if domain is None or chips <= domain:
        return hardware.interconnect_bandwidth_gb_s * BYTES_PER_GB, hardware.collective_latency_s
    return hardware.scale_out_bandwidth_gb_s * BYTES_PER_GB, hardware.scale_out_latency_s


def _all_to_all_s_per_byte(hardware: Hardware, ranks: int) -> tuple[float, float]:
    """(seconds per byte a chip sends to the other ranks, latency of one all-to-all) over ``ranks``
    chips: the in-domain and out-of-domain shares move at the same time, the slower one sets the time."""
    if ranks <= 1:
        return 0.0, 0.0
    domain = hardware.scale_up_domain_chips
    inside = ranks if domain is None else min(domain, ranks)
    share_in = (inside - 1) / (ranks - 1)
    up = hardware.interconnect_bandwidth_gb_s * BYTES_PER_GB
    out = hardware.scale_out_bandwidth_gb_s * BYTES_PER_GB
    per_byte = max(share_in / up, (1.0 - share_in) / out)
    latency = hardware.collective_latency_s if inside == ranks else hardware.scale_out_latency_s
    return per_byte, latency


class StepParts(NamedTuple):
    """The terms of one step, s (module docstring)."""

    memory_s: float
    compute_s: float
    prefill_s: float
    latency_s: float
    """Fixed latencies and tensor-parallel collectives (never overlapped)."""
    exchange_s: float
    """Expert all-to-alls (overlapped with the rest when the layout overlaps communication)."""


@dataclass(frozen=True, slots=True)
class StepConstants:
    """The constants of :func:`step_s` for one replica, precomputed from its specs (s, bytes, tokens).

    Build with :meth:`of`. Plain floats so that one step-time evaluation costs microseconds. Times are
    those of the busiest chip.
    """

    shared_read_s: float
    """Time to read a chip's share of the always-read weights (a dense model: all of them), s."""
    expert_read_s: float
    """Time to read a chip's share of one routed expert (over all MoE layers), s (0 for a dense model)."""
    experts: int
    expert_keep: float
    """1 − k/E: the chance that one token misses a given expert."""
    kv_read_s_per_attended: float
    """Time to read one stream's KV of one token in one layer, per stream of the step, s."""
    full_layers: int
    window_layers: int
    window_tokens: float
    matmul_s_per_token: float
    """Compute time of one token's matrix multiplies (2 · active parameters FLOPs), s."""
    matmul_fixed_s: float
    """Per-step cost of small matrix multiplies: the time of ``gemm_half_tokens`` tokens' worth, s."""
    prefill_matmul_s_per_token: float
    """Compute time of one prompt token's matrix multiplies, s (on a dataflow pipeline prompts fill
    every layer at once and use the whole replica; elsewhere the same as a decode token's)."""
    attention_s_per_attended: float
    """Decode attention compute of one attended token in one layer, s."""
    prefill_attention_s_per_attended: float
    """Prefill attention compute of one attended token in one layer, s."""
    collective_fixed_s: float
    """Per-step collective latency (all layers), s."""
    collective_s_per_token: float
    """Per-step tensor-parallel collective transfer time per token in the step (all layers), s."""
    fixed_s: float
    """Per-step overhead plus per-layer latencies (and, on SRAM machines, chip boundaries), s."""
    floor_s: float
    exchange_s_per_token: float = 0.0
    """Expert all-to-all transfer time per token in the step (all MoE layers), s."""
    overlap: float = 0.0
    """Share of the shorter of the step's core and its expert all-to-alls that overlapping hides (0: none)."""

    @classmethod
    def of(
        cls, hardware: Hardware, llm: LLM, chips: int, parallel: Parallelism | None = None
    ) -> StepConstants:
        """The constants of ``chips`` chips of ``hardware`` running ``llm`` in ``parallel``'s layout."""
        layout = _DEFAULT_LAYOUT if parallel is None else parallel
        if hardware.memory_kind == "sram":
            return cls._sram(hardware, llm, chips)
        layout.check_chips(chips)
        d = layout.attention_data_parallel
        t = chips // d
        bandwidth = hardware.effective_bandwidth_bytes_s
        dense_f = hardware.effective_flop_s(llm.compute_dtype)
        expert_f = hardware.effective_flop_s(llm.expert_compute_dtype or llm.compute_dtype)
        attention_f = hardware.effective_flop_s(llm.attention_compute_dtype or llm.compute_dtype)
        matmul = 2.0 * llm.shared_active_params / dense_f + 2.0 * llm.routed_active_params / expert_f
        prefill_matmul = 2.0 * llm.shared_active_params / hardware.prefill_flop_s(
            llm.compute_dtype
        ) + 2.0 * llm.routed_active_params / hardware.prefill_flop_s(
            llm.expert_compute_dtype or llm.compute_dtype
        )
        prefill_attention_f = hardware.prefill_flop_s(llm.attention_compute_dtype or llm.compute_dtype)
        half = hardware.gemm_half_tokens
        small = 2.0 * llm.shared_active_params * half * d / dense_f
        if llm.is_moe:
            small += 2.0 * llm.routed_active_params * half * llm.experts / llm.experts_per_token / expert_f
        ep = layout.expert_parallel if llm.is_moe else None
        collective_fixed = collective_per_token = exchange_per_token = 0.0
        if t > 1:
            bw, alpha = _link(hardware, t)
            all_reduces = 2 if ep is None else 1
            ring = 2.0 * (t - 1) / t
            collective_fixed = all_reduces * llm.layers * alpha * _log2_steps(t)
            collective_per_token = (
                all_reduces * llm.layers * ring * llm.width * llm.activation_bytes / (d * bw)
            )
        if ep is not None and ep > 1:
            per_byte, alpha = _all_to_all_s_per_byte(hardware, ep)
            dispatch = llm.activation_bytes if layout.dispatch_bytes is None else layout.dispatch_bytes
            remote = (ep - 1) / ep
            bytes_per_token = llm.experts_per_token * llm.width * (dispatch + llm.activation_bytes) * remote
            exchange_per_token = llm.layers * bytes_per_token * per_byte / chips
            collective_fixed += 2 * llm.layers * alpha
        return cls(
            shared_read_s=llm.shared_weight_bytes / (t * bandwidth),
            expert_read_s=llm.params_per_expert * llm.expert_bytes / (chips * bandwidth),
            experts=llm.experts if llm.is_moe else 0,
            expert_keep=1.0 - llm.experts_per_token / llm.experts,
            kv_read_s_per_attended=llm.kv_bytes_per_token_per_layer
            / (d * _distinct_kv_shards(llm, t) * bandwidth),
            full_layers=llm.layers - llm.sliding_window_layers,
            window_layers=llm.sliding_window_layers,
            window_tokens=float(llm.sliding_window_tokens or 0),
            matmul_s_per_token=matmul / chips,
            matmul_fixed_s=small / chips,
            prefill_matmul_s_per_token=prefill_matmul / chips,
            attention_s_per_attended=llm.decode_attention_flops_per_attended / (chips * attention_f),
            prefill_attention_s_per_attended=llm.prefill_attention_flops_per_attended
            / (chips * prefill_attention_f),
            collective_fixed_s=collective_fixed,
            collective_s_per_token=collective_per_token,
            exchange_s_per_token=exchange_per_token,
            overlap=hardware.overlap_efficiency
            if layout.overlap_communication and exchange_per_token > 0
            else 0.0,
            fixed_s=fixed_latency_s(hardware, llm, chips),
            floor_s=hardware.token_latency_floor_s,
        )

    @classmethod
    def _sram(cls, hardware: Hardware, llm: LLM, chips: int) -> StepConstants:
        """An SRAM machine: no collectives; capacity per layer and chip boundaries as the docstring says."""
        share = chips / llm.layers if hardware.spatial_layers else float(chips)
        bandwidth = share * hardware.effective_bandwidth_bytes_s
        dense_f = hardware.effective_flop_s(llm.compute_dtype)
        expert_f = hardware.effective_flop_s(llm.expert_compute_dtype or llm.compute_dtype)
        attention_f = hardware.effective_flop_s(llm.attention_compute_dtype or llm.compute_dtype)
        matmul = 2.0 * llm.shared_active_params / dense_f + 2.0 * llm.routed_active_params / expert_f
        boundaries = chips - 1
        return cls(
            shared_read_s=llm.shared_weight_bytes / bandwidth,
            expert_read_s=llm.params_per_expert * llm.expert_bytes / bandwidth,
            experts=llm.experts if llm.is_moe else 0,
            expert_keep=1.0 - llm.experts_per_token / llm.experts,
            kv_read_s_per_attended=llm.kv_bytes_per_token_per_layer / bandwidth,
            full_layers=llm.layers - llm.sliding_window_layers,
            window_layers=llm.sliding_window_layers,
            window_tokens=float(llm.sliding_window_tokens or 0),
            matmul_s_per_token=matmul / share,
            matmul_fixed_s=0.0,
            prefill_matmul_s_per_token=matmul / chips,
            attention_s_per_attended=llm.decode_attention_flops_per_attended / (share * attention_f),
            prefill_attention_s_per_attended=llm.prefill_attention_flops_per_attended / (chips * attention_f),
            collective_fixed_s=0.0,
            collective_s_per_token=0.0,
            fixed_s=fixed_latency_s(hardware, llm, chips) + max(boundaries, 0) * hardware.wafer_hop_s,
            floor_s=hardware.token_latency_floor_s,
        )


def step_parts(
    c: StepConstants,
    batch: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float | None = None,
    tokens_per_stream: float = 1.0,
) -> StepParts:
    """The terms of one step (:class:`StepParts`): ``batch`` decode streams of mean context
    ``context_tokens``, each verifying ``tokens_per_stream`` tokens (speculative decoding; 1 by default),
    and ``prefill_tokens`` prompt tokens of prompts ``prefill_context_tokens`` long (default: one prompt
    of ``prefill_tokens``)."""
    decode_tokens = batch * tokens_per_stream
    tokens = decode_tokens + prefill_tokens
    weights_s = c.shared_read_s
    if c.experts:
        weights_s += c.experts * (1.0 - c.expert_keep ** max(tokens, 1.0)) * c.expert_read_s
    window = c.window_tokens
    attended = c.full_layers * context_tokens + c.window_layers * min(context_tokens, window)
    memory_s = weights_s + batch * attended * c.kv_read_s_per_attended
    compute_s = decode_tokens * (c.matmul_s_per_token + attended * c.attention_s_per_attended)
    if decode_tokens > 0:
        compute_s += c.matmul_fixed_s
    prefill_s = 0.0
    if prefill_tokens > 0:
        prompt = prefill_tokens if prefill_context_tokens is None else prefill_context_tokens
        half = prompt / 2.0
        seen = c.full_layers * half + c.window_layers * min(half, window)
        prefill_s = prefill_tokens * (
            c.prefill_matmul_s_per_token + seen * c.prefill_attention_s_per_attended
        )
        if decode_tokens <= 0:
            prefill_s += c.matmul_fixed_s
    latency_s = c.fixed_s + c.collective_fixed_s + tokens * c.collective_s_per_token
    return StepParts(memory_s, compute_s, prefill_s, latency_s, tokens * c.exchange_s_per_token)


def _combine(c: StepConstants, parts: StepParts) -> float:
    core = max(parts.memory_s, parts.compute_s) + parts.prefill_s
    core += parts.exchange_s - c.overlap * min(core, parts.exchange_s)
    return max(core + parts.latency_s, c.floor_s)


def step_s(
    c: StepConstants,
    batch: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float | None = None,
    tokens_per_stream: float = 1.0,
) -> float:
    """Seconds of one step (see the module docstring), at least the latency floor."""
    return _combine(
        c, step_parts(c, batch, context_tokens, prefill_tokens, prefill_context_tokens, tokens_per_stream)
    )
