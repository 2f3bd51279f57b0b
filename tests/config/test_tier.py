import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from scipy.optimize import brentq

from speedtrap.config import Price, Quality, Scenario, Tier
from speedtrap.config.presets import backend_preset
from speedtrap.config.tier import (
    HORIZON_XTOL,
    OPUS_46_ACCEPTANCE_SCALE,
    OPUS_46_HORIZON_MIN,
    OPUS_46_SLOPE,
    REFERENCE_LENGTHS_MIN,
    horizon_for_multiplier,
    reference_failure,
    success_prob,
)

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "experiments" / "scenarios"
EIGHT_HOURS_MIN = 480.0


# ---------------------------------------------------------------------------- the curve


@pytest.mark.parametrize("horizon", [1.0, 60.4, 718.8])
@pytest.mark.parametrize("slope", [0.412, 0.598, 1.5])
def test_curve_is_one_half_at_the_horizon_and_has_the_stated_slope(horizon: float, slope: float) -> None:
    assert success_prob(horizon, horizon, slope) == 0.5
    # One doubling of the task length moves the log-odds of success by −slope.
    for t in (horizon / 8, horizon, horizon * 4):
        p, p2 = success_prob(t, horizon, slope), success_prob(2 * t, horizon, slope)
        assert math.log(p / (1 - p)) - math.log(p2 / (1 - p2)) == pytest.approx(slope, rel=1e-9)
    # The 80% point lies ln 4 / slope doublings below the horizon (how the slope is read from
    # METR's 50% and 80% horizons).
    t80 = horizon * 2.0 ** (-math.log(4.0) / slope)
    assert success_prob(t80, horizon, slope) == pytest.approx(0.8, rel=1e-12)


def test_curve_is_monotone_in_length_and_horizon() -> None:
    lengths = np.geomspace(0.1, 10_000.0, 200)
    horizons = np.geomspace(1.0, 5_000.0, 50)
    for h in horizons:
        p = [success_prob(float(t), float(h), 0.5) for t in lengths]
        assert all(a > b for a, b in itertools.pairwise(p))  # longer tasks: less success
    for t in (1.0, 75.0, 479.0):
        p = [success_prob(t, float(h), 0.5) for h in horizons]
        assert all(a < b for a, b in itertools.pairwise(p))  # longer horizon: more success
    assert success_prob(0.0, 60.0, 0.5) == 1.0
    assert success_prob(60.0, math.inf, 0.5) == 1.0


def test_steeper_slope_separates_short_and_long_tasks_more() -> None:
    short, long = 15.0, 240.0
    gaps = [success_prob(short, 60.0, b) - success_prob(long, 60.0, b) for b in (0.3, 0.5, 0.7, 1.0)]
    assert all(a < b for a, b in itertools.pairwise(gaps))


def test_quality_failure_is_one_minus_the_curve_at_the_effective_horizon() -> None:
    q = Quality()
    assert q.effective_horizon_min == pytest.approx(OPUS_46_HORIZON_MIN * OPUS_46_ACCEPTANCE_SCALE)
    for t in (7.5, 30.0, 75.0, 300.0):
        assert q.failure_prob_at(t) == 1.0 - success_prob(t, q.effective_horizon_min, OPUS_46_SLOPE)
    assert q.failure_prob_at(q.effective_horizon_min) == pytest.approx(0.5)


# ---------------------------------------------------------------------------- the sourced defaults


def test_default_slope_is_read_from_metr_50_and_80_percent_horizons() -> None:
    # Time Horizon 1.1: Claude Opus 4.6, 50% 718.8 min, 80% 69.9 min.
    assert pytest.approx(math.log(4.0) / math.log2(718.8 / 69.9), abs=5e-4) == OPUS_46_SLOPE


def test_default_acceptance_scale_reproduces_the_swe_bench_verified_resolve_rate() -> None:
    # Opus 4.6 resolves 76.8% of SWE-bench Verified: failures 0.232 on its task lengths.
    fitted = brentq(
        lambda s: reference_failure(OPUS_46_HORIZON_MIN * s, OPUS_46_SLOPE) - 0.232, 0.01, 1.0, xtol=1e-12
    )
    assert pytest.approx(fitted, abs=5e-5) == OPUS_46_ACCEPTANCE_SCALE
    assert Quality().reference_failure == pytest.approx(0.232, abs=1e-4)


