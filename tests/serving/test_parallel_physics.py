"""The serving physics added for large deployments, each mechanism on its own: attention data
parallelism, expert parallelism's all-to-alls, the two-level interconnect, multi-head latent attention,
per-component precisions, prefill/decode disaggregation, SRAM pipelines, matrix-multiply efficiency,
overlapped communication and time to first token under load."""

from __future__ import annotations

import pytest

from speedtrap.config import backend_preset
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.parallel import Disaggregation, Parallelism
from speedtrap.serving.pareto import load_at_interactivity, load_at_throughput, steady_load
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import StepConstants, kv_capacity_tokens, step_parts, step_s


@pytest.mark.parametrize(
    ("name", "chip"), [("gpu-batched", "b200"), ("gpu-fast", "b200"), ("wafer-distilled", "wse-3")]
)
def test_the_backend_presets_carry_the_fitted_factors_validate_serving_reports(name: str, chip: str) -> None:
    # one set of factors: what `speedtrap validate serving` checks is what the workflow's backends run on
    assert backend_preset(name).hardware == hardware_preset(chip)


def test_mla_latent_is_copied_on_every_tensor_parallel_chip_but_not_under_dp_attention() -> None:
    hw, llm = hardware_preset("h200"), llm_preset("deepseek-r1")
    tp = StepConstants.of(hw, llm, 8)
    dp = StepConstants.of(hw, llm, 8, Parallelism(attention_data_parallel=8, expert_parallel=8))
    # tensor parallelism: each chip reads every stream's latent; DP attention: its own streams' only
    assert tp.kv_read_s_per_attended == pytest.approx(8 * dp.kv_read_s_per_attended)
    assert kv_capacity_tokens(hw, llm, 8, Parallelism(attention_data_parallel=8)) > 4 * kv_capacity_tokens(
        hw, llm, 8
    )
    # DP attention copies the always-read weights on every group
    assert dp.shared_read_s == pytest.approx(8 * tp.shared_read_s)


def test_gqa_heads_split_over_tensor_parallel_chips_up_to_the_kv_heads() -> None:
    hw, llm = hardware_preset("h100-sxm"), llm_preset("llama-3.1-70b")  # 8 KV heads
    reads = [StepConstants.of(hw, llm, n).kv_read_s_per_attended for n in (1, 2, 4, 8)]
    assert reads == pytest.approx([reads[0] / n for n in (1, 2, 4, 8)])
    sixteen = StepConstants.of(hw.with_overrides({"scale_up_domain_chips": 16}), llm, 16)
    assert sixteen.kv_read_s_per_attended == pytest.approx(reads[-1])  # no more than 8 distinct shards


def test_mla_attention_costs_the_absorbed_form_in_decode() -> None:
    llm = llm_preset("deepseek-r1")
    assert llm.kv_bytes_per_token_per_layer == (512 + 64) * 1.0
    assert llm.decode_attention_flops_per_attended == 2 * 128 * (2 * 512 + 64)
    assert llm.prefill_attention_flops_per_attended == 2 * 128 * (128 + 64 + 128)
    # about twice the old "one KV head of half the latent" count, 4 · 128 · 288
    assert llm.decode_attention_flops_per_attended / (4 * 128 * 288) == pytest.approx(1.89, abs=0.01)
    with pytest.raises(ValueError, match="one latent"):
        llm.with_overrides({"kv_heads": 2})


def test_expert_all_to_all_moves_each_chips_own_tokens() -> None:
    hw, llm = hardware_preset("h100-sxm"), llm_preset("deepseek-r1")
    ep8 = Parallelism(attention_data_parallel=8, expert_parallel=8)
    c8 = StepConstants.of(hw, llm, 8, ep8)
    assert c8.exchange_s_per_token > 0 and c8.collective_s_per_token == 0.0  # no attention all-reduce
    tp = StepConstants.of(hw, llm, 8)
    assert tp.exchange_s_per_token == 0.0 and tp.collective_s_per_token > 0
    # per token of the replica the all-to-all costs (k · width · bytes · remote share) / chips over the link
    bytes_per_token = 8 * 7168 * (2 + 2) * 7 / 8
    assert c8.exchange_s_per_token == pytest.approx(llm.layers * bytes_per_token / 450e9 / 8)
    # a TP all-reduce over all the replica's tokens would cap the replica; the all-to-all does not
    assert c8.exchange_s_per_token < tp.collective_s_per_token
    fp8_dispatch = StepConstants.of(hw, llm, 8, ep8.model_copy(update={"dispatch_bytes": 1.0}))
    assert fp8_dispatch.exchange_s_per_token == pytest.approx(0.75 * c8.exchange_s_per_token)


