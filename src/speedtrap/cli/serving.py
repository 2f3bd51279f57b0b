"""``speedtrap backends`` and ``speedtrap pareto``: the serving physics of the backend presets, and
a model's tokens/s per user against throughput per chip on some hardware."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    JsonOption,
    bad_input_exits,
    fail,
    print_json,
    print_table,
)
from speedtrap.cli.serving_intervals import describe, footnote, interval_cell, interval_record, unit_intervals

if TYPE_CHECKING:  # imported where used, so that `speedtrap --help` starts fast
    import pandas as pd

    from speedtrap.config.backend import Backend

MAX_CHIPS_PER_REPLICA = 65_536
"""``--chips`` bound: :data:`speedtrap.config.backend.MAX_CHIPS_PER_REPLICA` (a test checks they agree;
not imported, so that ``speedtrap --help`` does not load the specs)."""
MAX_PRICE_USD_PER_MTOK = 10_000.0
"""``--price-out`` bound, USD per million output tokens: 60× the dearest published list price
(fast mode's $150/MTok) and more, so that a slip such as ``inf`` or ``1e300`` is refused."""
MIN_PRICE_USD_PER_MTOK = 0.001
"""Least non-zero ``--price-out``, USD per million output tokens (0 is free): a tenth of a cent,
below the cheapest published list prices (a few cents per MTok for small open models), so that a
slip such as ``1e-300`` is refused rather than printed back."""
MAX_BYTES_PER_ELEMENT = 8.0
"""``--weight-bytes``, ``--expert-bytes`` and ``--kv-bytes`` bound: fp64, the widest format stored."""
MAX_UNCACHED_TOKENS = 10_000_000
"""``--uncached-tokens`` bound: ten times the longest context window of any preset (1M tokens)."""

TYPICAL_UNCACHED_TOKENS = 4_000
"""Assumption: new (uncached) input of a typical agent turn, tokens: the last tool output and the
previous turn's output; the rest of the ≈96k-token context is read from the prompt cache."""


# --- backends ---------------------------------------------------------------------------------


def backend_row(backend: Backend, *, uncached_tokens: int) -> dict[str, Any]:
    """One backend's derived numbers at its typical load (the ``backends --json`` record)."""
    from speedtrap.serving.replica import ReplicaPhysics

    physics = ReplicaPhysics.from_backend(backend)
    batch, context = backend.typical_batch, backend.typical_context_tokens
    tier = backend.tier()
    return {
        "name": backend.name,
        "hardware": backend.hardware.name,
        "model": backend.llm.name,
        "chips_per_replica": backend.chips,
        "serving_chips": physics.counted_chips,
        "replicas": backend.replicas,
        "typical_batch": batch,
        "typical_context_tokens": context,
        "kv_batch_cap": physics.max_batch(context),
        "tok_s_per_stream": physics.decode_rate_tok_s(batch, context),
        "ttft_s": physics.ttft_s(uncached_tokens),
        "tok_s_per_chip": physics.throughput_tok_s_per_chip(batch, context),
        "bound": physics.bound(batch, context),
        "tier": tier.name,
        "price_multiplier": tier.price_multiplier,
        "input_usd_per_mtok": backend.price.input_usd_per_mtok * tier.price_multiplier,
        "output_usd_per_mtok": backend.price.output_usd_per_mtok * tier.price_multiplier,
        "failure_multiplier": backend.quality.failure_multiplier,
        "tool_error_prob": backend.quality.tool_error_prob,
    }


_BACKEND_TABLE: list[tuple[str, str]] = [
    ("backend", "name"),
    ("hardware", "hardware"),
    ("model", "model"),
    ("chips/replica (+ prefill)", "serving_chips"),
    ("batch (streams)", "typical_batch"),
    ("context (tok)", "typical_context_tokens"),
    ("tok/s per stream", "tok_s_per_stream"),
    ("TTFT (s)", "ttft_s"),
    ("tok/s per chip", "tok_s_per_chip"),
    ("tier", "tier"),
    ("in ($/MTok)", "input_usd_per_mtok"),
    ("out ($/MTok)", "output_usd_per_mtok"),
    ("price (×)", "price_multiplier"),
    ("failures (×)", "failure_multiplier"),
]


def backends(
    json_out: JsonOption = False,
    uncached_tokens: Annotated[
        int,
        typer.Option(
            "--uncached-tokens",
            min=0,
            max=MAX_UNCACHED_TOKENS,
            help="New input tokens of the request whose TTFT is shown.",
        ),
    ] = TYPICAL_UNCACHED_TOKENS,
) -> None:
    """Show each backend preset's speed, time to first token and price, derived from the physics.

    Speeds are at the preset's typical load (typical batch of streams per replica at the typical
    context), at the default tier; TTFT is without queueing.

    JSON (--json), schema_version 1: {"schema_version": 1, "uncached_tokens": int, "backends": [
    {"name", "hardware", "model": str, "chips_per_replica" (decoding), "serving_chips" (with the
    prefill pool), "replicas", "typical_batch" (streams), "typical_context_tokens", "kv_batch_cap"
    (streams at the typical context): int,
    "tok_s_per_stream", "ttft_s", "tok_s_per_chip": float, "bound": "memory"|"compute"|"latency",
    "tier": str, "price_multiplier", "input_usd_per_mtok", "output_usd_per_mtok" (tier price, USD per
    million tokens), "failure_multiplier", "tool_error_prob": float}]}.
    """
    from speedtrap.config.presets import BACKEND_PRESETS

    rows = [backend_row(backend, uncached_tokens=uncached_tokens) for backend in BACKEND_PRESETS.values()]
    if json_out:
        print_json(
            {"schema_version": JSON_SCHEMA_VERSION, "uncached_tokens": uncached_tokens, "backends": rows}
        )
        return
    print_table(
        f"Backends at their typical load (TTFT for {uncached_tokens:,} uncached tokens)",
        [header for header, _ in _BACKEND_TABLE],
        [[row[key] for _, key in _BACKEND_TABLE] for row in rows],
    )


# --- pareto -----------------------------------------------------------------------------------

_PARETO_HEADERS: dict[str, str] = {
    "batch": "batch (streams)",
    "tok_s_per_user": "tok/s per user",
    "tok_s_per_replica": "tok/s per replica",
    "tok_s_per_chip": "tok/s per chip",
    "step_s": "step (s)",
    "bound": "bound",
    "ttft_s": "TTFT (s)",
    "ttft_median_s": "TTFT median (s)",
    "cost_usd_per_mtok": "cost $/MTok out",
    "tok_s_per_user_interval": "tok/s per user, 95% PI",
    "tok_s_per_chip_interval": "tok/s per chip, 95% PI",
}
MIN_FRONTIER_POINTS = 3
PRECISION_OPTIONS = {
    "weight_bytes": "bytes_per_param",
    "expert_bytes": "expert_bytes_per_param",
    "compute_dtype": "compute_dtype",
    "kv_bytes": "kv_bytes_per_element",
}


def _spec_table(table: Any, kind: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ValueError(f'[{kind}] must be a table of {kind} fields (or preset = "name")')
    return dict(table)


SPEC_TABLES = ("model", "hardware", "parallel", "disaggregation", "speculative")
"""Tables of a ``pareto --spec`` file: the model and hardware (fields, or ``preset = "name"`` plus
overrides), the replica's parallel layout, a separate prefill pool and speculative decoding (the fields
of :mod:`speedtrap.config.parallel` and :class:`speedtrap.config.backend.SpeculativeDecoding`)."""


def load_pareto_specs(path: Path) -> dict[str, dict[str, Any]]:
    """The tables of a TOML spec file (:data:`SPEC_TABLES`), each as a dict (absent: empty)."""
    from speedtrap.config.toml_file import read_toml

    data = read_toml(path)
    unknown = sorted(set(data) - set(SPEC_TABLES))
    if unknown:
        raise ValueError(
            f"{path}: unknown tables {unknown} (expected {', '.join(f'[{t}]' for t in SPEC_TABLES)})"
        )
    return {table: _spec_table(data.get(table, {}), table) for table in SPEC_TABLES}


def _resolve_spec(fields: dict[str, Any], name: str | None, kind: str) -> Any:
    from speedtrap.config.hardware import Hardware
    from speedtrap.config.llm import LLM

    preset = fields.pop("preset", None) or (name if not fields.get("name") else None)
    if preset is not None:
        from speedtrap.config.catalog import hardware_preset, llm_preset

        base = llm_preset(preset) if kind == "model" else hardware_preset(preset)
        return base.with_overrides(fields) if fields else base
    if not fields:
        raise ValueError(f"give --{kind} or a [{kind}] table in --spec")
    return LLM.model_validate(fields) if kind == "model" else Hardware.model_validate(fields)


def pareto_backend(
    model: str | None,
    hardware: str | None,
    *,
    context: int | None,
    chips: int | None,
    spec: Path | None = None,
    llm_overrides: dict[str, Any] | None = None,
    context_option: str = "--context",
) -> Backend:
    """A one-stream backend of the model on the hardware (presets, a TOML spec file, overrides):
    validates the fit and derives chips; ``context_option`` names what set ``context`` in errors."""
    tables = load_pareto_specs(spec) if spec is not None else {table: {} for table in SPEC_TABLES}
    model_fields, hardware_fields = tables["model"], tables["hardware"]
    llm = _resolve_spec(model_fields, model, "model")
    if llm_overrides:
        llm = llm.with_overrides(llm_overrides)
    hw = _resolve_spec(hardware_fields, hardware, "hardware")
    from speedtrap.config.backend import Backend
    from speedtrap.config.presets import AGENT_CONTEXT_TOKENS

    context_tokens = min(AGENT_CONTEXT_TOKENS, llm.context_window_tokens) if context is None else context
    if context_tokens > llm.context_window_tokens:
        raise ValueError(
            f"{context_option}: a mean context of {context_tokens:,} tokens exceeds {llm.name}'s context "
            f"window of {llm.context_window_tokens:,}"
        )
    return Backend(
        name=f"{llm.name}@{hw.name}",
        hardware=hw,
        llm=llm,
        typical_batch=1,
        typical_context_tokens=context_tokens,
        chips_per_replica=chips,
        parallel=tables["parallel"],
        disaggregation=tables["disaggregation"] or None,
        speculative=tables["speculative"] or None,
        ttft_overhead_s=0.0,  # the frontier shows the replica's physics, not an API's network time
    )


def frontier_warning(frame: pd.DataFrame, *, cap: int, context: float, explicit: bool) -> str | None:
    """Why a frontier has fewer than three points (``None`` when it has enough)."""
    if len(frame) >= MIN_FRONTIER_POINTS:
        return None
    if explicit:
        return f"only {len(frame)} point(s): only the batches given with --batch"
    return (
        f"only {len(frame)} point(s): the KV-memory cap at {context:,.0f} context tokens is {cap} stream(s)"
        " beside the weights; give --chips, a shorter --context/--isl/--osl, or a smaller --kv-bytes"
    )


def pareto(
    model: Annotated[str | None, typer.Option("--model", help="Model preset name.")] = None,
    hardware: Annotated[str | None, typer.Option("--hardware", help="Hardware preset name.")] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            exists=True,
            dir_okay=False,
            help='TOML file with "model" and "hardware" tables (fields, or preset = "name" + overrides).',
        ),
    ] = None,
    context: Annotated[
        int | None,
        typer.Option(
            "--context", min=1, help="Mean context per stream, tokens [default: min(96000, window)]."
        ),
    ] = None,
    isl: Annotated[
        int | None, typer.Option("--isl", min=1, help="Uncached input tokens per request (with --osl).")
    ] = None,
    osl: Annotated[
        int | None, typer.Option("--osl", min=1, help="Output tokens per request (with --isl).")
    ] = None,
    cached: Annotated[
        int,
        typer.Option(
            "--cached",
            min=0,
            max=MAX_UNCACHED_TOKENS,
            help="Prompt-cache tokens before each request's --isl.",
        ),
    ] = 0,
    chips: Annotated[
        int | None,
        typer.Option(
            "--chips", min=1, max=MAX_CHIPS_PER_REPLICA, help="Chips per replica [default: fewest that fit]."
        ),
    ] = None,
    batch: Annotated[
        list[int] | None,
        typer.Option(
            "--batch", min=1, help="A batch size to evaluate (repeatable) [default: powers of two]."
        ),
    ] = None,
    weight_bytes: Annotated[
        float | None,
        typer.Option(
            "--weight-bytes",
            min=0.01,
            max=MAX_BYTES_PER_ELEMENT,
            help="Bytes per always-read weight (attention, shared experts; routed experts too unless set).",
        ),
    ] = None,
    expert_bytes: Annotated[
        float | None,
        typer.Option(
            "--expert-bytes", min=0.01, max=MAX_BYTES_PER_ELEMENT, help="Bytes per routed-expert weight."
        ),
    ] = None,
    compute_dtype: Annotated[
        str | None, typer.Option("--compute-dtype", help="Compute dtype (a key of the hardware's FLOP/s).")
    ] = None,
    kv_bytes: Annotated[
        float | None,
        typer.Option("--kv-bytes", min=0.01, max=MAX_BYTES_PER_ELEMENT, help="KV-cache bytes per element."),
    ] = None,
    experts: Annotated[int | None, typer.Option("--experts", min=1, help="Routed experts per layer.")] = None,
    experts_per_token: Annotated[
        int | None, typer.Option("--experts-per-token", min=1, help="Routed experts per token.")
    ] = None,
    price_out: Annotated[
        float,
        typer.Option(
            "--price-out",
            min=0.0,
            max=MAX_PRICE_USD_PER_MTOK,
            help="Output list price beside the cost, USD/MTok.",
        ),
    ] = 25.0,
    stack: Annotated[
        str | None,
        typer.Option(
            "--stack",
            help="Serving stack (TensorRT-LLM, vLLM, SGLang, ATOM) whose held-out errors set the intervals "
            "[default: the hardware vendor's].",
        ),
    ] = None,
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            help="A backend preset with a fast tier (gpu-fast): each mechanism's share of its faster steps.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Trace tokens/s per user against throughput per chip by sweeping the batch (powers of two up to
    the KV-memory cap, plus the cap, or the --batch sizes), with time to first token (no network
    time) and the chip cost of a million output tokens beside the list price. With --isl/--osl the
    steps also carry the other requests' prompts (steady load: a share of the steps carries a prompt
    chunk, the rest none) and time to first token queues: for the prefill server (an M/D/1 wait,
    mean and median) and, beyond the KV-memory cap, for admission; without them it is one prompt of
    the whole context, unqueued. Throughput counts output tokens only. Each tok/s per user and per
    chip carries its 95% prediction interval for the measured speed: the prediction divided by the
    97.5% and 2.5% quantiles of the ratio predicted / measured over the held-out rows of `speedtrap
    validate serving` (leave one configuration group out) on the hardware's vendor (and --stack),
    with the count they rest on.

    JSON (--json), schema_version 1: {"schema_version": 1, "model", "hardware": str,
    "chips_per_replica", "context_tokens", "kv_batch_cap" (streams), "cached_tokens": int, "isl_tokens",
    "osl_tokens": int|null, "price_usd_per_mtok", "usd_per_chip_hour": float, "warning": str|null,
    "points": [{"batch" (streams): int, "tok_s_per_user", "tok_s_per_replica", "tok_s_per_chip"
    (output tokens/s), "step_s" (s per output token), "ttft_s" (mean, s), "ttft_median_s" (s),
    "cost_usd_per_mtok" (USD per
    million output tokens, null without a chip price): float, "bound": "memory"|"compute"|"latency",
    "tok_s_per_user_interval", "tok_s_per_chip_interval": {"low", "high"} (tok/s)}],
    "prediction_intervals": {"tok_s_per_user", "tok_s_per_chip": {"level", "log_error_q025",
    "log_error_q975" (quantiles of ln(predicted/measured)), "factor_low", "factor_high" (interval ends per
    unit predicted), "residuals" (count): number, "scope": str, "rough": bool (fewer than 10)}}}.

    --explain BACKEND ignores the model and hardware options: it compares the preset with its standard
    tier (gpu-fast with gpu-batched) and prints each mechanism's share of the change in time per output
    token (smaller batch, priority admission, speculative decoding, newer hardware) and the terms of
    both steps; with --isl/--osl (and --cached) under the steady-load rule (JSON: see
    speedtrap.cli.serving_explain).
    """
    from speedtrap.serving.pareto import PARETO_COLUMNS, pareto_frontier
    from speedtrap.serving.replica import ReplicaPhysics

    if explain is not None:
        from speedtrap.cli.serving_explain import explain_command

        with bad_input_exits():
            if (isl is None) != (osl is None):
                raise ValueError("give --isl and --osl together")
            explain_command(explain, isl=isl, osl=osl, cached=cached, json_out=json_out, stack=stack)
        return

    if 0.0 < price_out < MIN_PRICE_USD_PER_MTOK:
        fail(f"--price-out {price_out:g}: give 0 (free) or at least ${MIN_PRICE_USD_PER_MTOK:g} per MTok")
    chosen = {
        "weight_bytes": weight_bytes,
        "expert_bytes": expert_bytes,
        "compute_dtype": compute_dtype,
        "kv_bytes": kv_bytes,
    }
    overrides: dict[str, Any] = {PRECISION_OPTIONS[k]: v for k, v in chosen.items() if v is not None}
    if experts is not None:
        overrides["experts"] = experts
    if experts_per_token is not None:
        overrides["experts_per_token"] = experts_per_token
    with bad_input_exits():
        if (isl is None) != (osl is None):
            raise ValueError("give --isl and --osl together")
        mean_context = None if isl is None or osl is None else math.ceil(cached + isl + osl / 2)
        backend = pareto_backend(
            model,
            hardware,
            context=mean_context or context,
            chips=chips,
            spec=spec,
            llm_overrides=overrides,
            context_option="--cached/--isl/--osl (mean context: cached + isl + osl/2)"
            if mean_context
            else "--context",
        )
        physics = ReplicaPhysics.from_backend(backend)
        context_tokens = backend.typical_context_tokens
        usd_per_chip_hour = backend.hardware.usd_per_chip_hour or None
        frame = pareto_frontier(
            physics,
            context_tokens,
            batch,
            isl=isl,
            osl=osl,
            usd_per_chip_hour=usd_per_chip_hour,
            cached_tokens=float(cached),
        )
        cap = physics.max_batch(context_tokens if isl is None or osl is None else cached + isl + osl / 2)
        units = unit_intervals(backend.hardware.name, stack)
    warning = frontier_warning(frame, cap=cap, context=context_tokens, explicit=batch is not None)
    if json_out:
        points = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in point.items()}
            | {f"{c}_interval": interval_record(unit, float(point[c])) for c, unit in units.items()}
            for point in frame.to_dict(orient="records")
        ]
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "model": backend.llm.name,
                "hardware": backend.hardware.name,
                "chips_per_replica": backend.chips,
                "context_tokens": context_tokens,
                "kv_batch_cap": cap,
                "isl_tokens": isl,
                "osl_tokens": osl,
                "cached_tokens": cached,
                "price_usd_per_mtok": price_out,
                "usd_per_chip_hour": backend.hardware.usd_per_chip_hour,
                "warning": warning,
                "points": points,
                "prediction_intervals": describe(units),
            }
        )
        return
    shape = (
        f"{isl:,} in / {osl:,} out" + (f" after {cached:,} cached" if cached else "")
        if isl is not None and osl is not None
        else f"{context_tokens:,} context tokens"
    )
    columns = [
        *PARETO_COLUMNS[:2],
        "tok_s_per_user_interval",
        *PARETO_COLUMNS[2:4],
        "tok_s_per_chip_interval",
    ]
    columns += PARETO_COLUMNS[4:]
    shown_rows = [
        [
            interval_cell(units[c.removesuffix("_interval")], float(point[c.removesuffix("_interval")]))
            if c.endswith("_interval")
            else point[c]
            for c in columns
        ]
        for point in frame.to_dict(orient="records")
    ]
    print_table(
        f"{backend.llm.name} on {backend.chips}× {backend.hardware.name} at {shape}"
        f" (list price ${price_out:g}/MTok out)",
        [_PARETO_HEADERS[c] for c in columns],
        shown_rows,
    )
    typer.echo(footnote(units))
    if warning is not None:
        typer.echo(f"warning: {warning}", err=True)
