"""The hardware and model catalogue: named :class:`Hardware` and :class:`LLM` specs, as data.

Every number carries its source; "assumption" marks numbers without one. A backend spec names its
hardware and model by these names (:mod:`speedtrap.config.backend` reads this catalogue), and the
backend presets of :mod:`speedtrap.config.presets` are built from it. GPU η_mem, η_f and step overhead
and the wafer per-layer latency are fitted to published serving measurements
(``speedtrap.config.hardware``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from speedtrap.config.hardware import (
    FITTED_GPU_ETA_FLOP,
    FITTED_GPU_ETA_MEM,
    FITTED_GPU_STEP_OVERHEAD_S,
    FITTED_WAFER_HOP_S,
    FITTED_WAFER_LAYER_S,
    Hardware,
)
from speedtrap.config.llm import LLM

__all__ = [
    "HARDWARE_PRESETS",
    "LLM_PRESETS",
    "UnknownPresetError",
    "hardware_preset",
    "llm_preset",
    "preset_lookup",
]


class UnknownPresetError(KeyError, ValueError):
    """A preset name that is not registered; the message lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


# --- hardware ---------------------------------------------------------------------------------

_GPU_FITTED: dict[str, Any] = {
    # Fitted to the calibration part of validation/data/serving_measurements.csv (see
    # speedtrap.config.hardware.FITTED_*): achieved bandwidth and FLOP/s fractions and the per-step
    # overhead of scheduling, sampling and kernel launch.
    "eta_mem": FITTED_GPU_ETA_MEM,
    "eta_flop": FITTED_GPU_ETA_FLOP,
    "step_overhead_s": FITTED_GPU_STEP_OVERHEAD_S,
    # Assumption: ~5 µs of kernel latency per layer, and ~5 µs per log2 step of each of the two
    # tensor/expert-parallel collectives per layer (NCCL small-message all-reduce on NVLink ≈10–15 µs
    # at 4–8 GPUs); their transfer time comes from the NVLink bandwidth.
    "layer_latency_s": 5e-6,
    "collective_latency_s": 5e-6,
}

_HARDWARE = [
    Hardware(
        name="h100-sxm",
        memory_gb=80,  # NVIDIA H100 SXM datasheet
        memory_bandwidth_tb_s=3.35,  # NVIDIA H100 SXM datasheet
        peak_tflop_s={"bf16": 989, "fp8": 1979},  # dense, NVIDIA H100 SXM datasheet
        usd_per_chip_hour=2.50,  # assumption: 2025 cloud rental market, ≈$2–3 per H100-hour
        interconnect_bandwidth_gb_s=450,  # NVLink 4: 900 GB/s per GPU, both directions (NVIDIA)
        **_GPU_FITTED,
    ),
    Hardware(
        name="h200",
        memory_gb=141,  # NVIDIA H200 datasheet
        memory_bandwidth_tb_s=4.8,  # NVIDIA H200 datasheet
        peak_tflop_s={"bf16": 989, "fp8": 1979},  # dense; same Hopper die as the H100 (NVIDIA)
        usd_per_chip_hour=3.50,  # assumption: rental market, ≈1.4× an H100-hour
        interconnect_bandwidth_gb_s=450,  # NVLink 4: 900 GB/s per GPU, both directions (NVIDIA)
        **_GPU_FITTED,
    ),
    Hardware(
        name="b200",
        memory_gb=180,  # NVIDIA DGX B200: 1,440 GB HBM3e over 8 GPUs
        memory_bandwidth_tb_s=8.0,  # NVIDIA DGX B200: 64 TB/s over 8 GPUs
        peak_tflop_s={"bf16": 2250, "fp8": 4500, "fp4": 9000},  # dense, NVIDIA HGX B200 (half the sparse)
        usd_per_chip_hour=5.00,  # assumption: rental market, ≈2× an H100-hour
        interconnect_bandwidth_gb_s=900,  # NVLink 5: 1.8 TB/s per GPU, both directions (NVIDIA)
        **_GPU_FITTED,
    ),
    Hardware(
        name="gb200",
        memory_gb=186,  # NVIDIA GB200 NVL72: 13.4 TB HBM3e over 72 GPUs
        memory_bandwidth_tb_s=8.0,  # NVIDIA GB200 NVL72: 576 TB/s over 72 GPUs (≈2.4× H100)
        peak_tflop_s={"bf16": 2500, "fp8": 5000, "fp4": 10000},  # dense, NVIDIA GB200 NVL72 / 72
        usd_per_chip_hour=6.00,  # assumption: rental market, ≈2.4× an H100-hour
        interconnect_bandwidth_gb_s=900,  # NVLink 5: 1.8 TB/s per GPU, both directions (NVIDIA)
        **_GPU_FITTED,
    ),
    Hardware(
        name="wse-3",
        memory_kind="sram",
        memory_gb=44,  # Cerebras WSE-3: 44 GB on-chip SRAM
        memory_bandwidth_tb_s=21_000,  # Cerebras WSE-3: 21 PB/s
        peak_tflop_s={"bf16": 125_000},  # Cerebras WSE-3: 125 PF AI compute
        layer_latency_s=FITTED_WAFER_LAYER_S,  # pipeline latency per layer, fitted (config.hardware)
        wafer_hop_s=FITTED_WAFER_HOP_S,  # per wafer boundary per step, fitted (config.hardware)
        # Assumption: a CS-3 system costs a few million dollars (press estimates); $2.5M over three
        # years of full use is ≈$95/h, plus power and hosting ≈ $100 per wafer-hour.
        usd_per_chip_hour=100.0,
    ),
]

