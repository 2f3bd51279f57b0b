"""The hardware and model catalogue: named :class:`Hardware` and :class:`LLM` specs, as data.

Every number carries its source; "assumption" marks numbers without one. A backend spec names its
hardware and model by these names (:mod:`speedtrap.config.backend` reads this catalogue), and the
backend presets of :mod:`speedtrap.config.presets` are built from it. The efficiencies, overheads and
latencies of GPUs (NVIDIA and AMD apart), wafers and LPUs are the refit to published serving
measurements (``speedtrap.config.hardware.FITTED_*``), and the backend presets run on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from speedtrap.config.hardware import (
    FITTED_AMD_COLLECTIVE_LATENCY_S,
    FITTED_AMD_ETA_FLOP,
    FITTED_AMD_ETA_MEM,
    FITTED_AMD_LAYER_LATENCY_S,
    FITTED_AMD_PREFILL_ETA_FLOP,
    FITTED_AMD_STEP_OVERHEAD_S,
    FITTED_GPU_COLLECTIVE_LATENCY_S,
    FITTED_GPU_ETA_FLOP,
    FITTED_GPU_ETA_MEM,
    FITTED_GPU_GEMM_HALF_TOKENS,
    FITTED_GPU_LAYER_LATENCY_S,
    FITTED_GPU_OVERLAP_EFFICIENCY,
    FITTED_GPU_PREFILL_ETA_FLOP,
    FITTED_GPU_REQUEST_OVERHEAD_S,
    FITTED_GPU_STEP_OVERHEAD_S,
    FITTED_LPU_HOP_S,
    FITTED_LPU_LAYER_S,
    FITTED_WAFER_HOP_S,
    FITTED_WAFER_LAYER_S,
    Hardware,
)
from speedtrap.config.llm import LLM

__all__ = [
    "AMD_GPUS",
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
    # Fitted to validation/data/serving_measurements.csv (see speedtrap.config.hardware.FITTED_*):
    # achieved bandwidth and FLOP/s fractions (prompt tokens' FLOP/s fraction its own), the per-step
    # overhead of scheduling, sampling and kernel
    # launch, the kernel latency per layer, the latency per log2 step of a scale-up collective, and the
    # scheduling time of a request before its prefill.
    "eta_mem": FITTED_GPU_ETA_MEM,
    "eta_flop": FITTED_GPU_ETA_FLOP,
    "prefill_eta_flop": FITTED_GPU_PREFILL_ETA_FLOP,
    "step_overhead_s": FITTED_GPU_STEP_OVERHEAD_S,
    "layer_latency_s": FITTED_GPU_LAYER_LATENCY_S,
    "collective_latency_s": FITTED_GPU_COLLECTIVE_LATENCY_S,
    "request_overhead_s": FITTED_GPU_REQUEST_OVERHEAD_S,
    "overlap_efficiency": FITTED_GPU_OVERLAP_EFFICIENCY,
    "gemm_half_tokens": FITTED_GPU_GEMM_HALF_TOKENS,
    # Scale-out network: one 400 Gb/s NIC per GPU (ConnectX-7 InfiniBand or RoCE: 50 GB/s per
    # direction; DeepEP measures 61–90 GB/s of logical RDMA bandwidth per GPU, local traffic included).
    "scale_out_bandwidth_gb_s": 50.0,
    # Assumption: ~20 µs per all-to-all or all-reduce over RDMA (not fitted: too few measurements cross
    # a node's NVLink domain).
    "scale_out_latency_s": 20e-6,
}

_AMD_FITTED: dict[str, Any] = {
    **_GPU_FITTED,
    # AMD Instinct GPUs run another software stack (ROCm, its kernels and collectives): their
    # efficiencies, overheads and latencies are fitted on their own measurements.
    "eta_mem": FITTED_AMD_ETA_MEM,
    "eta_flop": FITTED_AMD_ETA_FLOP,
    "prefill_eta_flop": FITTED_AMD_PREFILL_ETA_FLOP,
    "step_overhead_s": FITTED_AMD_STEP_OVERHEAD_S,
    "layer_latency_s": FITTED_AMD_LAYER_LATENCY_S,
    "collective_latency_s": FITTED_AMD_COLLECTIVE_LATENCY_S,
}
AMD_GPUS = ("mi300x", "mi325x", "mi355x")
"""The AMD Instinct presets (their fitted factors are their own)."""

_HARDWARE = [
    Hardware(
        name="h100-sxm",
        memory_gb=80,  # NVIDIA H100 SXM datasheet
        memory_bandwidth_tb_s=3.35,  # NVIDIA H100 SXM datasheet
        peak_tflop_s={"bf16": 989, "fp8": 1979},  # dense, NVIDIA H100 SXM datasheet
        usd_per_chip_hour=2.50,  # assumption: 2025 cloud rental market, ≈$2–3 per H100-hour
        interconnect_bandwidth_gb_s=450,  # NVLink 4: 900 GB/s per GPU, both directions (NVIDIA)
        scale_up_domain_chips=8,  # HGX H100: 8 GPUs on NVSwitch
        **_GPU_FITTED,
    ),
    Hardware(
        name="h200",
        memory_gb=141,  # NVIDIA H200 datasheet
        memory_bandwidth_tb_s=4.8,  # NVIDIA H200 datasheet
        peak_tflop_s={"bf16": 989, "fp8": 1979},  # dense; same Hopper die as the H100 (NVIDIA)
        usd_per_chip_hour=3.50,  # assumption: rental market, ≈1.4× an H100-hour
        interconnect_bandwidth_gb_s=450,  # NVLink 4: 900 GB/s per GPU, both directions (NVIDIA)
        scale_up_domain_chips=8,  # HGX H200: 8 GPUs on NVSwitch
        **_GPU_FITTED,
    ),
    Hardware(
        name="b200",
        memory_gb=180,  # NVIDIA DGX B200: 1,440 GB HBM3e over 8 GPUs
        memory_bandwidth_tb_s=8.0,  # NVIDIA DGX B200: 64 TB/s over 8 GPUs
        peak_tflop_s={"bf16": 2250, "fp8": 4500, "fp4": 9000},  # dense, NVIDIA HGX B200 (half the sparse)
        usd_per_chip_hour=5.00,  # assumption: rental market, ≈2× an H100-hour
        interconnect_bandwidth_gb_s=900,  # NVLink 5: 1.8 TB/s per GPU, both directions (NVIDIA)
        scale_up_domain_chips=8,  # HGX B200: 8 GPUs on NVSwitch
        **_GPU_FITTED,
    ),
    Hardware(
        name="gb200",
        memory_gb=186,  # NVIDIA GB200 NVL72: 13.4 TB HBM3e over 72 GPUs
        memory_bandwidth_tb_s=8.0,  # NVIDIA GB200 NVL72: 576 TB/s over 72 GPUs (≈2.4× H100)
        peak_tflop_s={"bf16": 2500, "fp8": 5000, "fp4": 10000},  # dense, NVIDIA GB200 NVL72 / 72
        usd_per_chip_hour=6.00,  # assumption: rental market, ≈2.4× an H100-hour
        interconnect_bandwidth_gb_s=900,  # NVLink 5: 1.8 TB/s per GPU, both directions (NVIDIA)
        scale_up_domain_chips=72,  # NVL72: one NVLink domain of 72 GPUs
        **_GPU_FITTED,
    ),
    Hardware(
        name="mi300x",
        memory_gb=192,  # AMD Instinct MI300X datasheet: 192 GB HBM3
        memory_bandwidth_tb_s=5.3,  # AMD Instinct MI300X datasheet
        peak_tflop_s={"bf16": 1307.4, "fp8": 2614.9},  # dense, AMD Instinct MI300X datasheet
        usd_per_chip_hour=2.50,  # assumption: rental market, ≈ an H100-hour
        # Infinity Fabric: 7 links of 64 GB/s per direction to the 7 peers of an 8-GPU platform (AMD)
        interconnect_bandwidth_gb_s=448,
        scale_up_domain_chips=8,
        **_AMD_FITTED,
    ),
    Hardware(
        name="mi325x",
        memory_gb=256,  # AMD Instinct MI325X datasheet: 256 GB HBM3E
        memory_bandwidth_tb_s=6.0,  # AMD Instinct MI325X datasheet
        peak_tflop_s={"bf16": 1307.4, "fp8": 2614.9},  # dense; same CDNA 3 compute as the MI300X (AMD)
        usd_per_chip_hour=3.00,  # assumption: rental market
        interconnect_bandwidth_gb_s=448,  # Infinity Fabric, as the MI300X
        scale_up_domain_chips=8,
        **_AMD_FITTED,
    ),
    Hardware(
        name="mi355x",
        memory_gb=288,  # AMD Instinct MI355X: 288 GB HBM3E
        memory_bandwidth_tb_s=8.0,  # AMD Instinct MI355X: 8 TB/s
        peak_tflop_s={"bf16": 2516.6, "fp8": 5033.2, "fp4": 10066.3},  # dense, AMD Instinct MI355X
        usd_per_chip_hour=4.50,  # assumption: rental market
        # Infinity Fabric: 7 links of 153.6 GB/s (both directions) to the peers of an 8-GPU platform
        interconnect_bandwidth_gb_s=537.6,
        scale_up_domain_chips=8,
        **_AMD_FITTED,
    ),
    Hardware(
        name="wse-3",
        memory_kind="sram",
        memory_gb=44,  # Cerebras WSE-3: 44 GB on-chip SRAM
        memory_bandwidth_tb_s=21_000,  # Cerebras WSE-3: 21 PB/s
        peak_tflop_s={"bf16": 125_000},  # Cerebras WSE-3: 125 PF AI compute
        # Cerebras maps each layer onto its own region of the wafers (a dataflow pipeline).
        spatial_layers=True,
        layer_latency_s=FITTED_WAFER_LAYER_S,  # pipeline latency per layer, fitted (config.hardware)
        wafer_hop_s=FITTED_WAFER_HOP_S,  # per wafer boundary per step, fitted (config.hardware)
        # Assumption: a CS-3 system costs a few million dollars (press estimates); $2.5M over three
        # years of full use is ≈$95/h, plus power and hosting ≈ $100 per wafer-hour.
        usd_per_chip_hour=100.0,
    ),
    Hardware(
        name="lpu",
        memory_kind="sram",
        memory_gb=0.23,  # Groq LPU: 230 MB on-chip SRAM (TechPowerUp, Groq)
        memory_bandwidth_tb_s=80,  # Groq LPU: 80 TB/s
        peak_tflop_s={"bf16": 188, "fp8": 750},  # Groq LPU: 188 TFLOP/s FP16, 750 TOPS INT8
        # A model's layers are laid out over hundreds of chips in a deterministic pipeline.
        spatial_layers=True,
        # Pipeline latency per layer and per chip boundary, fitted (config.hardware).
        layer_latency_s=FITTED_LPU_LAYER_S,
        wafer_hop_s=FITTED_LPU_HOP_S,
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
    # MoE weights in MXFP4 (4 bits + an 8-bit scale per 32: 0.53125 bytes), attention and embeddings
    # bf16 (the checkpoint is ≈65 GB). Half the layers (18) attend to a 128-token sliding window.
    LLM(
        name="gpt-oss-120b",
        total_params_b=116.8,
        active_params_b=5.1,
        bytes_per_param=2,
        expert_bytes_per_param=0.53125,
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
    # multi-head latent attention: a 512-wide latent plus 64 rotary dims cached per token and layer,
    # query/key heads of 128 + 64 dims and value heads of 128; 128k context; fp8 weights as released.
    LLM(
        name="deepseek-r1",
        total_params_b=671,
        active_params_b=37,
        bytes_per_param=1,
        compute_dtype="fp8",
        layers=61,
        kv_heads=1,
        head_dim=192,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        qk_nope_head_dim=128,
        v_head_dim=128,
        query_heads=128,
        hidden_size=7168,
        experts=256,
        experts_per_token=8,
        kv_bytes_per_element=1,
        context_window_tokens=131_072,
    ),
    # Kimi K2 (Moonshot config.json, DeepSeek-V3 architecture): 1.04T parameters, 32B active, 61
    # layers, 384 routed experts with 8 per token, 64 query heads, width 7168, MLA (DeepSeek-V3's: a
    # 512-wide latent + 64 rotary dims per token and layer), 256k context (K2.6). Int4 expert weights
    # (K2 Thinking onward): ≈0.56 bytes/param.
    LLM(
        name="kimi-k2",
        total_params_b=1040,
        active_params_b=32,
        bytes_per_param=0.5625,
        layers=61,
        kv_heads=1,
        head_dim=192,
        kv_lora_rank=512,
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
    # Meta Llama 2 model card / config.json: 7B (6.74B parameters, 32 layers, 32 heads of dim 128
    # without GQA) and 70B (69.0B, 80 layers, 64 query and 8 KV heads of dim 128, width 8192); 4,096-token
    # context, bf16.
    LLM(
        name="llama-2-7b",
        total_params_b=6.74,
        bytes_per_param=2,
        layers=32,
        kv_heads=32,
        head_dim=128,
        context_window_tokens=4_096,
    ),
    LLM(
        name="llama-2-70b",
        total_params_b=69.0,
        bytes_per_param=2,
        layers=80,
        kv_heads=8,
        head_dim=128,
        query_heads=64,
        context_window_tokens=4_096,
    ),
    # Mixtral 8x7B (Mistral AI model card / config.json): 46.7B parameters, 12.9B active, 32 layers, 8
    # experts with 2 per token, 32 query and 8 KV heads of dim 128, width 4096, 32k context, bf16.
    LLM(
        name="mixtral-8x7b",
        total_params_b=46.7,
        active_params_b=12.9,
        bytes_per_param=2,
        layers=32,
        kv_heads=8,
        head_dim=128,
        query_heads=32,
        experts=8,
        experts_per_token=2,
        context_window_tokens=32_768,
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
