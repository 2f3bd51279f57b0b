import pytest

from speedtrap.config import Price
from speedtrap.serving.pricing import request_cost_usd


def test_agent_request_cost_by_hand() -> None:
    # 90k cached at $0.50, 6k written at $6.25, 200 out at $25 (per MTok)
    usd = request_cost_usd(
        Price(), uncached_input_tokens=6_000, cached_input_tokens=90_000, output_tokens=200
    )
    assert usd == pytest.approx(0.045 + 0.0375 + 0.005)


def test_tier_multiplier_and_plain_input() -> None:
    base = request_cost_usd(
        Price(), uncached_input_tokens=1_000_000, cached_input_tokens=0, output_tokens=0, cache_writes=False
    )
    assert base == pytest.approx(5.0)
    fast = request_cost_usd(
        Price(), uncached_input_tokens=0, cached_input_tokens=0, output_tokens=1_000_000, price_multiplier=6
    )
    assert fast == pytest.approx(150.0)
