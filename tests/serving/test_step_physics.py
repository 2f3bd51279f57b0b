"""The terms the published measurements showed missing (issue 9), each on its own."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speedtrap.config import LLM
from speedtrap.config.backend import SpeculativeDecoding
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import StepConstants, step_parts, step_s


def test_gpt_oss_reads_nearly_all_its_experts_at_batch_176() -> None:
    llm = llm_preset("gpt-oss-120b")
    assert llm.distinct_experts(1) == pytest.approx(4.0)
    assert llm.distinct_experts(176) == pytest.approx(127.5, abs=0.05)
    assert llm.weight_bytes_read(1) == pytest.approx(llm.active_weight_bytes)
    assert llm.weight_bytes_read(10_000) == pytest.approx(llm.weight_bytes, rel=1e-6)


@given(st.integers(1, 2_000))
@settings(max_examples=40, deadline=None)
def test_distinct_experts_grow_with_batch_between_k_and_e(batch: int) -> None:
    llm = llm_preset("deepseek-r1")
    now, more = llm.distinct_experts(batch), llm.distinct_experts(batch + 1)
    assert llm.experts_per_token <= now <= more <= llm.experts


def test_dense_models_read_all_weights_whatever_the_batch() -> None:
    llm = llm_preset("llama-3.1-70b")
    assert not llm.is_moe
    assert llm.weight_bytes_read(1) == llm.weight_bytes_read(500) == pytest.approx(llm.weight_bytes)


def test_moe_needs_enough_active_parameters_for_its_experts() -> None:
    with pytest.raises(ValueError, match="routed experts alone"):
        llm_preset("gpt-oss-120b").with_overrides({"experts": 8})


def test_sliding_window_layers_read_at_most_the_window() -> None:
    llm = llm_preset("gpt-oss-120b")
    full = llm.with_overrides({"sliding_window_layers": 0, "sliding_window_tokens": None})
    assert llm.kv_bytes_read(100) == pytest.approx(full.kv_bytes_read(100))  # inside the window
    assert llm.kv_bytes_read(100_000) == pytest.approx(full.kv_bytes_read(100_000) / 2, rel=0.01)


def test_prompt_tokens_in_a_step_add_their_compute() -> None:
    c = StepConstants.of(hardware_preset("h100-sxm"), llm_preset("llama-3.1-70b"), 2)
    memory, compute, prefill, latency, exchange = step_parts(c, 25, 5_250, 240, 5_000)
    assert prefill > 0 and exchange == 0.0  # tensor parallelism: no expert all-to-all
    assert step_s(c, 25, 5_250, 240, 5_000) == pytest.approx(max(memory, compute) + prefill + latency)
    assert step_s(c, 25, 5_250, 240, 5_000) > step_s(c, 25, 5_250)


def test_collectives_grow_with_chips_and_vanish_on_one() -> None:
    hw, llm = hardware_preset("h200"), llm_preset("llama-3.1-70b")
    one = StepConstants.of(hw, llm, 1)
    assert one.collective_fixed_s == one.collective_s_per_token == 0.0
    costs = [StepConstants.of(hw, llm, n) for n in (2, 4, 8)]
    assert [c.collective_fixed_s for c in costs] == sorted(c.collective_fixed_s for c in costs)
    assert [c.collective_s_per_token for c in costs] == sorted(c.collective_s_per_token for c in costs)
    slower_link = StepConstants.of(hw.with_overrides({"interconnect_bandwidth_gb_s": 45.0}), llm, 4)
    assert slower_link.collective_s_per_token == pytest.approx(10 * costs[1].collective_s_per_token)


def test_wafer_time_to_first_token_grows_with_the_prompt_and_pays_the_pipeline() -> None:
    hw, llm = hardware_preset("wse-3"), llm_preset("llama-3.1-70b")
    physics = ReplicaPhysics.from_parts(hw, llm, 4)
    assert physics.prefill_compute_s(1) >= llm.layers * hw.layer_latency_s
    ttfts = [physics.prefill_compute_s(n) for n in (1, 1_000, 10_000, 100_000)]
    assert ttfts == sorted(ttfts) and ttfts[-1] > 10 * ttfts[0]


def test_wafer_steps_depend_on_active_parameters_and_wafers() -> None:
    hw = hardware_preset("wse-3")
    small, big = llm_preset("llama-3.1-8b"), llm_preset("llama-3.1-70b")
    assert ReplicaPhysics.from_parts(hw, small, 1).decode_step_s(64, 2_000) < ReplicaPhysics.from_parts(
        hw, big, 4
    ).decode_step_s(64, 2_000)
    four, eight = ReplicaPhysics.from_parts(hw, big, 4), ReplicaPhysics.from_parts(hw, big, 8)
    assert eight.decode_step_s(256, 2_000) < four.decode_step_s(256, 2_000)  # twice the compute


def test_speculative_decoding_speeds_up_a_wafer_too() -> None:
    hw, llm = hardware_preset("wse-3"), llm_preset("llama-3.1-70b")
    plain = ReplicaPhysics.from_parts(hw, llm, 4)
    fast = ReplicaPhysics.from_parts(hw, llm, 4, speculative=SpeculativeDecoding())
    assert fast.decode_rate_tok_s(1, 2_000) > 1.5 * plain.decode_rate_tok_s(1, 2_000)


def test_separate_weight_compute_and_kv_precisions() -> None:
    hw = hardware_preset("h200")
    bf16 = llm_preset("qwen3-32b")
    fp8_weights = bf16.with_overrides({"bytes_per_param": 1.0})
    fp8_all = fp8_weights.with_overrides({"compute_dtype": "fp8", "kv_bytes_per_element": 1.0})
    rates = [ReplicaPhysics.from_parts(hw, m, 1).decode_rate_tok_s(8, 8_000) for m in (bf16, fp8_weights)]
    assert rates[1] > rates[0]  # half the weight bytes
    a, b = (ReplicaPhysics.from_parts(hw, m, 1) for m in (fp8_weights, fp8_all))
    assert b.prefill_compute_s(8_000) < a.prefill_compute_s(8_000)  # twice the FLOP/s
    assert b.kv_capacity_tokens == pytest.approx(2 * a.kv_capacity_tokens)  # half the KV bytes


def test_query_heads_and_width_default_from_kv_geometry() -> None:
    llm = LLM(
        name="m",
        total_params_b=1,
        bytes_per_param=2,
        layers=4,
        kv_heads=2,
        head_dim=64,
        context_window_tokens=1,
    )
    assert (llm.q_heads, llm.width) == (2, 128)
