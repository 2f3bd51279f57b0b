"""The ``speedtrap`` command: one small function per subcommand, shared helpers for output and errors.

Bad input (an unknown preset, a model that does not fit) prints one line to stderr and exits
with status 2; ``--json`` output follows a versioned schema documented in each command's help.
"""

from __future__ import annotations

import json
import math
import sys
import tomllib
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from speedtrap.cli.help import HelpTyper
from speedtrap.provenance import provenance

if TYPE_CHECKING:  # imported where used, so that `speedtrap --help` starts fast
    import pandas as pd

    from speedtrap.config.backend import Backend
    from speedtrap.config.scenario import Scenario

JSON_SCHEMA_VERSION = 1
TYPICAL_UNCACHED_TOKENS = 4_000
"""Assumption: new (uncached) input of a typical agent turn, tokens: the last tool output and the
previous turn's output; the rest of the ≈96k-token context is read from the prompt cache."""

BAD_INPUT_EXIT_CODE = 2
WIDE_OUTPUT_COLUMNS = 240

app = HelpTyper(
    name="speedtrap",
    help="Simulate developers working with LLM coding agents: is fast inference worth it?",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(show: bool) -> None:
    if show:
        from speedtrap import __version__

        typer.echo(f"speedtrap {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Simulate developers working with LLM coding agents: is fast inference worth it?"""


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


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by ``None`` (JSON ``null``), recursively:
    standard JSON has no NaN or Infinity, and strict parsers refuse them."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def print_json(payload: Any) -> None:
    """Print ``payload`` as indented, strict JSON on stdout (NaN and infinities become ``null``)."""
    typer.echo(json.dumps(json_safe(payload), indent=2, allow_nan=False))


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
    from speedtrap.serving.replica import ReplicaPhysics

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
    "cost_usd_per_mtok": "cost $/MTok out",
}
MIN_FRONTIER_POINTS = 3
PRECISION_OPTIONS = {
    "weight_bytes": "bytes_per_param",
    "compute_dtype": "compute_dtype",
    "kv_bytes": "kv_bytes_per_element",
}


def _spec_table(table: Any, kind: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise ValueError(f'[{kind}] must be a table of {kind} fields (or preset = "name")')
    return dict(table)


def load_pareto_specs(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``[model]`` and ``[hardware]`` tables of a TOML spec file; each is either full fields or
    ``preset = "name"`` plus overrides of that preset's fields."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    unknown = sorted(set(data) - {"model", "hardware"})
    if unknown:
        raise ValueError(f"{path}: unknown tables {unknown} (expected [model] and [hardware])")
    return _spec_table(data.get("model", {}), "model"), _spec_table(data.get("hardware", {}), "hardware")


def _resolve_spec(fields: dict[str, Any], name: str | None, kind: str) -> Any:
    from speedtrap.config.hardware import Hardware
    from speedtrap.config.llm import LLM

    preset = fields.pop("preset", None) or (name if not fields.get("name") else None)
    if preset is not None:
        from speedtrap.config.presets import hardware_preset, llm_preset

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
) -> Backend:
    """A one-stream backend of the model on the hardware (presets, a TOML spec file, overrides):
    validates the fit and derives chips."""
    model_fields, hardware_fields = load_pareto_specs(spec) if spec is not None else ({}, {})
    llm = _resolve_spec(model_fields, model, "model")
    if llm_overrides:
        llm = llm.with_overrides(llm_overrides)
    hw = _resolve_spec(hardware_fields, hardware, "hardware")
    from speedtrap.config.backend import Backend
    from speedtrap.config.presets import AGENT_CONTEXT_TOKENS

    context_tokens = min(AGENT_CONTEXT_TOKENS, llm.context_window_tokens) if context is None else context
    return Backend(
        name=f"{llm.name}@{hw.name}",
        hardware=hw,
        llm=llm,
        typical_batch=1,
        typical_context_tokens=context_tokens,
        chips_per_replica=chips,
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


@app.command()
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
    chips: Annotated[
        int | None, typer.Option("--chips", min=1, help="Chips per replica [default: fewest that fit].")
    ] = None,
    batch: Annotated[
        list[int] | None,
        typer.Option(
            "--batch", min=1, help="A batch size to evaluate (repeatable) [default: powers of two]."
        ),
    ] = None,
    weight_bytes: Annotated[
        float | None, typer.Option("--weight-bytes", min=0.01, help="Weight bytes per parameter.")
    ] = None,
    compute_dtype: Annotated[
        str | None, typer.Option("--compute-dtype", help="Compute dtype (a key of the hardware's FLOP/s).")
    ] = None,
    kv_bytes: Annotated[
        float | None, typer.Option("--kv-bytes", min=0.01, help="KV-cache bytes per element.")
    ] = None,
    experts: Annotated[int | None, typer.Option("--experts", min=1, help="Routed experts per layer.")] = None,
    experts_per_token: Annotated[
        int | None, typer.Option("--experts-per-token", min=1, help="Routed experts per token.")
    ] = None,
    price_out: Annotated[
        float, typer.Option("--price-out", min=0.0, help="Output list price beside the cost, USD/MTok.")
    ] = 25.0,
    json_out: JsonOption = False,
) -> None:
    """Trace tokens/s per user against throughput per chip by sweeping the batch (powers of two up to
    the KV-memory cap, plus the cap, or the --batch sizes), with time to first token (physics only:
    no network or queueing) and the chip cost of a million output tokens beside the list price.
    With --isl/--osl each step also carries its share of the other requests' prompts (steady
    load); throughput counts output tokens only.

    JSON (--json), schema_version 1: {"schema_version": 1, "model", "hardware": str,
    "chips_per_replica", "context_tokens", "kv_batch_cap" (streams): int, "isl_tokens",
    "osl_tokens": int|null, "price_usd_per_mtok", "usd_per_chip_hour": float, "warning": str|null,
    "points": [{"batch" (streams): int, "tok_s_per_user", "tok_s_per_replica", "tok_s_per_chip"
    (output tokens/s), "step_s" (s per output token), "ttft_s" (s), "cost_usd_per_mtok" (USD per
    million output tokens, null without a chip price): float, "bound": "memory"|"compute"|"latency"}]}.
    """
    from speedtrap.serving.pareto import PARETO_COLUMNS, pareto_frontier
    from speedtrap.serving.replica import ReplicaPhysics

    chosen = {"weight_bytes": weight_bytes, "compute_dtype": compute_dtype, "kv_bytes": kv_bytes}
    overrides: dict[str, Any] = {PRECISION_OPTIONS[k]: v for k, v in chosen.items() if v is not None}
    if experts is not None:
        overrides["experts"] = experts
    if experts_per_token is not None:
        overrides["experts_per_token"] = experts_per_token
    with bad_input_exits():
        if (isl is None) != (osl is None):
            raise ValueError("give --isl and --osl together")
        mean_context = None if isl is None or osl is None else math.ceil(isl + osl / 2)
        backend = pareto_backend(
            model, hardware, context=mean_context or context, chips=chips, spec=spec, llm_overrides=overrides
        )
        physics = ReplicaPhysics.from_backend(backend)
        context_tokens = backend.typical_context_tokens
        usd_per_chip_hour = backend.hardware.usd_per_chip_hour or None
        frame = pareto_frontier(
            physics, context_tokens, batch, isl=isl, osl=osl, usd_per_chip_hour=usd_per_chip_hour
        )
        cap = physics.max_batch(context_tokens if isl is None or osl is None else isl + osl / 2)
    warning = frontier_warning(frame, cap=cap, context=context_tokens, explicit=batch is not None)
    if json_out:
        points = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in point.items()}
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
                "price_usd_per_mtok": price_out,
                "usd_per_chip_hour": backend.hardware.usd_per_chip_hour,
                "warning": warning,
                "points": points,
            }
        )
        return
    shape = (
        f"{isl:,} in / {osl:,} out"
        if isl is not None and osl is not None
        else f"{context_tokens:,} context tokens"
    )
    print_table(
        f"{backend.llm.name} on {backend.chips}× {backend.hardware.name} at {shape}"
        f" (list price ${price_out:g}/MTok out)",
        [_PARETO_HEADERS[c] for c in PARETO_COLUMNS],
        list(frame.itertuples(index=False, name=None)),
    )
    if warning is not None:
        typer.echo(f"warning: {warning}", err=True)


