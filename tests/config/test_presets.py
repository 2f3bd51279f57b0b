import pytest

from speedtrap.config import (
    BACKEND_PRESETS,
    HARDWARE_PRESETS,
    LLM_PRESETS,
    Backend,
    UnknownPresetError,
    backend_preset,
    hardware_preset,
    llm_preset,
)
from speedtrap.config.backend import derive_chips_per_replica


def test_registries_hold_the_named_presets() -> None:
    assert {"h100-sxm", "h200", "b200", "gb200", "wse-3"} <= set(HARDWARE_PRESETS)
    assert {
        "llama-3.1-8b",
        "llama-3.1-70b",
        "qwen3-32b",
        "gpt-oss-120b",
        "frontier-moe",
        "distilled-moe",
    } <= set(LLM_PRESETS)
    assert set(BACKEND_PRESETS) == {"gpu-batched", "gpu-fast", "wafer-distilled", "gpu-slow"}
    for name, backend in BACKEND_PRESETS.items():
        assert backend.name == name
    with pytest.raises(TypeError):
        BACKEND_PRESETS["mine"] = BACKEND_PRESETS["gpu-fast"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("lookup", "kind"), [(hardware_preset, "hardware"), (llm_preset, "model"), (backend_preset, "backend")]
)
def test_unknown_names_list_the_known_ones(lookup, kind: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UnknownPresetError) as info:
        lookup("no-such-thing")
    message = str(info.value)
    assert message.startswith(f"unknown {kind} preset 'no-such-thing' (known: ")
    registry = {"hardware": HARDWARE_PRESETS, "model": LLM_PRESETS, "backend": BACKEND_PRESETS}[kind]
    assert all(name in message for name in registry)
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)


def test_gpu_batched_and_gpu_fast_are_the_same_fleet() -> None:
    batched, fast = backend_preset("gpu-batched"), backend_preset("gpu-fast")
    for field in ("hardware", "llm", "chips_per_replica", "replicas", "tiers", "price", "quality"):
        assert getattr(batched, field) == getattr(fast, field), field
    assert (batched.default_tier, fast.default_tier) == ("standard", "fast")
    standard_tier, fast_tier = batched.tier("standard"), batched.tier("fast")
    assert fast_tier.priority > standard_tier.priority
    assert fast_tier.batch_cap < standard_tier.batch_cap
    assert (standard_tier.price_multiplier, fast_tier.price_multiplier) == (1.0, 6.0)
    # $5/$25 list price, $30/$150 in fast mode (Anthropic).
    assert (batched.price.input_usd_per_mtok, batched.price.output_usd_per_mtok) == (5.0, 25.0)


def test_wafer_distilled_makes_more_mistakes_and_derives_its_wafers() -> None:
    wafer, gpu = backend_preset("wafer-distilled"), backend_preset("gpu-batched")
    assert wafer.quality.failure_multiplier == 1.2
    assert wafer.quality.tool_error_prob > gpu.quality.tool_error_prob
    assert wafer.hardware.memory_kind == "sram"
    assert wafer.chips_per_replica is None
    assert wafer.chips == derive_chips_per_replica(
        wafer.hardware, wafer.llm, batch=wafer.typical_batch, context_tokens=wafer.typical_context_tokens
    )
    assert wafer.chips > 1  # several wafers


def test_background_streams_fill_the_typical_load() -> None:
    for backend in BACKEND_PRESETS.values():
        assert backend.background_streams_per_replica == backend.typical_batch - 1


@pytest.mark.parametrize("name", sorted(BACKEND_PRESETS))
def test_presets_round_trip_through_plain_data(name: str) -> None:
    backend = backend_preset(name)
    assert Backend.model_validate(backend.model_dump(mode="json")) == backend


def test_gpt_oss_120b_fits_one_80gb_gpu() -> None:
    # OpenAI's gpt-oss model card: the 120b model runs within a single 80 GB GPU.
    Backend(
        name="b", hardware="h100-sxm", llm="gpt-oss-120b", chips_per_replica=1, typical_context_tokens=8_192
    )
