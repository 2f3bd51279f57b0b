import dataclasses

import pytest

from speedtrap.config import Backend, backend_preset
from speedtrap.config.parallel import Parallelism
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.speed import SpeedModel


def test_implements_the_speed_model_protocol() -> None:
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    assert isinstance(physics, SpeedModel)
    assert physics.kv_capacity_tokens > 0


def test_from_backend_is_from_parts_of_its_fields() -> None:
    backend = backend_preset("wafer-distilled")
    assert ReplicaPhysics.from_backend(backend) == ReplicaPhysics.from_parts(
        backend.hardware, backend.llm, backend.chips, ttft_overhead_s=backend.ttft_overhead_s
    )


def test_is_immutable() -> None:
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-fast"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        physics.chips = 0  # type: ignore[misc]


def test_empty_batch_counts_as_one_stream() -> None:
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    assert physics.decode_rate_tok_s(0, 96_000) == physics.decode_rate_tok_s(1, 96_000)


def _tensor_parallel(name: str) -> Backend:
    """The preset laid out plainly: tensor parallel over its chips, prefill on them, no drafting."""
    plain = {"parallel": Parallelism(), "disaggregation": None, "speculative": None}
    return backend_preset(name).model_copy(update=plain)


def test_rates_and_throughputs_agree() -> None:
    physics = ReplicaPhysics.from_backend(_tensor_parallel("gpu-batched"))
    rate = physics.decode_rate_tok_s(16, 50_000)
    assert rate == pytest.approx(1 / physics.decode_step_s(16, 50_000))
    assert physics.throughput_tok_s(16, 50_000) == pytest.approx(16 * rate)
    assert physics.throughput_tok_s_per_chip(16, 50_000) == pytest.approx(16 * rate / 8)


def test_prefill_is_overhead_plus_compute_on_uncached_tokens() -> None:
    backend = _tensor_parallel("gpu-batched")
    physics = ReplicaPhysics.from_backend(backend)
    assert physics.prefill_s(0) == backend.ttft_overhead_s + backend.hardware.request_overhead_s
    # Large prompts are compute-bound: at least 2 x active params x tokens / (chips x F x the prefill
    # efficiency); attention,
    # the tensor-parallel collectives of 8 chips and one read of the weights come on top.
    flop_s = backend.chips * backend.hardware.prefill_flop_s(backend.llm.compute_dtype)
    tokens = 20_000
    matmul = 2 * backend.llm.active_params * tokens / flop_s
    assert matmul < physics.prefill_compute_s(tokens) < 3 * matmul
    assert physics.prefill_s(tokens) == physics.prefill_s(0) + physics.prefill_compute_s(tokens)
    # A one-token prompt reads the weights one token uses, computes one token (at the prefill
    # efficiency, plus the small-matrix cost of the fitted hardware) and pays the latencies.
    one = physics.weight_read_s + physics.steps.prefill_matmul_s_per_token + physics.fixed_s
    assert one + physics.steps.collective_s_per_token <= physics.prefill_compute_s(1) < 2 * one
    assert physics.ttft_s(4_000) == physics.prefill_s(4_000)
    # prefill time never falls as the uncached input grows
    times = [physics.prefill_s(n) for n in (0, 1, 10, 1_000, 10_000, 100_000)]
    assert times == sorted(times)


def test_decode_rate_is_cheap_to_call() -> None:
    # The pool calls it on every join and leave: it must not rebuild anything from specs.
    physics = ReplicaPhysics.from_backend(backend_preset("gpu-batched"))
    constants = [getattr(physics.steps, f.name) for f in dataclasses.fields(physics.steps)]
    assert all(type(value) in (int, float, bool) for value in constants)


def test_decode_speedup_scales_decode_rate_but_not_ttft() -> None:
    backend = backend_preset("gpu-batched")
    base = ReplicaPhysics.from_backend(backend)
    fast = ReplicaPhysics.from_backend(backend.with_overrides({"decode_speedup": 6.0}))
    assert fast.decode_rate_tok_s(40, 96_000) == pytest.approx(6.0 * base.decode_rate_tok_s(40, 96_000))
    assert fast.ttft_s(2_000) == base.ttft_s(2_000)


def test_decode_speedup_must_be_positive() -> None:
    with pytest.raises(ValueError, match="decode_speedup"):
        backend_preset("gpu-batched").with_overrides({"decode_speedup": 0.0})


def test_drafting_and_a_separate_prefill_pool_as_the_gpu_presets_run() -> None:
    backend = backend_preset("gpu-batched")
    physics, plain = (
        ReplicaPhysics.from_backend(backend),
        ReplicaPhysics.from_backend(_tensor_parallel("gpu-batched")),
    )
    # a draft-then-verify step emits (1 − α^(γ+1)) / (1 − α) tokens per stream
    assert physics.tokens_per_step == pytest.approx((1 - 0.65**4) / (1 - 0.65))
    rate = physics.decode_rate_tok_s(16, 50_000)
    assert rate == pytest.approx(physics.tokens_per_step / physics.decode_step_s(16, 50_000))
    # throughput per chip counts the 16 prefill GPUs beside the 8 that decode
    assert physics.counted_chips == 24
    assert physics.throughput_tok_s_per_chip(16, 50_000) == pytest.approx(16 * rate / 24)
    # the prompt is prefilled on the other pool and its KV cache moved: no decode steps carry it
    assert physics.prefill_pool is not None and plain.prefill_pool is None
    assert physics.prefill_s(0) == backend.ttft_overhead_s + backend.hardware.request_overhead_s
