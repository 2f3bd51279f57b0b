"""The three calibrated backend presets of docs/design.md §2, built from the hardware and model
catalogue (:mod:`speedtrap.config.catalog`).

Every number carries its source; "assumption" marks numbers without one. The backends' speeds are
not stored here: they come out of the roofline (``speedtrap.serving.replica``) at each backend's
typical load, and ``tests/validation/test_calibration.py`` checks them against docs/design.md §2:

* ``gpu-batched`` (as of 2026-02) — a hypothetical frontier mixture of experts (1T parameters, 64B
  active, 384 routed experts with 8 per token, NVFP4 weights, 84 layers, fp8 KV cache: 172
  KB/token) on one 8× B200 node, at 26 streams of 96k-token agent contexts (median agent input
  ≈96k tokens, SemiAnalysis). A step reads the KV caches (≈430 GB) and the ≈161 distinct experts
  that 26 tokens route to per layer: ≈64 tok/s per stream (target ≈65, docs/design.md §5).
* ``gpu-fast`` (as of 2026-02) — the same fleet; its fast tier caps replicas at 5 streams, so a step
  reads a fifth of the KV cache and ≈38 experts per layer: ≈163 tok/s (≈2.5×, Anthropic fast-mode
  docs), at 6× the price and with the same time to first token.
* ``wafer-distilled`` (as of 2026-02) — a hypothetical distilled model (100B parameters, 10B
  active, 50 layers, bf16) resident in the aggregate SRAM of 8 Cerebras WSE-3s at 8 streams of 96k
  tokens. SRAM bandwidth makes memory time negligible; the per-layer pipeline latency fitted to the
  published Cerebras speeds bounds a step: ≈1400 tok/s (Codex-Spark: >1000 tok/s), with 1.2× the
  failures.

What changed with the corrected physics (issue 9): routed experts make the weight read grow with
the batch, so the standard tier's typical load fell from 40 to 26 streams and the fast tier's cap
from 8 to 5 streams to keep the seed's ≈65 tok/s and ≈2.5×; the frontier model gained an expert
count (384 / 8, an assumption) and the distilled model one (64 / 4). GPU η_mem, η_f and step
overhead and the wafer per-layer latency are now fitted to published serving measurements
(``speedtrap.config.hardware``), which moved the wafer preset from ≈1150 to ≈1400 tok/s.

The presets keep those factors (the 2026-11-25 fit, :data:`PRESET_FACTORS_DATE`) and that physics
(:func:`preset_hardware`) while the hardware catalogue carries the refit on the grown table; they move
to the refit together with the workflow model's recalibration (docs/serving_validation.md shows what
they would become).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from speedtrap.config.backend import Backend
from speedtrap.config.catalog import (
    HARDWARE_PRESETS,
    LLM_PRESETS,
    UnknownPresetError,
    hardware_preset,
    llm_preset,
    preset_lookup,
)
from speedtrap.config.hardware import (
    PRESET_FIT_DATE,
    PRESET_GPU_COLLECTIVE_LATENCY_S,
    PRESET_GPU_ETA_FLOP,
    PRESET_GPU_ETA_MEM,
    PRESET_GPU_LAYER_LATENCY_S,
    PRESET_GPU_STEP_OVERHEAD_S,
    PRESET_WAFER_HOP_S,
    PRESET_WAFER_LAYER_S,
    Hardware,
)
from speedtrap.config.tier import Price, Quality, Tier

__all__ = [
    "BACKEND_PRESETS",
    "HARDWARE_PRESETS",
    "LLM_PRESETS",
    "UnknownPresetError",
    "backend_preset",
    "hardware_preset",
    "llm_preset",
    "preset_hardware",
]
"""The hardware and model presets live in :mod:`speedtrap.config.catalog`; they are named here too
because a backend preset is read beside them."""


# --- backends ---------------------------------------------------------------------------------

_PRESET_FACTORS: dict[str, dict[str, object]] = {
    # The factors and physics the backend presets were calibrated with (the fit of PRESET_FIT_DATE;
    # config/hardware.py): GPU efficiencies and overhead, the assumed 5 µs per layer and per
    # collective step, no request scheduling time, matrix multiplies at η_f whatever their size; on
    # the wafer the fitted per-layer latency over the whole replica's capacity. The catalogue's
    # hardware carries the newer fit (FITTED_*); the presets move to it together with the workflow
    # model's recalibration (speedtrap.serving.consistency shows how far).
    "hbm": {
        "eta_mem": PRESET_GPU_ETA_MEM,
        "eta_flop": PRESET_GPU_ETA_FLOP,
        "step_overhead_s": PRESET_GPU_STEP_OVERHEAD_S,
        "layer_latency_s": PRESET_GPU_LAYER_LATENCY_S,
        "collective_latency_s": PRESET_GPU_COLLECTIVE_LATENCY_S,
        "request_overhead_s": 0.0,
        "gemm_half_tokens": 0.0,
    },
    "sram": {
        "layer_latency_s": PRESET_WAFER_LAYER_S,
        "wafer_hop_s": PRESET_WAFER_HOP_S,
        "spatial_layers": False,
    },
}
PRESET_FACTORS_DATE = PRESET_FIT_DATE
"""The fit whose factors the backend presets carry."""


def preset_hardware(name: str) -> Hardware:
    """The catalogue's hardware ``name`` with the factors the backend presets were calibrated with."""
    hardware = hardware_preset(name)
    return hardware.with_overrides(_PRESET_FACTORS[hardware.memory_kind])


