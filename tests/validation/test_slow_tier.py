"""The slow tier (gpu-slow's ``slow``: priority −1, half price) against queueing theory.

With the standard and slow tiers at one batch cap the pool is a non-preemptive priority M/M/c queue,
whose mean wait per class is Cobham's formula (``priority_mmc_mean_wait_s``). Seeded replications,
tolerance |mean − theory| <= 4·s/√R (fixed before the runs, as in test_queueing.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from speedtrap.analysis.queueing import mmc_mean_wait_s, priority_mmc_mean_wait_s
from speedtrap.config import Price
from speedtrap.config.presets import backend_preset
from speedtrap.models.base import EventModel
from speedtrap.models.open_arrival import ArrivalStream, OpenArrivalModel
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.speed import FixedRate

MEAN_TOKENS = 1000.0  # with 1000 tok/s per stream: mean service 1 s (μ = 1)
REPLICAS, CAP = 2, 4  # c = 8 servers
RATES = {"standard": 3.5, "slow": 2.5}  # ρ = 0.75


def slow_fleet_tiers(cap: int) -> list:
    """gpu-slow's standard and slow tiers (priorities, prices as the preset has them) at one cap."""
    backend = backend_preset("gpu-slow")
    return [backend.tier(name).model_copy(update={"batch_cap": cap}) for name in ("standard", "slow")]


def mean_waits(seed: int, customers: int) -> dict[str, float]:
    horizon_s = customers / sum(RATES.values())
    model = OpenArrivalModel(
        speed=FixedRate(MEAN_TOKENS),
        replicas=REPLICAS,
        tiers=slow_fleet_tiers(CAP),
        arrivals=[
            ArrivalStream(
                tier=t, rate_per_s=r, mean_output_tokens=MEAN_TOKENS, input_tokens=0, cached_tokens=0
            )
            for t, r in RATES.items()
        ],
        warmup_s=0.1 * horizon_s,
        arrivals_end_s=horizon_s,
        rng=seed,
    )
    model.run_until(horizon_s)
    while model.pool.in_system:
        model.run_for(100.0)
    frame = model.requests_frame()
    return {t: float(g["queue_wait_s"].mean()) for t, g in frame.groupby("tier")}


def assert_matches(values: list[float], theory: float) -> None:
    x = np.asarray(values, dtype=float)
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert se > 0
    assert abs(x.mean() - theory) <= 4 * se, f"mean {x.mean():.4f} vs theory {theory:.4f} (SE {se:.4f})"


def test_the_preset_slow_tier_is_low_priority_high_batch_and_half_price() -> None:
    backend = backend_preset("gpu-slow")
    standard, slow = backend.tier("standard"), backend.tier("slow")
    assert backend.default_tier == "slow"
    assert slow.priority < standard.priority < backend.tier("fast").priority
    assert slow.batch_cap > standard.batch_cap
    assert slow.price_multiplier == 0.5
    batched = backend_preset("gpu-batched")
    assert backend.price == batched.price and backend.replicas == batched.replicas
    assert backend.typical_batch == batched.typical_batch


def test_slow_and_standard_tiers_match_cobhams_priority_mmc() -> None:
    runs = [mean_waits(seed, customers=5_000) for seed in range(1, 11)]
    standard_theory, slow_theory = priority_mmc_mean_wait_s([RATES["standard"], RATES["slow"]], 1.0, 8)
    standard = [r["standard"] for r in runs]
    slow = [r["slow"] for r in runs]
    assert_matches(standard, standard_theory)
    assert_matches(slow, slow_theory)
    # the slow tier waits longer than the pooled M/M/c wait, the standard tier less
    assert np.mean(slow) > mmc_mean_wait_s(sum(RATES.values()), 1.0, 8) > np.mean(standard)


def test_a_slow_request_costs_half_a_standard_one() -> None:
    model = EventModel(rng=0)
    backend = backend_preset("gpu-slow")
    pool = ServingPool(model, FixedRate(100.0), replicas=1, tiers=backend.tiers, price=Price())
    sizes = {"input_tokens": 90_000, "cached_tokens": 80_000, "output_tokens": 400}
    standard = pool.submit(tier="standard", **sizes)
    slow = pool.submit(tier="slow", **sizes)
    assert slow.cost_usd == pytest.approx(0.5 * standard.cost_usd, rel=1e-12)
