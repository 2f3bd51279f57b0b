"""Wafer and LPU pipelines from their architecture: layers placed over wafers (chips) by their SRAM, a
sourced cost per hop between consecutive wafers, and the wafer-distilled preset under steady load."""

from __future__ import annotations

import pytest

from speedtrap.config import backend_preset
from speedtrap.config.backend import derive_chips_per_replica
from speedtrap.config.catalog import hardware_preset, llm_preset
from speedtrap.config.hardware import LPU_HOP_MAX_S, WAFER_HOP_PRIOR_S
from speedtrap.serving.consistency import preset_under_steady_load
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.roofline import StepConstants, step_parts


def test_memory_per_wafer_and_chip_are_the_published_figures() -> None:
    # Cerebras WSE-3: 44 GB of on-chip SRAM; Groq LPU: 230 MB (TechPowerUp, Groq)
    assert hardware_preset("wse-3").memory_gb == 44
    assert hardware_preset("lpu").memory_gb == 0.23


def test_wafers_follow_from_the_weights_at_their_precision() -> None:
    # Cerebras: "70B models fit on as few as four systems" (16-bit weights, 140 GB); an 8B model on one
    wse = hardware_preset("wse-3")
    wafers = {
        name: derive_chips_per_replica(wse, llm_preset(name), batch=1, context_tokens=2_000)
        for name in ("llama-3.1-8b", "llama-3.1-70b")
    }
    assert wafers == {"llama-3.1-8b": 1, "llama-3.1-70b": 4}
    # the same model at 8-bit needs about half the wafers (its weights are half the bytes)
    fp8 = llm_preset("llama-3.1-70b").with_overrides({"bytes_per_param": 1.0, "compute_dtype": "bf16"})
    assert derive_chips_per_replica(wse, fp8, batch=1, context_tokens=2_000) == 2


@pytest.mark.parametrize(("hardware", "model"), [("wse-3", "llama-3.1-405b"), ("lpu", "llama-2-70b")])
def test_each_boundary_between_consecutive_chips_costs_one_hop_per_step(hardware: str, model: str) -> None:
    hw, llm = hardware_preset(hardware), llm_preset(model)
    assert hw.wafer_hop_s > 0
    chips = derive_chips_per_replica(hw, llm, batch=1, context_tokens=2_000)
    with_hops = StepConstants.of(hw, llm, chips)
    without = StepConstants.of(hw.model_copy(update={"wafer_hop_s": 0.0}), llm, chips)
    assert with_hops.fixed_s - without.fixed_s == pytest.approx((chips - 1) * hw.wafer_hop_s, rel=1e-9)
    one = StepConstants.of(hw, llm, 1)
    assert one.fixed_s == StepConstants.of(hw.model_copy(update={"wafer_hop_s": 0.0}), llm, 1).fixed_s


def test_the_hops_are_the_sourced_values_not_a_bound_of_zero() -> None:
    # WSE-3: an RDMA message over the CS-3's 100 GbE links plus one token's activations (1–10 µs);
    # LPU: within Groq's "< 3 µs end-to-end system latency" (ISCA 2022)
    assert hardware_preset("wse-3").wafer_hop_s == WAFER_HOP_PRIOR_S
    assert 1e-6 <= WAFER_HOP_PRIOR_S <= 10e-6
    assert 0 < hardware_preset("lpu").wafer_hop_s <= LPU_HOP_MAX_S == 3e-6


def test_wafer_distilled_steady_load_speed_is_its_unloaded_speed_less_the_prompts_it_carries() -> None:
    # The preset's stated speed is its decode-only step at 8 streams of 96k tokens (as the pool times
    # it). Under steady load (the default agent request: 9.6k new tokens on a cached 96k context, 213
    # out) the steps also carry the other 7 streams' prompts, (8 − 1)·9600/213 tokens per step on
    # average, which the whole replica prefills inside the steps. A prompt comes whole (the replica has
    # no chunk budget), so a share q = that average / 9600 of the steps carries one and the rest none:
    # the steady speed is that mixture's mean step's.
    backend = backend_preset("wafer-distilled")
    physics = ReplicaPhysics.from_backend(backend)
    assert physics.prefill_chunk_tokens is None
    batch, context = backend.typical_batch, float(backend.typical_context_tokens)
    uncached, output = 9_600, 213
    speed = preset_under_steady_load(backend, uncached_tokens=uncached, output_tokens=output)
    cached = context - uncached - output / 2.0
    share = (batch - 1) * uncached / output / uncached
    plain = step_parts(physics.steps, batch, context)
    loaded = step_parts(physics.steps, batch, context, uncached, 2.0 * cached + uncached)
    plain_s = max(plain.memory_s, plain.compute_s) + plain.latency_s
    loaded_s = max(loaded.memory_s, loaded.compute_s) + loaded.prefill_s + loaded.latency_s
    mean_s = (1.0 - share) * plain_s + share * loaded_s
    assert speed.decode_only_tok_s == pytest.approx(1.0 / plain_s, rel=1e-9)
    assert speed.steady_tok_s == pytest.approx(1.0 / mean_s, rel=1e-9)
    # the prompt's prefill is most of what a step that carries one adds (the rest: the experts its
    # tokens route to)
    assert loaded.prefill_s > 0.5 * (loaded_s - plain_s) > 0
    # a step carrying the mean share of prompt tokens instead would be slower: it reads the experts
    # that share routes to in every step (1 − (1 − k/E)^T of them, concave in the tokens T)
    spread = step_parts(physics.steps, batch, context, share * uncached, 2.0 * cached + uncached)
    spread_s = max(spread.memory_s, spread.compute_s) + spread.prefill_s + spread.latency_s
    assert spread_s > mean_s
    assert speed.steady_tok_s / speed.decode_only_tok_s == pytest.approx(plain_s / mean_s, rel=1e-9)
    # the preset states ≈1,380 tok/s per stream (config/presets.py, docs/backends.md) and the design
    # card's ±10% holds under steady load too
    assert speed.decode_only_tok_s == pytest.approx(1_380, rel=0.10)
    assert speed.steady_tok_s == pytest.approx(1_380, rel=0.10)