AGENT_CONTEXT_TOKENS = 96_000
"""Typical context of an agent request: median input ≈96k tokens (SemiAnalysis agent traces)."""

_STANDARD_TIER = Tier(name="standard", priority=0, batch_cap=64, price_multiplier=1.0)
# Fast mode as announced for Opus 4.6 (February 2026): 6× the list price ($30/$150 vs $5/$25,
# Anthropic fast-mode docs); later fast modes were announced at other multiples — override
# ``price_multiplier`` and ``as_of`` to model one. The batch cap of 5 is an assumption sized so that
# per-stream speed is ≈2.5× the standard tier's (Anthropic: "up to 2.5×").
_FAST_TIER = Tier(name="fast", priority=1, batch_cap=5, price_multiplier=6.0, as_of="2026-02")

_SLOW_TIER = Tier(name="slow", priority=-1, batch_cap=128, price_multiplier=0.5, as_of="2026-02")
# A slow tier for background agents (the "give me a slow mode that's cheaper" ask): admitted after
# every standard and fast request (priority -1), at half the list price — OpenAI's Flex processing
# ("slower response times and occasional resource unavailability", priced at Batch API rates, 50% of
# standard), Gemini's Flex tier (50%) and the Batch APIs of OpenAI and Anthropic (50%). Its batch cap,
# twice the standard tier's, is an assumption: a replica of only slow work may batch up to what KV
# memory holds (at 96k-token contexts, 44 streams; shorter contexts fit more). At the preset's typical
# load a slow stream decodes at the standard tier's speed: the tier changes who waits and what it
# costs, not the physics of a step. (The pool's capacity_streams counts replicas × the largest tier
# cap, so gpu-slow's backend_utilization reads half gpu-batched's for the same streams.)

_FRONTIER_STANDARD_BATCH = 26
"""Assumption: streams per replica at the standard tier's typical load, sized so that a stream runs at
the seed's ≈65 tok/s. KV memory caps the batch at 44 at 96k-token contexts; with the routed-expert
term the weight read grows with the batch (26 streams read ≈161 of 384 experts per layer), so the
provider runs at ≈60% of that cap rather than close to it (the earlier, expert-blind physics put the
typical load at 40)."""

_FLEET_REPLICAS = 4
"""Assumption: replicas serving the simulated team (each also serves other customers)."""


