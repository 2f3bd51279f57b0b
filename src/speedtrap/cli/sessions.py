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
    LogFormat,
    LogFormatOption,
    bad_input_exits,
    check_output_path,
    count_of,
    fail,
    figure_suffixes,
    json_number,
    load_scenario,
    print_json,
    print_table,
    writing,
)
from speedtrap.cli.team import check_team_options, report_team_fit


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
    log_format: LogFormatOption = "auto",
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Also run the fitted scenario on the recorded backend at the speed fitted to the logs, "
            "and replay the logs with it (seeds 0–2); print whether the simulation reproduces the logs' "
            "tool, request, turn and stretch statistics (the replay's waiting share, which the logs "
            "cannot give) within stated tolerances.",
        ),
    ] = False,
    ensemble: Annotated[
        Path | None,
        typer.Option(
            "--ensemble",
            help="Also history-match the calibrated ensemble's members to the logs and write the members "
            "kept here (CSV, for compare --ensemble) with a sidecar NAME.fit.json.",
        ),
    ] = None,
    prior: Annotated[
        Path | None,
        typer.Option("--prior", help="The ensemble --ensemble narrows (default: the stored calibrated one)."),
    ] = None,
    replications: Annotated[
        int, typer.Option("--replications", min=1, max=100, help="With --ensemble: seeds per member, pooled.")
    ] = 4,  # speedtrap.experiments.team.DEFAULT_REPLICATIONS, where its source is (a test holds them equal)
    days: Annotated[
        float,
        typer.Option("--days", min=0.1, max=60.0, help="With --ensemble: working days of each member's run."),
    ] = 5.0,  # speedtrap.experiments.team.DEFAULT_DAYS (a test holds them equal)
    json_out: JsonOption = False,
) -> None:
    """Fit a scenario to your own coding-agent sessions: turns per task, tokens per request and
    their growth, tool time, human gaps, check-ins, review and diagnosis time, parallel sessions
    (docs/sessions.md).

    Writes the scenario (every fitted value commented with what it was fitted from, every field the
    logs cannot fit commented with the reason it kept its value) and a QQ-plot figure; prints what
    the loaders read and skipped, the fit quality (KS statistics) and the fields kept. JSON (--json),
    schema_version 1: {"schema_version": 1, "sessions": int, "requests": int, "developers": int,
    "report": [str], "skipped": {kind: int}, "fits": [{"field", "law", "parameter", "estimate",
    "ci_low", "ci_high", "n", "ks_stat", "ks_p"}], "kept": {field: reason}, "scenario": path, "figure":
    path, "estimated_output_requests": int, "check": [{"measure", "label", "logged", "replay",
    "simulated", "against", "tolerance", "within", "note"}] (with --check), "team": the sidecar's
    content with "ensemble" and "sidecar" paths (with --ensemble)}.

    With --ensemble, each member of the calibrated ensemble runs the fitted scenario (its developers ×
    --days × --replications seeds) and is kept when every trace statistic of its run is within 3 of
    the logs' (implausibility over the observation and simulation errors); nothing is written when
    none is (docs/sessions.md, "A team's own ensemble").
    """
    from speedtrap.sessions import fit_scenario, load_sessions, scenario_toml
    from speedtrap.sessions.fit import qq_figure
    from speedtrap.sessions.plain_trace import estimate_note, estimated_outputs

    check_output_path(
        out, "--out"
    )  # first: a directory (such as ".") has no name to derive the figure's from
    figure_path = figures or out.with_name(out.stem + "_qq.png")
    check_output_path(figure_path, "--figures", suffixes=figure_suffixes() if figures else None)
    if ensemble is None and prior is not None:
        fail("--prior names the ensemble that --ensemble narrows: give --ensemble too")
    team_prior = check_team_options(ensemble, prior) if ensemble is not None else None
    with bad_input_exits():
        loaded = load_sessions(sessions, developer=developer, log_format=log_format)
        if not json_out:
            for line in loaded.report.lines():
                typer.echo(line)
        scenario = load_scenario(base) if base is not None else None
        fitted = fit_scenario(loaded, scenario)
    header = (
        f"Fitted by `speedtrap fit` to {fitted.n_sessions} sessions ({fitted.n_requests} requests, "
        f"{_count(fitted.n_developers, 'developer')}).\n"
        "Fields without a comment keep the base scenario's value."
    )
    with writing(out, "--out"):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(scenario_toml(fitted, header))
    figure = qq_figure(fitted)
    with writing(figure_path, "--figures"):
        figure_path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(figure_path, dpi=100)
    table = fitted.table()
    checked = None
    if check:
        from speedtrap.sessions.check import fit_check
        from speedtrap.sessions.replay import recorded_backend

        with bad_input_exits():
            checked = fit_check(loaded, fitted, backend=recorded_backend(loaded.trace))
    team = None
    if ensemble is not None and team_prior is not None and json_out:
        team = report_team_fit(
            loaded, fitted, team_prior, ensemble, replications=replications, days=days, seed=0, quiet=True
        )
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "sessions": fitted.n_sessions,
                "requests": fitted.n_requests,
                "developers": fitted.n_developers,
                "report": loaded.report.lines(),
                "skipped": dict(loaded.report.skipped),
                "fits": [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
                "kept": dict(fitted.kept),
                "scenario": str(out),
                "figure": str(figure_path),
                "estimated_output_requests": estimated_outputs(loaded.trace),
                **(
                    {}
                    if checked is None
                    else {
                        "check": [
                            {k: json_number(v) for k, v in row.items()} for row in checked.to_dict("records")
                        ]
                    }
                ),
                **({} if team is None else {"team": team}),
            }
        )
        return
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
    note = estimate_note(loaded.trace, "the output-token fit (task_mix.output_tokens)")
    if note:
        typer.echo(note)
    kept = fitted.kept_lines()
    if kept:
        typer.echo("Kept at the base value (the logs cannot fit them):")
        for line in kept:
            typer.echo(f"  {line}")
    if checked is not None:
        from speedtrap.sessions.check import check_lines

        typer.echo("Does the fitted scenario reproduce its own logs? (simulated against the logs, seeds 0–2)")
        for line in check_lines(checked):
            typer.echo(f"  {line}")
    typer.echo(f"wrote {out} and {figure_path}")
    if ensemble is not None and team_prior is not None:  # after the fit, which it runs on
        report_team_fit(
            loaded, fitted, team_prior, ensemble, replications=replications, days=days, seed=0, quiet=False
        )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _replay_cell(measure: str, value: float, *, change: bool = False) -> str:
    if "share" in measure:  # a change of a share is in percentage points
        return f"{100 * value:+.1f} pp" if change else f"{100 * value:.1f}%"
    if measure.startswith("usd"):
        return f"${value:,.2f}"
    return f"{value:.3g}"