# --- models -----------------------------------------------------------------------------------

_LLMS = [
    # Meta Llama 3.1 model cards / config.json: 8.03B / 70.6B / 405.9B parameters, GQA with 8 KV
    # heads of dim 128, 131,072-token context, bf16 weights.
    LLM(
        name="llama-3.1-8b",
        total_params_b=8.03,
        bytes_per_param=2,
        layers=32,
        kv_heads=8,
        head_dim=128,
        query_heads=32,
        context_window_tokens=131_072,
    ),
    LLM(
        name="llama-3.1-70b",
        total_params_b=70.6,
        bytes_per_param=2,
        layers=80,
        kv_heads=8,
        head_dim=128,
        query_heads=64,
        context_window_tokens=131_072,
    ),
    LLM(
        name="llama-3.1-405b",
        total_params_b=405.9,
        bytes_per_param=2,
        layers=126,
        kv_heads=8,
        head_dim=128,
        query_heads=128,
        context_window_tokens=131_072,
    ),
    # Qwen3-32B model card / config.json: 32.8B parameters, 64 layers, 8 KV heads of dim 128,
    # 32,768-token native context, bf16.
    LLM(
        name="qwen3-32b",
        total_params_b=32.8,
        bytes_per_param=2,
        layers=64,
        kv_heads=8,
        head_dim=128,
        query_heads=64,
        hidden_size=5120,
        context_window_tokens=32_768,
    ),
    # OpenAI gpt-oss-120b model card / config.json: 116.8B parameters, 5.1B active, 36 layers, 128
    # experts with 4 per token, 64 query and 8 KV heads of dim 64, width 2880, 131,072-token context;
    # MoE weights in MXFP4 (≈4.25 bits), the rest bf16: ≈0.56 bytes/param overall (the checkpoint
    # is ≈65 GB). Half the layers (18) attend to a 128-token sliding window.
    LLM(
        name="gpt-oss-120b",
        total_params_b=116.8,
        active_params_b=5.1,
        bytes_per_param=0.56,
        layers=36,
        kv_heads=8,
        head_dim=64,
        query_heads=64,
        hidden_size=2880,
        experts=128,
        experts_per_token=4,
        sliding_window_tokens=128,
        sliding_window_layers=18,
        context_window_tokens=131_072,
    ),
    # DeepSeek-R1 (DeepSeek-V3 architecture, config.json / tech report): 671B parameters, 37B active,
    # 61 layers, 256 routed experts with 8 per token (plus one shared), 128 query heads, width 7168;
    # multi-head latent attention caches 512 + 64 = 576 values per token and layer (kv_heads=1,
    # head_dim=288: 2 × 288 = 576), 128k context; fp8 weights as released.
    LLM(
        name="deepseek-r1",
        total_params_b=671,
        active_params_b=37,
        bytes_per_param=1,
        compute_dtype="fp8",
        layers=61,
        kv_heads=1,
        head_dim=288,
        query_heads=128,
        hidden_size=7168,
        experts=256,
        experts_per_token=8,
        kv_bytes_per_element=1,
        context_window_tokens=131_072,
    ),
    # Kimi K2 (Moonshot config.json, DeepSeek-V3 architecture): 1.04T parameters, 32B active, 61
    # layers, 384 routed experts with 8 per token, 64 query heads, width 7168, MLA (576 values per
    # token and layer), 256k context (K2.6). Int4 expert weights (K2 Thinking onward): ≈0.56 bytes/param.
    LLM(
        name="kimi-k2",
        total_params_b=1040,
        active_params_b=32,
        bytes_per_param=0.5625,
        layers=61,
        kv_heads=1,
        head_dim=288,
        query_heads=64,
        hidden_size=7168,
        experts=384,
        experts_per_token=8,
        context_window_tokens=262_144,
    ),
    # GLM-4.5/4.7 (Z.ai config.json): 355B parameters, 32B active, 92 layers, 160 routed experts with
    # 8 per token, 96 query and 8 KV heads of dim 128, width 5120, 128k context; bf16 as released.
    LLM(
        name="glm-4.7",
        total_params_b=355,
        active_params_b=32,
        bytes_per_param=2,
        layers=92,
        kv_heads=8,
        head_dim=128,
        query_heads=96,
        hidden_size=5120,
        experts=160,
        experts_per_token=8,
        context_window_tokens=131_072,
    ),
    # Llama 4 Maverick (Meta model card / config.json): 400B parameters, 17B active, 48 layers, 128
    # routed experts with 1 per token (plus a shared expert), 40 query and 8 KV heads of dim 128,
    # width 5120, 1M-token context; bf16 as released.
    LLM(
        name="llama-4-maverick",
        total_params_b=400,
        active_params_b=17,
        bytes_per_param=2,
        layers=48,
        kv_heads=8,
        head_dim=128,
        query_heads=40,
        hidden_size=5120,
        experts=128,
        experts_per_token=1,
        context_window_tokens=1_000_000,
    ),
    # Llama-3.3-Nemotron-Super-49B (NVIDIA model card): 49.9B parameters, a NAS-pruned Llama-3.3-70B
    # with 80 blocks (some without attention, approximated here as a uniform dense stack), 64 query
    # and 8 KV heads of dim 128, width 8192, 128k context.
    LLM(
        name="nemotron-super-49b",
        total_params_b=49.9,
        bytes_per_param=2,
        layers=80,
        kv_heads=8,
        head_dim=128,
        query_heads=64,
        context_window_tokens=131_072,
    ),
    # Assumption: the hypothetical frontier model behind gpu-batched/gpu-fast. A 1T-parameter
    # mixture of experts with 64B active, 384 routed experts with 8 per token (the sparsity of the
    # published 1T-class open models, Kimi K2), NVFP4 weights (4-bit values + an 8-bit scale per 16:
    # 0.5625 bytes/param), fp4 compute on Blackwell, 84 layers, GQA 8×128 (64 query heads) with an
    # fp8 KV cache, 200k-token window (Opus-class). 8× B200 holds it with ~44 streams of 96k context.
    LLM(
        name="frontier-moe",
        total_params_b=1000,
        active_params_b=64,
        bytes_per_param=0.5625,
        compute_dtype="fp4",
        layers=84,
        kv_heads=8,
        head_dim=128,
        kv_bytes_per_element=1,
        query_heads=64,
        experts=384,
        experts_per_token=8,
        context_window_tokens=200_000,
    ),
    # Assumption: the hypothetical distilled model behind wafer-distilled (Codex-Spark-like, whose
    # size is not public): a 100B-parameter mixture of experts, 10B active (64 experts, 4 per token),
    # 50 layers, bf16 weights and KV (Cerebras serves 16-bit weights), GQA 4×128 (32 query heads),
    # 128k-token window (Codex-Spark: 128k).
    LLM(
        name="distilled-moe",
        total_params_b=100,
        active_params_b=10,
        bytes_per_param=2,
        layers=50,
        kv_heads=4,
        head_dim=128,
        query_heads=32,
        experts=64,
        experts_per_token=4,
        context_window_tokens=128_000,
    ),
]


