"""A language model as inference physics sees it: parameters, quantization, KV-cache geometry."""

from __future__ import annotations

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

PARAMS_PER_B = 1e9


class LLM(Spec):
    """Parameter counts (billions), bytes per parameter and attention geometry of one model.

    ``active_params_b`` is the parameters used per token (mixture-of-experts); ``None`` means a
    dense model (all parameters active). A mixture of experts also names ``experts`` (routed experts
    per layer) and ``experts_per_token`` (k): the parameters always read (attention, embeddings,
    shared experts, dense layers) follow from total, active, E and k (:attr:`shared_params`), and a
    step over B tokens reads the expected number of distinct experts ``E·(1 − (1 − k/E)^B)``.
    KV bytes per token = 2 (K and V) · layers · KV heads · head dim · bytes per element (multi-head
    latent attention: ``kv_heads=1`` and ``head_dim`` = half the latent width).
    ``sliding_window_layers`` of the layers attend to the last ``sliding_window_tokens`` only.
    Three precisions are separate: ``bytes_per_param`` (weights), ``compute_dtype`` (the hardware's
    FLOP/s entry) and ``kv_bytes_per_element`` (KV cache); activations exchanged between chips are
    ``activation_bytes`` per element.
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
    experts: int = Field(default=1, ge=1, description="Routed experts per MoE layer (1: dense).")
    experts_per_token: int = Field(default=1, ge=1, description="Routed experts each token uses (k).")
    query_heads: int | None = Field(default=None, ge=1, description="Attention query heads (None: KV heads).")
    hidden_size: int | None = Field(
        default=None, ge=1, description="Residual width (None: query heads × head dim)."
    )
    sliding_window_tokens: int | None = Field(default=None, ge=1)
    sliding_window_layers: int = Field(default=0, ge=0, description="Layers attending to the window only.")
    activation_bytes: float = Field(default=2.0, gt=0, description="Bytes per activation sent between chips.")

    @model_validator(mode="after")
    def _active_within_total(self) -> LLM:
        if self.active_params_b is not None and self.active_params_b > self.total_params_b:
            raise ValueError(
                f"active_params_b = {self.active_params_b} exceeds total_params_b = {self.total_params_b}"
            )
        if self.experts_per_token > self.experts:
            raise ValueError(f"experts_per_token = {self.experts_per_token} exceeds experts = {self.experts}")
        if self.sliding_window_layers > self.layers:
            raise ValueError(
                f"sliding_window_layers = {self.sliding_window_layers} exceeds layers = {self.layers}"
            )
        if self.sliding_window_layers and self.sliding_window_tokens is None:
            raise ValueError("sliding_window_layers needs sliding_window_tokens")
        if self.experts > 1 and self.active_params_b is not None and self.shared_params < 0:
            raise ValueError(
                f"active_params_b = {self.active_params_b} is less than the routed experts alone "
                f"(k/E · total = {self.experts_per_token / self.experts * self.total_params_b:.3g})"
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
    def is_moe(self) -> bool:
        """Whether routed experts make the weights read per step depend on the batch."""
        return self.experts > 1 and self.active_params_b is not None

    @property
    def shared_params(self) -> float:
        """Parameters every token reads (dense model: all): ``(active − k/E·total) / (1 − k/E)``."""
        if not self.is_moe:
            return self.active_params
        share = self.experts_per_token / self.experts
        total = self.total_params_b * PARAMS_PER_B
        return (self.active_params - share * total) / (1.0 - share)

    @property
    def params_per_expert(self) -> float:
        """Parameters of one routed expert summed over all MoE layers (0 for a dense model)."""
        if not self.is_moe:
            return 0.0
        return (self.total_params_b * PARAMS_PER_B - self.shared_params) / self.experts

    def distinct_experts(self, tokens: float) -> float:
        """Expected distinct routed experts per layer that ``tokens`` tokens read: ``E·(1 − (1 − k/E)^B)``
        (uniform, independent routing); ``k`` for one token, ``E`` for many."""
        if not self.is_moe:
            return 0.0
        b = max(tokens, 1.0)
        keep = 1.0 - self.experts_per_token / self.experts
        return float(self.experts * (1.0 - keep**b))

    def weight_bytes_read(self, tokens: float) -> float:
        """Weight bytes one forward step over ``tokens`` tokens reads: the shared parameters plus the
        distinct experts (a dense model: all weights, whatever the batch)."""
        params = self.shared_params + self.distinct_experts(tokens) * self.params_per_expert
        return params * self.bytes_per_param

    @property
    def q_heads(self) -> int:
        """Attention query heads (KV heads when not given)."""
        return self.query_heads if self.query_heads is not None else self.kv_heads

    @property
    def width(self) -> int:
        """Residual width (query heads × head dim when not given)."""
        return self.hidden_size if self.hidden_size is not None else self.q_heads * self.head_dim

    @property
    def kv_bytes_per_token_per_layer(self) -> float:
        """KV-cache bytes of one token in one layer."""
        return 2.0 * self.kv_heads * self.head_dim * self.kv_bytes_per_element

    def attended_tokens(self, context_tokens: float) -> float:
        """Context tokens attended to, summed over layers: full layers see all of ``context_tokens``,
        sliding-window layers at most the window."""
        full_layers = self.layers - self.sliding_window_layers
        window = self.sliding_window_tokens or 0
        return full_layers * context_tokens + self.sliding_window_layers * min(context_tokens, window)

    def kv_bytes_read(self, context_tokens: float) -> float:
        """KV bytes one stream's decode step reads at ``context_tokens`` of context."""
        return self.attended_tokens(context_tokens) * self.kv_bytes_per_token_per_layer

    def attention_flops(self, context_tokens: float) -> float:
        """Attention FLOPs of one new token over ``context_tokens`` of context: 4 · query heads ·
        head dim per attended token and layer (QKᵀ and AV)."""
        return 4.0 * self.q_heads * self.head_dim * self.attended_tokens(context_tokens)

    def prefill_attention_flops(self, tokens: float) -> float:
        """Attention FLOPs of prefilling ``tokens`` new tokens (causal: each sees half the prompt)."""
        return tokens * self.attention_flops(tokens / 2.0)

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes per token of context: 2 · layers · KV heads · head dim · bytes."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * self.kv_bytes_per_element

    @property
    def flops_per_token(self) -> float:
        """Matrix-multiply FLOPs per token, 2 · active parameters (attention: :meth:`attention_flops`)."""
        return 2.0 * self.active_params
