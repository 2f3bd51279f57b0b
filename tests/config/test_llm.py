import pytest
from pydantic import ValidationError

from speedtrap.config import LLM, llm_preset


def test_kv_bytes_per_token_by_hand() -> None:
    # Llama-3.1-70B: 2 (K, V) x 80 layers x 8 KV heads x 128 dims x 2 bytes = 320 KiB per token.
    assert llm_preset("llama-3.1-70b").kv_bytes_per_token == 327_680
    assert llm_preset("llama-3.1-8b").kv_bytes_per_token == 131_072


def test_dense_and_mixture_of_experts_weights() -> None:
    dense = llm_preset("llama-3.1-8b")
    assert dense.active_params == pytest.approx(8.03e9)
    assert dense.active_weight_bytes == dense.weight_bytes == pytest.approx(16.06e9)
    moe = llm_preset("gpt-oss-120b")
    assert moe.active_params == pytest.approx(5.1e9)
    assert moe.flops_per_token == pytest.approx(2 * 5.1e9)
    assert moe.active_weight_bytes < moe.weight_bytes


def test_active_params_cannot_exceed_total() -> None:
    with pytest.raises(ValidationError, match=r"active_params_b = 20\.0 exceeds total_params_b = 10\.0"):
        LLM(
            name="m",
            total_params_b=10,
            active_params_b=20,
            bytes_per_param=2,
            layers=1,
            kv_heads=1,
            head_dim=64,
            context_window_tokens=1024,
        )


def test_overrides_are_validated_with_the_path() -> None:
    llm = llm_preset("qwen3-32b")
    assert llm.with_overrides({"bytes_per_param": 1}).weight_bytes == pytest.approx(llm.weight_bytes / 2)
    with pytest.raises(ValidationError, match="kv_heads"):
        llm.with_overrides({"kv_heads": 0})
    with pytest.raises(ValidationError, match="bytes_per_param"):
        llm.with_overrides({"bytes_per_param": -1})