# --- run --------------------------------------------------------------------------------------


def headline_scenario_path() -> Path:
    """The headline scenario file (experiments/scenarios/headline.toml, or the wheel's copy)."""
    from speedtrap.experiments.files import experiments_dir

    return experiments_dir() / "scenarios" / "headline.toml"


def __getattr__(name: str) -> Any:
    """``HEADLINE_SCENARIO`` (:func:`headline_scenario_path`), found when first asked for: finding
    it imports the experiments package, which ``speedtrap --help`` need not."""
    if name == "HEADLINE_SCENARIO":
        return headline_scenario_path()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


"""The headline scenario file (installed with the package; its values are the specs' defaults)."""

DEMO_BACKENDS: tuple[str, ...] = ("gpu-batched", "gpu-fast", "wafer-distilled")
DEFAULT_SEED = 0
POLICY_KINDS: tuple[str, ...] = (
    "always",
    "by_difficulty",
    "escalate",
    "fast_share",
    "interactive_fast",
    "manual",
)
"""The policy kinds named in ``--set`` help (importing the registry would slow every command's start;
a test checks this list against :func:`speedtrap.config.policy.known_policy_kinds`)."""

SeedOption = Annotated[
    int, typer.Option("--seed", min=0, help="Root seed of the run (same seed, same task stream).")
]


