"""The step-time roofline (DESIGN.md §2): one forward step of a replica, memory or compute bound,
plus collectives and fixed latencies.

One step serves ``B`` decoding streams of mean context ``L`` and, with chunked prefill, ``P`` prompt
tokens of other requests. It takes

``max(memory, compute) + prefill + collectives + fixed``, at least the hardware's latency floor, where

* memory = (weights read + B · KV bytes read at L) / (BW · η_mem). A dense model reads all its
  weights; a mixture of experts reads its shared parameters plus the expected number of distinct
  experts that the step's B + P tokens route to, ``E·(1 − (1 − k/E)^(B+P))`` per layer
  (:meth:`speedtrap.config.llm.LLM.distinct_experts`). Sliding-window layers read at most the window.
* compute = (2 · N_active · B + attention FLOPs of the B decode tokens at L) / (F · η_f).
* prefill = (2 · N_active · P + attention FLOPs of the P prompt tokens) / (F · η_f), added to the
  step rather than overlapped with its memory traffic: prompt chunks run as compute-bound kernels
  that delay the decode (what separates serving benchmarks' inter-token times from decode-only
  speeds).
* collectives (a replica of n > 1 HBM chips): two per layer, each ``α·⌈log2 n⌉`` plus a ring
  transfer ``2(n−1)/n`` of the step's activations over the chip-to-chip bandwidth (Megatron-style
  tensor parallelism: an all-reduce after attention and after the MLP; expert parallelism's two
  all-to-alls move the same bytes). On wafers: one hop per wafer boundary per step.
* fixed = per-step overhead + per-layer latency · layers (on a wafer the per-layer latency is the
  pipeline's; a multi-chip GPU replica adds ``multichip_layer_latency_s`` per layer).

Prefill alone (time to first token) is the same step with ``B = 0``: its compute plus one read of
the weights, and on a wafer the pipeline fill (layers and hops) on top. Bandwidth and FLOP/s are
summed over the replica's chips. All functions are pure; times in seconds, sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from speedtrap.config.hardware import BYTES_PER_GB, Hardware
from speedtrap.config.llm import LLM

Bound = Literal["memory", "compute", "latency"]

__all__ = [
    "Bound",
    "StepConstants",
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


def kv_capacity_tokens(hardware: Hardware, llm: LLM, chips: int) -> float:
    """Tokens of KV cache that fit beside the weights in a replica's usable memory (0 if none)."""
    room_bytes = chips * hardware.usable_memory_bytes - llm.weight_bytes
    return max(0.0, room_bytes / llm.kv_bytes_per_token)


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


@dataclass(frozen=True, slots=True)
class StepConstants:
    """The constants of :func:`step_s` for one replica, precomputed from its specs (s, bytes, tokens).

    Build with :meth:`of`. Plain floats so that one step-time evaluation costs microseconds.
    """

    shared_read_s: float
    """Time to read the always-read weights (a dense model: all of them), s."""
    expert_read_s: float
    """Time to read one routed expert (over all MoE layers), s (0 for a dense model)."""
    experts: int
    expert_keep: float
    """1 − k/E: the chance that one token misses a given expert."""
    kv_read_s_per_attended: float
    """Time to read one token's KV in one layer, s."""
    full_layers: int
    window_layers: int
    window_tokens: float
    matmul_s_per_token: float
    """Compute time of 2 · N_active FLOPs, s."""
    attention_s_per_attended: float
    """Compute time of 4 · query heads · head dim FLOPs (one attended token in one layer), s."""
    collective_fixed_s: float
    """Per-step collective latency (all layers), s."""
    collective_s_per_token: float
    """Per-step collective transfer time per token in the step (all layers), s."""
    fixed_s: float
    """Per-step overhead plus per-layer latencies, s."""
    floor_s: float

    @classmethod
    def of(cls, hardware: Hardware, llm: LLM, chips: int) -> StepConstants:
        """The constants of ``chips`` chips of ``hardware`` running ``llm``."""
        bandwidth = replica_bandwidth_bytes_s(hardware, chips)
        flop_s = replica_flop_s(hardware, llm, chips)
        fixed = fixed_latency_s(hardware, llm, chips)
        collective_fixed = collective_per_token = 0.0
        if chips > 1 and hardware.memory_kind == "hbm":
            hops = math.ceil(math.log2(chips))
            collective_fixed = 2 * llm.layers * hardware.collective_latency_s * hops
            ring = 2.0 * (chips - 1) / chips
            link = hardware.interconnect_bandwidth_gb_s * BYTES_PER_GB
            collective_per_token = 2 * llm.layers * ring * llm.width * llm.activation_bytes / link
        elif chips > 1:
            fixed += (chips - 1) * hardware.wafer_hop_s
        return cls(
            shared_read_s=llm.shared_params * llm.bytes_per_param / bandwidth,
            expert_read_s=llm.params_per_expert * llm.bytes_per_param / bandwidth,
            experts=llm.experts if llm.is_moe else 0,
            expert_keep=1.0 - llm.experts_per_token / llm.experts,
            kv_read_s_per_attended=llm.kv_bytes_per_token_per_layer / bandwidth,
            full_layers=llm.layers - llm.sliding_window_layers,
            window_layers=llm.sliding_window_layers,
            window_tokens=float(llm.sliding_window_tokens or 0),
            matmul_s_per_token=llm.flops_per_token / flop_s,
            attention_s_per_attended=4.0 * llm.q_heads * llm.head_dim / flop_s,
            collective_fixed_s=collective_fixed,
            collective_s_per_token=collective_per_token,
            fixed_s=fixed,
            floor_s=hardware.token_latency_floor_s,
        )


def step_parts(
    c: StepConstants,
    batch: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float | None = None,
) -> tuple[float, float, float, float]:
    """``(memory_s, compute_s, prefill_s, latency_s)`` of one step: ``batch`` decode streams of mean
    context ``context_tokens`` and ``prefill_tokens`` prompt tokens of prompts ``prefill_context_tokens``
    long (default: one prompt of ``prefill_tokens``). ``latency_s`` holds collectives and fixed latencies."""
    tokens = batch + prefill_tokens
    weights_s = c.shared_read_s
    if c.experts:
        weights_s += c.experts * (1.0 - c.expert_keep ** max(tokens, 1.0)) * c.expert_read_s
    window = c.window_tokens
    attended = c.full_layers * context_tokens + c.window_layers * min(context_tokens, window)
    memory_s = weights_s + batch * attended * c.kv_read_s_per_attended
    compute_s = batch * (c.matmul_s_per_token + attended * c.attention_s_per_attended)
    prefill_s = 0.0
    if prefill_tokens > 0:
        prompt = prefill_tokens if prefill_context_tokens is None else prefill_context_tokens
        half = prompt / 2.0
        seen = c.full_layers * half + c.window_layers * min(half, window)
        prefill_s = prefill_tokens * (c.matmul_s_per_token + seen * c.attention_s_per_attended)
    latency_s = c.fixed_s + c.collective_fixed_s + tokens * c.collective_s_per_token
    return memory_s, compute_s, prefill_s, latency_s


def step_s(
    c: StepConstants,
    batch: float,
    context_tokens: float,
    prefill_tokens: float = 0.0,
    prefill_context_tokens: float | None = None,
) -> float:
    """Seconds of one step (see the module docstring): ``max(memory, compute) + prefill + latencies``,
    at least the latency floor."""
    memory_s, compute_s, prefill_s, latency_s = step_parts(
        c, batch, context_tokens, prefill_tokens, prefill_context_tokens
    )
    return max(max(memory_s, compute_s) + prefill_s + latency_s, c.floor_s)
