"""The decode-step roofline (docs/design.md §2): memory or compute bound, plus fixed latencies.

A decode step for ``B`` streams of mean context ``L`` tokens takes
``max((W_active + B·L·kv_bytes) / (BW·η_mem), 2·N_active·B / (F·η_f)) + overheads``, and at least
the hardware's latency floor; bandwidth and FLOP/s are summed over the replica's chips. Prefill is
compute-bound on the uncached input tokens, and never faster than one read of the active weights.
All functions are pure; times in seconds, sizes in bytes.
"""

from __future__ import annotations

from typing import Literal

from speedtrap.config.hardware import Hardware
from speedtrap.config.llm import LLM

Bound = Literal["memory", "compute", "latency"]


def replica_bandwidth_bytes_s(hardware: Hardware, chips: int) -> float:
    """Achieved memory bandwidth of a replica of ``chips`` chips, bytes/s."""
    return chips * hardware.effective_bandwidth_bytes_s


def replica_flop_s(hardware: Hardware, llm: LLM, chips: int) -> float:
    """Achieved FLOP/s of a replica in the model's compute dtype."""
    return chips * hardware.effective_flop_s(llm.compute_dtype)


def fixed_latency_s(hardware: Hardware, llm: LLM, chips: int) -> float:
    """Batch-independent time of one step: per-step overhead plus per-layer latencies
    (with the multi-chip collective latency when the replica spans more than one chip)."""
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
