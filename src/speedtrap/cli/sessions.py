"""``speedtrap fit`` and ``speedtrap run --replay``: your own coding-agent sessions (docs/sessions.md).

Registered on the ``speedtrap`` app by :mod:`speedtrap.cli` (``run --replay`` by way of
:mod:`speedtrap.cli.run`); the output and error helpers are :mod:`speedtrap.cli.common`'s.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    JsonOption,
    bad_input_exits,
    json_number,
    load_scenario,
    print_json,
    print_table,
)


def fit(
    sessions: Annotated[
        list[Path],
        typer.Argument(
            metavar="SESSIONS",
            help="Session logs: Claude Code transcripts (.jsonl), traces (.csv, .parquet) or directories.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Write the fitted scenario here (TOML).")] = Path(
        "fitted.toml"
    ),
    base: Annotated[
        Path | None, typer.Option("--scenario", help="Scenario to fit (default: built-in defaults).")
    ] = None,
    figures: Annotated[
        Path | None, typer.Option("--figures", help="QQ-plot figure (PNG; default: OUT with suffix _qq.png).")
    ] = None,
    developer: Annotated[
        str, typer.Option("--developer", help="Who ran the Claude Code sessions (traces name their own).")
    ] = "developer-0",
    json_out: JsonOption = False,
) -> None:
    """Fit a scenario to your own coding-agent sessions: turns per session, tokens per request and
    their growth, tool time, human gaps, check-in frequency, parallel sessions (docs/sessions.md).

    Writes the scenario (every fitted value commented with what it was fitted from) and a QQ-plot
    figure; prints what the loaders skipped and the fit quality (KS statistics). JSON (--json),
    schema_version 1: {"schema_version": 1, "sessions": int, "requests": int, "developers": int,
    "skipped": {kind: int}, "fits": [{"field", "law", "parameter", "estimate", "ci_low", "ci_high",
    "n", "ks_stat", "ks_p"}], "scenario": path, "figure": path}.
    """
    from speedtrap.sessions import fit_scenario, load_sessions, scenario_toml
    from speedtrap.sessions.fit import qq_figure

    with bad_input_exits():
        loaded = load_sessions(sessions, developer=developer)
        scenario = load_scenario(base) if base is not None else None
        fitted = fit_scenario(loaded, scenario)
    header = (
        f"Fitted by `speedtrap fit` to {fitted.n_sessions} sessions ({fitted.n_requests} requests, "
        f"{_count(fitted.n_developers, 'developer')}).\n"
        "Fields without a comment keep the base scenario's value."
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(scenario_toml(fitted, header))
    figure_path = figures or out.with_name(out.stem + "_qq.png")
    figure = qq_figure(fitted)
    figure.savefig(figure_path, dpi=100)
    table = fitted.table()
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "sessions": fitted.n_sessions,
                "requests": fitted.n_requests,
                "developers": fitted.n_developers,
                "skipped": dict(loaded.report.skipped),
                "fits": [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
                "scenario": str(out),
                "figure": str(figure_path),
            }
        )
        return
    for line in loaded.report.lines():
        typer.echo(line)
    print_table(
        f"Fit to {fitted.n_sessions} sessions ({fitted.n_requests} requests, "
        f"{_count(fitted.n_developers, 'developer')})",
        ["field", "law", "parameter", "estimate", "95% interval", "n", "KS"],
        [
            [
                r.field,
                r.law,
                r.parameter,
                float(r.estimate),
                f"{r.ci_low:.4g} – {r.ci_high:.4g}" if math.isfinite(r.ci_low) else "",
                int(r.n),
                f"{r.ks_stat:.3f}" if math.isfinite(r.ks_stat) else "",
            ]
            for r in table.itertuples()
        ],
    )
    typer.echo(f"wrote {out} and {figure_path}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _replay_cell(measure: str, value: float, *, change: bool = False) -> str:
    if "share" in measure:  # a change of a share is in percentage points
        return f"{100 * value:+.1f} pp" if change else f"{100 * value:.1f}%"
    if measure.startswith("usd"):
        return f"${value:,.2f}"
    return f"{value:.3g}"


def run_replay(
    scenario_file: Path | None,
    logs: Sequence[Path],
    backend: str | None,
    recorded: str | None,
    sets: Sequence[str],
    seed: int,
    json_out: bool,
) -> None:
    """``speedtrap run --replay``: the recorded sessions on their backend and on ``backend``."""
    from speedtrap.sessions import load_sessions
    from speedtrap.sessions.replay import recorded_backend, replay, replay_pair, request_timing_error

    with bad_input_exits():
        loaded = load_sessions(logs)
        if not len(loaded.trace):
            raise ValueError("no usable request in the session logs")
        scenario = load_scenario(scenario_file, sets=sets)
        recorded = recorded or recorded_backend(loaded.trace)
        backend = backend or recorded
        table = replay_pair(loaded.trace, scenario, backend, recorded=recorded, seed=seed)
        timing = request_timing_error(replay(loaded.trace, scenario.with_backend(recorded), seed))
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "scenario": scenario.name,
                "seed": seed,
                "recorded_backend": recorded,
                "backend": backend,
                "skipped": dict(loaded.report.skipped),
                "recorded_timing": timing,
                "measures": table.to_dict("records"),
            }
        )
        return
    for line in loaded.report.lines():
        typer.echo(line)
    print_table(
        f"{_count(loaded.n_sessions, 'recorded session')} of {_count(loaded.n_developers, 'developer')} "
        "replayed for "
        f"{scenario.horizon_s / scenario.workday_s:g} developer-days each, seed {seed}",
        ["measure", f"{recorded} (recorded)", backend, "change"],
        [
            [
                r.label,
                _replay_cell(r.measure, r.recorded),
                _replay_cell(r.measure, r.replayed),
                _replay_cell(r.measure, r.change, change=True),
            ]
            for r in table.itertuples()
        ],
    )
    typer.echo(
        f"{recorded} re-times the recorded requests with a median error of "
        f"{100 * timing['median_abs_rel_error']:.2f}% (90th percentile "
        f"{100 * timing['p90_abs_rel_error']:.2f}%, total {100 * (timing['total_ratio'] - 1):+.2f}%)."
    )