def parse_set(assignment: str) -> tuple[str, Any]:
    """``path.to.field=value`` → (path, value); the value is read as TOML (numbers, booleans,
    strings, arrays, inline tables), falling back to the raw text as a string."""
    path, sep, text = assignment.partition("=")
    path = path.strip()
    if not sep or not path:
        raise ValueError(f"--set {assignment!r}: expected path.to.field=value")
    try:
        value = tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    return path, value


def load_scenario(path: Path | None, *, backend: str | None = None, sets: Sequence[str] = ()) -> Scenario:
    """The scenario of ``path`` (default: the specs' defaults), served by ``backend`` if given, with
    ``--set`` overrides applied last; every step re-validates, errors name the field."""
    from speedtrap.config.scenario import Scenario

    if path is None:
        scenario = Scenario(name="default")
    else:
        if not path.is_file():
            raise ValueError(f"{path}: no such scenario file")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc})") from None
        if not data:
            raise ValueError(f"{path}: empty scenario file (omit the file to run the built-in defaults)")
        if "factors" in data or "design" in data:
            raise ValueError(f"{path}: this is an experiment file; run it with `speedtrap sweep {path}`")
        scenario = Scenario.model_validate(data)
    if backend is not None:
        scenario = scenario.with_backend(backend)
    for assignment in sets:
        field, value = parse_set(assignment)
        try:
            if field == "policy.kind":
                scenario = with_policy_kind(scenario, str(value))
                continue
            scenario = scenario.with_overrides({field: value})
        except (ValidationError, KeyError) as exc:
            raise ValueError(f"--set {assignment}: {one_line(exc)}") from None
    return scenario


def with_policy_kind(scenario: Scenario, kind: str) -> Scenario:
    """``scenario`` under policy ``kind``, its table rebuilt: fields the new kind shares with the old
    policy are kept, and a route the new kind needs goes to the old policy's backend (else the
    scenario's first backend); later ``--set policy.…`` refine it."""
    from speedtrap.config.policy import policy_spec_class

    try:
        fields = policy_spec_class(kind).model_fields
    except KeyError as exc:
        raise ValueError(f"policy.kind: {exc.args[0]}") from None
    old = scenario.policy.model_dump(mode="python")
    main = old.get("backend") or next(iter(scenario.backends))
    policy: dict[str, Any] = {"kind": kind}
    policy.update({k: v for k, v in old.items() if k in fields and k != "kind"})
    for name, field in fields.items():
        if name in policy or not field.is_required():
            continue
        policy[name] = main if name == "backend" else {"backend": main}  # a route: first, then
    if "routes" in fields and not policy.get("routes") and policy.get("default") is None:
        policy["default"] = {"backend": main}  # by_difficulty: every class on the old backend
    data = scenario.model_dump(mode="python")
    data["policy"] = policy
    return type(scenario).model_validate(data)


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


# --- run --trace: the run as a Chrome trace (Perfetto) ------------------------------------------

TraceOption = Annotated[
    Path | None,
    typer.Option("--trace", metavar="FILE.json", help="Write the run as Chrome trace-event JSON (Perfetto)."),
]
TraceWindowOption = Annotated[
    str | None,
    typer.Option(
        "--trace-window", metavar="START:END", help="Trace only these simulated seconds, e.g. 3600:7200."
    ),
]


def trace_window_arg(
    trace_file: Path | None, text: str | None, horizon_s: float
) -> tuple[float, float] | None:
    """The ``--trace-window`` as (start, end) seconds, checked against the horizon (None: all)."""
    from speedtrap.traces import parse_window

    if text is None:
        return None
    if trace_file is None:
        raise ValueError("--trace-window needs --trace FILE.json")
    start, end = parse_window(text)
    if start >= horizon_s:
        raise ValueError(f"--trace-window {text}: starts after the horizon ({horizon_s:g} s)")
    return start, min(end, horizon_s)


def stderr_is_terminal() -> bool:
    """Whether standard error is a terminal (progress lines are written only there)."""
    return sys.stderr.isatty()


def run_progress(scenario: Scenario, enabled: bool = True) -> Callable[[float], None] | None:
    """A callback for ``simulate(progress=...)`` that keeps one line on standard error up to date
    ("simulated 40% of 200 developer-days"); ``None`` when disabled or standard error is not a
    terminal (a file, a pipe, a test runner)."""
    if not (enabled and stderr_is_terminal()):
        return None
    total = f"{scenario.developer_days:g} developer-days"

    def report(fraction: float) -> None:
        typer.echo(f"\rsimulated {fraction:.0%} of {total}", err=True, nl=fraction >= 1.0)

    return report


