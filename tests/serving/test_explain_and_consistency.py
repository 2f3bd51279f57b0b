"""Fast mode's mechanisms side by side, and the presets under the fit's own steady-load rule."""

from __future__ import annotations

import pytest

from speedtrap.config import backend_preset
from speedtrap.config.backend import SpeculativeDecoding
from speedtrap.serving.consistency import batch_for_speed, preset_under_steady_load, with_catalogue_hardware
from speedtrap.serving.explain import explain_fast_mode, step_terms, token_time_s


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
    assert shares[0].share == pytest.approx(1.0) and shares[1].share == 0.0
    assert shares[0].token_s_before / shares[-1].token_s_after == pytest.approx(163.176 / 63.9459, rel=1e-4)


def test_each_mechanism_gets_its_own_share() -> None:
    standard = backend_preset("gpu-batched")
    fast = backend_preset("gpu-fast").model_copy(
        update={
            "speculative": SpeculativeDecoding(),
            "hardware": standard.hardware.with_overrides({"memory_bandwidth_tb_s": 16.0}),
        }
    )
    shares = {s.mechanism: s.share for s in explain_fast_mode(fast, standard)}
    assert shares["speculative decoding"] > 0.05 and shares["newer hardware"] > 0.05
    assert sum(shares.values()) == pytest.approx(1.0)


def test_step_terms_add_up_to_the_step() -> None:
    terms = step_terms(backend_preset("gpu-fast"))
    memory = terms.weights_s + terms.experts_s + terms.kv_s
    rest = terms.prompts_s + terms.exchange_s + terms.collectives_s
    latency = terms.collective_latency_s + terms.layer_latency_s + terms.step_overhead_s
    assert terms.step_s == pytest.approx(max(memory, terms.compute_s) + rest + latency)
    # the presets' assumed 5 µs per layer and per collective step: ≈2.9 ms of the ≈6.1 ms step
    assert terms.collective_latency_s + terms.layer_latency_s == pytest.approx(2.94e-3, rel=0.01)
    assert terms.step_s == pytest.approx(6.13e-3, rel=0.01)


def test_the_presets_under_the_fits_own_steady_load_rule() -> None:
    # the default agent request: ≈9.6k uncached tokens in, 213 out, on the rest of the 96k context cached
    shape = {"uncached_tokens": 9_600, "output_tokens": 213}
    batched = preset_under_steady_load(backend_preset("gpu-batched"), **shape)
    fast = preset_under_steady_load(backend_preset("gpu-fast"), **shape)
    assert batched.decode_only_tok_s == pytest.approx(63.9, abs=0.1)
    assert batched.steady_tok_s == pytest.approx(24.0, abs=0.5)
    assert fast.steady_tok_s == pytest.approx(55.7, abs=0.5)
    assert batch_for_speed(backend_preset("gpu-batched"), 65.0, **shape) == 3
    refit = preset_under_steady_load(backend_preset("gpu-batched"), refit=True, **shape)
    assert refit.factors == "refit" and refit.steady_tok_s < batched.decode_only_tok_s
    assert token_time_s(with_catalogue_hardware(backend_preset("gpu-fast"))) > token_time_s(
        backend_preset("gpu-fast")
    )