def preset_lookup[T](registry: Mapping[str, T], kind: str, name: str) -> T:
    """``registry[name]``; an unknown name raises :class:`UnknownPresetError` listing the known ones
    (``kind`` names the registry in the message: "hardware", "model", "backend")."""
    try:
        return registry[name]
    except KeyError:
        known = ", ".join(sorted(registry))
        raise UnknownPresetError(f"unknown {kind} preset {name!r} (known: {known})") from None


_HARDWARE_BY_NAME = {hw.name: hw for hw in _HARDWARE}
_LLM_BY_NAME = {llm.name: llm for llm in _LLMS}

HARDWARE_PRESETS: Mapping[str, Hardware] = MappingProxyType(_HARDWARE_BY_NAME)
"""Hardware presets by name."""

LLM_PRESETS: Mapping[str, LLM] = MappingProxyType(_LLM_BY_NAME)
"""Model presets by name."""


def hardware_preset(name: str) -> Hardware:
    """The hardware preset ``name``; an unknown name raises :class:`UnknownPresetError` listing the known."""
    return preset_lookup(HARDWARE_PRESETS, "hardware", name)


def llm_preset(name: str) -> LLM:
    """The model preset ``name``; an unknown name raises :class:`UnknownPresetError` listing the known."""
    return preset_lookup(LLM_PRESETS, "model", name)
