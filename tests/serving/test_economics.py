import pytest

from speedtrap.config import backend_preset
from speedtrap.serving.economics import cost_usd_per_mtok, provider_economics, revenue_usd_per_chip_hour
from speedtrap.serving.replica import ReplicaPhysics


def test_cost_and_revenue_by_hand() -> None:
    # $3.60/h at 1000 tok/s = 3.6 MTok/h -> $1 per MTok; selling at $25/MTok earns $90/h.
    assert cost_usd_per_mtok(3.6, 1000) == pytest.approx(1.0)
    assert revenue_usd_per_chip_hour(25.0, 1000) == pytest.approx(90.0)
    with pytest.raises(ValueError, match="tok_s_per_chip"):
        cost_usd_per_mtok(3.6, 0)


def test_fast_mode_earns_six_times_the_price_on_its_lower_throughput() -> None:
    batched, fast = backend_preset("gpu-batched"), backend_preset("gpu-fast")
    eb, ef = provider_economics(batched), provider_economics(fast)
    assert ef.tok_s_per_chip < eb.tok_s_per_chip  # the provider gives up throughput per GPU ...
    assert ef.revenue_usd_per_chip_hour / eb.revenue_usd_per_chip_hour == pytest.approx(
        6 * ef.tok_s_per_chip / eb.tok_s_per_chip
    )
    assert ef.margin > 1.0  # ... and still earns more than its chips cost
    physics = ReplicaPhysics.from_backend(batched)
    assert eb.tok_s_per_chip == pytest.approx(
        physics.throughput_tok_s_per_chip(batched.typical_batch, 96_000)
    )
    assert eb.cost_usd_per_mtok == pytest.approx(
        cost_usd_per_mtok(batched.hardware.usd_per_chip_hour, eb.tok_s_per_chip)
    )
    assert eb.margin == pytest.approx(eb.revenue_usd_per_chip_hour / batched.hardware.usd_per_chip_hour)


@pytest.mark.xfail(
    strict=True,
    reason="measured: $6.55 against $7.70 revenue per GPU-hour (0.85×): at the 2 streams per replica that "
    "reproduce fast mode's published 2.5× within 10% (2.34×, config/presets.py) a replica emits 7.1× fewer "
    "tokens, more than the 6× price pays for; at 3 streams (1.19×) the speed is 2.18×. On the fitted "
    "physics no whole batch gives both",
)
def test_fast_mode_earns_at_least_the_standard_tiers_revenue_per_gpu_hour() -> None:
    # the design card's mechanism (docs/design.md §1): the provider gives up throughput per GPU and
    # charges for it (an assumption: Anthropic publishes the price, not the batch behind it)
    eb = provider_economics(backend_preset("gpu-batched"))
    ef = provider_economics(backend_preset("gpu-fast"))
    assert ef.revenue_usd_per_chip_hour >= eb.revenue_usd_per_chip_hour
