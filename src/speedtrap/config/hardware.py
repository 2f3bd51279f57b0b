"""Accelerator hardware: memory, bandwidth, compute, latencies and rental price of one chip."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from speedtrap.config.base import Spec

BYTES_PER_GB = 1e9
BYTES_PER_TB = 1e12
FLOP_PER_TFLOP = 1e12

MIN_TFLOP_S = 1e-3
MAX_TFLOP_S = 1e7
"""Plausibility bounds on a chip's dense TFLOP/s (a wafer-scale chip: 1.25e5). The other hardware
fields are bounded the same way, orders of magnitude beyond any chip built (WSE-3: 21,000 TB/s and
44 GB of SRAM; B200: 180 GB), so that a typing slip is refused instead of producing 1e-299 tok/s."""

DEFAULT_ETA_MEM = 0.90
"""Achieved / peak memory bandwidth: 0.87–0.92 (llm-analysis; measured GB200 bandwidth, docs/design.md §5)."""

DEFAULT_ETA_FLOP = 0.60
"""Achieved / peak dense FLOP/s in large matrix multiplies: 0.5–0.7 (llm-analysis, docs/design.md §5)."""

DEFAULT_USABLE_MEMORY_FRACTION = 0.90
"""Assumption: the share of chip memory that holds weights and KV cache; the rest is activations,
runtime and fragmentation (vLLM's default ``gpu_memory_utilization`` is 0.9)."""


class Hardware(Spec):
    """One accelerator chip, as the decode-step roofline sees it (docs/design.md §2, Serving).

    Bandwidth and compute are per chip and are aggregated over a replica's chips. A decode step
    costs ``max(memory time, compute time)`` plus fixed latencies: ``step_overhead_s`` per step,
    ``layer_latency_s`` per layer, and ``multichip_layer_latency_s`` per layer when a replica spans
    several chips (tensor/expert-parallel collectives). ``token_latency_floor_s`` is a hard minimum
    per decode step. Collectives between the chips of a replica (tensor/expert parallelism: two per
    layer) take ``collective_latency_s`` per hop of a log2 tree plus the ring transfer of the step's
    activations over ``interconnect_bandwidth_gb_s`` (per chip, one direction). On SRAM machines
    (``memory_kind="sram"``) bandwidth is so high that the per-layer pipeline latency and compute set
    the speed; a model spread over several wafers pays ``wafer_hop_s`` per wafer boundary per step,
    and the number of chips a model needs follows from the aggregate on-chip memory.
    """

    name: str = Field(min_length=1)
    memory_kind: Literal["hbm", "sram"] = "hbm"
    memory_gb: float = Field(ge=1e-3, le=1e6, description="Memory per chip, GB (1e9 bytes).")
    memory_bandwidth_tb_s: float = Field(
        ge=1e-3, le=1e6, description="Peak memory bandwidth per chip, TB/s (1e12 B/s)."
    )
    peak_tflop_s: dict[str, float] = Field(
        min_length=1, description="Dense peak TFLOP/s per chip by dtype, e.g. {'bf16': 989, 'fp8': 1979}."
    )
    eta_mem: float = Field(default=DEFAULT_ETA_MEM, gt=0, le=1)
    eta_flop: float = Field(default=DEFAULT_ETA_FLOP, gt=0, le=1)
    usable_memory_fraction: float = Field(default=DEFAULT_USABLE_MEMORY_FRACTION, gt=0, le=1)
    step_overhead_s: float = Field(default=0.0, ge=0, description="Fixed time per decode step, s.")
    layer_latency_s: float = Field(default=0.0, ge=0, description="Fixed time per layer per step, s.")
    multichip_layer_latency_s: float = Field(
        default=0.0, ge=0, description="Extra time per layer per step when a replica spans >1 chip, s."
    )
    token_latency_floor_s: float = Field(default=0.0, ge=0, description="Minimum time of one decode step, s.")
    interconnect_bandwidth_gb_s: float = Field(
        default=450.0, ge=1e-3, le=1e7, description="Chip-to-chip bandwidth per chip, one direction, GB/s."
    )
    collective_latency_s: float = Field(
        default=0.0, ge=0, description="Latency of one collective per log2 step of the chip count, s."
    )
    wafer_hop_s: float = Field(default=0.0, ge=0, description="Per-step time to cross one wafer boundary, s.")
    usd_per_chip_hour: float = Field(
        default=0.0, ge=0, le=1e6, description="Cost of one chip for one hour, USD."
    )

    @field_validator("peak_tflop_s")
    @classmethod
    def _positive_compute(cls, value: dict[str, float]) -> dict[str, float]:
        for dtype, tflop_s in value.items():
            if not MIN_TFLOP_S <= tflop_s <= MAX_TFLOP_S:
                bounds = f"[{MIN_TFLOP_S:g}, {MAX_TFLOP_S:g}]"
                raise ValueError(f"peak_tflop_s[{dtype!r}] = {tflop_s} is outside {bounds} TFLOP/s")
        return value

    @property
    def usable_memory_bytes(self) -> float:
        """Bytes per chip available to weights and KV cache."""
        return self.memory_gb * BYTES_PER_GB * self.usable_memory_fraction

    @property
    def effective_bandwidth_bytes_s(self) -> float:
        """Achieved memory bandwidth per chip, bytes/s (peak × η_mem)."""
        return self.memory_bandwidth_tb_s * BYTES_PER_TB * self.eta_mem

    def effective_flop_s(self, dtype: str) -> float:
        """Achieved dense FLOP/s per chip in ``dtype`` (peak × η_f); unknown dtypes name the known ones."""
        try:
            tflop_s = self.peak_tflop_s[dtype]
        except KeyError:
            known = ", ".join(sorted(self.peak_tflop_s))
            raise KeyError(f"hardware {self.name} has no {dtype} compute (has: {known})") from None
        return tflop_s * FLOP_PER_TFLOP * self.eta_flop


# --- efficiency factors fitted to published serving measurements -------------------------------
# Fitted by ``speedtrap.validation.serving.fit_efficiencies`` (scipy least squares on the log error of
# tok/s per user and per GPU) on the calibration part of validation/data/serving_measurements.csv;
# tests/validation/test_serving_validation.py refits and compares. Nothing is fitted to held-out rows.
FITTED_FIT_DATE = "2026-11-25"
FITTED_IDS: tuple[str, ...] = (
    "cerebras-l31-405b",
    "cerebras-l31-70b",
    "cerebras-l31-8b",
    "ix-dsr1-b200-1k1k-u42",
    "ix-dsr1-b200-8k1k-u120",
    "ix-dsr1-b200-8k1k-u164",
    "ix-dsr1-b200-8k1k-u23",
    "ix-dsr1-b200-8k1k-u32",
    "ix-dsr1-b200-8k1k-u42",
    "ix-dsr1-b200-8k1k-u75",
    "ix-gptoss-b200-1k1k-u100",
    "nim-l33-70b-tp2-500-2k-c1",
    "nim-l33-70b-tp2-5k500-c5",
    "nim-l33-70b-tp2-5k500-c50",
    "semi-cerebras-glm-4.7",
    "semi-cerebras-kimi-k2.6",
    "vultr-nemotron-super-49b-b200-c1",
)
FITTED_GPU_ETA_MEM = 0.864188
"""Achieved / peak HBM bandwidth of GPUs (fitted; docs/design.md §5 quotes 0.87–0.92)."""
FITTED_GPU_ETA_FLOP = 0.412773
"""Achieved / peak dense FLOP/s of GPUs in serving (fitted; below the 0.5–0.7 of large matmuls)."""
FITTED_GPU_STEP_OVERHEAD_S = 0.000248846
"""Per-step scheduling, sampling and launch overhead on GPUs, s (fitted)."""
FITTED_WAFER_LAYER_S = 1.42794e-05
"""Pipeline latency per layer per step on a WSE-3, s (fitted)."""
FITTED_WAFER_HOP_S = 0.0
"""Per-step time to cross one wafer boundary, s (fitted; the fit puts it at its lower bound, 0)."""
