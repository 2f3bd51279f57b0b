"""``speedtrap validate workflow`` and ``speedtrap validate serving``: the simulator against published
measurements (the workflow calibration targets; the serving physics against serving benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    MAX_REPLICATIONS,
    bad_input_exits,
    check_output_path,
    count_progress,
    figure_suffixes,
    headline_scenario_path,
    json_number,
    print_json,
    print_table,
    writing,
)


def validate_workflow_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="4 developers × 5 days per scenario instead of the files' sizes.")
    ] = False,
    replications: Annotated[
        int, typer.Option("--replications", min=2, max=MAX_REPLICATIONS, help="Seeded replications.")
    ] = 5,
    seed: Annotated[int, typer.Option("--seed", min=0, help="First replication seed.")] = 0,
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
                "targets": [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
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


VALIDATE_SERVING_SCHEMA = 2
"""JSON schema of ``validate serving`` (2: held out by configuration group, compared at equal
interactivity; 1 had a fixed calibration/held-out split of rows)."""


def validate_serving_command(
    figure: Annotated[
        Path | None,
        typer.Option(
            "--figure", dir_okay=False, help="Where to write the predicted-vs-measured figure (PNG)."
        ),
    ] = Path("results/validation/serving_validation.png"),
    no_figure: Annotated[bool, typer.Option("--no-figure", help="Do not write the figure.")] = False,
    refit: Annotated[
        bool, typer.Option("--refit", help="Refit the factors on every group first (in-sample predictions).")
    ] = False,
    in_sample_only: Annotated[
        bool,
        typer.Option(
            "--in-sample-only", help="Skip the leave-one-group-out refits (seconds instead of a minute)."
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Predict every published serving measurement of
    src/speedtrap/validation/data/serving_measurements.csv with the serving physics (the step-time
    function the pool uses), holding out each configuration group (model × hardware × serving mode) in
    turn and refitting the factors on the others, and compare at equal interactivity: tok/s per GPU
    where the predicted frontier has the measured tok/s per user, tok/s per user where it has the
    measured tok/s per GPU, time to first token at the stated concurrency (rows with only one speed:
    at their concurrency). Prints the held-out comparisons, the median and worst absolute error per
    metric held out and in sample, the same at the stated concurrencies, and the acceptance targets;
    writes the predicted-vs-measured figure (default results/validation/serving_validation.png). Takes
    about a minute (--in-sample-only: seconds).

    JSON (schema_version 2): {"schema_version", "fit": {"date", "rows", factor: float, ...},
    "sources": [str], "groups": [str], "targets": {"median_abs_error", "worst_abs_error",
    "ttft_median_abs_error"}, "rows": [{"id", "group", "source", "model", "hardware", "chips",
    "concurrency", "fit" ("held_out"|"in_sample"), "comparison" ("equal_interactivity"|
    "equal_throughput"|"at_concurrency"), "metric", "measured", "predicted", "error", "batch",
    "reached", "headline", "concurrency_derived"}], "summary": [{"fit", "metric", "rows",
    "median_abs_error", "worst_abs_error", "worst_id", "worst_error"}], "summary_at_concurrency": [same]};
    errors are predicted/measured − 1, tok/s count output tokens only."""
    from dataclasses import asdict

    from speedtrap.validation.serving import (
        TARGET_MEDIAN_ABS_ERROR,
        TARGET_TTFT_MEDIAN_ABS_ERROR,
        TARGET_WORST_ABS_ERROR,
        load_measurements,
        stored_fit,
        summarize,
        validate_serving,
        write_figure,
    )
    from speedtrap.validation.serving_fit import fit_factors

    if figure is not None and not no_figure:
        check_output_path(figure, "--figure", suffixes=figure_suffixes())
    table = load_measurements()
    factors, date, fitted_rows = stored_fit()
    if refit:
        factors, date, fitted_rows = fit_factors(table), "now", len(table)
    check = validate_serving(factors, table, cross_validate=not in_sample_only)
    summary, at_concurrency = summarize(check), summarize(check, headline=False)
    if no_figure:
        figure = None
    if figure is not None:
        with writing(figure, "--figure"):
            write_figure(check, figure)
    targets = {
        "median_abs_error": TARGET_MEDIAN_ABS_ERROR,
        "worst_abs_error": TARGET_WORST_ABS_ERROR,
        "ttft_median_abs_error": TARGET_TTFT_MEDIAN_ABS_ERROR,
    }
    if as_json:
        records = [{k: json_number(v) for k, v in row.items()} for row in check.to_dict("records")]
        print_json(
            {
                "schema_version": VALIDATE_SERVING_SCHEMA,
                "fit": {"date": date, "rows": fitted_rows, **asdict(factors)},
                "sources": sorted(set(table["source"])),
                "groups": sorted(set(table["group"])),
                "targets": targets,
                "rows": records,
                "summary": [{k: json_number(v) for k, v in r.items()} for r in summary.to_dict("records")],
                "summary_at_concurrency": [
                    {k: json_number(v) for k, v in r.items()} for r in at_concurrency.to_dict("records")
                ],
            }
        )
        return
    fit = "held_out" if not in_sample_only else "in_sample"
    shown = check[(check["fit"] == fit) & check["headline"]]
    print_table(
        f"Serving physics vs {len(table)} published measurements, {fit.replace('_', ' ')} "
        "(error = predicted / measured − 1; * = the predicted frontier does not reach the measured figure)",
        ["id", "comparison", "metric", "measured", "predicted", "error"],
        [
            (
                r.id,
                r.comparison.replace("_", " "),
                r.metric,
                f"{r.measured:.4g}",
                f"{r.predicted:.4g}",
                f"{100 * r.error:+.0f}%" + ("" if r.reached else "*"),
            )
            for r in shown.itertuples()
        ],
    )
    for title, frame in (
        (
            "at equal interactivity (tok/s per GPU), equal throughput (tok/s per user), "
            "TTFT at the concurrency",
            summary,
        ),
        ("at the stated concurrency", at_concurrency),
    ):
        print_table(
            f"Absolute error {title} (factors fitted {date} on {fitted_rows} rows; "
            "held out: refitted without the group)",
            ["fit", "metric", "rows", "median", "worst", "worst row"],
            [
                (
                    r.fit,
                    r.metric,
                    r.rows,
                    f"{100 * r.median_abs_error:.0f}%",
                    f"{100 * r.worst_abs_error:.0f}%",
                    r.worst_id,
                )
                for r in frame.itertuples()
            ],
        )
    typer.echo(
        f"Targets (held out): median ≤ {100 * TARGET_MEDIAN_ABS_ERROR:.0f}% on tok/s per GPU and per user, "
        f"worst ≤ {100 * TARGET_WORST_ABS_ERROR:.0f}%, "
        f"TTFT median ≤ {100 * TARGET_TTFT_MEDIAN_ABS_ERROR:.0f}%."
    )
    if figure is not None:
        typer.echo(f"figure: {figure}")