def count_progress(label: str, enabled: bool = True) -> Callable[..., None] | None:
    """A callback ``(done, total, note="")`` that keeps one line on standard error up to date
    ("``label`` 3/5", then " (note)" if given; padded with spaces to the longest line so far, so a
    shorter note leaves nothing of a longer one), ending it after the last; ``None`` when disabled
    or standard error is not a terminal."""
    if not (enabled and stderr_is_terminal()):
        return None

    width = 0  # the longest line so far: a shorter one is padded to cover what it leaves behind

    def report(done: int, total: int, note: str = "") -> None:
        nonlocal width
        line = f"{label} {done}/{total}" + (f" ({note})" if note else "")
        width = max(width, len(line))
        typer.echo("\r" + line.ljust(width), err=True, nl=done >= total)

    return report


def export_run(result: Any, scenario: Scenario, seed: int, directory: Path) -> None:
    """Write a run's tasks, requests and ledger as Parquet and its spec.json to ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("tasks", "requests", "ledger"):
        getattr(result, name).to_parquet(directory / f"{name}.parquet", index=False)
    spec = {"scenario": scenario.model_dump(mode="json"), "seed": seed, "provenance": provenance()}
    (directory / "spec.json").write_text(json.dumps(json_safe(spec), indent=2, allow_nan=False))
    typer.echo(f"Wrote tasks, requests and ledger tables (Parquet) and spec.json to {directory}", err=True)


def write_trace(trace: dict[str, Any], path: Path) -> None:
    """Write a trace as compact JSON (creating the directory) and say where it went."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trace, separators=(",", ":"), allow_nan=False))
    typer.echo(
        f"Wrote {path} ({len(trace['traceEvents']):,} trace events; open it in ui.perfetto.dev)", err=True
    )


@app.command()
def run(
    scenario_file: Annotated[
        Path | None,
        typer.Argument(metavar="SCENARIO.toml", help="Scenario file (default: built-in defaults)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="Serve everything with this backend (a preset or one of the file's)."),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Override a field: path.to.field=value (repeatable); policy.kind=KIND rebuilds the policy "
            f"({', '.join(POLICY_KINDS)}).",
        ),
    ] = None,
    seed: SeedOption = DEFAULT_SEED,
    json_out: JsonOption = False,
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay",
            help="Drive the developers with recorded sessions (a trace or Claude Code transcripts; "
            "repeatable), paired against --recorded-backend (docs/sessions.md).",
        ),
    ] = None,
    recorded_backend: Annotated[
        str | None,
        typer.Option(
            "--recorded-backend",
            help="--replay: the backend the logs were recorded on "
            "(default: the trace's backend column, else gpu-batched).",
        ),
    ] = None,
    trace_file: TraceOption = None,
    trace_window: TraceWindowOption = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            metavar="DIR",
            help="Write the run's tasks, requests and ledger tables as Parquet (and spec.json) to DIR.",
        ),
    ] = None,
) -> None:
    """Simulate one scenario for one seed: where the developers' time went, and what it cost.

    JSON (--json), schema_version 1: {"schema_version": 1, "scenario": str, "seed": int,
    "summary": {key: float}, "backends": list of str, "policy": str, "overrides": list of str,
    "scenario_spec": {resolved scenario}, "provenance": {...}} with the summary keys documented in
    speedtrap.models.results (shares are fractions of all developer-seconds; seconds; USD; tasks
    per developer-day); provenance as in compare --help.
    With --replay: {"schema_version": 1, "scenario", "seed", "recorded_backend", "backend",
    "skipped": {kind: int}, "recorded_timing": {...}, "measures": [{"measure", "label", "recorded",
    "replayed", "change"}]}.

    --trace FILE.json writes the run as Chrome trace-event JSON (open it in ui.perfetto.dev or
    chrome://tracing; tracks documented in speedtrap.traces).

    --export DIR writes tasks.parquet, requests.parquet and ledger.parquet (the RunResult tables,
    columns documented in speedtrap.models.results) and spec.json (the resolved scenario, seed and
    provenance).
    """
    if replay:
        from speedtrap.cli.sessions import run_replay

        if trace_file is not None or trace_window is not None or export is not None:
            fail("--trace, --trace-window and --export do not apply to --replay runs")
        run_replay(scenario_file, replay, backend, recorded_backend, sets or (), seed, json_out)
        return
    from speedtrap.config.ledger import LEDGER_CATEGORIES
    from speedtrap.models.workflow import simulate
    from speedtrap.plots import CATEGORY_LABELS
    from speedtrap.serving.economics import SECONDS_PER_HOUR

    with bad_input_exits():
        scenario = load_scenario(scenario_file, backend=backend, sets=sets or ())
        window = trace_window_arg(trace_file, trace_window, scenario.horizon_s)
        result = simulate(  # a scenario that cannot run says why
            scenario, seed, trace=trace_file is not None, progress=run_progress(scenario, not json_out)
        )
    if trace_file is not None:
        write_trace(result.to_trace(window), trace_file)
    if export is not None:
        export_run(result, scenario, seed, export)
    summary = result.summary()
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "scenario": scenario.name,
                "seed": seed,
                "summary": summary,
                "backends": list(scenario.backends),
                "policy": scenario.policy.kind,
                "overrides": list(sets or ()),
                "scenario_spec": scenario.model_dump(mode="json"),
                "provenance": provenance(),
            }
        )
        return
    hours = scenario.workday_s / SECONDS_PER_HOUR
    print_table(
        f"{scenario.name}: where a developer-day ({hours:g} h) goes — {scenario.developers} developers, "
        f"{scenario.developer_days:g} developer-days, seed {seed}; backends {', '.join(scenario.backends)}, "
        f"policy {scenario.policy.kind}",
        ["category", "share", "hours per developer-day"],
        [
            [CATEGORY_LABELS[c], _percent(summary[f"share_{c}"]), summary[f"share_{c}"] * hours]
            for c in LEDGER_CATEGORIES
        ],
    )
    print_table(
        "Summary",
        ["measure", "value"],
        [[label, fmt(summary[key])] for key, label, fmt in _RUN_SUMMARY],
    )


