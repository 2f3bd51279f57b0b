import pytest
from pydantic import ValidationError

from speedtrap.config import Hardware, hardware_preset


def _chip(**overrides: object) -> Hardware:
    fields: dict[str, object] = {
        "name": "test-chip",
        "memory_gb": 100,
        "memory_bandwidth_tb_s": 2.0,
        "peak_tflop_s": {"bf16": 1000},
    }
    return Hardware(**(fields | overrides))


def test_derived_quantities_by_hand() -> None:
    chip = _chip(eta_mem=0.5, eta_flop=0.25, usable_memory_fraction=0.8)
    assert chip.usable_memory_bytes == pytest.approx(80e9)
    assert chip.effective_bandwidth_bytes_s == pytest.approx(1e12)
    assert chip.effective_flop_s("bf16") == pytest.approx(250e12)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("memory_bandwidth_tb_s", -3.35),
        ("memory_gb", 0),
        ("eta_mem", 1.2),
        ("eta_flop", 0),
        ("step_overhead_s", -1e-3),
        ("usd_per_chip_hour", -2.0),
        ("memory_kind", "dram"),
    ],
)
def test_bad_values_are_rejected_with_the_field_named(field: str, value: object) -> None:
    with pytest.raises(ValidationError, match=field):
        _chip(**{field: value})


def test_negative_compute_names_the_dtype() -> None:
    with pytest.raises(ValidationError, match=r"peak_tflop_s\['fp8'\] = -1"):
        _chip(peak_tflop_s={"bf16": 1000, "fp8": -1})
    with pytest.raises(ValidationError, match="peak_tflop_s"):
        _chip(peak_tflop_s={})


def test_unknown_dtype_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"has no fp4 compute \(has: bf16, fp8\)"):
        hardware_preset("h100-sxm").effective_flop_s("fp4")


def test_presets_carry_the_datasheet_numbers() -> None:
    # docs/design.md §5: H100 SXM 80 GB, 3.35 TB/s, 989 TFLOP/s bf16; WSE-3 44 GB SRAM, 21 PB/s, 125 PF.
    h100 = hardware_preset("h100-sxm")
    assert (h100.memory_gb, h100.memory_bandwidth_tb_s, h100.peak_tflop_s["bf16"]) == (80, 3.35, 989)
    wse3 = hardware_preset("wse-3")
    assert wse3.memory_kind == "sram"
    assert (wse3.memory_gb, wse3.memory_bandwidth_tb_s, wse3.peak_tflop_s["bf16"]) == (44, 21_000, 125_000)
    # "GB200: ~2.4x H100 bandwidth" (docs/design.md §1)
    assert hardware_preset("gb200").memory_bandwidth_tb_s / h100.memory_bandwidth_tb_s == pytest.approx(
        2.4, abs=0.05
    )
