"""Prediction intervals of the serving physics' speeds from its held-out errors
(:mod:`speedtrap.validation.serving_intervals`) and their place in ``speedtrap pareto``."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config.catalog import HARDWARE_PRESETS
from speedtrap.validation.serving_intervals import (
    ROUGH_BELOW,
    interval_from_residuals,
    load_residuals,
    prediction_interval,
    stack_of,
    vendor_of,
)

runner = CliRunner()
RNG_SEED = 20261206


def _errors(n: int, scale: float) -> np.ndarray:
    return np.random.default_rng(RNG_SEED).normal(0.0, scale, n)


def test_the_interval_is_the_residuals_quantiles_turned_into_ends() -> None:
    errors = _errors(40, 0.3)
    interval = interval_from_residuals(100.0, errors, scope="synthetic")
    q_low, q_high = np.quantile(errors, [0.025, 0.975])
    assert (interval.q_low, interval.q_high) == pytest.approx((q_low, q_high))
    # ln(predicted / measured) = r, so the measured speed is predicted · e^(−r)
    assert interval.low == pytest.approx(100.0 * math.exp(-q_high))
    assert interval.high == pytest.approx(100.0 * math.exp(-q_low))
    assert interval.count == 40 and not interval.rough


def test_the_interval_brackets_the_prediction_when_errors_fall_both_ways() -> None:
    interval = interval_from_residuals(62.3, _errors(25, 0.2))
    assert interval.low < 62.3 < interval.high


def test_a_biased_model_moves_the_interval_off_its_prediction() -> None:
    # every prediction 20% too high: the measured speed lies below the prediction
    interval = interval_from_residuals(100.0, np.full(12, math.log(1.2)) + _errors(12, 0.01))
    assert interval.high < 100.0
    assert interval.low == pytest.approx(100.0 / 1.2, rel=0.05)


def test_worse_residuals_widen_the_interval() -> None:
    errors = _errors(30, 0.2)
    narrow = interval_from_residuals(100.0, errors)
    wide = interval_from_residuals(100.0, 2.0 * errors)
    assert wide.low < narrow.low < narrow.high < wide.high


def test_few_residuals_make_a_rough_interval() -> None:
    assert interval_from_residuals(1.0, _errors(ROUGH_BELOW - 1, 0.2)).rough
    assert not interval_from_residuals(1.0, _errors(ROUGH_BELOW, 0.2)).rough
    with pytest.raises(ValueError, match="no held-out errors"):
        interval_from_residuals(1.0, np.array([]))


def test_errors_are_pooled_by_stack_then_vendor_then_all() -> None:
    table = pd.DataFrame(
        {
            "vendor": ["NVIDIA"] * 4 + ["AMD"] * 2,
            "stack": ["vLLM", "vLLM", "TensorRT-LLM", "", "vLLM", ""],
            "metric": ["tok_s_per_user"] * 6,
            "log_error": [0.1, 0.2, -0.5, 0.0, 1.0, 2.0],
        }
    )
    by_stack = prediction_interval(10.0, "tok_s_per_user", "h100-sxm", stack="vLLM", residuals=table)
    assert (by_stack.scope, by_stack.count) == ("NVIDIA, vLLM", 2)
    by_vendor = prediction_interval(10.0, "tok_s_per_user", "b200", stack="SGLang", residuals=table)
    assert (by_vendor.scope, by_vendor.count) == ("NVIDIA", 4)
    fallback = prediction_interval(10.0, "tok_s_per_user", "wse-3", residuals=table)
    assert (fallback.scope, fallback.count) == ("all vendors", 6)
    with pytest.raises(ValueError, match="intervals are for"):
        prediction_interval(10.0, "ttft_s", "b200", residuals=table)


def test_every_catalogued_chip_has_a_vendor_and_ids_name_their_stack() -> None:
    assert all(vendor_of(name) for name in HARDWARE_PRESETS)
    assert stack_of("ix-l33-70b-mi300x-vllm-8k1k") == "vLLM"
    assert stack_of("ix-gptoss-b200-trt-1k1k") == "TensorRT-LLM"
    assert stack_of("sglang-dsv3-h100-ep72-decode") == "SGLang"
    assert stack_of("cerebras-l31-8b") is None


def test_the_stored_residuals_cover_both_speeds_of_every_vendor_measured() -> None:
    table = load_residuals()
    assert set(table["metric"]) == {"tok_s_per_user", "tok_s_per_gpu"}
    assert {"NVIDIA", "AMD", "Cerebras", "Groq"} <= set(table["vendor"])
    assert np.isfinite(table["log_error"]).all()


def test_pareto_prints_each_speed_with_its_interval() -> None:
    args = ["pareto", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--chips", "4"]
    payload = json.loads(runner.invoke(app, [*args, "--isl", "1000", "--osl", "1000", "--json"]).stdout)
    described = payload["prediction_intervals"]
    assert described["tok_s_per_user"]["scope"] == "NVIDIA" and described["tok_s_per_chip"]["residuals"] > 0
    for point in payload["points"]:
        for column in ("tok_s_per_user", "tok_s_per_chip"):
            ends = point[f"{column}_interval"]
            assert ends["low"] == pytest.approx(point[column] * described[column]["factor_low"])
            assert ends["low"] < ends["high"]
    text = runner.invoke(app, args, env={"COLUMNS": "250"}).stdout
    assert "tok/s per user, 95% PI" in text and "tok/s per chip, 95% PI" in text
    assert "95% prediction intervals for the measured speed" in " ".join(text.split())
    by_stack = runner.invoke(app, [*args, "--stack", "vLLM", "--json"]).stdout
    assert json.loads(by_stack)["prediction_intervals"]["tok_s_per_user"]["scope"] == "NVIDIA, vLLM"
    assert runner.invoke(app, [*args, "--stack", "no-such-stack"]).exit_code == 2


def test_explain_prints_both_presets_speeds_with_their_intervals() -> None:
    payload = json.loads(runner.invoke(app, ["pareto", "--explain", "gpu-fast", "--json"]).stdout)
    for name in ("gpu-batched", "gpu-fast"):
        speed = payload["speeds"][name]
        for column in ("tok_s_per_user", "tok_s_per_chip"):
            ends = speed[f"{column}_interval"]
            assert ends["low"] < ends["high"]
    assert payload["speeds"]["gpu-fast"]["tok_s_per_user"] == pytest.approx(145.46, abs=0.01)
    text = " ".join(runner.invoke(app, ["pareto", "--explain", "gpu-fast"]).stdout.split())
    assert "tok/s per stream (95% PI)" in text and "held-out residuals of NVIDIA" in text
