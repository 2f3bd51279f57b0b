"""The open-arrival driver: Poisson streams, exact size distributions, seeds and warm-up."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats

from speedtrap.config import Tier
from speedtrap.models.open_arrival import ArrivalStream, OpenArrivalModel
from speedtrap.serving.speed import FixedRate

TIERS = [Tier(name="standard"), Tier(name="fast", priority=1, batch_cap=8, price_multiplier=6.0)]


def stream(**kwargs: object) -> ArrivalStream:
    return ArrivalStream.model_validate({"rate_per_s": 2.0, "input_tokens": 0, "cached_tokens": 0, **kwargs})


def model(arrivals: list[ArrivalStream], **kwargs: object) -> OpenArrivalModel:
    args = {
        "speed": FixedRate(1000.0),
        "replicas": 4,
        "tiers": TIERS,
        "arrivals": arrivals,
        "rng": 11,
        **kwargs,
    }
    return OpenArrivalModel(**args)  # type: ignore[arg-type]


def test_arrival_stream_validation_names_the_field() -> None:
    with pytest.raises(ValidationError, match="rate_per_s"):
        ArrivalStream(rate_per_s=0.0)
    with pytest.raises(ValidationError, match="cached_tokens"):
        ArrivalStream(rate_per_s=1.0, input_tokens=10, cached_tokens=11)
    with pytest.raises(ValidationError, match="whole number"):
        ArrivalStream(rate_per_s=1.0, mean_output_tokens=2.5, output_distribution="fixed")
    with pytest.raises(ValidationError, match="output_distribution"):
        ArrivalStream.model_validate({"rate_per_s": 1.0, "output_distribution": "pareto"})
    with pytest.raises(ValueError, match=r"arrivals\[0\].tier"):
        model([stream(tier="turbo")])


def test_defaults_describe_an_agent_turn() -> None:
    s = ArrivalStream(rate_per_s=1.0)
    assert (s.input_tokens, s.cached_tokens, s.mean_output_tokens) == (96_000, 86_400, 213.0)


def test_poisson_arrivals_and_geometric_outputs_have_the_stated_law() -> None:
    m = model([stream(rate_per_s=5.0, mean_output_tokens=300.0)], block_size=1000)
    m.run_until(2_000.0)
    frame = m.requests_frame()
    n = len(frame)
    assert abs(n - 10_000) <= 4 * np.sqrt(10_000)  # Poisson count: SD = √(λT)
    gaps = np.diff(np.sort(frame["arrival_s"].to_numpy()))
    assert stats.kstest(gaps, "expon", args=(0, 1 / 5.0)).pvalue > 1e-3
    out = frame["output_tokens"].to_numpy()
    assert out.min() >= 1
    # Geometric on {1, 2, ...} with mean m: variance m(m − 1).
    assert abs(out.mean() - 300.0) <= 4 * np.sqrt(300.0 * 299.0 / n)
    assert out.var() == pytest.approx(300.0 * 299.0, rel=0.1)


def test_fixed_outputs_and_given_samplers() -> None:
    def twos_and_threes(rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(2, 4, size=n)

    m = model(
        [stream(mean_output_tokens=7, output_distribution="fixed"), stream(tier="fast")],
        output_samplers=[None, twos_and_threes],
    )
    m.run_until(100.0)
    frame = m.requests_frame()
    assert set(frame.loc[frame["tier"] == "standard", "output_tokens"]) == {7}
    assert set(frame.loc[frame["tier"] == "fast", "output_tokens"]) == {2, 3}


def test_bad_sampler_fails_loudly() -> None:
    def zeros(rng: np.random.Generator, n: int) -> np.ndarray:
        return np.zeros(n, dtype=int)

    with pytest.raises(ValueError, match="integers >= 1"):
        model([stream()], output_samplers=[zeros])


def test_same_seed_same_run_and_block_size_does_not_matter() -> None:
    def arrivals(**kwargs: object) -> list[tuple[float, int]]:
        m = model([stream(), stream(tier="fast", rate_per_s=0.5)], **kwargs)
        m.run_until(200.0)
        f = m.requests_frame()
        return list(zip(f["arrival_s"], f["output_tokens"], strict=True))

    base = arrivals()
    assert base == arrivals()
    assert base == arrivals(block_size=7)
    assert base != arrivals(rng=12)


def test_streams_draw_from_independent_generators() -> None:
    # Common random numbers: changing one stream's sizes leaves every arrival time unchanged.
    def arrival_times(first: ArrivalStream) -> list[float]:
        m = model([first, stream(tier="fast", rate_per_s=0.5)], arrivals_end_s=150.0)
        m.run_until(200.0)  # drained: every arrival has finished
        assert m.pool.in_system == 0
        return sorted(m.requests_frame()["arrival_s"])

    assert arrival_times(stream(mean_output_tokens=50.0)) == arrival_times(
        stream(mean_output_tokens=400.0, output_distribution="fixed")
    )


def test_warmup_and_arrivals_end() -> None:
    m = model([stream(rate_per_s=3.0)], warmup_s=50.0, arrivals_end_s=150.0)
    m.run_until(200.0)
    kept = m.requests_frame()
    everything = m.requests_frame(include_warmup=True)
    assert kept["arrival_s"].min() >= 50.0 and everything["arrival_s"].min() < 50.0
    assert everything["arrival_s"].max() <= 150.0
    assert len(everything) == m.pool.submitted
    assert m.pool.stats_window_s == pytest.approx(150.0)  # time averages restart at the warm-up


def test_tier_summary() -> None:
    m = model(
        [stream(mean_output_tokens=100, output_distribution="fixed"), stream(tier="fast", rate_per_s=1.0)]
    )
    m.run_until(300.0)
    summary = m.tier_summary()
    frame = m.requests_frame()
    assert list(summary.index) == ["fast", "standard"]
    assert summary.loc["standard", "requests"] == (frame["tier"] == "standard").sum()
    # FixedRate 1000 tok/s: the first token comes with the prefill, the other 99 take 99 steps.
    assert summary.loc["standard", "mean_decode_tok_s"] == pytest.approx(1000.0)
    assert summary.loc["fast", "mean_cost_usd"] == pytest.approx(
        frame.loc[frame["tier"] == "fast", "cost_usd"].mean()
    )
