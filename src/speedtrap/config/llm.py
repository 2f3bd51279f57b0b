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
    KV bytes per token = 2 (K and V) · layers · KV heads · head dim · bytes per element.
    ``sliding_window_layers`` of the layers attend to the last ``sliding_window_tokens`` only.

    **Precisions, per component.** ``bytes_per_param`` is the storage of the always-read weights
    (attention, embeddings, shared experts) and ``expert_bytes_per_param`` that of the routed experts
    (``None``: the same); ``compute_dtype`` is the hardware's FLOP/s entry for the dense matrix
    multiplies, ``expert_compute_dtype`` for the experts' and ``attention_compute_dtype`` for attention
    (``None``: ``compute_dtype``); ``kv_bytes_per_element`` is the KV cache's; activations exchanged
    between chips are ``activation_bytes`` per element.

    **Multi-head latent attention** (DeepSeek-V3, Kimi K2): with ``kv_lora_rank`` set, each token caches
    one latent of ``kv_lora_rank + qk_rope_head_dim`` values per layer, shared by all query heads, and
    decode runs the absorbed form: each query head scores the latent (``rank + rope`` multiply-adds per
    attended token) and sums it (``rank``), ``2 · heads · (2·rank + rope)`` FLOPs per attended token and
    layer. Prefill runs the expanded form, ``2 · heads · (qk_nope + rope + v)`` FLOPs (DeepSeek-V3
    technical report; FlashMLA). ``kv_heads`` must then be 1.
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
    expert_bytes_per_param: float | None = Field(
        default=None, gt=0, description="Routed-expert weight storage, bytes (None: bytes_per_param)."
    )
    expert_compute_dtype: str | None = Field(
        default=None, min_length=1, description="Dtype of the experts' matmuls (None: compute_dtype)."
    )
    attention_compute_dtype: str | None = Field(
        default=None, min_length=1, description="Dtype of attention's FLOPs (None: compute_dtype)."
    )
    kv_lora_rank: int | None = Field(
        default=None, ge=1, description="Multi-head latent attention: latent width (None: no MLA)."
    )
    qk_rope_head_dim: int = Field(default=64, ge=0, description="MLA: rotary dims per head, cached too.")
    qk_nope_head_dim: int = Field(default=128, ge=1, description="MLA: non-rotary query/key dims per head.")
    v_head_dim: int = Field(default=128, ge=1, description="MLA: value dims per head.")

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
        if self.kv_lora_rank is not None and self.kv_heads != 1:
            raise ValueError(
                f"multi-head latent attention caches one latent: kv_heads = {self.kv_heads}, not 1"
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
    def expert_bytes(self) -> float:
        """Storage of one routed-expert parameter, bytes (``bytes_per_param`` unless set)."""
        return self.bytes_per_param if self.expert_bytes_per_param is None else self.expert_bytes_per_param

    @property
    def routed_params(self) -> float:
        """Parameters of all routed experts (0 for a dense model)."""
        return self.total_params_b * PARAMS_PER_B - self.shared_params if self.is_moe else 0.0

    @property
    def weight_bytes(self) -> float:
        """Bytes of all weights (what must be resident)."""
        if not self.is_moe:
            return self.total_params_b * PARAMS_PER_B * self.bytes_per_param
        return self.shared_params * self.bytes_per_param + self.routed_params * self.expert_bytes

    @property
    def shared_weight_bytes(self) -> float:
        """Bytes of the always-read weights (a dense model: all of them)."""
        return self.shared_params * self.bytes_per_param

    @property
    def active_weight_bytes(self) -> float:
        """Bytes of weights one token reads (the active parameters)."""
        return self.weight_bytes_read(1.0)

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
        routed = self.distinct_experts(tokens) * self.params_per_expert
        return self.shared_params * self.bytes_per_param + routed * self.expert_bytes

    @property
    def q_heads(self) -> int:
        """Attention query heads (KV heads when not given)."""
        return self.query_heads if self.query_heads is not None else self.kv_heads

    @property
    def width(self) -> int:
        """Residual width (query heads × head dim when not given)."""
        return self.hidden_size if self.hidden_size is not None else self.q_heads * self.head_dim

    @property
    def is_mla(self) -> bool:
        """Whether attention is multi-head latent attention (one cached latent per token and layer)."""
        return self.kv_lora_rank is not None

    @property
    def kv_values_per_token_per_layer(self) -> int:
        """Cached values of one token in one layer: K and V of each KV head, or the MLA latent."""
        if self.kv_lora_rank is not None:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    @property
    def kv_bytes_per_token_per_layer(self) -> float:
        """KV-cache bytes of one token in one layer."""
        return self.kv_values_per_token_per_layer * self.kv_bytes_per_element

    @property
    def decode_attention_flops_per_attended(self) -> float:
        """Attention FLOPs of one new token over one attended token in one layer: ``4 · query heads ·
        head dim`` (QKᵀ and AV), or MLA's absorbed ``2 · heads · (2·rank + rope)``."""
        if self.kv_lora_rank is not None:
            return 2.0 * self.q_heads * (2 * self.kv_lora_rank + self.qk_rope_head_dim)
        return 4.0 * self.q_heads * self.head_dim

    @property
    def prefill_attention_flops_per_attended(self) -> float:
        """Attention FLOPs of one prompt token over one attended token in one layer (MLA: expanded form,
        ``2 · heads · (qk_nope + rope + v)``)."""
        if self.kv_lora_rank is not None:
            return 2.0 * self.q_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)
        return 4.0 * self.q_heads * self.head_dim

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
        """Attention FLOPs of one new token over ``context_tokens`` of context
        (:attr:`decode_attention_flops_per_attended` per attended token and layer)."""
        return self.decode_attention_flops_per_attended * self.attended_tokens(context_tokens)

    def prefill_attention_flops(self, tokens: float) -> float:
        """Attention FLOPs of prefilling ``tokens`` new tokens (causal: each sees half the prompt)."""
        return tokens * self.prefill_attention_flops_per_attended * self.attended_tokens(tokens / 2.0)

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes per token of context, over all layers."""
        return self.layers * self.kv_bytes_per_token_per_layer

    @property
    def shared_active_params(self) -> float:
        """Active parameters outside the routed experts (a dense model: all)."""
        return self.shared_params

    @property
    def routed_active_params(self) -> float:
        """Routed-expert parameters one token uses: k experts (0 for a dense model)."""
        return self.experts_per_token * self.params_per_expert if self.is_moe else 0.0

    @property
    def flops_per_token(self) -> float:
        """Matrix-multiply FLOPs per token, 2 · active parameters (attention: :meth:`attention_flops`)."""
        return 2.0 * self.active_params
