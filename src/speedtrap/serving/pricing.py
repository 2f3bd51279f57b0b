"""What a request costs the user, from list prices."""

from __future__ import annotations

from speedtrap.config.tier import Price

TOKENS_PER_MTOK = 1_000_000


def request_cost_usd(
    price: Price,
    *,
    uncached_input_tokens: int,
    cached_input_tokens: int,
    output_tokens: int,
    price_multiplier: float = 1.0,
    cache_writes: bool = True,
) -> float:
    """US dollars charged for one request.

    Cached input is billed at the cache-read price; uncached input at the cache-write price
    when the request writes it to the prompt cache (agent loops do: the next turn reads it),
    else at the plain input price; output at the output price. ``price_multiplier`` is the
    tier's (fast mode: 6×, Anthropic fast-mode docs).
    """
    uncached_rate = price.cache_write_usd_per_mtok if cache_writes else price.input_usd_per_mtok
    usd = (
        uncached_input_tokens * uncached_rate
        + cached_input_tokens * price.cache_read_usd_per_mtok
        + output_tokens * price.output_usd_per_mtok
    ) / TOKENS_PER_MTOK
    return usd * price_multiplier