def test_metr_scenario_curve_is_claude_37_sonnet() -> None:
    quality = Scenario.from_toml(SCENARIOS / "metr.toml").backends["sonnet-2025"].quality
    assert quality.horizon_min == 60.4  # METR Time Horizon 1.1
    assert quality.horizon_slope == pytest.approx(math.log(4.0) / math.log2(60.4 / 12.1), abs=5e-4)
    assert quality.reference_failure == pytest.approx(1 - 0.623, abs=1e-4)  # SWE-bench Verified 62.3%


def test_reference_distribution_is_swe_bench_verified_buckets() -> None:
    weights = [w for _, w in REFERENCE_LENGTHS_MIN]
    assert sum(weights) == pytest.approx(1.0)
    assert [round(w * 500) for w in weights] == [194, 261, 45]


# ---------------------------------------------------------------------------- multiplier → horizon


@pytest.mark.parametrize("m", [0.5, 0.9, 1.15, 1.2, 1.5, 1.8, 2.0, 3.0, 4.0])
def test_multiplier_maps_to_the_horizon_with_m_times_the_mean_failure(m: float) -> None:
    base = Quality()
    q = Quality(failure_multiplier=m)
    assert q.reference_failure == pytest.approx(m * base.reference_failure, rel=1e-9)
    # More mistakes, a shorter horizon; fewer, a longer one.
    assert (q.effective_horizon_min < base.effective_horizon_min) == (m > 1.0)


def test_solver_tolerance_is_stated_in_log2_minutes() -> None:
    h = horizon_for_multiplier(100.0, 0.5, 1.3)
    target = 1.3 * reference_failure(100.0, 0.5)
    f = reference_failure
    assert f(h * 2.0**HORIZON_XTOL, 0.5) <= target <= f(h * 2.0**-HORIZON_XTOL, 0.5)


def test_multiplier_one_and_zero_and_horizon_form_agree() -> None:
    assert Quality(failure_multiplier=1.0).effective_horizon_min == Quality().effective_horizon_min
    assert Quality(failure_multiplier=0.0).failure_prob_at(EIGHT_HOURS_MIN) == 0.0
    # The wafer preset's 1.2× the mistakes, written as a horizon instead, is the same curve.
    wafer = backend_preset("wafer-distilled").quality
    as_horizon = Quality(horizon_min=wafer.effective_horizon_min / OPUS_46_ACCEPTANCE_SCALE)
    for t in (7.5, 75.0, 400.0):
        assert as_horizon.failure_prob_at(t) == pytest.approx(wafer.failure_prob_at(t), rel=1e-12)


def test_distilled_preset_has_a_shorter_horizon() -> None:
    frontier = backend_preset("gpu-batched").quality
    wafer = backend_preset("wafer-distilled").quality
    assert wafer.effective_horizon_min < frontier.effective_horizon_min
    assert wafer.reference_failure == pytest.approx(1.2 * frontier.reference_failure, rel=1e-9)


def test_unreachable_multiplier_is_refused_naming_the_field() -> None:
    limit = 1.0 / Quality().reference_failure
    with pytest.raises(ValidationError, match=r"quality\.failure_multiplier = 5: .*at least 1"):
        Quality(failure_multiplier=5.0)
    with pytest.raises(ValidationError, match="failure_multiplier"):
        Quality(failure_multiplier=limit)
    Quality(failure_multiplier=limit * 0.999)  # just below: a (very short) horizon exists


def test_no_clip_failure_never_saturates_up_to_three_times_the_mistakes() -> None:
    """Nothing is clipped: for multipliers up to 3, a task shorter than 8 h is never certain to fail,
    and the failure probability keeps rising with the multiplier (no flat, saturated region)."""
    lengths = np.geomspace(0.5, EIGHT_HOURS_MIN * 0.999, 60)
    multipliers = np.linspace(0.25, 3.0, 12)
    previous = np.zeros_like(lengths)
    for m in multipliers:
        q = Quality(failure_multiplier=float(m))
        p = np.array([q.failure_prob_at(float(t)) for t in lengths])
        assert (p < 1.0).all() and (p > 0.0).all()
        assert (p > previous).all()
        previous = p


