"""The ``speedtrap`` command: one small function per subcommand, shared helpers for output and errors.

Bad input (an unknown preset, a model that does not fit) prints one line to stderr and exits
with status 2; ``--json`` output follows a versioned schema documented in each command's help.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import pandas as pd
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from speedtrap.config.backend import Backend
from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.config.presets import AGENT_CONTEXT_TOKENS, BACKEND_PRESETS, hardware_preset, llm_preset
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.canonical import CANONICAL
from speedtrap.experiments.executors import EXECUTOR_KINDS
from speedtrap.models.workflow import simulate
from speedtrap.plots import CATEGORY_LABELS
from speedtrap.serving.economics import SECONDS_PER_HOUR
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


# --- run --------------------------------------------------------------------------------------

HEADLINE_SCENARIO = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"
"""The headline scenario file of a source checkout (its values are the specs' defaults)."""

DEMO_BACKENDS: tuple[str, ...] = ("gpu-batched", "gpu-fast", "wafer-distilled")
DEFAULT_SEED = 0

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
    if path is None:
        scenario = Scenario(name="default")
    else:
        if not path.is_file():
            raise ValueError(f"{path}: no such scenario file")
        try:
            scenario = Scenario.from_toml(path)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc})") from None
    if backend is not None:
        scenario = scenario.with_backend(backend)
    for assignment in sets:
        field, value = parse_set(assignment)
        try:
            scenario = scenario.with_overrides({field: value})
        except (ValidationError, KeyError) as exc:
            raise ValueError(f"--set {assignment}: {one_line(exc)}") from None
    return scenario


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
        typer.Argument(metavar="[SCENARIO.toml]", help="Scenario file (default: built-in defaults)."),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="Serve everything with this backend (a preset or one of the file's)."),
    ] = None,
    sets: Annotated[
        list[str] | None, typer.Option("--set", help="Override a field: path.to.field=value (repeatable).")
    ] = None,
    seed: SeedOption = DEFAULT_SEED,
    json_out: JsonOption = False,
    trace_file: TraceOption = None,
    trace_window: TraceWindowOption = None,
) -> None:
    """Simulate one scenario for one seed: where the developers' time went, and what it cost.

    JSON (--json), schema_version 1: {"schema_version": 1, "scenario": str, "seed": int,
    "summary": {key: float}} with the summary keys documented in speedtrap.models.results
    (shares are fractions of all developer-seconds; seconds; USD; tasks per developer-day).

    --trace FILE.json writes the run as Chrome trace-event JSON (open it in ui.perfetto.dev or
    chrome://tracing; tracks documented in speedtrap.traces).
    """
    with bad_input_exits():
        scenario = load_scenario(scenario_file, backend=backend, sets=sets or ())
        window = trace_window_arg(trace_file, trace_window, scenario.horizon_s)
    result = simulate(scenario, seed, trace=trace_file is not None)
    if trace_file is not None:
        write_trace(result.to_trace(window), trace_file)
    summary = result.summary()
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "scenario": scenario.name,
                "seed": seed,
                "summary": summary,
            }
        )
        return
    hours = scenario.workday_s / SECONDS_PER_HOUR
    print_table(
        f"{scenario.name}: where a developer-day ({hours:g} h) goes — {scenario.developers} developers, "
        f"{scenario.developer_days:g} developer-days, seed {seed}",
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


# --- demo -------------------------------------------------------------------------------------


def demo_runs(scenario: Scenario, seed: int, backends: Sequence[str] = DEMO_BACKENDS) -> pd.DataFrame:
    """One run of ``scenario`` per backend with the same seed (the same task stream): a row per
    backend with its summary."""
    rows = [{"backend": name, **simulate(scenario.with_backend(name), seed).summary()} for name in backends]
    return pd.DataFrame(rows)


@app.command()
def demo(
    seed: SeedOption = DEFAULT_SEED,
    out: Annotated[Path, typer.Option("--out", help="Directory for the figure and table.")] = Path(
        "results/demo"
    ),
    quick: Annotated[
        bool, typer.Option("--quick", help="Two developers for one developer-day each (a smoke run).")
    ] = False,
) -> None:
    """The headline: the same developers and tasks on each of the three backends — waiting versus
    fixing, tasks per developer-day and $ per task — with a stacked-bar figure of the ledger."""
    with bad_input_exits():
        path = HEADLINE_SCENARIO if HEADLINE_SCENARIO.is_file() else None
        scenario = load_scenario(path) if path else Scenario(name="headline")
        if quick:
            scenario = scenario.with_overrides({"developers": 2, "horizon_s": scenario.workday_s})
    frame = demo_runs(scenario, seed)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out / "summary.csv", index=False)
    print_table(
        f"{scenario.name}: {scenario.developers} developers × "
        f"{scenario.horizon_s / scenario.workday_s:g} days, seed {seed}, same tasks on every backend",
        ["backend", "tok/s per request", "waiting", "fixing", "switching", "tasks per dev-day", "$ per task"],
        [
            [
                row.backend,
                f"{row.mean_decode_tok_s:.0f}",
                _percent(row.waiting_share),
                _percent(row.fixing_share),
                _percent(row.share_switching),
                f"{row.tasks_per_dev_day:.2f}",
                f"${row.usd_per_task:.2f}",
            ]
            for row in frame.itertuples()
        ],
    )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from speedtrap.plots import plot_ledger, save_figure

    ax = plot_ledger(
        frame, "backend", workday_s=scenario.workday_s, title="Where a developer-day goes, by backend"
    )
    paths = save_figure(ax.figure, out, "ledger")
    plt.close(ax.figure)
    best = frame.loc[frame["tasks_per_dev_day"].idxmax()]
    base = frame.iloc[0]
    typer.echo(
        f"Finding: on {base.backend}, developers spend {_percent(base.waiting_share)} of their time waiting "
        f"on the agent and {_percent(base.fixing_share)} fixing its mistakes; "
        f"{best.backend} completes the most tasks ({best.tasks_per_dev_day:.2f} per developer-day "
        f"vs {base.tasks_per_dev_day:.2f}) "
        f"at ${best.usd_per_task:.2f} per task vs ${base.usd_per_task:.2f}."
    )
    typer.echo(f"Wrote {out / 'summary.csv'}, " + ", ".join(str(p) for p in paths))


