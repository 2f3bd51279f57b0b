import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speedtrap.config import LLM, Hardware
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import (
    fixed_latency_s,
    kv_batch_cap,
    kv_capacity_tokens,
    roofline_step_s,
    step_bound,
)


@st.composite
def hardware(draw: st.DrawFn) -> Hardware:
    return Hardware(
        name="hw",
        memory_kind=draw(st.sampled_from(["hbm", "sram"])),
        memory_gb=draw(st.floats(20, 200, allow_subnormal=False)),
        memory_bandwidth_tb_s=draw(st.floats(1, 30_000, allow_subnormal=False)),
        peak_tflop_s={"bf16": draw(st.floats(100, 200_000, allow_subnormal=False))},
        eta_mem=draw(st.floats(0.5, 1.0, allow_subnormal=False)),
        eta_flop=draw(st.floats(0.3, 1.0, allow_subnormal=False)),
        step_overhead_s=draw(st.floats(0, 2e-3, allow_subnormal=False)),
        layer_latency_s=draw(st.floats(0, 30e-6, allow_subnormal=False)),
        multichip_layer_latency_s=draw(st.floats(0, 30e-6, allow_subnormal=False)),
        token_latency_floor_s=draw(st.floats(0, 5e-3, allow_subnormal=False)),
    )


@st.composite
def models(draw: st.DrawFn) -> LLM:
    total = draw(st.floats(1, 100, allow_subnormal=False))
    return LLM(
        name="m",
        total_params_b=total,
        active_params_b=draw(st.floats(0.5, 1.0, allow_subnormal=False)) * total,
        bytes_per_param=draw(st.sampled_from([0.5, 1.0, 2.0])),
        layers=draw(st.integers(8, 128)),
        kv_heads=draw(st.integers(1, 16)),
        head_dim=draw(st.sampled_from([64, 128])),
        context_window_tokens=200_000,
    )


replicas = st.tuples(hardware(), models(), st.integers(1, 16))
contexts = st.floats(1, 200_000, allow_subnormal=False)


@given(replicas, contexts)
@settings(max_examples=60, deadline=None)
def test_per_stream_speed_never_rises_and_throughput_never_falls_with_batch(
    replica: tuple[Hardware, LLM, int], context: float
) -> None:
    hw, llm, chips = replica
    physics = ReplicaPhysics.from_parts(hw, llm, chips)
    cap = min(physics.max_batch(context), 512)
    previous_rate, previous_throughput = float("inf"), 0.0
    for batch in range(1, cap + 1):
        rate = physics.decode_rate_tok_s(batch, context)
        throughput = physics.throughput_tok_s_per_chip(batch, context)
        assert rate <= previous_rate * (1 + 1e-12)
        assert throughput >= previous_throughput * (1 - 1e-12)
        previous_rate, previous_throughput = rate, throughput


@given(replicas, st.integers(1, 256), contexts, st.floats(1.0, 4.0, allow_subnormal=False))
@settings(max_examples=60, deadline=None)
def test_more_bandwidth_is_never_slower(
    replica: tuple[Hardware, LLM, int], batch: int, context: float, factor: float
) -> None:
    hw, llm, chips = replica
    faster = hw.with_overrides({"memory_bandwidth_tb_s": hw.memory_bandwidth_tb_s * factor})
    slow = ReplicaPhysics.from_parts(hw, llm, chips).decode_rate_tok_s(batch, context)
    fast = ReplicaPhysics.from_parts(faster, llm, chips).decode_rate_tok_s(batch, context)
    assert fast >= slow * (1 - 1e-12)


@given(replicas, contexts)
@settings(max_examples=60, deadline=None)
def test_kv_cap_respects_memory(replica: tuple[Hardware, LLM, int], context: float) -> None:
    hw, llm, chips = replica
    usable = chips * hw.usable_memory_bytes
    capacity = kv_capacity_tokens(hw, llm, chips)
    cap = kv_batch_cap(capacity, context)
    # tensor parallelism wider than the KV heads copies them on every chip beyond the heads
    copies = chips / min(chips, llm.kv_heads) if hw.memory_kind == "hbm" else 1.0
    kv_per_stream = max(context, 1.0) * llm.kv_bytes_per_token * copies
    if llm.weight_bytes >= usable:
        assert capacity == 0 and cap == 0
        return
    assert llm.weight_bytes + cap * kv_per_stream <= usable * (1 + 1e-9)
    assert llm.weight_bytes + (cap + 1) * kv_per_stream > usable * (1 - 1e-9)


def _toy() -> tuple[Hardware, LLM]:
    hw = Hardware(
        name="toy",
        memory_gb=100,
        memory_bandwidth_tb_s=1.0,
        peak_tflop_s={"bf16": 100},
        eta_mem=1.0,
        eta_flop=1.0,
        usable_memory_fraction=1.0,
        step_overhead_s=1e-3,
        layer_latency_s=1e-5,
        multichip_layer_latency_s=4e-5,
    )
    # 10B params at 1 byte: 10 GB of weights; KV = 2 x 10 x 4 x 25 x 1 = 2000 bytes per token (four KV
    # heads, so that up to four chips split the KV cache without copies)
    llm = LLM(
        name="toy",
        total_params_b=10,
        bytes_per_param=1,
        layers=10,
        kv_heads=4,
        head_dim=25,
        kv_bytes_per_element=1,
        context_window_tokens=1_000_000,
    )
    return hw, llm


