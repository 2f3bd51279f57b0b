import pytest
from pydantic import ValidationError

from speedtrap.config import Price, Quality, Tier


def test_quality_multiplier_scales_and_caps() -> None:
    q = Quality(failure_prob={"easy": 0.5}, failure_multiplier=3.0)
    assert q.failure_prob_for("easy") == 1.0
    assert Quality(failure_multiplier=1.2).failure_prob_for("medium") == pytest.approx(0.28 * 1.2)


def test_quality_rejects_probability_above_one() -> None:
    with pytest.raises(ValidationError, match=r"failure_prob\['hard'\] = 1.5"):
        Quality(failure_prob={"hard": 1.5})
    with pytest.raises(ValidationError, match="tool_error_prob"):
        Quality(tool_error_prob=1.2)


def test_unknown_difficulty_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known: easy, hard, medium"):
        Quality().failure_prob_for("epic")


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
