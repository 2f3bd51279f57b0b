"""``speedtrap validate workflow`` and ``speedtrap validate serving``: the simulator against published
measurements (the workflow calibration targets; the serving physics against serving benchmarks)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    MAX_REPLICATIONS,
    bad_input_exits,
    check_output_path,
    count_progress,
    fail,
    figure_suffixes,
    headline_scenario_path,
    json_number,
    print_json,
    print_table,
    writing,
)

DEFAULT_REPLICATIONS = 244
"""``validate workflow``'s default runs: every member of the stored ensemble, as many seeds each as fit
(61 members × 4 seeds since the sixth calibration of 2026-12-07; 110 × 2, 28 × 4 and 40 × 3
before). With 2 members (an earlier default of 5 replications) the pass count moved with the draw:
14 of 19 at the default, 15 with 10 members, 17 with 50; with 20 of the 40 members × 2 seeds, 19 of
21 in sample at seed 0 and 16 at seed 1000; with all 40 × 3, 16 of 21 at both, the same targets."""


def validate_workflow_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="4 developers × 5 days per scenario instead of the files' sizes.")
    ] = False,
    replications: Annotated[
        int,
        typer.Option(
            "--replications",
            min=2,
            max=MAX_REPLICATIONS,
            help="Seeded replications: under an ensemble K members × r ≥ 2 seeds (default 244: every member "
            "of the 61-member ensemble on 4 seeds, so that the members a run draws do not move the count; "
            "a target whose 95% interval crosses its bound is undecided, as seeds may flip its mean).",
        ),
    ] = DEFAULT_REPLICATIONS,
    seed: Annotated[int, typer.Option("--seed", min=0, help="First replication seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    ensemble: Annotated[
        Path | None,
        typer.Option(
            "--ensemble",
            dir_okay=False,
            help="A calibrated ensemble CSV to run instead of the stored one (member, one column per path).",
        ),
    ] = None,
    single: Annotated[
        bool,
        typer.Option("--single", help="Run the scenario files' own single parameter set, not the ensemble."),
    ] = False,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity",
            help="Instead: Sobol' indices of every behavioural parameter on the headline waiting and "
            "fixing shares, from the calibration's wave-1 runs, and whether each is fitted to a target.",
        ),
    ] = False,
    calibration: Annotated[
        Path | None,
        typer.Option(
            "--calibration",
            file_okay=False,
            help="With --sensitivity: the calibration's outputs (default experiments/calibration/, "
            "written by python experiments/calibrate.py).",
        ),
    ] = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="With --sensitivity: print the published Markdown table.")
    ] = False,
    csv: Annotated[
        Path | None,
        typer.Option("--csv", dir_okay=False, help="With --sensitivity: also write the table as CSV here."),
    ] = None,
    sobol_n: Annotated[
        int, typer.Option("--sobol-n", min=2, help="With --sensitivity: Saltelli base samples (power of 2).")
    ] = 1024,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="With --sensitivity: bootstrap refits per emulator.")
    ] = 30,
    results_dir: Annotated[
        Path,
        typer.Option(
            "--results-dir",
            file_okay=False,
            help="With --sensitivity --quick: where the tiny design's runs are stored.",
        ),
    ] = Path("results"),
    study_holdout: Annotated[
        bool,
        typer.Option(
            "--study-holdout",
            help="Instead: leave-one-study-out on the calibration's final check (--calibration DIR, "
            "default experiments/calibration/): each fitted study's targets as predicted by the checked "
            "sets that every other study keeps, and what each calibration refitted without a study "
            "(experiments/calibrate.py --leave-out STUDY) predicts for it.",
        ),
    ] = False,
    identification: Annotated[
        bool,
        typer.Option(
            "--identification",
            help="Instead: each behaviour parameter's span over its sourced range across the ensemble's "
            "members (the stored one, or --ensemble), and how many span at least 80% of it.",
        ),
    ] = False,
) -> None:
    """Run the workflow calibration scenarios (experiments/scenarios/headline.toml and metr.toml)
    and print every target of src/speedtrap/validation/data/workflow_targets.csv: the published
    value, the simulated mean with its 95% t interval over the replications, the relative error
    and pass/fail within the tolerance fixed in the table. Then the two eras (metr.toml, early-2025
    tools; agentic-2026.toml, today's agents, no target) with METR's statistic — developer effort
    per task with AI over by hand — and the output ratio (task-equivalents, other work counted) and
    the tasks ratio beside it.

    JSON (schema_version 1): {"schema_version", "replications", "passed", "targets": [{"id",
    "scenario", "unit", "published", "simulated", "ci_low", "ci_high", "n", "relative_error",
    "tolerance", "accept_low", "accept_high", "passed", "edge", "verdict", "source"}], "eras": [{"era", "n",
    "ai_vs_manual_time_ratio", "…_low", "…_high", "ai_vs_manual_output_ratio", "…_low", "…_high",
    "ai_vs_manual_throughput_ratio", "…_low", "…_high"}], "passed_by_role": {role: {"passed",
    "targets"}}, "verdicts_by_role": {role: {"pass", "undecided", "miss"}}}; each target also has
    "role"; accept_low/high: the simulated values the tolerance accepts, in the target's unit;
    "passed": the mean within them; "edge": the 95% interval over the runs crosses a bound of that
    range, so another draw may flip "passed"; "verdict": "pass" (the interval inside the range),
    "miss" (wholly outside) or "undecided" (on the edge). The tables count the verdicts, which a
    draw moves only when an interval moves across a bound, beside the count by the mean alone;
    the eras' intervals: "…_low"/"…_high" the 95% interval over seeds, "…_behaviour_low"/"…_high" over
    the ensemble's members (null with one parameter set), "…_dominant" which is wider. By default the
    stored calibrated ensemble runs (K members × r seeds, as compare spends --replications);
    --ensemble FILE another, --single the scenario files' own values.

    --sensitivity: fits Gaussian-process emulators of the headline waiting and fixing shares of the
    day and of every target's statistic to the calibration's wave-1 runs (a Latin hypercube over
    the full sourced ranges), checks them by leave-one-out Q², and prints each parameter's
    first-order and total Sobol' indices (SALib on the emulators' mean, --sobol-n base samples, 95%
    bootstrap intervals over --bootstrap refits), the targets it is fitted to and a flag for any
    unfitted parameter with a total index above 0.20 on either share (docs/calibration.md,
    "Sensitivity of the headline shares"). --quick runs a tiny wave 1 itself (seconds; the indices
    mean nothing); --replications and --seed do not apply. JSON (schema_version 1): {"schema_version",
    "source", "waves", "n", "bootstrap", "confidence", "seed", "thresholds": {"dominance", "fit",
    "target_q2"}, "flagged", "warnings", "parameters": [{"parameter", "<share>:S1", "<share>:S1_low",
    …, "<share>:ST_high", "max_ST", "fitted_to", "fitted", "dominant", "flag"}], "emulators":
    [{"output", "kind", "statistic", "n_train", "q2", "noise_share", "mc_half_width", "counts"}],
    "indices": [{"output", "kind", "parameter", "S1", "S1_low", "S1_high", "ST", "ST_low",
    "ST_high"}]}; shares: waiting, fixing; indices are fractions of the output's variance."""
    from speedtrap.experiments.ensemble import choose_members, member_overrides, resolve_ensemble
    from speedtrap.validation.workflow import ERAS, HELD_OUT, default_scenarios, validate_workflow

    if sensitivity:
        _sensitivity(quick, calibration, results_dir, markdown, csv, sobol_n, bootstrap, as_json)
        return
    if study_holdout:
        from speedtrap.cli.identification import report_study_holdout

        report_study_holdout(calibration, as_json)
        return
    if identification:
        from speedtrap.cli.identification import report_identification

        report_identification(ensemble, as_json)
        return
    for given, flag in ((calibration, "--calibration"), (markdown or None, "--markdown"), (csv, "--csv")):
        if flag == "--calibration" and study_holdout:
            continue
        if given is not None:
            fail(f"{flag} needs --sensitivity")

    with bad_input_exits():
        scenarios = default_scenarios(
            headline_scenario_path().parents[2], quick=quick, names=("headline", *ERAS, *HELD_OUT)
        )
    with bad_input_exits():
        choice = resolve_ensemble(ensemble, single=single)
    plan = None
    if choice.members:
        index, per_member = choose_members(len(choice.members), replications)
        seeds = iter(range(seed, seed + len(index) * per_member))
        plan = [
            (
                k,
                {
                    name: s.with_overrides(
                        member_overrides(s, choice.members[k], keep=_era_curve(name, s))[0]
                    )
                    for name, s in scenarios.items()
                },
                next(seeds),
            )
            for k in index
            for _ in range(per_member)
        ]
    if not as_json:
        typer.echo(choice.note)
    check = validate_workflow(
        scenarios,
        range(seed, seed + replications),
        progress=count_progress("replications done:", not as_json),
        plan=plan,
    )
    table = check.table
    if as_json:
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "replications": replications,
                "passed": check.passed,
                "passed_by_role": {
                    role: {"passed": p, "targets": n} for role, (p, n) in check.passed_by_role().items()
                },
                "verdicts_by_role": check.verdicts_by_role(),
                "held_out_studies": [
                    {k: json_number(v) for k, v in row.items()}
                    for row in check.held_out_studies().to_dict("records")
                ],
                "targets": [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")],
                "eras": [
                    {k: json_number(v) for k, v in row.items()} for row in check.eras.to_dict("records")
                ],
            }
        )
        return
    size = f"{len(index)} members × {per_member} seeds" if choice.members else f"{replications} replications"
    verdicts = check.verdicts_by_role()
    for role, (passed, count) in check.passed_by_role().items():
        rows = [
            (
                r.id,
                f"{r.published:.4g} {r.unit}",
                f"{r.simulated:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}]",
                f"{100 * r.relative_error:+.0f}%",
                r.tolerance,
                RESULT_WORDS[r.verdict] + (f" (mean {'in' if r.passed else 'out'})" if r.edge else ""),
            )
            for r in table[table["role"] == role].itertuples()
        ]
        counts = verdicts[role]
        print_table(
            f"{ROLE_TITLES[role]}: {counts['pass']} of {count} pass at 95%, {counts['undecided']} undecided, "
            f"{counts['miss']} miss ({passed} of {count} by the mean alone, a count the draw can move; "
            f"{size}; simulated = mean [95% t interval over every run])",
            ["target", "published", "simulated", "error", "tolerance", "result"],
            rows,
        )
    studies = check.held_out_studies()
    if len(studies):
        names = "; ".join(
            f"{r.study} ({r.passed} of {r.targets}{', predicted' if r.predicted else ''})"
            for r in studies.itertuples()
        )
        typer.echo(
            f"Held-out studies predicted (every row of the study within tolerance): "
            f"{int(studies['predicted'].sum())} of {len(studies)} — {names}"
        )
    eras = check.eras

    def cell(e: Any, name: str) -> str:
        text = f"{getattr(e, name):.3f} [{getattr(e, name + '_low'):.3f}, {getattr(e, name + '_high'):.3f}]"
        low, high = getattr(e, name + "_behaviour_low"), getattr(e, name + "_behaviour_high")
        if low == low:  # an ensemble: the behavioural interval and which dominates
            text += f" behaviour [{low:.3f}, {high:.3f}] ({getattr(e, name + '_dominant')} dominates)"
        return text

    print_table(
        "Eras: METR's statistic (developer effort per task with AI / by hand; above 1: slower with AI), "
        "output (task-equivalents per developer-day, other work counted as the economics count it, with AI "
        "/ by hand; above 1: more with AI) and tasks alone; mean [95% interval over seeds], and over the "
        "ensemble's members when it runs one",
        ["era", "effort ratio", "output ratio", "tasks ratio"],
        [
            (
                e.era,
                cell(e, "ai_vs_manual_time_ratio"),
                cell(e, "ai_vs_manual_output_ratio"),
                cell(e, "ai_vs_manual_throughput_ratio"),
            )
            for e in eras.itertuples()
        ],
    )
    if replications < 5:
        typer.echo(f"Note: {replications} replications give intervals that cannot mean much; use 5 or more.")


