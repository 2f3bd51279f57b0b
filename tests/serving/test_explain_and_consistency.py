"""Fast mode's mechanisms side by side, and the presets under the fit's own steady-load rule."""

from __future__ import annotations

import pytest

from speedtrap.config import backend_preset
from speedtrap.config.backend import SpeculativeDecoding
from speedtrap.config.parallel import Disaggregation, Parallelism
from speedtrap.serving.consistency import batch_for_speed, preset_under_steady_load
from speedtrap.serving.explain import explain_fast_mode, step_terms, token_time_s
from speedtrap.serving.replica import ReplicaPhysics


def _typical_rate(name: str) -> float:
    backend = backend_preset(name)
    physics = ReplicaPhysics.from_backend(backend)
    return physics.decode_rate_tok_s(backend.typical_batch, backend.typical_context_tokens)


def test_fast_mode_shares_add_up_and_the_preset_differs_only_in_its_batch() -> None:
    fast, standard = backend_preset("gpu-fast"), backend_preset("gpu-batched")
    shares = explain_fast_mode(fast, standard)
    assert [s.mechanism for s in shares] == [
        "smaller batch",
        "priority admission",
        "speculative decoding",
        "newer hardware",
    ]
    assert sum(s.share for s in shares) == pytest.approx(1.0)
    # both tiers draft alike and run on the same chips: the whole change is the batch
    assert shares[0].share == pytest.approx(1.0) and shares[1].share == 0.0 and shares[2].share == 0.0
    speedup = shares[0].token_s_before / shares[-1].token_s_after
    assert speedup == pytest.approx(_typical_rate("gpu-fast") / _typical_rate("gpu-batched"), rel=1e-9)


def test_each_mechanism_gets_its_own_share() -> None:
    standard = backend_preset("gpu-batched").model_copy(update={"speculative": None})
    fast = backend_preset("gpu-fast").model_copy(
        update={
            "speculative": SpeculativeDecoding(),
            "hardware": standard.hardware.with_overrides({"memory_bandwidth_tb_s": 16.0}),
        }
    )
    shares = {s.mechanism: s.share for s in explain_fast_mode(fast, standard)}
    assert shares["speculative decoding"] > 0.05 and shares["newer hardware"] > 0.05
    assert sum(shares.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["gpu-batched", "gpu-fast"])
def test_step_terms_add_up_to_the_plain_step(name: str) -> None:
    backend = backend_preset(name)
    terms = step_terms(backend)
    memory = terms.weights_s + terms.experts_s + terms.kv_s
    rest = terms.prompts_s + terms.exchange_s + terms.collectives_s
    latency = terms.collective_latency_s + terms.layer_latency_s + terms.step_overhead_s
    assert terms.step_s == pytest.approx(max(memory, terms.compute_s) + rest + latency)
    # the presets draft; the terms are those of a step without drafting
    plain = ReplicaPhysics.from_backend(backend.model_copy(update={"speculative": None}))
    assert terms.step_s == pytest.approx(
        plain.decode_step_s(backend.typical_batch, backend.typical_context_tokens)
    )
    assert terms.prompts_s == 0.0  # prompts are prefilled on the separate pool