def _coverage_line(coverage: dict[str, float], logged: float) -> str:
    """Whether the replay looped the logs to fill its horizon, and what the logs' own timestamps
    give per day (``logged``: tasks per developer-day)."""
    per_day = (
        f"; from their timestamps the logs give {logged:.3g} tasks per developer-day with a request"
        if math.isfinite(logged)
        else ""
    )
    hours = f"{coverage['logged_hours']:.2g} h of logs"
    tasks = _count(int(coverage["recorded_tasks"]), "recorded task")
    if coverage["passes"] > 1:
        return (
            f"The {tasks} ({hours}) were replayed {coverage['passes']:.3g} times over to fill the "
            f"horizon: per-day figures count the repeats{per_day}."
        )
    return f"The replay went once through the {tasks} ({hours}){per_day}."


def run_replay(
    scenario_file: Path | None,
    logs: Sequence[Path],
    backend: str | None,
    recorded: str | None,
    sets: Sequence[str],
    seed: int,
    json_out: bool,
    log_format: LogFormat = "auto",
) -> None:
    """``speedtrap run --replay``: the recorded sessions on their backend and on ``backend``."""
    from speedtrap.sessions import load_sessions
    from speedtrap.sessions.plain_trace import estimate_note, estimated_outputs
    from speedtrap.sessions.replay import recorded_backend, replay_pair
    from speedtrap.sessions.retime import expected_rework, fit_backend_speed

    with bad_input_exits():
        loaded = load_sessions(logs, log_format=log_format)
        if not json_out:
            for line in loaded.report.lines():
                typer.echo(line)
        loaded.require_requests()
        scenario = load_scenario(scenario_file, sets=sets)
        recorded = recorded or recorded_backend(loaded.trace)
        backend = backend or recorded
        speed = fit_backend_speed(loaded.trace, scenario, recorded, seed)
        # The recorded backend at the speed that matches the logs is the baseline of the change.
        table = replay_pair(loaded.trace, speed.scenario, backend, recorded=recorded, seed=seed)
        rework = expected_rework(loaded.trace, scenario, recorded, backend)
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "scenario": scenario.name,
                "seed": seed,
                "recorded_backend": recorded,
                "backend": backend,
                "report": loaded.report.lines(),
                "skipped": dict(loaded.report.skipped),
                "recorded_timing": speed.before,
                "backend_speed": {
                    "decode_speedup": json_number(speed.decode_speedup),
                    "decode_speedup_ci": [json_number(v) for v in speed.decode_speedup_ci],
                    "ttft_overhead_s": json_number(speed.ttft_overhead_s),
                    "after": speed.after,
                    "requests": speed.n,
                    "reason": speed.reason or None,
                },
                "rework": {k: json_number(v) for k, v in rework.items()},
                "estimated_output_requests": estimated_outputs(loaded.trace),
                "coverage": {
                    name: {k: json_number(v) for k, v in c.items()}
                    for name, c in table.attrs["coverage"].items()
                },
                "measures": [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
            }
        )
        return
    print_table(
        f"{_count(loaded.n_sessions, 'recorded session')} of {_count(loaded.n_developers, 'developer')} "
        "replayed for "
        f"{count_of(scenario.horizon_s / scenario.workday_s, 'developer-day')} each, seed {seed}",
        [
            "measure",
            "logged",
            f"{recorded} (re-simulated{'' if speed.reason else ', fitted speed'})",
            backend,
            f"change from {recorded}",
        ],
        [
            [
                r.label,
                _replay_cell(r.measure, r.logged) if math.isfinite(r.logged) else "—",
                _replay_cell(r.measure, r.recorded),
                _replay_cell(r.measure, r.replayed),
                _replay_cell(r.measure, r.change, change=True),
            ]
            for r in table.itertuples()
        ],
    )
    for line in speed.lines():
        typer.echo(line)
    typer.echo(
        f"Baseline of the change: {recorded} "
        + ("at its preset speed (no speed fitted)." if speed.reason else "at the speed fitted to the logs.")
    )
    per_day = float(table.set_index("measure").loc["tasks_per_dev_day", "logged"])
    typer.echo(_coverage_line(table.attrs["coverage"][backend], per_day))
    note = estimate_note(loaded.trace, "the replay's figures")
    if note:
        typer.echo(note)
    if math.isfinite(rework["factor"]):
        typer.echo(
            f"The logs record {rework['logged']:g} rework signals (interrupted or refused outputs); on "
            f"{backend} (failure multiplier {rework['factor']:.3g}× {recorded}'s) expect about "
            f"{rework['expected']:.3g}."
        )
