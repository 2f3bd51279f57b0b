"""Accelerator hardware: memory, bandwidth, compute, latencies and rental price of one chip."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, StrictBool, field_validator

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

    Bandwidth and compute are per chip. A decode step costs ``max(memory time, compute time)`` plus
    fixed latencies: ``step_overhead_s`` per step, ``layer_latency_s`` per layer, and
    ``multichip_layer_latency_s`` per layer when a replica spans several chips. ``token_latency_floor_s``
    is a hard minimum per decode step; ``request_overhead_s`` is the scheduling time of every request
    before its prefill (time to first token).

    **Interconnect, two levels.** Chips talk over a scale-up domain of ``scale_up_domain_chips`` chips
    (NVLink: 8 in an HGX node, 72 in an NVL72 rack; ``None``: every replica fits one domain) at
    ``interconnect_bandwidth_gb_s`` per chip and direction, ``collective_latency_s`` per log2 step of
    a collective; beyond the domain they use the scale-out network (InfiniBand/RoCE) at
    ``scale_out_bandwidth_gb_s`` per chip and direction and ``scale_out_latency_s`` per collective.
    A matrix multiply over M tokens runs at ``η_f · M / (M + gemm_half_tokens)`` of peak: small decode
    batches and the few tokens each routed expert sees use the tensor cores poorly, long prompts well.
    Prompt (prefill) tokens run at ``prefill_eta_flop`` of peak when it is set: their matrix multiplies
    and attention are long, compute-bound kernels whose efficiency a decode step's short ones do not
    show (None: η_f, as before).
    When a replica overlaps its expert all-to-alls with compute (two-batch overlap), the overlap hides
    ``overlap_efficiency`` of the shorter of the two (1: perfectly, 0: not at all).

    **SRAM machines** (``memory_kind="sram"``): bandwidth is so high that the per-layer pipeline
    latency and compute set the speed. With ``spatial_layers`` each layer is laid out on its own share
    of the chips (a dataflow pipeline: Cerebras, Groq), so one step's work runs at chips/layers of the
    replica's bandwidth and FLOP/s; without it (the model the backend presets were calibrated with) a
    step uses the whole replica's capacity. Either way a step pays ``wafer_hop_s`` per chip boundary.
    The number of chips a model needs follows from the aggregate on-chip memory.
    """

    durations_have_floor: ClassVar[bool] = False  # latencies per layer or hop: microseconds

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
    prefill_eta_flop: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Achieved / peak dense FLOP/s of prompt (prefill) tokens (None: eta_flop).",
    )
    usable_memory_fraction: float = Field(default=DEFAULT_USABLE_MEMORY_FRACTION, gt=0, le=1)
    step_overhead_s: float = Field(default=0.0, ge=0, description="Fixed time per decode step, s.")
    layer_latency_s: float = Field(default=0.0, ge=0, description="Fixed time per layer per step, s.")
    multichip_layer_latency_s: float = Field(
        default=0.0, ge=0, description="Extra time per layer per step when a replica spans >1 chip, s."
    )
    token_latency_floor_s: float = Field(default=0.0, ge=0, description="Minimum time of one decode step, s.")
    request_overhead_s: float = Field(
        default=0.0, ge=0, le=60, description="Scheduling time of each request before its prefill, s."
    )
    interconnect_bandwidth_gb_s: float = Field(
        default=450.0, ge=1e-3, le=1e7, description="Scale-up bandwidth per chip, one direction, GB/s."
    )
    collective_latency_s: float = Field(
        default=0.0, ge=0, description="Latency of one collective per log2 step of the chip count, s."
    )
    scale_up_domain_chips: int | None = Field(
        default=None, ge=1, le=1_000_000, description="Chips of one scale-up domain (None: unbounded)."
    )
    scale_out_bandwidth_gb_s: float = Field(
        default=50.0, ge=1e-3, le=1e7, description="Scale-out bandwidth per chip, one direction, GB/s."
    )
    scale_out_latency_s: float = Field(
        default=0.0, ge=0, le=1, description="Latency of one collective over the scale-out network, s."
    )
    gemm_half_tokens: float = Field(
        default=0.0,
        ge=0,
        le=1e6,
        description="Tokens at which a matmul reaches half its peak efficiency (0: any size at η_f).",
    )
    overlap_efficiency: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Share of the shorter of compute and expert all-to-all that overlapping hides (0–1).",
    )
    spatial_layers: StrictBool = Field(
        default=False, description="SRAM: each layer holds chips/layers of the replica's capacity."
    )
    wafer_hop_s: float = Field(
        default=0.0, ge=0, description="Per-step time to cross one chip (wafer) boundary, s."
    )
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

    def prefill_flop_s(self, dtype: str) -> float:
        """Achieved dense FLOP/s per chip in ``dtype`` for prompt tokens (peak × ``prefill_eta_flop``,
        or × η_f when the hardware has no prefill efficiency of its own)."""
        flop_s = self.effective_flop_s(dtype)
        if self.prefill_eta_flop is None:
            return flop_s
        return flop_s * self.prefill_eta_flop / self.eta_flop