@pytest.mark.parametrize(("uncached", "output"), [(9_600, 213), (4_500, 351)])
@pytest.mark.parametrize("name", ["gpu-batched", "gpu-fast"])
def test_the_gpu_presets_run_as_fast_under_the_fits_own_steady_load_rule(
    name: str, uncached: int, output: int
) -> None:
    # The pool's decode-only steps and the fit's steady-load rule agree because prompts are prefilled on
    # a separate pool: the request's cached prefix plus its new tokens and half its output is the
    # typical 96k-token context, so the steady-load speed is the preset's speed.
    speed = preset_under_steady_load(backend_preset(name), uncached_tokens=uncached, output_tokens=output)
    assert speed.steady_tok_s == pytest.approx(speed.decode_only_tok_s, rel=1e-9)
    # without the separate prefill pool the prompts would share the decode steps and slow them: a
    # share q of the steps carries a whole prompt (the layout has no chunk budget), (B − 1)·uncached per
    # output token over uncached tokens per chunk, and the rest none
    aggregated = backend_preset(name).model_copy(update={"disaggregation": None})
    shared = preset_under_steady_load(aggregated, uncached_tokens=uncached, output_tokens=output)
    physics = ReplicaPhysics.from_backend(aggregated)
    batch, context = aggregated.typical_batch, float(aggregated.typical_context_tokens)
    assert physics.prefill_chunk_tokens is None and physics.max_batch(context) >= batch
    cached = context - uncached - output / 2.0
    share = (batch - 1) * physics.tokens_per_step / output
    assert 0.0 < share < 1.0
    plain = physics.decode_step_s(batch, context)
    carrying = physics.decode_step_s(batch, context, uncached, 2.0 * cached + uncached)
    mean_step = (1.0 - share) * plain + share * carrying
    assert shared.steady_tok_s == pytest.approx(
        physics.decode_speedup * physics.tokens_per_step / mean_step, rel=1e-9
    )
    assert shared.steady_tok_s < speed.steady_tok_s


def test_the_standard_tier_runs_at_its_kv_cap() -> None:
    # the preset runs the most streams the layout holds at 96k-token contexts (33); there a stream runs
    # 62.3 tok/s under the fit's rule, 4% under the ≈65 measured, which 29 streams would reach
    # (docs/serving_validation.md, "The presets")
    batched = backend_preset("gpu-batched")
    physics = ReplicaPhysics.from_backend(batched)
    assert batched.typical_batch == physics.max_batch(batched.typical_context_tokens) == 33
    assert batch_for_speed(batched, 62.0, uncached_tokens=9_600, output_tokens=213) == batched.typical_batch
    assert batch_for_speed(batched, 65.0, uncached_tokens=9_600, output_tokens=213) == 29
    assert batch_for_speed(batched, 1_000.0, uncached_tokens=9_600, output_tokens=213) is None
    assert token_time_s(batched) == pytest.approx(1.0 / _typical_rate("gpu-batched"))


def test_what_it_takes_to_serve_65_tok_s_to_agent_requests() -> None:
    # docs/serving_validation.md, "The presets": the preset's layout built up step by step from the old
    # one, under the fit's steady-load rule with the default agent request (tok/s per stream, per GPU)
    preset = backend_preset("gpu-batched")
    tensor_parallel = {"parallel": Parallelism(), "speculative": None, "typical_batch": 26}
    steps = [
        preset.model_copy(update={**tensor_parallel, "disaggregation": None}),
        preset.model_copy(update=tensor_parallel),
        preset.model_copy(update={"speculative": None, "typical_batch": 26}),
        preset.model_copy(update={"speculative": None}),
        preset,
    ]
    table = [preset_under_steady_load(b, uncached_tokens=9_600, output_tokens=213) for b in steps]
    per_stream = [round(t.steady_tok_s, 1) for t in table]
    per_gpu = [round(t.steady_tok_s_per_chip, 1) for t in table]
    assert per_stream == [24.4, 47.0, 44.3, 39.2, 62.3]
    assert per_gpu == [69.5, 39.9, 38.1, 43.8, 62.0]
    assert [round(t.steady_ttft_s, 2) for t in table] == [1.29, 1.27, 1.27, 1.28, 1.32]
    # one prefill node queues the prompts (more tok/s per GPU, but over twice the first-token time); two
    # are the smallest pool that does not; three leave GPUs idle for no faster first token
    by_pool = {
        chips: preset_under_steady_load(
            preset.model_copy(update={"disaggregation": Disaggregation(prefill_chips=chips)}),
            uncached_tokens=9_600,
            output_tokens=213,
        )
        for chips in (8, 16, 24)
    }
    assert by_pool[8].steady_ttft_s > 2.0 * by_pool[16].steady_ttft_s
    assert by_pool[8].steady_tok_s_per_chip > by_pool[16].steady_tok_s_per_chip
    assert by_pool[24].steady_ttft_s > 0.95 * by_pool[16].steady_ttft_s
    assert by_pool[24].steady_tok_s_per_chip < 0.8 * by_pool[16].steady_tok_s_per_chip