RESULT_WORDS = {"pass": "pass", "undecided": "undecided", "miss": "MISS"}
"""How the table writes each verdict of :data:`speedtrap.validation.workflow.VERDICTS`."""


ROLE_TITLES = {
    "calibration": "In sample (calibration targets, fitted by history matching)",
    "consistency": "Consistency checks (inputs and closed forms of the model: they pass by construction)",
    "validation": "Out of sample (held-out studies the calibration never saw; docs/heldout_studies.md)",
}
"""The title of each role's table in ``validate workflow``."""


def _era_curve(name: str, scenario: Any) -> list[str]:
    """The success-curve paths a held-out era scenario keeps at its own model's values (the ensemble
    members' curves are those of the calibration scenario's model, another era's)."""
    from speedtrap.validation.workflow import HELD_OUT

    if name not in HELD_OUT:
        return []
    fields = ("horizon_min", "horizon_slope", "acceptance_scale")
    return [f"backends.{backend}.quality.{f}" for backend in scenario.backends for f in fields]


def _sensitivity(
    quick: bool,
    calibration: Path | None,
    results_dir: Path,
    markdown: bool,
    csv: Path | None,
    sobol_n: int,
    bootstrap: int,
    as_json: bool,
) -> None:
    """``validate workflow --sensitivity`` (see its help)."""
    from speedtrap.analysis.share_sensitivity import DOMINANCE_THRESHOLD, FIT_THRESHOLD, MIN_TARGET_Q2
    from speedtrap.experiments.files import experiments_dir
    from speedtrap.experiments.share_sensitivity import (
        TABLE_COLUMNS,
        load_calibration_runs,
        markdown_table,
        quick_runs,
        sensitivity_finding,
        share_sensitivity,
        table_rows,
    )
    from speedtrap.validation.workflow import default_scenarios

    if sobol_n & (sobol_n - 1):
        fail(f"--sobol-n must be a power of two, got {sobol_n}")
    if markdown and as_json:
        fail("--markdown and --json: choose one")
    if quick and calibration is not None:
        fail("--quick runs its own design: leave out --calibration")
    if csv is not None:
        check_output_path(csv, "--csv")
    with bad_input_exits():
        scenarios = default_scenarios(headline_scenario_path().parents[2])
        if quick:
            runs = quick_runs(scenarios, results_dir, progress=not (as_json or markdown))
        else:
            directory = calibration if calibration is not None else experiments_dir() / "calibration"
            try:
                runs = load_calibration_runs(directory, scenarios)
            except FileNotFoundError as exc:
                fail(str(exc))
    progress = count_progress("emulators fitted:", not (as_json or markdown))
    with bad_input_exits():
        result = share_sensitivity(
            runs,
            n=sobol_n,
            bootstrap=bootstrap,
            progress=None if progress is None else lambda name, done, total: progress(done, total, name),
        )
    if progress is not None:
        progress(len(result.emulators), len(result.emulators))
    if csv is not None:
        with writing(csv, "--csv"):
            result.table.to_csv(csv, index=False)
    if as_json:
        records = [{k: json_number(v) for k, v in r.items()} for r in result.table.to_dict("records")]
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "source": result.source,
                "waves": list(result.waves),
                "n": result.n,
                "bootstrap": result.bootstrap,
                "confidence": result.confidence,
                "seed": result.seed,
                "thresholds": {
                    "dominance": DOMINANCE_THRESHOLD,
                    "fit": FIT_THRESHOLD,
                    "target_q2": MIN_TARGET_Q2,
                },
                "flagged": result.flagged,
                "warnings": result.warnings,
                "parameters": records,
                "emulators": [
                    {k: json_number(v) for k, v in r.items()} for r in result.emulators.to_dict("records")
                ],
                "indices": [
                    {k: json_number(v) for k, v in r.items()} for r in result.indices.to_dict("records")
                ],
            }
        )
        return
    if markdown:
        typer.echo(markdown_table(result), nl=False)
        return
    print_table(
        f"Sensitivity of the headline shares of the day ({result.source}, wave "
        f"{'/'.join(map(str, result.waves))}; index [95% bootstrap interval], N = {result.n}, "
        f"{result.bootstrap} refits)",
        TABLE_COLUMNS,
        table_rows(result),
    )
    typer.echo(sensitivity_finding(result))
    for note in result.warnings:
        typer.echo(f"Warning: {note}.")
    if quick:
        typer.echo("Quick variant: 8 runs of a tiny scenario; these indices mean nothing.")
    if csv is not None:
        typer.echo(f"table: {csv}")


