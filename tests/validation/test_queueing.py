"""The serving pool against queueing theory: Erlang C, processor sharing, Little's law, priority.

Statistical checks use seeded replications and a tolerance from their standard error,
|mean − theory| <= 4·s/√R. The default runs are small (seconds); ``slow`` runs repeat the
checks at the heavy reference load (λ = 7.2, μ = 1, c = 8; ρ = 0.9) with more customers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from speedtrap.analysis.queueing import (
    littles_law_number,
    mm1_ps_mean_sojourn_s,
    mmc_mean_sojourn_s,
    mmc_mean_wait_s,
    priority_mmc_mean_wait_s,
)
from speedtrap.config import Price, Tier
from speedtrap.models.base import EventModel
from speedtrap.models.open_arrival import ArrivalStream, OpenArrivalModel
from speedtrap.serving.pool import ServingPool
from speedtrap.serving.request import Request
from speedtrap.serving.speed import FixedRate, SharedRate, SpeedModel

MEAN_TOKENS = 1000.0
"""Mean output tokens; with decode rate 1000 tok/s, mean service 1 s (μ = 1)."""


@dataclass(frozen=True)
class Run:
    """Statistics of one replication, over requests arriving after the warm-up."""

    mean_wait_s: dict[str, float]
    mean_sojourn_s: float
    arrival_rate_per_s: float
    mean_in_system: float


def simulate(
    *,
    speed: SpeedModel,
    replicas: int,
    tiers: Sequence[Tier],
    rates: dict[str, float],
    customers: int,
    seed: int,
) -> Run:
    """One replication: Poisson streams per tier, ≈ ``customers`` arrivals, the first 10% warm-up.

    Arrivals stop at the horizon T; the time averages cover [warm-up, T]; the run then drains so
    that every request arriving in the window is measured (no censoring at T).
    """
    total_rate = sum(rates.values())
    horizon_s = customers / total_rate
    warmup_s = 0.1 * horizon_s
    model = OpenArrivalModel(
        speed=speed,
        replicas=replicas,
        tiers=tiers,
        arrivals=[
            ArrivalStream(
                tier=t, rate_per_s=r, mean_output_tokens=MEAN_TOKENS, input_tokens=0, cached_tokens=0
            )
            for t, r in rates.items()
        ],
        warmup_s=warmup_s,
        arrivals_end_s=horizon_s,
        rng=seed,
    )
    model.run_until(horizon_s)
    mean_in_system = model.pool.mean_in_system
    while model.pool.in_system:
        model.run_for(100.0)
    frame = model.requests_frame()
    return Run(
        mean_wait_s={t: float(g["queue_wait_s"].mean()) for t, g in frame.groupby("tier")},
        mean_sojourn_s=float(frame["sojourn_s"].mean()),
        arrival_rate_per_s=len(frame) / (horizon_s - warmup_s),
        mean_in_system=mean_in_system,
    )


def assert_matches(values: Sequence[float], theory: float) -> None:
    """|mean − theory| <= 4·s/√R over R seeded replications."""
    x = np.asarray(values, dtype=float)
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert se > 0
    assert abs(x.mean() - theory) <= 4 * se, f"mean {x.mean():.4f} vs theory {theory:.4f} (SE {se:.4f})"


def replicate(fn: Callable[[int], Run], replications: int) -> list[Run]:
    return [fn(seed) for seed in range(1, replications + 1)]


# --- 1 and 3: M/M/c (FixedRate per stream, c = replicas × batch cap) and Little's law ----------


def mmc_runs(lam: float, replicas: int, cap: int, customers: int, replications: int) -> list[Run]:
    return replicate(
        lambda seed: simulate(
            speed=FixedRate(MEAN_TOKENS),
            replicas=replicas,
            tiers=[Tier(batch_cap=cap)],
            rates={"standard": lam},
            customers=customers,
            seed=seed,
        ),
        replications,
    )


@pytest.fixture(scope="module")
def mmc_light() -> list[Run]:
    """λ = 6, μ = 1, c = 2 replicas × 4 slots (ρ = 0.75)."""
    return mmc_runs(6.0, replicas=2, cap=4, customers=4_000, replications=10)


def test_mmc_mean_wait_matches_erlang_c(mmc_light: list[Run]) -> None:
    assert_matches([r.mean_wait_s["standard"] for r in mmc_light], mmc_mean_wait_s(6.0, 1.0, 8))


def test_littles_law_on_the_sample_path(mmc_light: list[Run]) -> None:
    # Per run, the time-average number in system equals λ̂·Ŵ up to window-edge effects, which
    # cancel in expectation (as many requests in system at the window's start as at its end) ...
    gaps = [r.mean_in_system - littles_law_number(r.arrival_rate_per_s, r.mean_sojourn_s) for r in mmc_light]
    assert_matches(gaps, 0.0)
    # ... and both equal λ·W of the M/M/c closed form.
    assert_matches(
        [r.mean_in_system for r in mmc_light], littles_law_number(6.0, mmc_mean_sojourn_s(6.0, 1.0, 8))
    )


def test_littles_law_is_exact_on_a_drained_sample_path() -> None:
    # Arrivals stop at T and the system drains: ∫ N(t) dt = Σ sojourn, exactly.
    model = OpenArrivalModel(
        speed=SharedRate(MEAN_TOKENS),
        replicas=2,
        tiers=[Tier(batch_cap=3)],
        arrivals=[
            ArrivalStream(rate_per_s=1.5, mean_output_tokens=MEAN_TOKENS, input_tokens=0, cached_tokens=0)
        ],
        arrivals_end_s=500.0,
        rng=7,
    )
    model.run_until(2_000.0)
    frame = model.requests_frame()
    assert model.pool.in_system == 0 and len(frame) == model.pool.submitted > 500
    area = model.pool.mean_in_system * model.pool.stats_window_s
    assert area == pytest.approx(frame["sojourn_s"].sum(), rel=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(("replicas", "cap"), [(1, 8), (8, 1), (2, 4)])
def test_mmc_reference_load_matches_erlang_c(replicas: int, cap: int) -> None:
    runs = mmc_runs(7.2, replicas=replicas, cap=cap, customers=60_000, replications=12)
    assert_matches([r.mean_wait_s["standard"] for r in runs], mmc_mean_wait_s(7.2, 1.0, 8))
    assert_matches([r.mean_in_system for r in runs], littles_law_number(7.2, mmc_mean_sojourn_s(7.2, 1.0, 8)))


# --- 2: M/M/1 processor sharing (SharedRate, one replica, unbounded batch) -----------------------


def ps_runs(lam: float, customers: int, replications: int) -> list[Run]:
    return replicate(
        lambda seed: simulate(
            speed=SharedRate(MEAN_TOKENS),
            replicas=1,
            tiers=[Tier(batch_cap=100_000)],
            rates={"standard": lam},
            customers=customers,
            seed=seed,
        ),
        replications,
    )


def test_processor_sharing_mean_sojourn() -> None:
    runs = ps_runs(0.6, customers=3_000, replications=10)
    assert_matches([r.mean_sojourn_s for r in runs], mm1_ps_mean_sojourn_s(0.6, 1.0))
    assert all(r.mean_wait_s["standard"] == 0.0 for r in runs)  # unbounded batch: nobody queues


@pytest.mark.slow
def test_processor_sharing_heavy_load() -> None:
    runs = ps_runs(0.9, customers=40_000, replications=12)
    assert_matches([r.mean_sojourn_s for r in runs], mm1_ps_mean_sojourn_s(0.9, 1.0))


# --- 4: two priority tiers of equal cap on one fleet ---------------------------------------------


def priority_runs(rates: dict[str, float], customers: int, replications: int) -> list[Run]:
    tiers = [Tier(name="fast", priority=1, batch_cap=4), Tier(name="standard", priority=0, batch_cap=4)]
    return replicate(
        lambda seed: simulate(
            speed=FixedRate(MEAN_TOKENS), replicas=2, tiers=tiers, rates=rates, customers=customers, seed=seed
        ),
        replications,
    )


def test_priority_tiers_match_non_preemptive_priority_mmc() -> None:
    rates = {"fast": 2.5, "standard": 3.5}
    runs = priority_runs(rates, customers=5_000, replications=10)
    high, low = priority_mmc_mean_wait_s([rates["fast"], rates["standard"]], 1.0, 8)
    fast = [r.mean_wait_s["fast"] for r in runs]
    standard = [r.mean_wait_s["standard"] for r in runs]
    assert np.mean(fast) < np.mean(standard)
    assert_matches(fast, high)
    assert_matches(standard, low)


@pytest.mark.slow
def test_priority_tiers_heavy_load() -> None:
    rates = {"fast": 2.2, "standard": 5.0}
    runs = priority_runs(rates, customers=60_000, replications=12)
    high, low = priority_mmc_mean_wait_s([rates["fast"], rates["standard"]], 1.0, 8)
    assert_matches([r.mean_wait_s["fast"] for r in runs], high)
    assert_matches([r.mean_wait_s["standard"] for r in runs], low)


# --- 5: re-timing is exact -------------------------------------------------------------------------


class Arrival:
    """Submits one request at a scheduled time (Mesa holds callbacks weakly: keep it alive)."""

    def __init__(self, pool: ServingPool, output_tokens: int) -> None:
        self.pool = pool
        self.output_tokens = output_tokens
        self.request: Request | None = None

    def fire(self) -> None:
        self.request = self.pool.submit(
            tier="standard", input_tokens=0, cached_tokens=0, output_tokens=self.output_tokens
        )


def test_retiming_is_exact_by_hand() -> None:
    # One SharedRate replica of 10 tok/s. A (10 tokens) starts alone at 0; B (4 tokens) joins at
    # 0.4, when A has 4: both at 5 tok/s, B done at 1.2 with A at 8. A alone again at 10 tok/s;
    # C (2 tokens) joins at 1.3 with A at 9: A's last token at 1.5, C has 1 then and its last
    # comes 0.1 s later alone.
    model = EventModel(rng=0)
    pool = ServingPool(model, SharedRate(10.0), replicas=1, tiers=[Tier()], price=Price())
    # Token counts in the comment are decode steps; each response's first token comes with its prefill.
    a, b, c = Arrival(pool, 11), Arrival(pool, 5), Arrival(pool, 3)
    for at, arrival in ((0.0, a), (0.4, b), (1.3, c)):
        model.schedule_event(arrival.fire, at=at)
    model.run_until(10.0)
    done = [x.request.done_s for x in (a, b, c) if x.request is not None]
    assert done == pytest.approx([1.5, 1.2, 1.6], abs=1e-12)


# --- 6: a fast request is not starved by a full fleet of large-batch work -------------------------


def test_fast_tier_is_admitted_in_bounded_time_and_decodes_at_small_batch_speed() -> None:
    # Four replicas of capacity 160 tok/s shared by their streams; standard cap 16 (10 tok/s per
    # stream when full), fast cap 2 (>= 80 tok/s). Standard work arrives faster than the fleet
    # serves it (10/s vs 6.4/s), so every replica stays full and the standard queue only grows.
    capacity = 160.0
    model = OpenArrivalModel(
        speed=SharedRate(capacity),
        replicas=4,
        tiers=[Tier(name="standard", priority=0, batch_cap=16), Tier(name="fast", priority=1, batch_cap=2)],
        arrivals=[
            ArrivalStream(
                tier="standard",
                rate_per_s=10.0,
                mean_output_tokens=100,
                output_distribution="fixed",
                input_tokens=0,
                cached_tokens=0,
            ),
            ArrivalStream(
                tier="fast",
                rate_per_s=0.2,
                mean_output_tokens=50,
                output_distribution="fixed",
                input_tokens=0,
                cached_tokens=0,
            ),
        ],
        rng=3,
    )
    model.run_until(300.0)
    frame = model.requests_frame()
    fast = frame[frame["tier"] == "fast"]
    standard = frame[frame["tier"] == "standard"]
    assert model.pool.waiting > 500  # the standard queue grew all along: the fleet was always full
    assert standard["queue_wait_s"].max() > 50.0
    assert len(fast) >= 30
    # Bound: the reserved replica takes no new standard work, and each of its streams decodes at
    # >= capacity/16 = 10 tok/s, so it is free within 100 tokens / 10 tok/s = 10 s.
    assert fast["queue_wait_s"].max() <= 100 / (capacity / 16) + 1e-9
    # Admitted, it shares its replica with at most one other stream (cap 2): >= 80 tok/s.
    assert (fast["decode_s"] <= 50 / (capacity / 2) + 1e-9).all()