def test_decode_step_by_hand() -> None:
    hw, llm = _toy()
    physics = ReplicaPhysics.from_parts(hw, llm, 1)
    fixed = 1e-3 + 10 * 1e-5
    assert physics.fixed_s == pytest.approx(fixed)
    # memory-bound: (10e9 + 4 x 100_000 x 2000) / 1e12 = 10.8 ms; compute 4 x 20e9 / 100e12 = 0.8 ms
    assert physics.decode_step_s(4, 100_000) == pytest.approx(10.8e-3 + fixed)
    assert physics.bound(4, 100_000) == "memory"
    # compute-bound: batch 1000 at 1 token: memory 10.004 ms, compute 1000 x 20e9 / 100e12 = 200 ms
    assert physics.decode_step_s(1000, 1) == pytest.approx(0.2 + fixed)
    assert physics.bound(1000, 1) == "compute"
    # KV room (100 GB - 10 GB) / 2000 bytes = 45M tokens
    assert physics.kv_capacity_tokens == pytest.approx(45e6)
    assert physics.max_batch(100_000) == 450


def test_multichip_latency_and_aggregation() -> None:
    hw, llm = _toy()
    one, four = ReplicaPhysics.from_parts(hw, llm, 1), ReplicaPhysics.from_parts(hw, llm, 4)
    assert four.fixed_s == pytest.approx(fixed_latency_s(hw, llm, 4)) == pytest.approx(1e-3 + 10 * 5e-5)
    assert four.weight_read_s == pytest.approx(one.weight_read_s / 4)
    assert four.kv_capacity_tokens == pytest.approx((400e9 - 10e9) / 2000)


def test_latency_floor_binds_when_the_roofline_is_faster() -> None:
    hw, llm = _toy()
    floored = ReplicaPhysics.from_parts(hw.with_overrides({"token_latency_floor_s": 0.05}), llm, 1)
    assert floored.decode_step_s(1, 10) == pytest.approx(0.05)
    assert floored.bound(1, 10) == "latency"
    assert floored.decode_step_s(1000, 1) == pytest.approx(0.2 + 1.1e-3)  # the roofline is slower


def test_roofline_step_and_bound_helpers() -> None:
    assert roofline_step_s(memory_s=2.0, compute_s=1.0, fixed_s=0.5, floor_s=0.0) == 2.5
    assert roofline_step_s(memory_s=2.0, compute_s=1.0, fixed_s=0.5, floor_s=3.0) == 3.0
    assert step_bound(memory_s=1.0, compute_s=2.0, fixed_s=0.5, floor_s=0.0) == "compute"
    assert step_bound(memory_s=1.0, compute_s=0.2, fixed_s=1.5, floor_s=0.0) == "latency"


def test_prompt_tokens_run_at_the_prefill_efficiency() -> None:
    from speedtrap.config.catalog import hardware_preset, llm_preset
    from speedtrap.serving.roofline import StepConstants, step_parts

    llm = llm_preset("llama-3.1-70b")
    base = hardware_preset("h100-sxm").with_overrides({"eta_flop": 0.3, "prefill_eta_flop": 0.3})
    faster = base.with_overrides({"prefill_eta_flop": 0.6})
    slow, fast = StepConstants.of(base, llm, 2), StepConstants.of(faster, llm, 2)
    a, b = step_parts(slow, 16, 2_000, 4_000), step_parts(fast, 16, 2_000, 4_000)
    # the prompt's matrix multiplies and attention take half the time; the decode tokens' do not move
    assert b.compute_s == a.compute_s and b.memory_s == a.memory_s
    assert b.prefill_s == pytest.approx(a.prefill_s / 2, rel=1e-12)
    # without a prefill efficiency of its own, prompts run at eta_flop
    plain = base.with_overrides({"prefill_eta_flop": None})
    assert StepConstants.of(plain, llm, 2).prefill_matmul_s_per_token == slow.prefill_matmul_s_per_token


def test_a_per_step_token_budget_keeps_its_activations_out_of_the_kv_cache() -> None:
    from speedtrap.config.catalog import hardware_preset, llm_preset
    from speedtrap.config.parallel import Parallelism
    from speedtrap.serving.roofline import activation_workspace_bytes, kv_capacity_tokens

    llm = llm_preset("llama-3.1-70b")
    hw = hardware_preset("mi300x")
    budget = Parallelism(prefill_chunk_tokens=131_072)
    workspace = activation_workspace_bytes(llm, 1, budget)
    # active parameters per layer / width values per token, 16-bit: ≈28 GB for Llama 3.1 70B
    assert workspace == pytest.approx(131_072 * llm.active_params / (llm.layers * llm.width) * 2.0)
    assert 25e9 < workspace < 32e9
    assert activation_workspace_bytes(llm, 1, Parallelism()) == 0.0
    without = kv_capacity_tokens(hw, llm, 1)
    with_budget = kv_capacity_tokens(hw, llm, 1, budget)
    assert without - with_budget == pytest.approx(workspace / llm.kv_bytes_per_token)
