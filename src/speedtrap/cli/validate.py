"""``speedtrap validate workflow`` and ``speedtrap validate serving``: the simulator against published
measurements (the workflow calibration targets; the serving physics against serving benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
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

    if no_figure:
        figure = None
    if figure is not None:
        check_output_path(figure, "--figure", suffixes=figure_suffixes())
    eff, date, ids = stored_fit()
    if refit:
        eff, fitted_ids = fit_efficiencies()
        date, ids = "now", tuple(fitted_ids)
    check = validate_serving(eff)
    summary = summarize(check)
    if figure is not None:
        with writing(figure, "--figure"):
            write_figure(check, figure)
    if as_json:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "fit": {"date": date, "ids": list(ids), **asdict(eff)},
                "rows": [{k: json_number(v) for k, v in row.items()} for row in check.to_dict("records")],
                "summary": [
                    {k: json_number(v) for k, v in row.items()} for row in summary.to_dict("records")
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
