"""The provider's side of the bargain: what a token costs to serve and what a chip-hour earns."""

from __future__ import annotations

from dataclasses import dataclass

from speedtrap.config.backend import Backend
from speedtrap.serving.replica import ReplicaPhysics

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MTOK = 1_000_000


def cost_usd_per_mtok(usd_per_chip_hour: float, tok_s_per_chip: float) -> float:
    """Chip cost of one million output tokens, USD, at ``tok_s_per_chip`` tokens/s per chip."""
    if tok_s_per_chip <= 0:
        raise ValueError(f"tok_s_per_chip = {tok_s_per_chip} must be > 0")
    return usd_per_chip_hour / (tok_s_per_chip * SECONDS_PER_HOUR) * TOKENS_PER_MTOK


def revenue_usd_per_chip_hour(price_usd_per_mtok: float, tok_s_per_chip: float) -> float:
    """Revenue of one chip-hour, USD, selling ``tok_s_per_chip`` tokens/s at ``price_usd_per_mtok``."""
    return price_usd_per_mtok * tok_s_per_chip * SECONDS_PER_HOUR / TOKENS_PER_MTOK


@dataclass(frozen=True, slots=True)
class ProviderEconomics:
    """Output-token economics of one backend tier at its typical load (input tokens not counted)."""

    tok_s_per_chip: float
    cost_usd_per_mtok: float
    revenue_usd_per_chip_hour: float
    cost_usd_per_chip_hour: float

    @property
    def margin(self) -> float:
        """Revenue over chip cost (``inf`` for free chips)."""
        if self.cost_usd_per_chip_hour == 0:
            return float("inf")
        return self.revenue_usd_per_chip_hour / self.cost_usd_per_chip_hour


def provider_economics(backend: Backend, tier: str | None = None) -> ProviderEconomics:
    """Economics of ``backend`` at its typical batch and context, selling output at ``tier``'s price."""
    physics = ReplicaPhysics.from_backend(backend)
    per_chip = physics.throughput_tok_s_per_chip(backend.typical_batch, backend.typical_context_tokens)
    price = backend.price.output_usd_per_mtok * backend.tier(tier).price_multiplier
    usd_per_chip_hour = backend.hardware.usd_per_chip_hour
    return ProviderEconomics(
        tok_s_per_chip=per_chip,
        cost_usd_per_mtok=cost_usd_per_mtok(usd_per_chip_hour, per_chip),
        revenue_usd_per_chip_hour=revenue_usd_per_chip_hour(price, per_chip),
        cost_usd_per_chip_hour=usd_per_chip_hour,
    )
