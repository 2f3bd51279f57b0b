"""``speedtrap claims``: the claims of the fast-inference debate as experiments, each with a verdict
computed from its runs (experiments/claims/*.toml; :mod:`speedtrap.experiments.claims`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from speedtrap.cli.behaviour import EnsembleOption, SingleOption
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

if TYPE_CHECKING:
    from speedtrap.config.claim import ClaimSpec
    from speedtrap.experiments.claims import ClaimRun


def write_figure(done: ClaimRun, claim: ClaimSpec, directory: Path) -> Path:
    """Save the claim's figure as ``DIR/<experiment name>.png`` (150 dpi) and return its path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from speedtrap.plots.claims import claim_figure

    directory.mkdir(parents=True, exist_ok=True)
    fig = claim_figure(done.result, done.runs, claim)
    path = directory / f"{done.spec.name}.png"
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
    return path


DEFAULT_MEMBERS = 10
"""Members of the calibrated ensemble the defaults run under, each on the claim's seeds: ten, half of
the stored ensemble, whose central 95% (about their range) covers a new member 82% of the time."""
QUICK_MEMBERS = 5
"""… with --quick: the fewest that give a behavioural interval
(:data:`speedtrap.analysis.intervals.MIN_MEMBERS`; a rough one, and flagged as such)."""


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
    ensemble: EnsembleOption = None,
    single: SingleOption = False,
    members: Annotated[
        int | None,
        typer.Option(
            "--members",
            min=1,
            help=f"Run the defaults under K members of the ensemble, evenly spaced through the file as "
            f"compare chooses them (default {DEFAULT_MEMBERS}; {QUICK_MEMBERS} with --quick).",
        ),
    ] = None,
    figures: Annotated[
        Path | None,
        typer.Option(
            "--figures",
            help="Write each claim's figure to DIR/<name>.png (the effects with both intervals, and the "
            "samples against the input that decides them).",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Run every claim (or those given with --only) and print its verdict — true, false, depends or not
    identified, by the rule printed with it; the arms' verdicts beside it — with the effect at the
    calibrated defaults (a claim's stated point, where it states one) and its two 95% intervals, seed
    noise and behavioural uncertainty, the PRIM box of assumptions in which it flips when the box
    survives resampling (else "no stable box"), cross-checked by a CART tree, and for a verdict that
    depends, the inputs to measure first (EVPPI). --quick marks every line, figure and file as quick
    and stores under <name>-quick. The defaults are K members of the stored calibrated ensemble × the
    claim's seeds (--members K; --ensemble FILE another ensemble; --single the scenario's own
    parameter set, no behavioural interval), and each Latin-hypercube sample is paired with a member.
    Runs are stored as they finish: run the same command again to resume. The wall time is printed.

    JSON (--json): {"schema_version", "quick", "wall_s", "claims": [each claim.json: name, statement,
    verdict, arm_verdicts, parts (test, arm, verdict, depends_on, at_defaults, across_members, defaults
    {mean, ci_low, ci_high, n, caveat}, behavioural, scenario_file, samples, holds_share, flip,
    flip_words, cart, cart_words, agreement, stable, decision, identify),
    reported, runs, samples, rule, notes, quick, scenario, stated, wall_s (this invocation),
    wall_s_total (every invocation that ran or judged these runs), command]}, "provenance"}."""
    from speedtrap.experiments import StoreMismatchError
    from speedtrap.experiments.claims import (
        QUICK_MARK,
        RESULT_FILE,
        format_result,
        load_claim,
        read_ensemble,
        run_claim,
        select_members,
    )
    from speedtrap.experiments.ensemble import default_ensemble_path
    from speedtrap.experiments.executors import EXECUTOR_KINDS

    start = time.monotonic()
    try:
        if executor not in EXECUTOR_KINDS:
            raise ValueError(
                f"--executor: unknown executor {executor!r} (known: {', '.join(EXECUTOR_KINDS)})"
            )
        from speedtrap.experiments.claims import claim_names

        specs = [load_claim(name) for name in (only or claim_names())]
        chosen = None
        if single and (ensemble is not None or members is not None):
            raise ValueError("--single runs the scenario's own parameter set: drop --ensemble and --members")
        if not single:
            path = ensemble if ensemble is not None else default_ensemble_path()
            count = members if members is not None else (QUICK_MEMBERS if quick else DEFAULT_MEMBERS)
            frame = read_ensemble(path)
            chosen = select_members(frame, min(count, len(frame)) if members is None else count)
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
            if figures is not None:
                write_figure(done, claim, figures)
            if json_out:
                payloads.append(json.loads((results_dir / done.spec.name / RESULT_FILE).read_text()))
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
        mark = f"{QUICK_MARK} " if quick else ""
        where = (
            f"{results_dir}/<name>-quick/ (never the full runs' <name>/)"
            if quick
            else f"{results_dir}/<name>/"
        )
        typer.echo(f"{mark}{len(specs)} claims in {wall_s:.1f} s of wall time; results in {where}")