# --- factors fitted to published serving measurements -----------------------------------------
# Fitted by ``speedtrap.validation.serving_fit.fit_factors`` (scipy least squares on the log errors of
# tok/s per user, tok/s per GPU and time to first token) on every configuration group of
# validation/data/serving_measurements.csv; ``speedtrap validate serving`` reports each group's error
# with the factors refitted without it (leave one group out), and tests/validation refits and
# compares. The hardware catalogue (config/catalog.py) carries these factors, so ``speedtrap pareto``
# and ``speedtrap validate serving`` compute the same numbers.
FITTED_FIT_DATE = "2026-11-27"
FITTED_ROWS = 50
"""Measurements the factors were fitted on (all groups of the table)."""
FITTED_GPU_ETA_MEM = 0.85515
"""Achieved / peak HBM bandwidth of GPUs (fitted; docs/design.md §5 quotes 0.87–0.92)."""
FITTED_GPU_ETA_FLOP = 0.310013
"""Achieved / peak dense FLOP/s of GPUs in serving (fitted)."""
FITTED_GPU_PREFILL_ETA_FLOP = 0.457725
"""Achieved / peak dense FLOP/s of GPUs on prompt tokens (fitted on time to first token and the
prompts sharing decode steps)."""
FITTED_GPU_STEP_OVERHEAD_S = 0.0
"""Per-step scheduling, sampling and launch overhead on GPUs, s (fitted at its lower bound 0: with one
model per group a per-step constant and the per-layer latency × layers are nearly collinear, and the
latter takes it)."""
FITTED_GPU_LAYER_LATENCY_S = 7.16014e-05
"""Kernel latency per layer per step on GPUs, s (fitted)."""
FITTED_GPU_COLLECTIVE_LATENCY_S = 5.27797e-06
"""Latency per log2 step of a scale-up collective on GPUs, s (fitted)."""
FITTED_GPU_REQUEST_OVERHEAD_S = 0.0600168
"""Scheduling time of a request before its prefill on GPUs, s (fitted on time to first token)."""
FITTED_GPU_GEMM_HALF_TOKENS = 0.0
"""Tokens at which a GPU matrix multiply reaches half its peak efficiency (fitted at its lower bound 0:
the separate decode and prefill efficiencies carry the difference between small and large GEMMs)."""
FITTED_GPU_OVERLAP_EFFICIENCY = 0.121379
"""Share of the shorter of compute and expert all-to-all that two-batch overlap hides on GPUs (fitted)."""
FITTED_AMD_ETA_MEM = 0.604844
"""Achieved / peak HBM bandwidth of AMD Instinct GPUs (fitted; their own, as their software stack differs)."""
FITTED_AMD_ETA_FLOP = 0.291731
"""Achieved / peak dense FLOP/s of AMD Instinct GPUs in serving (fitted as a ratio ≤ 1 to the prefill
efficiency, ``serving_fit.DECODE_EFFICIENCY_OF``; at the ratio's bound 1: every AMD row decodes
memory-bound, so the data do not identify it — left free it drifted to 1.0 of peak)."""
FITTED_AMD_PREFILL_ETA_FLOP = 0.291731
"""Achieved / peak dense FLOP/s of AMD Instinct GPUs on prompt tokens (fitted)."""
FITTED_AMD_STEP_OVERHEAD_S = 0.0
"""Per-step overhead on AMD Instinct GPUs, s (fitted at its lower bound 0, as on NVIDIA GPUs)."""
FITTED_AMD_LAYER_LATENCY_S = 0.000124686
"""Kernel latency per layer per step on AMD Instinct GPUs, s (fitted)."""
FITTED_AMD_COLLECTIVE_LATENCY_S = 5.40573e-05
"""Latency per log2 step of an Infinity Fabric collective, s (fitted)."""
FITTED_WAFER_LAYER_S = 1.28545e-05
"""Pipeline latency per layer per step on a WSE-3, s (fitted with the wafer hop held at its prior and
the API request term in the API rows' first tokens, 2026-12-07, on the stored fit's rows; 14.16 µs
before, with the hop fitted to 0 and no API term)."""
WAFER_HOP_PRIOR_S = 2.0e-6
"""Per-step time to cross one wafer boundary on WSE-3, s: a sourced prior, not fitted. A model larger
than one wafer's 44 GB of SRAM is split at layer boundaries over several CS-3 systems ("20B models fit
on a single CS-3 while 70B models fit on as few as four systems", Cerebras, "Introducing Cerebras
Inference", 2024-08-27, https://cerebras.ai/blog/introducing-cerebras-inference-ai-at-instant-speed),
which talk over the system's 1.2 Tb/s of I/O, 12 × 100 GbE (CS-3 system I/O; Argonne's SC24 tutorial,
https://github.com/argonne-lcf/AIaccelerators-SC24-tutorial). One hop is one token's activations
(16 KB for an 8192-wide bf16 model: 0.1 µs at 150 GB/s) plus the latency of one RDMA-over-Ethernet
message, sub-microsecond NIC to NIC and up to a few microseconds through a switch (100 GbE RDMA:
https://api.emergentmind.com/topics/100-gbe-remote-direct-memory-access-rdma; a switch in the path
adds microseconds). Range 1–10 µs; 2 µs taken. The wafer rows want 0 (the fit puts the hop at its lower
bound: with one model per group the hops, ``wafers − 1``, are collinear with ``layers``), so the prior
is kept and only the per-layer latency is fitted (``serving_fit.PRIOR_FIXED``)."""
FITTED_WAFER_HOP_S = WAFER_HOP_PRIOR_S
"""The wafer hop the catalogue carries: the prior :data:`WAFER_HOP_PRIOR_S` (not fitted)."""
FITTED_LPU_LAYER_S = 3.43092e-05
"""Pipeline latency per layer per step on a Groq LPU, s (fitted; 32.3 µs before the chip hop was held
within its published bound)."""
LPU_HOP_MAX_S = 3.0e-6
"""Upper bound of one chip-to-chip hop on a Groq LPU system, s: "more than 2 TeraBytes of global memory
accessible in less than 3 microseconds of end-to-end system latency" over up to 10,440 TSPs (Abts et
al., "A Software-defined Tensor Streaming Multiprocessor for Large-scale Machine Learning", ISCA 2022,
https://doi.org/10.1145/3470496.3527405; abstract at https://groq.com/groq-at-isca-2022). A hop
between neighbouring chips of a pipeline is at most that; the fit keeps the hop within 0–3 µs."""
FITTED_LPU_HOP_S = 3.0e-06
"""Per-step time to cross one chip boundary on a Groq LPU pipeline, s (fitted within 0–:data:`LPU_HOP_MAX_S`;
it sits at that published upper bound: unbounded the 2026-11-27 fit put it at 3.67 µs)."""