# --- sweep ------------------------------------------------------------------------------------

SWEEP_OUTCOMES: list[tuple[str, str, float, str]] = [
    ("tasks_per_dev_day", "tasks per dev-day", 1.0, ""),
    ("waiting_share", "waiting (% of time)", 100.0, "%"),
    ("fixing_share", "fixing (% of time)", 100.0, "%"),
    ("usd_per_task", "$ per task (USD)", 1.0, ""),
]
"""Outcomes shown by ``sweep``: key, header with unit, scale and suffix of the shown numbers."""


def _mean_pm(mean: float, low: float, high: float, scale: float, suffix: str) -> str:
    """``mean ± half-width`` of a confidence interval, two decimals, scaled (NaN: n/a)."""
    if math.isnan(mean):  # no value in any replication
        return "n/a"
    if math.isnan(low):  # one replication: no interval
        return f"{scale * mean:.2f}{suffix}"
    return f"{scale * mean:.2f}{suffix} ± {scale * (high - low) / 2:.2f}{suffix}"


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
) -> None:
    """Run (or resume) an experiment: a design over scenario parameters × replications, every point
    with the same replication seeds. Finished runs are stored as they come in (DIR/<name>/runs/),
    so an interrupted sweep resumes; the table shows mean ± 95% CI per design point.

    JSON (--json), schema_version 1: {"schema_version": 1, "experiment": str, "results_dir": str,
    "runs", "new_runs", "replications": int, "factors": list of str, "summary": list of {<factor>:
    value, ..., "outcome": str, "n": int, "mean", "std", "ci_low", "ci_high": float or null}} — one
    summary record per design point × outcome (units: those of speedtrap.models.results).
    """
    from speedtrap.analysis.statistics import summarize
    from speedtrap.config.experiment import Experiment
    from speedtrap.experiments import ResultStore, StoreMismatchError, make_executor, run_experiment

    if not experiment_file.is_file():
        fail(f"{experiment_file}: no such experiment file")
    with bad_input_exits():
        try:
            spec = Experiment.from_toml(experiment_file)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{experiment_file}: not valid TOML ({exc})") from None
        if quick:
            spec = spec.quick_variant()
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
    except KeyboardInterrupt:
        stored = len(ResultStore(store_dir).completed_keys())
        typer.echo(
            f"interrupted: {stored} runs stored in {store_dir}; rerun the same command to resume", err=True
        )
        raise typer.Exit(130) from None
    factors = spec.factor_paths
    new_runs = len(table) - stored_before
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
                "summary": [
                    {k: _json_number(v) for k, v in record.items()} for record in summary.to_dict("records")
                ],
            }
        )
        return
    shown = [entry for entry in SWEEP_OUTCOMES if entry[0] in table.columns]
    summary = summarize(table, by=factors, outcomes=[key for key, *_ in shown])
    cells = {
        (tuple(row[f] for f in factors), row["outcome"]): (row["mean"], row["ci_low"], row["ci_high"])
        for row in summary.to_dict("records")
    }
    points = table[factors].drop_duplicates().itertuples(index=False, name=None) if factors else [()]
    print_table(
        f"{spec.name}: mean ± 95% CI over {spec.replications} replications (same seeds at every point)",
        [*factors, *(header for _, header, *_ in shown)],
        [[*point, *(_mean_pm(*cells[(point, key)], *fmt) for key, _, *fmt in shown)] for point in points],
    )
    typer.echo(f"Results: {store_dir}/ ({len(table)} runs, {new_runs} new; spec.json beside runs/).")


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
    results_dir: Annotated[
        Path, typer.Option("--results-dir", help="Results go to DIR/<name>/.")
    ] = Path("results"),
) -> None:
    """Run a canonical experiment (experiments/<name>.toml): its runs, CSV tables and PNG + SVG
    figures go to results/<name>/, and it prints its finding in words with the numbers.
    The same as ``python experiments/<name>.py``."""
    from speedtrap.experiments import StoreMismatchError
    from speedtrap.experiments.canonical import run_canonical

    with bad_input_exits():
        if name not in CANONICAL:
            raise ValueError(f"unknown experiment {name!r} (canonical: {', '.join(CANONICAL)})")
        if executor not in EXECUTOR_KINDS:
            known = ", ".join(EXECUTOR_KINDS)
            raise ValueError(f"--executor: unknown executor {executor!r} (known: {known})")
    try:
        report = run_canonical(
            name,
            quick=quick,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            results_dir=results_dir,
        )
    except (StoreMismatchError, ImportError) as exc:
        fail(str(exc))
    typer.echo(report.finding)
    typer.echo("Wrote " + ", ".join(str(p) for p in report.files))


# --- validate -----------------------------------------------------------------------------------

validate_app = typer.Typer(help="Check the simulator against published measurements.", no_args_is_help=True)
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
        scenarios = default_scenarios(HEADLINE_SCENARIO.parents[2], quick=quick)
    check = validate_workflow(scenarios, range(seed, seed + replications))
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


def main() -> None:
    """Console-script entry point (``speedtrap``)."""
    app()
