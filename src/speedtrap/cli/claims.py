"""``speedtrap claims``: the claims of the fast-inference debate as experiments, each with a verdict
computed from its runs (experiments/claims/*.toml; :mod:`speedtrap.experiments.claims`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    ExecutorOption,
    JsonOption,
    SchedulerOption,
    WorkersOption,
    fail,
    one_line,
    print_json,
)
from speedtrap.provenance import provenance


def claims(
    quick: Annotated[
        bool, typer.Option("--quick", help="The small variants (seconds each), stored under <name>-quick.")
    ] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run this claim only (repeatable), e.g. c6_slow_mode.")
    ] = None,
    executor: ExecutorOption = "serial",
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
    results_dir: Annotated[
        Path, typer.Option("--results-dir", help="Each claim's runs and claim.json go to DIR/<name>/.")
    ] = Path("results"),
    ensemble: Annotated[
        Path | None,
        typer.Option(
            "--ensemble",
            help="A calibrated ensemble (CSV: member, then one column per scenario path): fills each "
            "verdict's behavioural-uncertainty interval.",
        ),
    ] = None,
    members: Annotated[
        int | None,
        typer.Option(
            "--members",
            min=1,
            help="With --ensemble: run the defaults under K of its members, evenly spaced through the "
            "file as compare chooses them (default: every member).",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Run every claim (or those given with --only) and print its verdict — true, false or depends, by
    the rule printed with it — with the effect at the defaults and its 95% seed interval, the
    behavioural-uncertainty interval (with --ensemble; --members K runs K of its members), and the
    PRIM box of assumptions in which it flips, cross-checked by a CART tree. Runs are stored as they
    finish: run the same command again to resume. The wall time is printed.

    JSON (--json): {"schema_version", "quick", "wall_s", "claims": [each claim.json: name, statement,
    verdict, arm_verdicts, parts (test, arm, verdict, at_defaults, defaults {mean, ci_low, ci_high, n,
    caveat}, behavioural, samples, holds_share, flip, flip_words, cart, cart_words, agreement),
    reported, runs, samples, rule, notes, wall_s, command]}, "provenance"}."""
    from speedtrap.experiments import StoreMismatchError
    from speedtrap.experiments.claims import (
        format_result,
        load_claim,
        read_ensemble,
        result_payload,
        run_claim,
        select_members,
    )
    from speedtrap.experiments.executors import EXECUTOR_KINDS

    start = time.monotonic()
    try:
        if executor not in EXECUTOR_KINDS:
            raise ValueError(
                f"--executor: unknown executor {executor!r} (known: {', '.join(EXECUTOR_KINDS)})"
            )
        from speedtrap.experiments.claims import claim_names

        specs = [load_claim(name) for name in (only or claim_names())]
        if members is not None and ensemble is None:
            raise ValueError("--members needs --ensemble (the ensemble whose members to run)")
        chosen = select_members(read_ensemble(ensemble), members) if ensemble is not None else None
        payloads = []
        for claim in specs:
            done = run_claim(
                claim,
                quick=quick,
                executor=executor,
                workers=workers,
                scheduler=scheduler,
                results_dir=results_dir,
                progress=not json_out,
                ensemble=chosen,
            )
            if json_out:
                payloads.append(result_payload(done.result, wall_s=done.wall_s, quick=quick))
            else:
                typer.echo("\n".join(format_result(done.result, wall_s=done.wall_s)))
    except (StoreMismatchError, ImportError, FileNotFoundError) as exc:
        fail(str(exc))
    except (ValidationError, ValueError, KeyError) as exc:
        fail(one_line(exc))
    wall_s = time.monotonic() - start
    if json_out:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "quick": quick,
                "wall_s": wall_s,
                "claims": payloads,
                "provenance": provenance(),
            }
        )
    else:
        typer.echo(f"{len(specs)} claims in {wall_s:.1f} s of wall time; results in {results_dir}/")
