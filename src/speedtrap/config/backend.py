"""The complete backend a scenario uses: hardware, model, fleet, tiers, price and quality."""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field, StrictBool, ValidationInfo, field_validator, model_validator

from speedtrap.config.base import Spec
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.hardware import BYTES_PER_GB, Hardware
from speedtrap.config.llm import LLM
from speedtrap.config.parallel import Disaggregation, Parallelism
from speedtrap.config.tier import Price, Quality, Tier

MAX_CHIPS_PER_REPLICA = 65_536
"""Plausibility bound on the chips of one model replica: far beyond any deployment (large
expert-parallel serving spans a few hundred GPUs per replica)."""

DEFAULT_TTFT_OVERHEAD_S = 1.0
"""Assumption: network, scheduling and prompt-cache lookup before the first token of a frontier-model
API request, about 1 s (public time-to-first-token measurements of frontier APIs are ~0.5–2 s)."""


class SpeculativeDecoding(Spec):
    """Draft-then-verify decoding: a draft proposes ``draft_tokens`` (γ) tokens, the target verifies
    them in one step and each is accepted with probability ``acceptance_rate`` (α).

    Expected tokens per target step ``(1 − α^(γ+1)) / (1 − α)`` (Leviathan et al. 2023). Each draft
    step costs ``draft_cost`` of a target decode step. Defaults are assumptions in the range
    reported for draft models on code (α ≈ 0.6–0.8, γ ≈ 3–5, draft ≈ 5–10% of a target step).
    """

    acceptance_rate: float = Field(default=0.7, ge=0, le=1)
    draft_tokens: int = Field(default=3, ge=1)
    draft_cost: float = Field(default=0.1, ge=0, le=1)


def memory_needed_bytes(llm: LLM, *, batch: int, context_tokens: float) -> float:
    """Bytes a replica must hold: all weights plus the KV cache of ``batch`` streams."""
    return llm.weight_bytes + batch * context_tokens * llm.kv_bytes_per_token


def derive_chips_per_replica(hardware: Hardware, llm: LLM, *, batch: int, context_tokens: float) -> int:
    """Fewest chips whose usable memory holds the weights and ``batch`` streams' KV cache.

    SRAM machines use exactly that many chips (weights resident in aggregate SRAM); HBM machines
    round up to a power of two (tensor-parallel degrees).
    """
    chips = max(
        1,
        math.ceil(
            memory_needed_bytes(llm, batch=batch, context_tokens=context_tokens)
            / hardware.usable_memory_bytes
        ),
    )
    if hardware.memory_kind == "hbm":
        chips = 1 << (chips - 1).bit_length()
    return chips


MAX_STREAMS_PER_REPLICA = 1_000_000
"""Most streams (a typical batch, other customers' background streams) one replica may be given
(assumption: a thousand times the largest batch a served replica runs, a few hundred to a few
thousand streams; a larger number overflowed the typed core's integers with a traceback)."""


