"""Numbers in specs: booleans, strings, NaN, infinities and absurd magnitudes are refused centrally;
infinity only where a field opts in; size bounds keep every run finite."""

import math

import pytest
from pydantic import ValidationError

from speedtrap.config import Scenario
from speedtrap.config.base import MAX_MAGNITUDE

TINY = Scenario().with_overrides({"developers": 2, "horizon_s": 3600.0})


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        ("developers", True, "boolean"),
        ("horizon_s", True, "boolean"),
        ("horizon_s", "3600", "string"),
        ("horizon_s", math.nan, "nan"),
        ("horizon_s", math.inf, "finite"),
        ("workday_s", math.inf, "finite"),
        ("horizon_s", 1e308, "magnitude"),
        ("developers", 2**63, "magnitude"),
        ("task_mix.output_tokens.median", math.inf, "finite"),
        ("task_mix.turns_log_sd", math.inf, "finite"),
        ("backends.gpu-batched.decode_speedup", math.inf, "finite"),
        ("backends.gpu-batched.price.output_usd_per_mtok", math.inf, "finite"),
        ("backends.gpu-batched.price.cache_read_usd_per_mtok", 1e308, "magnitude"),
        ("backends.gpu-batched.hardware.peak_tflop_s.bf16", math.nan, "nan"),
        ("developer.attention.parallel_sessions_probs", [0.5, math.nan], "nan"),
        ("developers", 10**9, "less than or equal to 10000"),
        ("horizon_s", 1e9, "less than or equal to 3"),
        ("backends.gpu-batched.replicas", 10**9, "at most 10000 replicas"),
        ("developer.fixing.max_repair_sessions", 2**40, "less than or equal to 100"),
        ("task_mix.tool_s.sigma", 1e6, "less than or equal to 10"),
    ],
)
def test_implausible_numbers_are_refused_naming_the_field(path: str, value: object, reason: str) -> None:
    with pytest.raises(ValidationError) as info:
        TINY.with_overrides({path: value})
    text = str(info.value)
    assert reason in text
    assert path.split(".")[0] in text


def test_total_developer_seconds_are_bounded() -> None:
    with pytest.raises(ValidationError, match="developer-seconds"):
        TINY.with_overrides({"developers": 10_000, "horizon_s": 3e7})


def test_infinity_is_accepted_where_it_means_never() -> None:
    scenario = TINY.with_overrides(
        {"developer.attention.flow_threshold_s": math.inf, "task_mix.cache_ttl_s": math.inf}
    )
    assert scenario.developer.attention.flow_threshold_s == math.inf
    assert math.isinf(scenario.task_mix.cache_ttl_s)
    with pytest.raises(ValidationError, match="nan"):
        TINY.with_overrides({"developer.attention.flow_threshold_s": math.nan})


def test_plain_numbers_and_the_magnitude_bound_pass() -> None:
    scenario = TINY.with_overrides({"backends.gpu-batched.price.cache_read_usd_per_mtok": MAX_MAGNITUDE})
    assert scenario.backends["gpu-batched"].price.cache_read_usd_per_mtok == MAX_MAGNITUDE
    assert TINY.with_overrides({"horizon_s": 7200}).horizon_s == 7200.0  # an integer is a number


def test_a_bad_backend_under_a_tier_policy_is_named_as_the_backend() -> None:
    data = {"backends": {"gpu": "gpu-fast"}, "policy": {"kind": "interactive_fast", "backend": "nope"}}
    with pytest.raises(ValidationError, match=r"policy\.backend: unknown backend 'nope'"):
        Scenario.model_validate(data)


def test_experiment_sizes_are_bounded() -> None:
    from speedtrap.config.experiment import Experiment

    with pytest.raises(ValidationError, match="replications"):
        Experiment.model_validate({"name": "big", "replications": 10**9})
    with pytest.raises(ValidationError, match=r"design\.points"):
        Experiment.model_validate({"name": "big", "design": {"kind": "lhs", "points": 10**9}})
