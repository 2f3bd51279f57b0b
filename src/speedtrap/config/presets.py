"""The three calibrated backend presets of docs/design.md §2, built from the hardware and model
catalogue (:mod:`speedtrap.config.catalog`).

Every number carries its source; "assumption" marks numbers without one. The backends' speeds are
not stored here: they come out of the roofline (``speedtrap.serving.replica``) on the catalogue's
hardware, whose factors are fitted to published serving measurements (``speedtrap validate
serving``), at each backend's typical load, and ``tests/validation/test_calibration.py`` checks them
against docs/design.md §2:

* ``gpu-batched`` (as of 2026-02) — a hypothetical frontier mixture of experts (1T parameters, 64B
  active, 384 routed experts with 8 per token, NVFP4 weights, 84 layers, fp8 KV cache: 172
  KB/token) on one 8× B200 node laid out as SGLang and DeepSeek serve large MoE models: attention
  data-parallel over the 8 GPUs and the experts split over them (EP8), prefill on a separate 16-GPU
  pool (disaggregated, so prompts never share a decode step: the serving pool's decode-only steps
  are then exactly the rule the serving fit uses), and speculative decoding (γ 3, α 0.65 assumed).
  At 33 streams of 96k-token agent contexts (the KV cap of a data-parallel group; median agent input
  ≈96k tokens, SemiAnalysis): ≈62 tok/s per stream (target ≈65, docs/design.md §5).
* ``gpu-fast`` (as of 2026-02) — the same fleet; its fast tier caps replicas at 3 streams and runs
  them at 2 (the provider's operating point, chosen to reproduce fast mode's published signature):
  ≈145 tok/s, 2.34× gpu-batched (Anthropic fast-mode docs: "up to 2.5×"; checked at 2.5× ± 10% in
  tests/validation/test_calibration.py), at 6× the price, for 7.1× fewer tokens a replica emits.
* ``wafer-distilled`` (as of 2026-02) — a hypothetical distilled model (100B parameters, 10B
  active, 50 layers, bf16) resident in the aggregate SRAM of Cerebras WSE-3s at 8 streams of 96k
  tokens, with the wafer terms (fitted per-layer pipeline latency, a sourced 2-µs hop per wafer
  boundary, active-parameter and context terms): ≈1380 tok/s (Codex-Spark: ">1000 tok/s", reported;
  ≈1290 before the 2026-12-07 refit of the wafer terms), with 1.2× the failures.

What changed with the refit (issue 24): the presets used the 2026-11-25 factors with assumed 5 µs
per layer and per collective step and decode steps free of other requests' prompts. On the refitted
catalogue hardware the old layout (tensor parallel over 8 GPUs, prompts in the decode steps) runs
≈20 tok/s per stream at 26 streams under the fit's rule (44 with decode-only steps) and a single
stream at most ≈76 tok/s, so neither ≈65 nor 2.5× is reachable that way. What a provider has to do
to serve ≈65 tok/s to agent requests — keep prompts out of the decode steps, spread attention
data-parallel, draft tokens — is now the preset's configuration (docs/serving_validation.md, "The
presets"). Without drafting (fitted terms only) the two tiers would run 39.2 and 86.7 tok/s (2.21×;
2026-11-27 fit): the ratio rests on the fitted physics, the absolute speeds on the assumed
acceptance rate.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from speedtrap.config.backend import DEFAULT_TTFT_OVERHEAD_S, Backend, SpeculativeDecoding
from speedtrap.config.catalog import (
    HARDWARE_PRESETS,
    LLM_PRESETS,
    UnknownPresetError,
    hardware_preset,
    llm_preset,
    preset_lookup,
)
from speedtrap.config.parallel import Disaggregation, Parallelism
from speedtrap.config.tier import Price, Quality, Tier

__all__ = [
    "BACKEND_PRESETS",
    "HARDWARE_PRESETS",
    "LLM_PRESETS",
    "UnknownPresetError",
    "backend_preset",
    "hardware_preset",
    "llm_preset",
]
"""The hardware and model presets live in :mod:`speedtrap.config.catalog`; they are named here too
because a backend preset is read beside them."""


# --- backends ---------------------------------------------------------------------------------

AGENT_CONTEXT_TOKENS = 96_000
"""Typical context of an agent request: median input ≈96k tokens (SemiAnalysis agent traces)."""

_STANDARD_TIER = Tier(name="standard", priority=0, batch_cap=64, price_multiplier=1.0)
# Fast mode as announced for Opus 4.6 (February 2026): 6× the list price ($30/$150 vs $5/$25,
# Anthropic fast-mode docs); later fast modes were announced at other multiples — override
# ``price_multiplier`` and ``as_of`` to model one. The batch cap of 3 is an assumption: the smallest
# cap whose lost throughput the 6× price still pays for (at 3 streams a replica emits 5.0× fewer
# tokens per second than at the standard tier's 33; at 2, 7.1×). The gpu-fast preset runs the tier
# below its cap (:data:`_FAST_TYPICAL_BATCH`).
_FAST_TIER = Tier(name="fast", priority=1, batch_cap=3, price_multiplier=6.0, as_of="2026-02")

_SLOW_TIER = Tier(name="slow", priority=-1, batch_cap=128, price_multiplier=0.5, as_of="2026-02")
# A slow tier for background agents (the "give me a slow mode that's cheaper" ask): admitted after
# every standard and fast request (priority -1), at half the list price — OpenAI's Flex processing
# ("slower response times and occasional resource unavailability", priced at Batch API rates, 50% of
# standard), Gemini's Flex tier (50%) and the Batch APIs of OpenAI and Anthropic (50%). Its batch cap,
# twice the standard tier's, is an assumption: a replica of only slow work may batch up to what KV
# memory holds (at 96k-token contexts, 33 streams; shorter contexts fit more). At the preset's typical
# load a slow stream decodes at the standard tier's speed: the tier changes who waits and what it
# costs, not the physics of a step. (The pool's capacity_streams counts replicas × the largest tier
# cap, so gpu-slow's backend_utilization reads half gpu-batched's for the same streams.)

_FRONTIER_STANDARD_BATCH = 33
"""Assumption: streams per replica at the standard tier's typical load: the KV cap of the layout at
96k-token contexts (each data-parallel attention group holds its own streams' KV beside a copy of the
always-read weights). Without drafting a stream would run ≈39 tok/s here; the provider cannot batch
more at these contexts (docs/serving_validation.md, "The presets")."""

_FRONTIER_PARALLEL = Parallelism(attention_data_parallel=8, expert_parallel=8)
"""DP attention over the node's 8 GPUs with the routed experts split over them (EP8), as SGLang and
DeepSeek serve large MoE models (LMSYS blog, 2025; DeepSeek inference system overview): each GPU's
all-to-all carries its own tokens only."""

_FRONTIER_PREFILL = Disaggregation(prefill_chips=16)
"""Prefill/decode disaggregation (SGLang, Dynamo, DeepSeek): prompts are prefilled on two other 8-GPU
nodes and their KV moved over the scale-out network, so decode steps carry no prompt tokens. Two
nodes (assumption) is the smallest prefill pool that does not queue prompts at the standard tier's
load of agent requests (9.6k new tokens in, 213 out, on a cached 96k context): one node would give
more output tok/s per GPU, both pools counted (69.9 against 62.0), but first tokens after 2.9 s;
three leave GPUs idle for no faster first token. Time to first token under that load is 1.32 s
against 1.18 s for a prompt alone (``speedtrap.serving.consistency``; 2026-11-27 fit)."""

_FRONTIER_DRAFTING = SpeculativeDecoding(acceptance_rate=0.65, draft_tokens=3)
"""Assumption: the fleet drafts tokens, γ 3 with a draft step 10% of a target step (SpeculativeDecoding's
defaults), at an acceptance rate α of 0.65 — inside the 0.6–0.8 reported for draft models on code and
chosen (on the 2026-11-26 fit) so that the standard tier ran at Opus 4.6's measured 65–68 tok/s at
its full load; on the 2026-11-27 fit it gives 62.3 tok/s (α 0.7: 67.2), kept rather than retuned to
the target. Frontier providers do not publish whether or how they draft. Published acceptance of the
drafting a frontier MoE serves with (multi-token prediction, MTP): DeepSeek-V3's MTP accepts 85–90% of
its one drafted token (DeepSeek-V3 report, arXiv:2412.19437, §5.4.3); reused as a chain of 7 drafts it
accepts 3.20 tokens per step at temperature 0, 3.09 at 1 (mean of MT-Bench, HumanEval and GSM8K;
nebius/MTP-DeepSeek-V3-0324 model card), α 0.71 and 0.69 under the constant-α expectation
(:func:`speedtrap.serving.speculative.expected_tokens_per_step`). That range, 0.69–0.90, excludes 0.65
(2.35 tokens per step at γ 3): the value is kept this round (docs/serving_validation.md, "The
presets"; α 0.7 is the next change). Without drafting the two tiers would run 39.2 and 86.7 tok/s
(2.21×)."""

_FAST_TYPICAL_BATCH = 2
"""The fast tier's operating point, streams per replica at its typical load: a provider's choice, not
physics, set so that the fitted physics reproduces fast mode's published signature — up to 2.5× the
standard speed at 6× the price, the first token not faster (Anthropic fast-mode docs; docs/design.md
§5). At 2 streams a stream runs 2.34× the standard tier's (145.5 against 62.3 tok/s per stream; at 3,
2.18×; at 1, 2.52×), and a replica emits 7.1× fewer tokens per second than at 33 streams, so the 6×
price brings 0.85 of the standard tier's revenue per replica-second (at 3 streams 1.19, at 1 stream
0.46): on the fitted physics no whole batch gives both the published speed-up and the standard tier's
revenue (tests/serving/test_economics.py states the miss). The cap stays 3: a simulated stream may
join a replica already at the typical load."""

_FLEET_REPLICAS = 4
"""Assumption: replicas serving the simulated team (each also serves other customers)."""


def _frontier_fleet(name: str, *, default_tier: str, typical_batch: int) -> Backend:
    """The GPU fleet behind gpu-batched and gpu-fast: the same hardware, model, tiers and quality."""
    return Backend(
        name=name,
        hardware=hardware_preset("b200"),
        llm=llm_preset("frontier-moe"),
        chips_per_replica=8,  # one 8-GPU B200 node decodes
        parallel=_FRONTIER_PARALLEL,
        disaggregation=_FRONTIER_PREFILL,
        speculative=_FRONTIER_DRAFTING,
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
        ttft_overhead_s=DEFAULT_TTFT_OVERHEAD_S,  # assumption: network, scheduling, prompt-cache lookup (1 s)
        cache_writes=True,
        as_of="2026-02",  # Opus 4.6 standard speed and fast mode (article; Anthropic fast-mode docs)
    )


_WAFER_BATCH = 8
"""Assumption: streams per wafer replica at the typical load (their 96k-token KV caches share SRAM)."""


def _wafer_distilled() -> Backend:
    return Backend(
        name="wafer-distilled",
        hardware=hardware_preset("wse-3"),
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
        # Assumption: Codex-Spark's first token is ~50% faster (OpenAI, reported): half the GPU fleet's
        # overhead before the first token (its 1 s assumed plus the B200's fitted request scheduling time).
        ttft_overhead_s=0.5 * (DEFAULT_TTFT_OVERHEAD_S + hardware_preset("b200").request_overhead_s),
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
        "gpu-fast": _frontier_fleet("gpu-fast", default_tier="fast", typical_batch=_FAST_TYPICAL_BATCH),
        "wafer-distilled": _wafer_distilled(),
        "gpu-slow": _slow_fleet(),
    }
)
"""The three backends of the design card, by name, and ``gpu-slow`` (the gpu-batched fleet with a
discounted low-priority tier for background work, :data:`_SLOW_TIER`)."""


def backend_preset(name: str) -> Backend:
    """The backend preset ``name``; an unknown name raises :class:`UnknownPresetError` listing the known."""
    return preset_lookup(BACKEND_PRESETS, "backend", name)
