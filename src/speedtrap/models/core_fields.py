"""Which fields of a :class:`~speedtrap.config.scenario.Scenario` the typed core reads (issue 41).

Every leaf field of the scenario's spec tree (``[*]`` stands for any backend, difficulty or tier) is
in exactly one of three lists, and ``tests/models/test_engine_fields.py`` walks the pydantic tree
and fails on a field in none of them, so a field added to the spec must be classified here before
the suite passes:

* :data:`CORE_READS`: the typed core's run reads it, in its own C code or through the Python it
  shares with the Mesa model (the task source, the attention rule, the roofline physics
  ``ReplicaPhysics.from_backend``, the tier's admission and price, the summary). Any value is
  followed rule for rule; the randomised differential test draws them.
* :data:`MESA_ONLY`: only the Mesa model reads it; the core runs only the values given here (the
  spec's default first). A scenario with another value runs on the Mesa model, and
  :func:`~speedtrap.models.typed_core.not_covered` names the field.
* :data:`NEITHER`: no engine's run reads it (labels, dates, the serving command's typical load, the
  value of a developer's time): it cannot make the engines differ.

The policy is classified by kind: ``policy.kind`` is :data:`MESA_ONLY` (the core routes ``always``,
``fast_share``, ``interactive_fast`` and ``background_slow``, which keep one backend and choose its
tier by developer or by turn, and runs ``manual``, which has no fields), and the fields of those specs
are :data:`CORE_READS`; the fields of other kinds need no entry, as any other kind already runs on the
Mesa model.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from speedtrap.config.scenario import Scenario

__all__ = ["CORE_READS", "MESA_ONLY", "NEITHER", "field_values", "mesa_only_field"]


def _under(prefix: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{name}" for name in names)


def _lognormal(*paths: str) -> tuple[str, ...]:
    return tuple(f"{path}.{part}" for path in paths for part in ("median", "sigma"))


_PARALLEL = (
    "attention_data_parallel",
    "expert_parallel",
    "dispatch_bytes",
    "overlap_communication",
    "prefill_chunk_tokens",
)

CORE_READS: frozenset[str] = frozenset(
    (
        "developers",
        "horizon_s",
        "workday_s",  # the summary's developer-days (shared)
        *_under(
            "developer",
            "checkin_every_turns",
            "checkin_random",
            "stretch_sigma",
            "stretches_per_transcript",
            "reject_prob",
            "delegated_fraction",  # hand work beside the agent
        ),
        "developer.manual.escape_prob",  # the manual policy's defects
        *_lognormal(
            "developer.prompt_s",
            "developer.checkin_s",
            "developer.attention.patience_s",
            "developer.attention.away_s",
            "developer.fixing.hand_fix_s",
            "developer.fixing.diagnose_s",
            "task_mix.effort_s",
            "task_mix.initial_context_tokens",
            "task_mix.output_tokens",
            "task_mix.tool_result_tokens",
            "task_mix.tool_s",
        ),
        *_under(  # through the developer's AttentionRule, as the Mesa model's
            "developer.attention",
            "patience_episode_sigma",
            "turn_prior_s",
            "turn_memory",
            "flow_threshold_s",
            "max_parallel_sessions",
            "parallel_sessions_probs",
            "other_work_prob",
            "notice_prob",
            "cued_resumption",
            "resumption_max_s",
            "resumption_tau_s",
            "resumption_short_s",
            "resumption_short_scale_s",
            "other_work_resumption_max_s",
            "resumption_random",
        ),
        *_under("developer.review", "base_s", "s_per_kilotoken", "sigma", "detect_prob"),
        *_under(
            "developer.fixing",
            "hand_fix_prob",
            "max_repair_sessions",
            "escape_delay_s",
            "redo_prob",
            "rework_multiplier",
        ),
        *_under(  # through the TaskSource and TaskMix.agent_minutes, as the Mesa model's
            "task_mix",
            "sizing",
            "reference_effort_s",
            "turns_at_reference",
            "turns_exponent",
            "turns_log_sd",
            "failed_turns_multiplier",
            "repair_turns_fraction",
            "compact_at_fraction",
            "compact_to_tokens",
            "cache_ttl_s",
            "shared_prefix_tokens",
        ),
        *_under("task_mix.difficulties[*]", "max_effort_s", "share", "turns_mean", "human_length_s"),
        *_under(  # the roofline physics (ReplicaPhysics.from_backend), shared with the serving pool
            "backends[*].hardware",
            "memory_kind",
            "memory_gb",
            "memory_bandwidth_tb_s",
            "peak_tflop_s",
            "eta_mem",
            "eta_flop",
            "prefill_eta_flop",
            "usable_memory_fraction",
            "step_overhead_s",
            "layer_latency_s",
            "multichip_layer_latency_s",
            "token_latency_floor_s",
            "request_overhead_s",
            "interconnect_bandwidth_gb_s",
            "collective_latency_s",
            "scale_up_domain_chips",
            "scale_out_bandwidth_gb_s",
            "scale_out_latency_s",
            "gemm_half_tokens",
            "overlap_efficiency",
            "spatial_layers",
            "wafer_hop_s",
        ),
        *_under(
            "backends[*].llm",
            "total_params_b",
            "active_params_b",
            "bytes_per_param",
            "compute_dtype",
            "layers",
            "kv_heads",
            "head_dim",
            "kv_bytes_per_element",
            "context_window_tokens",  # also the compaction threshold
            "experts",
            "experts_per_token",
            "query_heads",
            "hidden_size",
            "sliding_window_tokens",
            "sliding_window_layers",
            "activation_bytes",
            "expert_bytes_per_param",
            "expert_compute_dtype",
            "attention_compute_dtype",
            "kv_lora_rank",
            "qk_rope_head_dim",
            "qk_nope_head_dim",
            "v_head_dim",
        ),
        *_under("backends[*].speculative", "acceptance_rate", "draft_tokens", "draft_cost"),
        *_under("backends[*].parallel", *_PARALLEL),
        *_under("backends[*].disaggregation", "prefill_chips", "prefill_instance_chips"),
        *_under("backends[*].disaggregation.prefill_parallel", *_PARALLEL),
        *_under(  # the tier's admission (TierAdmission) and the route (AlwaysSpec)
            "backends[*].tiers[*]", "name", "priority", "batch_cap", "price_multiplier"
        ),
        *_under(
            "backends[*]",
            "default_tier",
            "chips_per_replica",
            "replicas",
            "background_streams_per_replica",
            "ttft_overhead_s",
            "cache_writes",
            "decode_speedup",
        ),
        *_under(  # the price of the cache's lifetime (Price.for_cache_ttl)
            "backends[*].price",
            "input_usd_per_mtok",
            "output_usd_per_mtok",
            "cache_read_usd_per_mtok",
            "cache_write_usd_per_mtok",
            "long_cache_write_usd_per_mtok",
        ),
        *_under(
            "backends[*].quality",
            "horizon_min",
            "horizon_slope",
            "acceptance_scale",
            "failure_multiplier",
            "autonomy",
            "tool_error_prob",
        ),
        *_under(  # the routes (AlwaysSpec, FastShareSpec, InteractiveFastSpec, BackgroundSlowSpec)
            "policy",
            "backend",
            "tier",
            "share",
            "fast_tier",
            "standard_tier",
            "interactive_tier",
            "background_tier",
        ),
    )
)
"""Fields the typed core reads (module docstring)."""

MESA_ONLY: dict[str, tuple[Any, ...]] = {
    "developer.attention.rule": ("expected_wait",),  # the threshold rule's decisions
    "task_mix.cache_per_tier": (True,),  # the prompt cache's key under several tiers
    # every other routing policy (a session's route depends on its task, or fans out)
    "policy.kind": ("always", "manual", "fast_share", "interactive_fast", "background_slow"),
}
"""Fields only the Mesa model reads, each with the values the typed core runs, the spec's default
first (module docstring)."""

NEITHER: frozenset[str] = frozenset(
    (
        "name",
        "backends[*].name",
        "backends[*].hardware.name",
        "backends[*].hardware.usd_per_chip_hour",  # the serving command's economics
        "backends[*].llm.name",
        "backends[*].tiers[*].as_of",
        "backends[*].as_of",
        "backends[*].typical_batch",  # the serving command's typical load
        "backends[*].typical_context_tokens",
        *_under(
            "value",
            "usd_per_dev_hour",
            "usd_per_dev_hour_low",
            "usd_per_dev_hour_high",
            "usd_per_task",
            "workdays_per_month",
        ),
    )
)
"""Fields no engine's run reads (module docstring)."""


def field_values(node: Any, path: str) -> Iterator[Any]:
    """The values of ``path`` in ``node`` (a spec): ``[*]`` runs over a mapping's values or a list's
    items; a ``None`` on the way (an optional sub-spec left out) gives nothing."""
    head, _, rest = path.partition(".")
    many = head.endswith("[*]")
    value = getattr(node, head.removesuffix("[*]"))
    items = (list(value.values()) if isinstance(value, dict) else list(value)) if many else [value]
    for item in items:
        if not rest:
            yield item
        elif item is not None:
            yield from field_values(item, rest)


def mesa_only_field(scenario: Scenario) -> str | None:
    """The first :data:`MESA_ONLY` field ``scenario`` sets to another value than the one the core
    runs, as ``"path = value (the typed core runs only default)"``, or ``None``."""
    for path, runs in MESA_ONLY.items():
        for value in field_values(scenario, path):
            if value not in runs:
                return f"{path} = {value!r} (the typed core runs only {' or '.join(map(repr, runs))})"
    return None