def _frontier_fleet(name: str, *, default_tier: str, typical_batch: int) -> Backend:
    """The GPU fleet behind gpu-batched and gpu-fast: the same hardware, model, tiers and quality."""
    return Backend(
        name=name,
        hardware=preset_hardware("b200"),
        llm=llm_preset("frontier-moe"),
        chips_per_replica=8,  # one 8-GPU B200 node
        replicas=_FLEET_REPLICAS,
        tiers=[_STANDARD_TIER, _FAST_TIER],
        default_tier=default_tier,
        price=Price(),  # $5/$25 per MTok, Opus 4.6 list price
        # The frontier model, Claude Opus 4.6: METR horizon 718.8 min, slope 0.412, acceptance scale
        # 0.2320 (config/tier.py, docs/calibration.md "Success curve"); failure multiplier 1.
        quality=Quality(),
        typical_batch=typical_batch,
        typical_context_tokens=AGENT_CONTEXT_TOKENS,
        # The other customers fill each replica to the typical load around one simulated stream.
        background_streams_per_replica=typical_batch - 1,
        ttft_overhead_s=1.0,  # assumption (see DEFAULT_TTFT_OVERHEAD_S)
        cache_writes=True,
        as_of="2026-02",  # Opus 4.6 standard speed and fast mode (article; Anthropic fast-mode docs)
    )


_WAFER_BATCH = 8
"""Assumption: streams per wafer replica at the typical load (their 96k-token KV caches share SRAM)."""


def _wafer_distilled() -> Backend:
    return Backend(
        name="wafer-distilled",
        hardware=preset_hardware("wse-3"),
        llm=llm_preset("distilled-moe"),
        chips_per_replica=None,  # derived: enough wafers to hold weights + KV in aggregate SRAM
        replicas=_FLEET_REPLICAS,
        tiers=[_STANDARD_TIER],
        default_tier="standard",
        # Assumption: no public API price for Codex-Spark; the gpu-batched list price (docs/design.md §5).
        price=Price(),
        quality=Quality(
            # 1.2× the frontier model's mistakes (docs/design.md §5 default, range 1.15–1.8): the
            # horizon whose mean failure over SWE-bench Verified's task lengths is 1.2 × Opus 4.6's,
            # a 50% acceptance horizon of 108.1 min instead of 166.8 min. The same curve written as a
            # horizon: Quality(horizon_min=466.1) (× the acceptance scale 0.2320 = 108.1 min).
            failure_multiplier=1.2,
            # Assumption: the distilled model "gets confused and messes up tool calls" (reported of
            # Codex-Spark); 2.5× the frontier model's 2% malformed tool calls.
            tool_error_prob=0.05,
        ),
        typical_batch=_WAFER_BATCH,
        typical_context_tokens=AGENT_CONTEXT_TOKENS,
        background_streams_per_replica=_WAFER_BATCH - 1,
        # Assumption: Codex-Spark's first token is ~50% faster (OpenAI, reported): half the GPU overhead.
        ttft_overhead_s=0.5,
        cache_writes=True,
        as_of="2026-02",  # GPT-5.3-Codex-Spark announcement (OpenAI, reported)
    )


def _slow_fleet() -> Backend:
    """gpu-slow: the gpu-batched fleet (same replicas, load, model and list price) with the slow tier
    added and made its default; ``standard`` and ``fast`` stay available to policies that mix tiers
    (``background_slow``). Routed to ``standard``, it serves exactly as gpu-batched does."""
    fleet = _frontier_fleet("gpu-slow", default_tier="standard", typical_batch=_FRONTIER_STANDARD_BATCH)
    data = fleet.model_dump(mode="python")
    data["tiers"] = [*data["tiers"], _SLOW_TIER.model_dump(mode="python")]
    data["default_tier"] = _SLOW_TIER.name
    return Backend.model_validate(data)


BACKEND_PRESETS: Mapping[str, Backend] = MappingProxyType(
    {
        "gpu-batched": _frontier_fleet(
            "gpu-batched", default_tier="standard", typical_batch=_FRONTIER_STANDARD_BATCH
        ),
        "gpu-fast": _frontier_fleet("gpu-fast", default_tier="fast", typical_batch=_FAST_TIER.batch_cap),
        "wafer-distilled": _wafer_distilled(),
        "gpu-slow": _slow_fleet(),
    }
)
"""The three backends of the design card, by name, and ``gpu-slow`` (the gpu-batched fleet with a
discounted low-priority tier for background work, :data:`_SLOW_TIER`)."""


def backend_preset(name: str) -> Backend:
    """The backend preset ``name``; an unknown name raises :class:`UnknownPresetError` listing the known."""
    return preset_lookup(BACKEND_PRESETS, "backend", name)