_RUN_SUMMARY: list[tuple[str, str, Any]] = [
    ("tasks_per_dev_day", "tasks completed per developer-day", lambda v: f"{v:.2f}"),
    ("waiting_share", "waiting on the agent (share of time)", _percent),
    ("fixing_share", "fixing its mistakes (share of time)", _percent),
    ("escaped_share", "tasks accepted with an undetected mistake", _percent),
    ("usd_per_task", "cost per completed task", lambda v: f"${v:.2f}"),
    ("usd_per_dev_day", "cost per developer-day", lambda v: f"${v:.2f}"),
    ("lead_time_p50_s", "task lead time, median", lambda v: f"{v / 60:.1f} min"),
    ("lead_time_p95_s", "task lead time, 95th percentile", lambda v: f"{v / 60:.1f} min"),
    ("mean_queue_wait_s", "mean queue wait per request", lambda v: f"{v:.3f} s"),
    ("mean_ttft_s", "mean time to first token", lambda v: f"{v:.2f} s"),
    ("mean_decode_tok_s", "mean decode speed per request", lambda v: f"{v:.0f} tok/s"),
    ("backend_utilization", "backend utilization (own slots)", _percent),
]


# --- sweep ------------------------------------------------------------------------------------

SWEEP_OUTCOMES: list[tuple[str, str, float, str]] = [
    ("tasks_per_dev_day", "tasks per dev-day", 1.0, ""),
    ("waiting_share", "waiting (% of time)", 100.0, "%"),
    ("fixing_share", "fixing (% of time)", 100.0, "%"),
    ("usd_per_task", "$ per task (USD)", 1.0, ""),
]
"""Outcomes shown by ``sweep``: key, header with unit, scale and suffix of the shown numbers."""


def _mean_pm(mean: float, low: float, high: float, n: int, scale: float, suffix: str) -> str:
    """``mean ± half-width`` of a confidence interval, two decimals, scaled (NaN: n/a), marked
    " (n=3)" from fewer than 5 values and " (zero width)" when it has none."""
    from speedtrap.analysis.statistics import ci_flag

    if math.isnan(mean):  # no value in any replication
        return "n/a"
    if math.isnan(low):  # one replication: no interval
        return f"{scale * mean:.2f}{suffix}"
    flag = ci_flag(n, low, high)
    return f"{scale * mean:.2f}{suffix} ± {scale * (high - low) / 2:.2f}{suffix}{flag}"