def test_old_failure_table_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ValidationError, match=r"quality\.failure_prob: the failure table .*horizon_min"):
        Quality.model_validate({"failure_prob": {"easy": 0.1, "medium": 0.28, "hard": 0.6}})


def test_quality_rejects_bad_fields() -> None:
    with pytest.raises(ValidationError, match="tool_error_prob"):
        Quality(tool_error_prob=1.2)
    with pytest.raises(ValidationError, match="acceptance_scale"):
        Quality(acceptance_scale=1.5)
    with pytest.raises(ValidationError, match="horizon_min"):
        Quality(horizon_min=0.0)


# ---------------------------------------------------------------------------- specs in general


def test_specs_are_frozen_and_reject_unknown_fields() -> None:
    with pytest.raises(ValidationError, match="extra"):
        Tier(name="fast", speed=3)
    tier = Tier()
    with pytest.raises(ValidationError):
        tier.priority = 3  # type: ignore[misc]


def test_overrides_are_validated() -> None:
    price = Price().with_overrides({"output_usd_per_mtok": 150.0})
    assert price.output_usd_per_mtok == 150.0
    with pytest.raises(ValidationError, match="input_usd_per_mtok"):
        Price().with_overrides({"input_usd_per_mtok": -1})


def test_scenario_files_load_both_forms(tmp_path: Path) -> None:
    """metr.toml writes Claude 3.7 Sonnet by its horizon and names the multiplier form in a comment:
    both load, and give the same mean failure on the reference task lengths (the multiplier form
    keeps the default Opus 4.6 slope, so only the mean agrees)."""
    text = (SCENARIOS / "metr.toml").read_text()
    horizon_line = next(line for line in text.splitlines() if line.startswith("quality = {"))
    multiplier_line = next(
        line for line in text.splitlines() if line.startswith("# quality = { failure_multiplier")
    )
    as_horizon = Scenario.from_toml(SCENARIOS / "metr.toml").backends["sonnet-2025"].quality
    other = tmp_path / "metr_multiplier.toml"
    other.write_text(text.replace(horizon_line, multiplier_line.removeprefix("# ")))
    as_multiplier = Scenario.from_toml(other).backends["sonnet-2025"].quality
    assert as_multiplier.horizon_min == OPUS_46_HORIZON_MIN and as_multiplier.failure_multiplier > 1.0
    assert as_multiplier.reference_failure == pytest.approx(as_horizon.reference_failure, abs=1e-3)


def test_a_multiplier_beyond_every_float_horizon_means_no_mistakes() -> None:
    """At a shallow slope, 1e-5 × the mistakes needs a horizon of ≈10^500 minutes, beyond every float:
    the solve answers infinity (no mistakes) rather than overflowing."""
    assert horizon_for_multiplier(60.0, 0.01, 1e-5) == math.inf
    finite = horizon_for_multiplier(60.0, 0.01, 1e-3)  # ≈2e230 minutes: still a float, solved
    assert math.isfinite(finite)
    assert reference_failure(finite, 0.01) == pytest.approx(1e-3 * reference_failure(60.0, 0.01), rel=1e-9)


def test_cache_writes_are_billed_at_the_rate_of_the_caches_lifetime() -> None:
    price = Price()
    assert price.for_cache_ttl(300.0) is price  # the 5-minute lifetime: 1.25× input
    assert price.cache_write_usd_per_mtok == pytest.approx(1.25 * price.input_usd_per_mtok)
    longer = price.for_cache_ttl(301.0)
    assert (
        longer.cache_write_usd_per_mtok
        == price.long_cache_write_usd_per_mtok
        == 2.0 * price.input_usd_per_mtok
    )
    assert longer.for_cache_ttl(math.inf).cache_write_usd_per_mtok == 10.0
    assert (longer.input_usd_per_mtok, longer.cache_read_usd_per_mtok) == (5.0, 0.5)
