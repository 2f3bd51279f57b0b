import math

import pytest
from pydantic import ValidationError

from speedtrap.config import Backend, Tier, hardware_preset, llm_preset
from speedtrap.config.backend import derive_chips_per_replica, memory_needed_bytes


def test_model_not_fitting_the_replica_is_refused_with_sizes() -> None:
    with pytest.raises(ValidationError) as info:
        Backend(
            name="b", hardware="h100-sxm", llm="llama-3.1-405b", chips_per_replica=8, typical_context_tokens=1
        )
    (error,) = info.value.errors()
    assert error["loc"] == ("chips_per_replica",)
    assert "model llama-3.1-405b needs 811.8 GB" in error["msg"]
    assert "replica of 8× h100-sxm has 576.0 GB" in error["msg"]


def test_typical_load_counts_towards_memory() -> None:
    # 8B on one H100: 16 GB of weights fit 72 GB; 40 streams of 32k tokens (4.3 GB each) do not.
    Backend(
        name="b", hardware="h100-sxm", llm="llama-3.1-8b", chips_per_replica=1, typical_context_tokens=32_000
    )
    with pytest.raises(ValidationError, match=r"KV 167.8 GB for 40 streams × 32000 tokens"):
        Backend(
            name="b",
            hardware="h100-sxm",
            llm="llama-3.1-8b",
            chips_per_replica=1,
            typical_batch=40,
            typical_context_tokens=32_000,
        )


def test_derived_chips_are_the_fewest_that_fit() -> None:
    wse3, h100 = hardware_preset("wse-3"), hardware_preset("h100-sxm")
    llm = llm_preset("llama-3.1-70b")
    n = derive_chips_per_replica(wse3, llm, batch=2, context_tokens=8_000)
    need = memory_needed_bytes(llm, batch=2, context_tokens=8_000)
    assert n * wse3.usable_memory_bytes >= need > (n - 1) * wse3.usable_memory_bytes
    # HBM replicas round up to a power of two (tensor-parallel degree): 141 GB needs 2 chips of 72 GB → 2,
    # 230 GB needs 4 (not 3).
    assert derive_chips_per_replica(h100, llm, batch=1, context_tokens=1) == 2
    m = derive_chips_per_replica(h100, llm, batch=1, context_tokens=100_000)
    assert (
        m
        == 1
        << (
            math.ceil(memory_needed_bytes(llm, batch=1, context_tokens=100_000) / h100.usable_memory_bytes)
            - 1
        ).bit_length()
    )
    assert m == 4
    backend = Backend(
        name="b", hardware="wse-3", llm="llama-3.1-70b", typical_batch=2, typical_context_tokens=8_000
    )
    assert backend.chips_per_replica is None
    assert backend.chips == n


def test_default_tier_must_exist_and_tier_names_be_unique() -> None:
    with pytest.raises(ValidationError, match=r"default_tier\n.*'fast' is not among the tiers \(standard\)"):
        Backend(name="b", hardware="h100-sxm", llm="llama-3.1-8b", default_tier="fast")
    with pytest.raises(ValidationError, match="repeated: standard"):
        Backend(name="b", hardware="h100-sxm", llm="llama-3.1-8b", tiers=[Tier(), Tier()])


def test_typical_load_must_be_admissible() -> None:
    with pytest.raises(ValidationError, match=r"typical_batch\n.*exceeds the batch cap 4 of tier 'standard'"):
        Backend(name="b", hardware="h100-sxm", llm="llama-3.1-8b", tiers=[Tier(batch_cap=4)], typical_batch=5)
    with pytest.raises(
        ValidationError, match=r"typical_context_tokens\n.*exceeds qwen3-32b's window of 32768"
    ):
        Backend(name="b", hardware="h200", llm="qwen3-32b", typical_context_tokens=40_000)


def test_model_dtype_must_exist_on_the_hardware() -> None:
    with pytest.raises(
        ValidationError, match=r"llm\n.*computes in fp4; hardware h100-sxm has only bf16, fp8"
    ):
        Backend(name="b", hardware="h100-sxm", llm="frontier-moe", chips_per_replica=8)


def test_unknown_preset_names_fail_validation_listing_known_names() -> None:
    with pytest.raises(
        ValidationError, match=r"hardware\n.*unknown hardware preset 'tpu' \(known: b200, gb200"
    ):
        Backend(name="b", hardware="tpu", llm="llama-3.1-8b")
    with pytest.raises(ValidationError, match=r"unknown model preset 'gpt-9'"):
        Backend(name="b", hardware="h100-sxm", llm="gpt-9")


def test_dotted_overrides_go_through_validation() -> None:
    base = Backend(name="b", hardware="h100-sxm", llm="llama-3.1-8b")
    assert base.with_overrides({"hardware": "h200"}).hardware == hardware_preset("h200")
    faster = base.with_overrides({"hardware.memory_bandwidth_tb_s": 6.7})
    assert faster.hardware.memory_bandwidth_tb_s == 6.7
    spec = base.with_overrides({"speculative.acceptance_rate": 0.9})
    assert spec.speculative is not None and spec.speculative.acceptance_rate == 0.9
    with pytest.raises(ValidationError, match=r"hardware.memory_bandwidth_tb_s"):
        base.with_overrides({"hardware.memory_bandwidth_tb_s": -1.0})
    with pytest.raises(ValidationError, match=r"speculative.acceptance_rate"):
        base.with_overrides({"speculative.acceptance_rate": 1.5})
    with pytest.raises(ValidationError, match=r"quality.tool_error_prob"):
        base.with_overrides({"quality.tool_error_prob": 2.0})


def test_tier_lookup() -> None:
    backend = Backend(
        name="b", hardware="h100-sxm", llm="llama-3.1-8b", tiers=[Tier(), Tier(name="fast", priority=1)]
    )
    assert backend.tier().name == "standard"
    assert backend.tier("fast").priority == 1
    with pytest.raises(KeyError, match=r"no tier 'slow' \(known: standard, fast\)"):
        backend.tier("slow")