def test_traffic_beyond_the_nvlink_domain_runs_over_the_scale_out_network() -> None:
    hw, llm = hardware_preset("h100-sxm"), llm_preset("deepseek-r1")
    layout = Parallelism(attention_data_parallel=16, expert_parallel=16)
    across = StepConstants.of(hw, llm, 16, layout)  # two 8-GPU nodes
    one_domain = StepConstants.of(hw.with_overrides({"scale_up_domain_chips": 16}), llm, 16, layout)
    # 8 of the 15 other ranks sit in the other node: 8/15 of the bytes at 50 GB/s instead of all at 450
    assert across.exchange_s_per_token == pytest.approx(one_domain.exchange_s_per_token * (8 / 15) * 450 / 50)
    faster_nics = StepConstants.of(hw.with_overrides({"scale_out_bandwidth_gb_s": 100.0}), llm, 16, layout)
    assert faster_nics.exchange_s_per_token == pytest.approx(across.exchange_s_per_token / 2)
    # an NVL72 domain keeps wide expert parallelism on NVLink
    gb = hardware_preset("gb200")
    assert StepConstants.of(
        gb, llm, 32, Parallelism(attention_data_parallel=32, expert_parallel=32)
    ).exchange_s_per_token < (
        StepConstants.of(
            hardware_preset("b200"), llm, 32, Parallelism(attention_data_parallel=32, expert_parallel=32)
        ).exchange_s_per_token
    )


def test_overlap_hides_its_efficiency_of_the_shorter_part() -> None:
    hw, llm = hardware_preset("h100-sxm"), llm_preset("deepseek-r1")
    layout = Parallelism(attention_data_parallel=16, expert_parallel=16)
    plain = StepConstants.of(hw, llm, 16, layout)
    full = StepConstants.of(
        hw.with_overrides({"overlap_efficiency": 1.0}),
        llm,
        16,
        layout.model_copy(update={"overlap_communication": True}),
    )
    parts = step_parts(plain, 2048, 2000)
    core = max(parts.memory_s, parts.compute_s)
    assert step_s(plain, 2048, 2000) == pytest.approx(core + parts.exchange_s + parts.latency_s)
    assert step_s(full, 2048, 2000) == pytest.approx(max(core, parts.exchange_s) + parts.latency_s)


def test_separate_expert_precision_changes_the_weights_read() -> None:
    llm = llm_preset("deepseek-r1")
    fp4_experts = llm.with_overrides({"expert_bytes_per_param": 0.5625})
    assert fp4_experts.weight_bytes < 0.6 * llm.weight_bytes
    assert fp4_experts.shared_weight_bytes == llm.shared_weight_bytes
    assert fp4_experts.weight_bytes_read(1) == pytest.approx(
        llm.shared_params + 0.5625 * (fp4_experts.active_params - llm.shared_params)
    )


def test_matrix_multiplies_over_few_tokens_run_below_peak() -> None:
    hw, llm = hardware_preset("b200").with_overrides({"gemm_half_tokens": 0.0}), llm_preset("deepseek-r1")
    slow = hw.with_overrides({"gemm_half_tokens": 32.0})
    a, b = StepConstants.of(hw, llm, 8), StepConstants.of(slow, llm, 8)
    assert a.matmul_fixed_s == 0.0 and b.matmul_fixed_s > 0
    # the routed experts see k/E of the tokens each: their share of the offset is E/k times 32 tokens
    assert b.matmul_fixed_s > 32 * b.matmul_s_per_token
    big = 100_000
    assert step_parts(b, 0, 0.0, big).prefill_s == pytest.approx(
        step_parts(a, 0, 0.0, big).prefill_s, rel=0.05
    )


