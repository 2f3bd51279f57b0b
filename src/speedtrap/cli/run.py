"""``speedtrap run``: one scenario for one seed, where the developers' time went and what it cost;
``--trace`` writes it as a Chrome trace, ``--export`` as Parquet tables, and ``--replay`` drives it
with recorded sessions (:mod:`speedtrap.cli.sessions`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from speedtrap.cli.common import (
    DEFAULT_SEED,
    JSON_SCHEMA_VERSION,
    POLICY_KINDS,
    JsonOption,
    LogFormatOption,
    SeedOption,
    bad_input_exits,
    check_output_path,
    count_of,
    fail,
    json_safe,
    load_scenario,
    print_json,
    print_table,
    run_progress,
    writing,
)
from speedtrap.provenance import provenance

if TYPE_CHECKING:  # imported where used, so that `speedtrap --help` starts fast
    from speedtrap.config.scenario import Scenario


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
    from speedtrap.models.chrome_trace import parse_window

    if text is None:
        return None
    if trace_file is None:
        raise ValueError("--trace-window needs --trace FILE.json")
    start, end = parse_window(text)
    if start >= horizon_s:
        raise ValueError(f"--trace-window {text}: starts after the horizon ({horizon_s:g} s)")
    return start, min(end, horizon_s)


def export_run(result: Any, scenario: Scenario, seed: int, directory: Path) -> None:
    """Write a run's tasks, requests, ledger and per-request latency metrics as Parquet and its
    spec.json to ``directory``."""
    from speedtrap.models.latency import request_metrics

    directory.mkdir(parents=True, exist_ok=True)
    for name in ("tasks", "requests", "ledger"):
        getattr(result, name).to_parquet(directory / f"{name}.parquet", index=False)
    request_metrics(result.requests).to_parquet(directory / "request_metrics.parquet", index=False)
    engine = result.engine_record()
    spec = {
        "scenario": scenario.model_dump(mode="json"),
        "seed": seed,
        **engine,
        "provenance": provenance({scenario.name: engine}),
    }
    (directory / "spec.json").write_text(json.dumps(json_safe(spec), indent=2, allow_nan=False))
    typer.echo(
        f"Wrote tasks, requests, ledger and request_metrics tables (Parquet) and spec.json to {directory}",
        err=True,
    )


def write_trace(trace: dict[str, Any], path: Path) -> None:
    """Write a trace as compact JSON (creating the directory) and say where it went."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trace, separators=(",", ":"), allow_nan=False))
    typer.echo(
        f"Wrote {path} ({len(trace['traceEvents']):,} trace events; open it in ui.perfetto.dev)", err=True
    )


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
            help="Drive the developers with recorded sessions (a trace, Claude Code transcripts or Codex "
            "CLI rollouts; repeatable), paired against --recorded-backend (docs/sessions.md).",
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
    log_format: LogFormatOption = "auto",
    trace_file: TraceOption = None,
    trace_window: TraceWindowOption = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            metavar="DIR",
            help="Write the run's tasks, requests, ledger and per-request latency tables as Parquet (and "
            "spec.json) to DIR.",
        ),
    ] = None,
) -> None:
    """Simulate one scenario for one seed: where the developers' time went, and what it cost.

    JSON (--json), schema_version 1: {"schema_version": 1, "scenario": str, "seed": int,
    "summary": {key: float}, "latency": {backend: {"requests": int, "ttft_s", "tbt_s", "e2e_s": {"p50",
    "p90", "p99": float|null}}}, "backends": list of str, "policy": str, "overrides": list of str,
    "scenario_spec": {resolved scenario}, "engine": "typed core" | "mesa", "engine_reason": str|null
    (why not the typed core: what it does not cover, "SPEEDTRAP_PURE=1", "not built", a trace),
    "provenance": {..., "engines": {scenario: {"engine", "engine_reason"}}}} with the summary keys
    documented in speedtrap.models.results (shares are fractions of all developer-seconds; seconds; USD; tasks
    per developer-day; latency in seconds: time to first token, time between tokens (decode seconds
    per output token after the first) and end to end, per backend, as in speedtrap.models.latency);
    provenance as in compare --help.
    With --replay: {"schema_version": 1, "scenario", "seed", "recorded_backend", "backend",
    "report": [str], "skipped": {kind: int}, "recorded_timing": {...}, "backend_speed":
    {"decode_speedup", "decode_speedup_ci", "ttft_overhead_s", "after", "requests", "reason"},
    "rework": {...}, "estimated_output_requests": int, "coverage": {backend: {"recorded_tasks",
    "tasks_started", "passes" (above 1: the logs were looped to fill the horizon), "logged_hours"}},
    "measures": [{"measure", "label", "logged" (what the logs say; null where they cannot),
    "recorded" (re-simulated on the recorded backend at the speed fitted to the logs, where they
    allow a fit), "replayed", "change" (from "recorded")}]}.

    --trace FILE.json writes the run as Chrome trace-event JSON (open it in ui.perfetto.dev or
    chrome://tracing; tracks documented in speedtrap.models.chrome_trace).

    --export DIR writes tasks.parquet, requests.parquet and ledger.parquet (the RunResult tables,
    columns documented in speedtrap.models.results), request_metrics.parquet (one row per request:
    backend, tier, developer, task, arrival_s, queue_s, ttft_s, tbt_s, e2e_s, tokens; see
    speedtrap.models.latency) and spec.json (the resolved scenario, seed and provenance).
    """
    if replay:
        from speedtrap.cli.sessions import run_replay

        if trace_file is not None or trace_window is not None or export is not None:
            fail("--trace, --trace-window and --export do not apply to --replay runs")
        run_replay(scenario_file, replay, backend, recorded_backend, sets or (), seed, json_out, log_format)
        return
    from speedtrap.config.ledger import LEDGER_CATEGORIES
    from speedtrap.models.latency import latency_percentiles
    from speedtrap.models.workflow import simulate
    from speedtrap.plots import CATEGORY_LABELS
    from speedtrap.serving.economics import SECONDS_PER_HOUR

    if trace_file is not None:
        check_output_path(trace_file, "--trace")
    if export is not None:
        check_output_path(export, "--export", directory=True)
    with bad_input_exits():
        scenario = load_scenario(scenario_file, backend=backend, sets=sets or ())
        window = trace_window_arg(trace_file, trace_window, scenario.horizon_s)
        result = simulate(  # a scenario that cannot run says why
            scenario, seed, trace=trace_file is not None, progress=run_progress(scenario, not json_out)
        )
    if trace_file is not None:
        trace = result.to_trace(window)
        with writing(trace_file, "--trace"):
            write_trace(trace, trace_file)
    if export is not None:
        with writing(export, "--export"):
            export_run(result, scenario, seed, export)
    summary = result.summary()
    latency = latency_percentiles(result.requests)
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "scenario": scenario.name,
                "seed": seed,
                "summary": summary,
                "latency": latency,
                "backends": list(scenario.backends),
                "policy": scenario.policy.kind,
                "overrides": list(sets or ()),
                "scenario_spec": scenario.model_dump(mode="json"),
                **result.engine_record(),
                "provenance": provenance({scenario.name: result.engine_record()}),
            }
        )
        return
    hours = scenario.workday_s / SECONDS_PER_HOUR
    print_table(
        f"{scenario.name}: where a developer-day ({hours:g} h) goes — "
        f"{count_of(scenario.developers, 'developer')}, "
        f"{count_of(scenario.developer_days, 'developer-day')}, seed {seed}; "
        f"backends {', '.join(scenario.backends)}, policy {scenario.policy.kind}",
        ["category", "share", "hours per developer-day"],
        [
            [CATEGORY_LABELS[c], _percent(summary[f"share_{c}"]), summary[f"share_{c}"] * hours]
            for c in LEDGER_CATEGORIES
        ],
    )
    print_table(
        "Summary",
        ["measure", "value"],
        [
            [label, "n/a" if summary[key] != summary[key] else fmt(summary[key])]
            for key, label, fmt in _RUN_SUMMARY
        ],
    )
    print_latency(latency)


LATENCY_LABELS: dict[str, str] = {
    "ttft_s": "time to first token",
    "tbt_s": "time between tokens",
    "e2e_s": "end to end",
}
"""How ``run``'s latency table names the metrics of :mod:`speedtrap.models.latency`."""


def print_latency(latency: dict[str, dict[str, Any]]) -> None:
    """The latency percentiles per backend and metric (seconds; milliseconds between tokens)."""
    if not latency:
        return
    from speedtrap.models.latency import LATENCY_PERCENTILES

    def cell(metric: str, value: float) -> str:
        if value != value:  # NaN: no request has the metric
            return "n/a"
        return f"{1000 * value:.1f} ms" if metric == "tbt_s" else f"{value:.2f} s"

    print_table(
        "Latency per request (percentiles over the run's requests)",
        ["backend", "requests", "measure", *(f"p{p}" for p in LATENCY_PERCENTILES)],
        [
            [backend, entry["requests"], label, *(cell(metric, v) for v in entry[metric].values())]
            for backend, entry in latency.items()
            for metric, label in LATENCY_LABELS.items()
        ],
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