class Backend(Spec):
    """A served model: ``replicas`` replicas of ``chips_per_replica`` chips of ``hardware`` running ``llm``.

    ``hardware`` and ``llm`` accept a preset name. ``chips_per_replica`` left out is derived from
    memory (:func:`derive_chips_per_replica`) at the typical load. ``typical_batch`` and
    ``typical_context_tokens`` are the load the provider runs at (the speeds shown by ``speedtrap
    backends`` and checked by calibration); ``background_streams_per_replica`` are other customers'
    streams that share each replica with the simulated developers. ``ttft_overhead_s`` is the
    network/scheduling part of time to first token; ``cache_writes`` bills uncached input at the
    cache-write price. ``decode_speedup`` is a what-if multiplier on the physics' per-stream decode
    rate (1 = as derived; time to first token unchanged): experiments sweep speed-ups with it
    without inventing hardware. ``as_of`` dates the offer that the speed, load and list price
    describe (a tier's multiple carries its own date, ``tier.as_of``). ``parallel`` is the replica's
    parallel layout and ``disaggregation`` a separate prefill pool (:mod:`speedtrap.config.parallel`;
    the defaults: tensor parallel over all chips, prefill on the replica).
    """

    name: str = Field(min_length=1)
    hardware: Hardware
    llm: LLM
    tiers: list[Tier] = Field(default_factory=lambda: [Tier()], min_length=1)
    default_tier: str = "standard"
    typical_batch: int = Field(
        default=1, ge=1, le=MAX_STREAMS_PER_REPLICA, description="Streams per replica at the typical load."
    )
    typical_context_tokens: int = Field(default=1, ge=1, description="Mean context per stream, tokens.")
    chips_per_replica: int | None = Field(default=None, ge=1, le=MAX_CHIPS_PER_REPLICA)
    replicas: int = Field(default=1, ge=1)
    price: Price = Field(default_factory=Price)
    quality: Quality = Field(default_factory=Quality)
    background_streams_per_replica: int = Field(default=0, ge=0, le=MAX_STREAMS_PER_REPLICA)
    speculative: SpeculativeDecoding | None = None
    parallel: Parallelism = Field(default_factory=Parallelism)
    disaggregation: Disaggregation | None = None
    ttft_overhead_s: float = Field(default=DEFAULT_TTFT_OVERHEAD_S, ge=0)
    cache_writes: StrictBool = True
    decode_speedup: float = Field(
        default=1.0, gt=0, description="What-if multiplier on the derived decode rate (1 = physics)."
    )
    as_of: str | None = Field(
        default=None,
        pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        description="The date (YYYY-MM or YYYY-MM-DD) whose offer the speed, load and price describe.",
    )

    @field_validator("hardware", mode="before")
    @classmethod
    def _hardware_by_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            return hardware_preset(value)
        return value

    @field_validator("llm", mode="before")
    @classmethod
    def _llm_by_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            return llm_preset(value)
        return value

    @field_validator("llm")
    @classmethod
    def _hardware_computes_in_model_dtype(cls, llm: LLM, info: ValidationInfo) -> LLM:
        hardware = info.data.get("hardware")
        if hardware is not None and llm.compute_dtype not in hardware.peak_tflop_s:
            known = ", ".join(sorted(hardware.peak_tflop_s))
            raise ValueError(
                f"model {llm.name} computes in {llm.compute_dtype}; hardware {hardware.name} has only {known}"
            )
        return llm

    @field_validator("tiers")
    @classmethod
    def _unique_tier_names(cls, tiers: list[Tier]) -> list[Tier]:
        names = [tier.name for tier in tiers]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"tier names must be unique; repeated: {', '.join(duplicates)}")
        return tiers

    @field_validator("default_tier")
    @classmethod
    def _default_tier_exists(cls, name: str, info: ValidationInfo) -> str:
        tiers = info.data.get("tiers")
        if tiers is not None and name not in {tier.name for tier in tiers}:
            known = ", ".join(tier.name for tier in tiers)
            raise ValueError(f"default tier {name!r} is not among the tiers ({known})")
        return name

    @field_validator("typical_batch")
    @classmethod
    def _typical_batch_within_tier_cap(cls, batch: int, info: ValidationInfo) -> int:
        tiers, default = info.data.get("tiers"), info.data.get("default_tier")
        if tiers is not None and default is not None:
            cap = next(tier.batch_cap for tier in tiers if tier.name == default)
            if batch > cap:
                raise ValueError(f"typical batch {batch} exceeds the batch cap {cap} of tier {default!r}")
        return batch

    @field_validator("typical_context_tokens")
    @classmethod
    def _context_within_window(cls, tokens: int, info: ValidationInfo) -> int:
        llm = info.data.get("llm")
        if llm is not None and tokens > llm.context_window_tokens:
            raise ValueError(
                f"typical context {tokens} tokens exceeds {llm.name}'s window of {llm.context_window_tokens}"
            )
        return tokens

    @field_validator("chips_per_replica")
    @classmethod
    def _model_fits_replica(cls, chips: int | None, info: ValidationInfo) -> int | None:
        data = info.data
        if any(key not in data for key in ("hardware", "llm", "typical_batch", "typical_context_tokens")):
            return chips  # an earlier field already failed; its error is reported
        hardware, llm = data["hardware"], data["llm"]
        batch, context = data["typical_batch"], data["typical_context_tokens"]
        n = chips or derive_chips_per_replica(hardware, llm, batch=batch, context_tokens=context)
        need = memory_needed_bytes(llm, batch=batch, context_tokens=context)
        have = n * hardware.usable_memory_bytes
        if need > have:
            weights_gb, kv_gb = llm.weight_bytes / BYTES_PER_GB, (need - llm.weight_bytes) / BYTES_PER_GB
            raise ValueError(
                f"model {llm.name} needs {need / BYTES_PER_GB:.1f} GB (weights {weights_gb:.1f} GB + KV"
                f" {kv_gb:.1f} GB for {batch} streams × {context} tokens), replica of {n}× {hardware.name}"
                f" has {have / BYTES_PER_GB:.1f} GB"
            )
        return chips

    @model_validator(mode="after")
    def _layout_fits_the_replica(self) -> Backend:
        self.parallel.check_chips(self.chips)
        return self

    @property
    def chips(self) -> int:
        """Chips per replica: ``chips_per_replica`` or, when left out, derived from memory."""
        if self.chips_per_replica is not None:
            return self.chips_per_replica
        return derive_chips_per_replica(
            self.hardware, self.llm, batch=self.typical_batch, context_tokens=self.typical_context_tokens
        )

    def tier(self, name: str | None = None) -> Tier:
        """The tier called ``name`` (the default tier when ``None``)."""
        name = self.default_tier if name is None else name
        for tier in self.tiers:
            if tier.name == name:
                return tier
        known = ", ".join(tier.name for tier in self.tiers)
        raise KeyError(f"backend {self.name} has no tier {name!r} (known: {known})")