def test_disaggregated_decode_carries_no_prompts_and_first_tokens_move_their_kv() -> None:
    hw, llm = hardware_preset("h100-sxm"), llm_preset("llama-3.1-70b")
    together = ReplicaPhysics.from_parts(hw, llm, 8)
    apart = ReplicaPhysics.from_parts(
        hw, llm, 8, disaggregation=Disaggregation(prefill_chips=8, prefill_instance_chips=8)
    )
    a = steady_load(together, 64, context_tokens=0.0, isl=4000, osl=500)
    b = steady_load(apart, 64, context_tokens=0.0, isl=4000, osl=500)
    assert b.tok_s_per_user > a.tok_s_per_user  # no prompt chunks in the decode steps
    transfer = 4000 * llm.kv_bytes_per_token / (50e9 * 8)
    assert apart.prefill_compute_s(4000) == pytest.approx(together.prefill_compute_s(4000) + transfer)
    # throughput per chip counts the prefill pool's chips too
    free_pool = ReplicaPhysics.from_parts(hw, llm, 8, disaggregation=Disaggregation(prefill_chips=0))
    c = steady_load(free_pool, 64, context_tokens=0.0, isl=4000, osl=500)
    assert c.tok_s_per_chip > 1.5 * b.tok_s_per_chip


def test_sram_pipelines_depend_on_active_parameters_batch_and_context() -> None:
    # a wafer boundary of its own (the fit may send the catalogue's to 0): crossing more wafers costs time
    wse = hardware_preset("wse-3").with_overrides({"wafer_hop_s": 1e-6})
    physics = ReplicaPhysics.from_parts(wse, llm_preset("llama-3.1-70b"), 4)
    single = physics.decode_step_s(1, 2_000)
    assert physics.decode_step_s(64, 2_000) > 1.5 * single  # batch
    assert physics.decode_step_s(1, 100_000) > single  # context
    bigger = ReplicaPhysics.from_parts(
        wse, llm_preset("llama-3.1-70b").with_overrides({"total_params_b": 140}), 8
    )
    assert bigger.decode_step_s(1, 2_000) > single  # more parameters, more wafers to cross
    # without spatial layers (the presets' calibration) a step uses the whole replica's capacity
    legacy = ReplicaPhysics.from_parts(
        wse.with_overrides({"spatial_layers": False}), llm_preset("llama-3.1-70b"), 4
    )
    assert legacy.decode_step_s(64, 2_000) < physics.decode_step_s(64, 2_000)
    # prompts fill every layer of the pipeline at once: prefill uses the whole replica
    assert physics.steps.prefill_matmul_s_per_token < physics.steps.matmul_s_per_token


def _fp8_70b_on_two_h100() -> ReplicaPhysics:
    fp8 = {"bytes_per_param": 1.0, "compute_dtype": "fp8", "kv_bytes_per_element": 1.0}
    return ReplicaPhysics.from_parts(
        hardware_preset("h100-sxm"), llm_preset("llama-3.1-70b").with_overrides(fp8), 2
    )


def test_first_tokens_queue_under_load_and_beyond_the_kv_cap() -> None:
    physics = _fp8_70b_on_two_h100()
    ttfts = [steady_load(physics, b, context_tokens=0.0, isl=5000, osl=500) for b in (1, 8, 32)]
    assert ttfts[0].queue_s == 0.0
    assert ttfts[0].ttft_s < ttfts[1].ttft_s < ttfts[2].ttft_s
    cap = physics.max_batch(5250)
    over = steady_load(physics, 2 * cap, context_tokens=0.0, isl=5000, osl=500)
    at_cap = steady_load(physics, cap, context_tokens=0.0, isl=5000, osl=500)
    assert over.decoding == cap and over.tok_s_per_user == pytest.approx(at_cap.tok_s_per_user)
    assert over.ttft_s > at_cap.ttft_s + 10  # the other half waits for a slot


def test_interpolating_the_frontier_finds_the_batch_of_a_given_speed() -> None:
    physics = _fp8_70b_on_two_h100()
    target = steady_load(physics, 17.0, context_tokens=0.0, isl=5000, osl=500)
    load, batch = load_at_interactivity(physics, target.tok_s_per_user, isl=5000, osl=500)
    assert batch == pytest.approx(17.0, rel=1e-6)
    assert load.tok_s_per_chip == pytest.approx(target.tok_s_per_chip, rel=1e-6)
    load, batch = load_at_throughput(physics, target.tok_s_per_chip, isl=5000, osl=500)
    assert batch == pytest.approx(17.0, rel=1e-6)
    # a speed the frontier does not reach is compared at its end
    _, fastest = load_at_interactivity(physics, 1e6, isl=5000, osl=500)
    assert fastest == 1.0