VALIDATE_SERVING_SCHEMA = 3
"""JSON schema of ``validate serving`` (3: ``by_vendor_and_stack`` per headline metric, with each
name's configuration groups; 2: held out by configuration group, compared at equal interactivity; 1
had a fixed calibration/held-out split of rows)."""


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
    metric held out and in sample, the same at the stated concurrencies, the held-out errors per
    vendor and per serving stack (with their configuration groups), and the acceptance targets;
    writes the predicted-vs-measured figure (default results/validation/serving_validation.png). Takes
    about 25 s on two cores, the refits in worker processes (--in-sample-only: seconds).

    JSON (schema_version 3): {"schema_version", "fit": {"date", "rows", factor: float, ...},
    "sources": [str], "groups": [str], "targets": {"median_abs_error", "worst_abs_error",
    "ttft_median_abs_error"}, "rows": [{"id", "group", "source", "model", "hardware", "chips",
    "concurrency", "fit" ("held_out"|"in_sample"), "comparison" ("equal_interactivity"|
    "equal_throughput"|"at_concurrency"), "metric", "measured", "predicted", "error", "batch",
    "reached", "headline", "concurrency_derived"}], "summary": [{"fit", "metric", "rows",
    "median_abs_error", "worst_abs_error", "worst_id", "worst_error"}], "summary_at_concurrency": [same],
    "by_vendor_and_stack": [{"by" ("vendor"|"stack"), "name", "fit", "metric", "groups", "rows",
    "median_abs_error", "worst_abs_error", "worst_id", "worst_error"}] (the headline comparisons)};
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
    from speedtrap.validation.serving_intervals import error_by_vendor_and_stack

    if figure is not None and not no_figure:
        check_output_path(figure, "--figure", suffixes=figure_suffixes())
    table = load_measurements()
    factors, date, fitted_rows = stored_fit()
    if refit:
        factors, date, fitted_rows = fit_factors(table), "now", len(table)
    check = validate_serving(factors, table, cross_validate=not in_sample_only)
    summary, at_concurrency = summarize(check), summarize(check, headline=False)
    by_kind = error_by_vendor_and_stack(check)
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
                "by_vendor_and_stack": [
                    {k: json_number(v) for k, v in r.items()} for r in by_kind.to_dict("records")
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
    metrics = ("tok_s_per_gpu", "tok_s_per_user", "ttft_s")
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for r in by_kind.itertuples():
        entry = cells.setdefault((r.by, r.name), {"groups": 0})
        entry["groups"] = max(entry["groups"], int(r.groups))
        entry[r.metric] = f"{r.rows} rows: {100 * r.median_abs_error:.0f}% / {100 * r.worst_abs_error:.0f}%"
    print_table(
        f"Absolute error {fit.replace('_', ' ')} per vendor and per serving stack (where the row's id "
        "names one): median / worst, comparisons as above",
        ["by", "name", "groups", "tok/s per GPU", "tok/s per user", "TTFT"],
        [(by, name, str(c["groups"]), *(c.get(m, "—") for m in metrics)) for (by, name), c in cells.items()],
    )
    typer.echo(
        f"Targets (held out): median ≤ {100 * TARGET_MEDIAN_ABS_ERROR:.0f}% on tok/s per GPU and per user, "
        f"worst ≤ {100 * TARGET_WORST_ABS_ERROR:.0f}%, "
        f"TTFT median ≤ {100 * TARGET_TTFT_MEDIAN_ABS_ERROR:.0f}%."
    )
    if figure is not None:
        typer.echo(f"figure: {figure}")
