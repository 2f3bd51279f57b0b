"""The ``speedtrap`` command: one small function per subcommand, shared helpers for output and errors.

Bad input (an unknown preset, a model that does not fit) prints one line to stderr and exits
with status 2; ``--json`` output follows a versioned schema documented in each command's help.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from speedtrap.config.backend import Backend
from speedtrap.config.presets import AGENT_CONTEXT_TOKENS, BACKEND_PRESETS, hardware_preset, llm_preset
from speedtrap.serving.pareto import PARETO_COLUMNS, pareto_frontier
from speedtrap.serving.replica import ReplicaPhysics

JSON_SCHEMA_VERSION = 1
TYPICAL_UNCACHED_TOKENS = 4_000
"""Assumption: new (uncached) input of a typical agent turn, tokens: the last tool output and the
previous turn's output; the rest of the ≈96k-token context is read from the prompt cache."""

BAD_INPUT_EXIT_CODE = 2
WIDE_OUTPUT_COLUMNS = 240

app = typer.Typer(
    name="speedtrap",
    help="Simulate developers working with LLM coding agents: is fast inference worth it?",
    no_args_is_help=True,
    add_completion=False,
)

# --- shared helpers ---------------------------------------------------------------------------


def fail(message: str) -> NoReturn:
    """Print one line to stderr and exit with status 2 (bad input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(BAD_INPUT_EXIT_CODE)


def one_line(exc: Exception) -> str:
    """A one-line description of a validation or lookup error, with the field paths."""
    if isinstance(exc, ValidationError):
        parts = []
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"])
            msg = error["msg"].removeprefix("Value error, ")
            parts.append(f"{path}: {msg}" if path else msg)
        return "; ".join(parts)
    return str(exc).strip("'\"")


@contextmanager
def bad_input_exits() -> Iterator[None]:
    """Turn validation/lookup errors raised inside the block into :func:`fail`."""
    try:
        yield
    except (ValidationError, ValueError, KeyError) as exc:
        fail(one_line(exc))


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented JSON on stdout."""
    typer.echo(json.dumps(payload, indent=2))


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a rich table; floats are shown with four significant digits (whole numbers from 1000)."""
    table = Table(title=title)
    for i, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=i == 0)  # the first column names the row
    for row in rows:
        table.add_row(*(_cell(value) for value in row))
    console = Console()
    if not console.is_terminal:
        console = Console(width=WIDE_OUTPUT_COLUMNS)  # piped output: do not fold the columns
    console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return str(value)


JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON (schema in this command's help).")]

# --- backends ---------------------------------------------------------------------------------


def backend_row(backend: Backend, *, uncached_tokens: int) -> dict[str, Any]:
    """One backend's derived numbers at its typical load (the ``backends --json`` record)."""
    physics = ReplicaPhysics.from_backend(backend)
    batch, context = backend.typical_batch, backend.typical_context_tokens
    tier = backend.tier()
    return {
        "name": backend.name,
        "hardware": backend.hardware.name,
        "model": backend.llm.name,
        "chips_per_replica": backend.chips,
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
    ("chips/replica", "chips_per_replica"),
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


@app.command()
def backends(
    json_out: JsonOption = False,
    uncached_tokens: Annotated[
        int,
        typer.Option("--uncached-tokens", min=0, help="New input tokens of the request whose TTFT is shown."),
    ] = TYPICAL_UNCACHED_TOKENS,
) -> None:
    """Show each backend preset's speed, time to first token and price, derived from the physics.

    Speeds are at the preset's typical load (typical batch of streams per replica at the typical
    context), at the default tier; TTFT is without queueing.

    JSON (--json), schema_version 1: {"schema_version": 1, "uncached_tokens": int, "backends": [
    {"name", "hardware", "model": str, "chips_per_replica", "replicas", "typical_batch" (streams),
    "typical_context_tokens", "kv_batch_cap" (streams at the typical context): int,
    "tok_s_per_stream", "ttft_s", "tok_s_per_chip": float, "bound": "memory"|"compute"|"latency",
    "tier": str, "price_multiplier", "input_usd_per_mtok", "output_usd_per_mtok" (tier price, USD per
    million tokens), "failure_multiplier", "tool_error_prob": float}]}.
    """
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
}


def pareto_backend(model: str, hardware: str, *, context: int | None, chips: int | None) -> Backend:
    """A one-stream backend of ``model`` on ``hardware``: validates the fit and derives chips."""
    llm = llm_preset(model)
    context_tokens = min(AGENT_CONTEXT_TOKENS, llm.context_window_tokens) if context is None else context
    return Backend(
        name=f"{model}@{hardware}",
        hardware=hardware_preset(hardware),
        llm=llm,
        typical_batch=1,
        typical_context_tokens=context_tokens,
        chips_per_replica=chips,
    )


@app.command()
def pareto(
    model: Annotated[str, typer.Option("--model", help="Model preset name.")],
    hardware: Annotated[str, typer.Option("--hardware", help="Hardware preset name.")],
    context: Annotated[
        int | None,
        typer.Option(
            "--context", min=1, help="Mean context per stream, tokens [default: min(96000, window)]."
        ),
    ] = None,
    chips: Annotated[
        int | None, typer.Option("--chips", min=1, help="Chips per replica [default: fewest that fit].")
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Trace tokens/s per user against throughput per chip by sweeping the batch (powers of two up to
    the KV-memory cap, plus the cap).

    JSON (--json), schema_version 1: {"schema_version": 1, "model", "hardware": str,
    "chips_per_replica", "context_tokens", "kv_batch_cap" (streams): int, "points": [{"batch"
    (streams): int, "tok_s_per_user", "tok_s_per_replica", "tok_s_per_chip" (output tokens/s),
    "step_s" (decode step, s): float, "bound": "memory"|"compute"|"latency"}]}.
    """
    with bad_input_exits():
        backend = pareto_backend(model, hardware, context=context, chips=chips)
        physics = ReplicaPhysics.from_backend(backend)
        frame = pareto_frontier(physics, backend.typical_context_tokens)
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "model": model,
                "hardware": hardware,
                "chips_per_replica": backend.chips,
                "context_tokens": backend.typical_context_tokens,
                "kv_batch_cap": physics.max_batch(backend.typical_context_tokens),
                "points": frame.to_dict(orient="records"),
            }
        )
        return
    print_table(
        f"{model} on {backend.chips}× {hardware} at {backend.typical_context_tokens:,} context tokens",
        [_PARETO_HEADERS[c] for c in PARETO_COLUMNS],
        list(frame.itertuples(index=False, name=None)),
    )


# --- entry point ------------------------------------------------------------------------------


def main() -> None:
    """Console-script entry point (``speedtrap``)."""
    app()