def _json_number(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


@app.command()
def sweep(
    experiment_file: Annotated[Path, typer.Argument(metavar="EXPERIMENT.toml", help="Experiment file.")],
    executor: Annotated[
        str, typer.Option("--executor", help="Where runs execute: serial, processes or dask.")
    ] = "serial",
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Worker processes (processes, local dask); default: the CPUs."),
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Address of a running Dask scheduler (with dask).")
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Run the file's quick variant, stored under <name>-quick.")
    ] = False,
    results_dir: Annotated[
        Path, typer.Option("--results-dir", help="Results go to DIR/<experiment name>/.")
    ] = Path("results"),
    json_out: JsonOption = False,
    replications: Annotated[
        int | None,
        typer.Option(
            "--replications",
            min=1,
            help="Replications per point (more than stored: the stored runs are kept).",
        ),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="Override a field of the experiment: path=value, e.g. scenario.developers=4."
        ),
    ] = None,
    compare_to: Annotated[
        int | None,
        typer.Option(
            "--compare-to", metavar="POINT", help="Also print paired differences from this design point."
        ),
    ] = None,
) -> None:
    """Run (or resume) an experiment: a design over scenario parameters × replications, every point
    with the same replication seeds. Finished runs are stored as they come in (DIR/<name>/runs/),
    so an interrupted sweep resumes; the table shows mean ± 95% CI per design point. Stored runs
    are matched to design points by their factor values and seeds, so a finished sweep extends:
    --replications above the stored number runs only the new replications, and new values, levels
    or choices of the same factors run only the new points. A change that would alter stored
    results (base scenario, root seed, model, outcomes, factor paths, an lhs/sobol sample) is
    refused. --compare-to POINT adds each outcome's paired difference from that point (same seeds)
    with its 95% CI.

    JSON (--json), schema_version 1: {"schema_version": 1, "experiment": str, "results_dir": str,
    "runs", "new_runs", "replications": int, "factors": list of str, "provenance": {...} (as in
    compare --help), "compare_to": int or null, "differences": list of paired-difference records
    (with --compare-to, else null), "summary": list of {<factor>: value, ..., "outcome": str, "n":
    int, "mean", "std", "ci_low", "ci_high": float or null}} — one summary record per design point
    × outcome (units: those of speedtrap.models.results).
    """
    from speedtrap.analysis.statistics import summarize
    from speedtrap.config.experiment import Experiment
    from speedtrap.experiments import ResultStore, StoreMismatchError, make_executor, run_experiment

    if not experiment_file.is_file():
        fail(f"{experiment_file}: no such experiment file")
    with bad_input_exits():
        try:
            data = tomllib.loads(experiment_file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{experiment_file}: not valid TOML ({exc})") from None
        if not data:
            raise ValueError(f"{experiment_file}: empty experiment file")
        if not {"factors", "design", "replications", "scenario"} & data.keys():
            raise ValueError(
                f"{experiment_file}: this is a scenario file; sweep takes an experiment file "
                "(name, scenario, replications, [[factors]]; see experiments/sweeps/), "
                f"and `speedtrap run {experiment_file}` runs a scenario"
            )
        spec = Experiment.from_toml(experiment_file)
        if quick:
            spec = spec.quick_variant()
        overrides = dict(parse_set(assignment) for assignment in sets or ())
        if replications is not None:
            overrides["replications"] = replications
        if overrides:
            spec = spec.with_overrides(overrides)
        try:
            runner = make_executor(executor, workers=workers, scheduler=scheduler)
        except ImportError as exc:
            raise ValueError(str(exc)) from None
    store_dir = results_dir / spec.name
    stored_before = len(ResultStore(store_dir).completed_keys())
    try:
        table = run_experiment(spec, executor=runner, results_dir=results_dir, progress=not json_out)
    except StoreMismatchError as exc:
        fail(str(exc))
    except (ValidationError, ValueError, KeyError) as exc:  # a design point that cannot run says why
        fail(one_line(exc))
    except KeyboardInterrupt:
        stored = len(ResultStore(store_dir).completed_keys())
        typer.echo(
            f"interrupted: {stored} runs stored in {store_dir}; rerun the same command to resume", err=True
        )
        raise typer.Exit(130) from None
    factors = spec.factor_paths
    new_runs = len(ResultStore(store_dir).completed_keys()) - stored_before  # points numbered by value
    if json_out:
        summary = summarize(table, by=factors)
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "experiment": spec.name,
                "results_dir": str(store_dir),
                "runs": len(table),
                "new_runs": new_runs,
                "replications": spec.replications,
                "factors": factors,
                "provenance": provenance(),
                "compare_to": compare_to,
                "differences": [
                    {k: _json_number(v) for k, v in record.items()}
                    for record in sweep_differences(table, compare_to).to_dict("records")
                ]
                if compare_to is not None
                else None,
                "summary": [
                    {k: _json_number(v) for k, v in record.items()} for record in summary.to_dict("records")
                ],
            }
        )
        return
    shown = [entry for entry in SWEEP_OUTCOMES if entry[0] in table.columns]
    summary = summarize(table, by=factors, outcomes=[key for key, *_ in shown])
    cells = {
        (tuple(row[f] for f in factors), row["outcome"]): (
            row["mean"],
            row["ci_low"],
            row["ci_high"],
            int(row["n"]),
        )
        for row in summary.to_dict("records")
    }
    points = table[factors].drop_duplicates().itertuples(index=False, name=None) if factors else [()]
    print_table(
        f"{spec.name}: mean ± 95% CI over {spec.replications} replications (same seeds at every point)",
        [*factors, *(header for _, header, *_ in shown)],
        [
            [*point, *(_mean_pm(*cells[(point, key)], scale, suffix) for key, _, scale, suffix in shown)]
            for point in points
        ],
    )
    if compare_to is not None:
        print_sweep_differences(table, compare_to, factors, shown)
    typer.echo(f"Results: {store_dir}/ ({len(table)} runs, {new_runs} new; spec.json beside runs/).")


