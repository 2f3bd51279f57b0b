"""How a replica spreads a model over its chips, and whether prefill runs on separate chips.

The defaults describe what the serving physics assumed before these specs existed: every layer
tensor-parallel over all the replica's chips (attention, dense layers and experts alike), prompts
prefilled on the decode replica in one step, no communication overlapped with compute.
"""

from __future__ import annotations

from pydantic import Field, StrictBool

from speedtrap.config.base import Spec

__all__ = ["Disaggregation", "Parallelism"]


class Parallelism(Spec):
    """The parallel layout of one replica of ``n`` chips (docs/design.md §2, Serving).

    * ``attention_data_parallel`` (d): attention (and the dense layers) run as d data-parallel groups
      of ``n/d`` tensor-parallel chips; each group holds its own streams' KV cache and a full copy of
      the always-read weights (SGLang's DP attention; DeepSeek's inference system). d = 1 is pure
      tensor parallelism.
    * ``expert_parallel`` (e): the routed experts are split whole over e chips and each token is sent
      to its experts' chips and back (an all-to-all dispatch and combine per MoE layer, carrying each
      chip's own tokens); ``None`` shards every expert over all n chips (tensor-parallel experts),
      whose outputs join the attention all-reduce.
    * ``dispatch_bytes``: bytes per element the dispatch sends (DeepEP sends FP8, 1 byte); ``None``: the
      model's ``activation_bytes``. The combine sends ``activation_bytes``.
    * ``overlap_communication``: the expert all-to-alls overlap the step's compute and memory traffic
      (two-batch overlap), so a step takes the longer of the two instead of their sum.
    * ``prefill_chunk_tokens``: chunked prefill's budget of prompt tokens per step; a prompt of P
      tokens takes ``⌈P/chunk⌉`` steps, each also carrying the decode streams; ``None``: one step.
    """

    attention_data_parallel: int = Field(default=1, ge=1, le=65_536)
    expert_parallel: int | None = Field(default=None, ge=1, le=65_536)
    dispatch_bytes: float | None = Field(default=None, gt=0, le=8)
    overlap_communication: StrictBool = False
    prefill_chunk_tokens: int | None = Field(default=None, ge=1, le=10_000_000)

    def check_chips(self, chips: int) -> None:
        """Raise ``ValueError`` unless d and e divide the replica's ``chips``."""
        d, e = self.attention_data_parallel, self.expert_parallel
        if chips % d:
            raise ValueError(f"attention_data_parallel = {d} does not divide the replica's {chips} chips")
        if e is not None and chips % e:
            raise ValueError(f"expert_parallel = {e} does not divide the replica's {chips} chips")


class Disaggregation(Spec):
    """Prefill on its own pool of chips (prefill/decode disaggregation).

    The replica's chips decode only; prompts are prefilled by ``prefill_chips`` other chips in
    instances of ``prefill_instance_chips`` (tensor-parallel), each prefilling one prompt at a time,
    and the prompt's KV cache moves to the decode replica over the scale-out network. Throughput per
    chip counts both pools; ``prefill_chips = 0`` leaves the prefill pool out (a measurement of the
    decode pool alone, with prefill capacity to spare).
    """

    prefill_chips: int = Field(default=0, ge=0, le=65_536)
    prefill_instance_chips: int = Field(default=8, ge=1, le=65_536)
    prefill_parallel: Parallelism = Field(default_factory=Parallelism)

    @property
    def prefill_instances(self) -> int:
        """Prefill instances in the pool (at least one, even when the pool is not counted)."""
        return max(1, self.prefill_chips // self.prefill_instance_chips)
