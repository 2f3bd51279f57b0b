"""``speedtrap sweep`` and ``speedtrap experiment``: experiment designs over scenario parameters ×
replications (stored as they run, resumed and extended), and the canonical experiments."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError

from speedtrap.cli.behaviour import EnsembleOption, SingleOption
from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    MAX_REPLICATIONS,
    MAX_WORKERS,
    ExecutorOption,
    JsonOption,
    SchedulerOption,
    WorkersOption,
    bad_input_exits,
    fail,
    json_number,
    one_line,
    parse_set,
    print_json,
    print_table,
)
from speedtrap.provenance import provenance

if TYPE_CHECKING:  # imported where used, so that `speedtrap --help` starts fast
    import pandas as pd


# --- sweep ------------------------------------------------------------------------------------

SWEEP_OUTCOMES: list[tuple[str, str, float, str]] = [
    ("tasks_per_dev_day", "tasks per dev-day", 1.0, ""),
    ("waiting_share", "waiting (% of time)", 100.0, "%"),
    ("fixing_share", "fixing (% of time)", 100.0, "%"),
    ("usd_per_task", "$ per task (USD)", 1.0, ""),
]
"""Outcomes shown by ``sweep``: key, header with unit, scale and suffix of the shown numbers."""


def mean_pm(mean: float, low: float, high: float, n: int, scale: float, suffix: str) -> str:
    """``mean ± half-width`` of a confidence interval, two decimals, scaled (NaN: n/a), marked
    " (n=3)" from fewer than 5 values and " (zero width)" when it has none."""
    from speedtrap.analysis.statistics import ci_flag

    if math.isnan(mean):  # no value in any replication
        return "n/a"
    if math.isnan(low):  # one replication: no interval
        return f"{scale * mean:.2f}{suffix}"
    flag = ci_flag(n, low, high)
    return f"{scale * mean:.2f}{suffix} ± {scale * (high - low) / 2:.2f}{suffix}{flag}"


def sweep(
    experiment_file: Annotated[Path, typer.Argument(metavar="EXPERIMENT.toml", help="Experiment file.")],
    executor: Annotated[
        str, typer.Option("--executor", help="Where runs execute: serial, processes or dask.")
    ] = "serial",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            max=MAX_WORKERS,
            help="Worker processes (processes, local dask); default: the CPUs.",
        ),
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
            max=MAX_REPLICATIONS,
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
    from speedtrap.config.toml_file import file_problem, read_toml, shown_path
    from speedtrap.experiments import ResultStore, StoreMismatchError, make_executor, run_experiment

    problem = file_problem(experiment_file, "experiment file")  # a FIFO, a directory, a long name
    if problem is not None:
        fail(f"{shown_path(experiment_file)}: {problem}")
    with bad_input_exits():
        data = read_toml(experiment_file)
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
    with bad_input_exits():  # a store that cannot be used says so in one line (StoreError)
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
                    {k: json_number(v) for k, v in record.items()}
                    for record in sweep_differences(table, compare_to).to_dict("records")
                ]
                if compare_to is not None
                else None,
                "summary": [
                    {k: json_number(v) for k, v in record.items()} for record in summary.to_dict("records")
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
            [*point, *(mean_pm(*cells[(point, key)], scale, suffix) for key, _, scale, suffix in shown)]
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


def experiment(
    name: Annotated[str, typer.Argument(help="headline, break_even or fast_mode_externality.")],
    quick: Annotated[
        bool, typer.Option("--quick", help="The small CI-sized variant, stored under results/<name>-quick/.")
    ] = False,
    executor: ExecutorOption = "serial",
    workers: WorkersOption = None,
    scheduler: SchedulerOption = None,
    results_dir: Annotated[Path, typer.Option("--results-dir", help="Results go to DIR/<name>/.")] = Path(
        "results"
    ),
    ensemble: EnsembleOption = None,
    single: SingleOption = False,
) -> None:
    """Run a canonical experiment (experiments/<name>.toml): its runs, CSV tables and PNG + SVG
    figures go to results/<name>/, and it prints its finding in words with the numbers. It runs
    under the stored calibrated ensemble (K members × r seeds for the replications; behaviour.csv
    gives both intervals) unless --single or --ensemble FILE says otherwise.
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
            ensemble=ensemble,
            single=single,
        )
    except (StoreMismatchError, ImportError, FileNotFoundError) as exc:
        fail(str(exc))
    except (ValidationError, ValueError, KeyError) as exc:
        fail(one_line(exc))