def sweep_differences(table: pd.DataFrame, point: int) -> pd.DataFrame:
    """Paired differences (same seeds) of every outcome of every design point from ``point``."""
    from speedtrap.analysis.statistics import paired_differences

    points = sorted(set(table["point"]))
    if point not in points:
        fail(f"--compare-to {point}: no such design point (points: 0 to {max(points)})")
    outcomes = list(table.attrs.get("outcomes") or [])
    return paired_differences(table, "point", point, outcomes=outcomes, by=[])


def print_sweep_differences(
    table: pd.DataFrame, point: int, factors: list[str], shown: list[tuple[str, str, float, str]]
) -> None:
    """The paired-difference table of ``sweep --compare-to``."""
    from speedtrap.analysis.statistics import ci_flag, difference_verdict

    differences = sweep_differences(table, point)
    values = table.drop_duplicates("point").set_index("point")
    cells = {(row["point"], row["outcome"]): row for row in differences.to_dict("records")}
    rows = []
    for other in sorted(set(differences["point"])):
        line: list[Any] = [other, *(values.loc[other, f] for f in factors)]
        for key, _, scale, suffix in shown:
            row = cells[(other, key)]
            mean, low, high = (scale * row[k] for k in ("mean", "ci_low", "ci_high"))
            text = f"{mean:+.2f}{suffix} [{low:+.2f}, {high:+.2f}]"
            verdict = difference_verdict(row["ci_low"], row["ci_high"])
            mark = " (n.s.)" if verdict == "no detectable difference" else ""
            line.append(text + mark + ci_flag(int(row["n"]), row["ci_low"], row["ci_high"]))
        rows.append(line)
    base = ", ".join(f"{f}={values.loc[point, f]}" for f in factors)
    print_table(
        f"Paired differences from point {point} ({base}): mean [95% CI]; n.s. = no detectable difference",
        ["point", *factors, *(header for _, header, *_ in shown)],
        rows,
    )


# --- experiment -------------------------------------------------------------------------------


@app.command()
def experiment(
    name: Annotated[str, typer.Argument(help="headline, break_even or fast_mode_externality.")],
    quick: Annotated[
        bool, typer.Option("--quick", help="The small CI-sized variant, stored under results/<name>-quick/.")
    ] = False,
    executor: Annotated[
        str, typer.Option("--executor", help="Where runs execute: serial, processes or dask.")
    ] = "serial",
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Worker processes.")] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Address of a running Dask scheduler (with dask).")
    ] = None,
    results_dir: Annotated[Path, typer.Option("--results-dir", help="Results go to DIR/<name>/.")] = Path(
        "results"
    ),
) -> None:
    """Run a canonical experiment (experiments/<name>.toml): its runs, CSV tables and PNG + SVG
    figures go to results/<name>/, and it prints its finding in words with the numbers.
    The same as: python experiments/<name>.py"""
    from speedtrap.experiments import StoreMismatchError
    from speedtrap.experiments.canonical import CANONICAL, run_and_report

    with bad_input_exits():
        if name not in CANONICAL:
            raise ValueError(f"unknown experiment {name!r} (canonical: {', '.join(CANONICAL)})")
    try:
        run_and_report(
            name,
            quick=quick,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            results_dir=results_dir,
        )
    except (StoreMismatchError, ImportError) as exc:
        fail(str(exc))
    except (ValidationError, ValueError, KeyError) as exc:
        fail(one_line(exc))


# --- validate -----------------------------------------------------------------------------------

validate_app = HelpTyper(help="Check the simulator against published measurements.", no_args_is_help=True)
app.add_typer(validate_app, name="validate")


