"""A language model as inference physics sees it: parameters, quantization, KV-cache geometry."""

from __future__ import annotations

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

PARAMS_PER_B = 1e9


class LLM(Spec):
    """Parameter counts (billions), bytes per parameter and attention geometry of one model.

    ``active_params_b`` is the parameters used per token (mixture-of-experts); ``None`` means a
    dense model (all parameters active). KV bytes per token = 2 (K and V) · layers · KV heads ·
    head dim · bytes per element. ``compute_dtype`` selects the hardware's FLOP/s entry.
    """

    name: str = Field(min_length=1)
    total_params_b: float = Field(gt=0, description="All parameters, billions.")
    active_params_b: float | None = Field(default=None, gt=0, description="Parameters per token, billions.")
    bytes_per_param: float = Field(gt=0, description="Weight storage incl. quantization scales, bytes.")
    compute_dtype: str = Field(default="bf16", min_length=1)
    layers: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    kv_bytes_per_element: float = Field(default=2.0, gt=0)
    context_window_tokens: int = Field(ge=1)

    @model_validator(mode="after")
    def _active_within_total(self) -> LLM:
        if self.active_params_b is not None and self.active_params_b > self.total_params_b:
            raise ValueError(
                f"active_params_b = {self.active_params_b} exceeds total_params_b = {self.total_params_b}"
            )
        return self

    @property
    def active_params(self) -> float:
        """Parameters used per token (all of them for a dense model)."""
        active_b = self.total_params_b if self.active_params_b is None else self.active_params_b
        return active_b * PARAMS_PER_B

    @property
    def weight_bytes(self) -> float:
        """Bytes of all weights (what must be resident)."""
        return self.total_params_b * PARAMS_PER_B * self.bytes_per_param

    @property
    def active_weight_bytes(self) -> float:
        """Bytes of weights read per decode step (the active parameters)."""
        return self.active_params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes per token of context: 2 · layers · KV heads · head dim · bytes."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * self.kv_bytes_per_element

    @property
    def flops_per_token(self) -> float:
        """Forward-pass FLOPs per token, 2 · active parameters (attention FLOPs neglected)."""
        return 2.0 * self.active_params