@validate_app.command("workflow")
def validate_workflow_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="4 developers × 5 days per scenario instead of the files' sizes.")
    ] = False,
    replications: Annotated[int, typer.Option("--replications", min=2, help="Seeded replications.")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="First replication seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Run the workflow calibration scenarios (experiments/scenarios/headline.toml and metr.toml)
    and print every target of src/speedtrap/validation/data/workflow_targets.csv: the published
    value, the simulated mean with its 95% t interval over the replications, the relative error
    and pass/fail within the tolerance fixed in the table.

    JSON (schema_version 1): {"schema_version", "replications", "passed", "targets": [{"id",
    "scenario", "unit", "published", "simulated", "ci_low", "ci_high", "n", "relative_error",
    "tolerance", "accept_low", "accept_high", "passed", "source"}]}; accept_low/high: the simulated
    values the tolerance accepts, in the target's unit."""
    from speedtrap.validation.workflow import default_scenarios, validate_workflow

    with bad_input_exits():
        scenarios = default_scenarios(headline_scenario_path().parents[2], quick=quick)
    check = validate_workflow(
        scenarios,
        range(seed, seed + replications),
        progress=count_progress("replications done:", not as_json),
    )
    table = check.table
    if as_json:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "replications": replications,
                "passed": check.passed,
                "targets": [{k: _json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
            }
        )
        return
    rows = [
        (
            r.id,
            f"{r.published:.4g} {r.unit}",
            f"{r.simulated:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}]",
            f"{100 * r.relative_error:+.0f}%",
            r.tolerance,
            "pass" if r.passed else "MISS",
        )
        for r in table.itertuples()
    ]
    print_table(
        f"Workflow calibration: {check.passed} of {len(table)} targets within tolerance "
        f"({replications} replications; simulated = mean [95% t interval])",
        ["target", "published", "simulated", "error", "tolerance", "result"],
        rows,
    )
    if replications < 5:
        typer.echo(f"Note: {replications} replications give intervals that cannot mean much; use 5 or more.")


@validate_app.command("serving")
def validate_serving_command(
    figure: Annotated[
        Path | None,
        typer.Option(
            "--figure", dir_okay=False, help="Where to write the predicted-vs-measured figure (PNG)."
        ),
    ] = Path("results/validation/serving_validation.png"),
    no_figure: Annotated[bool, typer.Option("--no-figure", help="Do not write the figure.")] = False,
    refit: Annotated[
        bool, typer.Option("--refit", help="Refit the efficiency factors on the calibration part first.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Predict every published serving measurement of
    src/speedtrap/validation/data/serving_measurements.csv with the serving physics (the step-time
    function the pool uses) and print predicted vs measured, the error, and the median and worst
    absolute error of each part (calibration, held-out) per metric, and write the predicted-vs-measured
    figure (default results/validation/serving_validation.png). Takes a few seconds.

    JSON (schema_version 1): {"schema_version", "fit": {"date", "ids", factor: float, ...},
    "rows": [{"id", "part", "model", "hardware", "chips", "concurrency", "metric", "measured",
    "predicted", "error"}], "summary": [{"part", "metric", "rows", "median_abs_error",
    "worst_abs_error"}]}; errors are predicted/measured − 1, tok/s count output tokens only."""
    from dataclasses import asdict

    from speedtrap.validation.serving import (
        fit_efficiencies,
        stored_fit,
        summarize,
        validate_serving,
        write_figure,
    )

    eff, date, ids = stored_fit()
    if refit:
        eff, fitted_ids = fit_efficiencies()
        date, ids = "now", tuple(fitted_ids)
    check = validate_serving(eff)
    summary = summarize(check)
    if no_figure:
        figure = None
    if figure is not None:
        write_figure(check, figure)
    if as_json:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "fit": {"date": date, "ids": list(ids), **asdict(eff)},
                "rows": [{k: _json_number(v) for k, v in row.items()} for row in check.to_dict("records")],
                "summary": [
                    {k: _json_number(v) for k, v in row.items()} for row in summary.to_dict("records")
                ],
            }
        )
        return
    print_table(
        "Serving physics vs published measurements (error = predicted / measured − 1)",
        ["id", "part", "metric", "measured", "predicted", "error"],
        [
            (r.id, r.part, r.metric, f"{r.measured:.4g}", f"{r.predicted:.4g}", f"{100 * r.error:+.0f}%")
            for r in check.itertuples()
        ],
    )
    print_table(
        f"Absolute error by part (factors fitted {date} on the calibration part only)",
        ["part", "metric", "rows", "median", "worst"],
        [
            (r.part, r.metric, r.rows, f"{100 * r.median_abs_error:.0f}%", f"{100 * r.worst_abs_error:.0f}%")
            for r in summary.itertuples()
        ],
    )
    if figure is not None:
        typer.echo(f"figure: {figure}")


# --- your own sessions (fit; run --replay) ---------------------------------------------------

import speedtrap.cli.compare  # noqa: E402  (registers `compare`)
import speedtrap.cli.sessions  # noqa: E402, F401  (registers `fit`; after the helpers it uses)

# --- app: the interactive browser app ----------------------------------------------------------

APP_PORT = 8765
"""Solara's usual port; ``--port 0`` picks a free one."""


@app.command("app")
def app_command(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port to serve on (0: any free port).")
    ] = APP_PORT,
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on (0.0.0.0: every one).")
    ] = "localhost",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser (for servers).")
    ] = False,
) -> None:
    """Explore a scenario in the browser: controls for the scenario, backends and the fields people
    vary most; the ledger, a timeline per developer, the serving pool, tasks and dollars, two
    backends side by side with one seed, and the analytic break-even map. Needs the app extra
    (pip install 'speedtrap[app]'); stop it with Ctrl-C."""
    from speedtrap.app import serve

    typer.echo(f"speedtrap app on http://{host}:{port} (Ctrl-C stops it)", err=True)
    try:
        serve(port=port, host=host, open_browser=not no_browser)
    except ImportError as exc:
        fail(str(exc))


# --- entry point ------------------------------------------------------------------------------


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
    return f"warning: {message}\n"


def main() -> None:
    """Console-script entry point (``speedtrap``): warnings (e.g. a quarantined result file) are
    shown as one line each."""
    warnings.formatwarning = _one_line_warning
    app()
