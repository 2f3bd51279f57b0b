"""``speedtrap compare``: two or more arms (backends or scenario variants) on the same seeds, their
paired differences against the first arm with 95% CIs, the decision economics and a figure.

``speedtrap demo`` (the headline scenario on the three backends, compared the same way) is
:mod:`speedtrap.cli.demo`. Registered on the ``speedtrap`` app by :mod:`speedtrap.cli`; the output
and error helpers are :mod:`speedtrap.cli.common`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from speedtrap.cli.behaviour import EnsembleOption, SingleOption, quick_replications
from speedtrap.cli.common import (
    DEFAULT_SEED,
    JSON_SCHEMA_VERSION,
    MAX_REPLICATIONS,
    JsonOption,
    SeedOption,
    bad_input_exits,
    check_output_path,
    count_progress,
    fail,
    given_with,
    json_number,
    load_scenario,
    one_line,
    parse_set,
    percent,
    print_json,
    print_table,
    shown,
    writing,
)
from speedtrap.cli.decisions import check_measured, decisions_of_runs
from speedtrap.cli.latency import LatencyCsvOption

if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.config.scenario import Scenario

COMPARE_OUTCOMES: list[tuple[str, str, float, str]] = [
    ("tasks_per_dev_day", "tasks per developer-day", 1.0, ""),
    ("waiting_share", "waiting (% of time)", 100.0, " pp"),
    ("share_waiting_queue", "  of which queue (% of time)", 100.0, " pp"),
    ("share_waiting_ttft", "  of which first token (% of time)", 100.0, " pp"),
    ("share_waiting_generation", "  of which generation (% of time)", 100.0, " pp"),
    ("share_waiting_tool", "  of which tools (% of time)", 100.0, " pp"),
    ("fixing_share", "fixing (% of time)", 100.0, " pp"),
    ("share_switching", "switching (% of time)", 100.0, " pp"),
    ("usd_per_task", "inference $ per task", 1.0, ""),
    ("usd_per_dev_day", "inference $ per developer-day", 1.0, ""),
    ("lead_time_p50_s", "median task lead time (min)", 1 / 60, ""),
]
"""Outcomes ``compare`` reports: summary key, label with unit, scale and suffix of a difference
(shares are shown in percentage points, pp)."""

QUICK_REPLICATIONS = 3
QUICK_HORIZON_DAYS = 1.0
FULL_REPLICATIONS = 244
"""The replications ``compare --quick`` suggests for the answer to act on (the README's command: all
61 members of the stored ensemble × 4 seeds per arm, tested; with 2 seeds per member, seed noise once
gave half the fast-mode decision's EVPI, $6.7 of $14; with 4, $2.1 of $26)."""


def parse_arm(text: str) -> tuple[str, list[str]]:
    """``LABEL:path=value;path=value`` → (label, ["path=value", ...]): a scenario variant."""
    label, sep, rest = text.partition(":")
    label = label.strip()
    if not sep or not label:
        raise ValueError(f"--arm {text!r}: expected LABEL:path=value[;path=value...]")
    sets: list[str] = [given_with(part.strip(), f"--arm {label}") for part in rest.split(";") if part.strip()]
    if not sets:
        raise ValueError(f"--arm {text!r}: no path=value after {label!r}: (an arm needs at least one change)")
    for assignment in sets:
        parse_set(assignment)
    return label, sets


def build_arms(
    scenario_file: Path | None, backends: Sequence[str], arms: Sequence[str], sets: Sequence[str]
) -> dict[str, Scenario]:
    """The arms in order: one per ``--backend``, then one per ``--arm``; ``--set`` applies to all."""
    built: dict[str, Scenario] = {}
    for name in backends:
        if name in built:
            raise ValueError(f"--backend {name} given twice")
        built[name] = load_scenario(scenario_file, backend=name, sets=sets)
    for text in arms:
        label, arm_sets = parse_arm(text)
        if label in built:
            raise ValueError(f"--arm {label}: an arm of that name exists already")
        built[label] = load_scenario(scenario_file, sets=[*sets, *arm_sets])
    if len(built) < 2:
        raise ValueError("compare needs at least two arms (--backend NAME and/or --arm LABEL:path=value)")
    return built


def compare_runs(
    arms: Mapping[str, Scenario],
    seeds: Sequence[int],
    simulate_summary: Callable[[Scenario, int], dict[str, float]],
    progress: bool = True,
) -> pd.DataFrame:
    """One run per arm × seed (every arm meets the same seeds): a row per run with ``arm``,
    ``replication``, ``seed`` and the run's summary."""
    import pandas as pd

    rows = []
    total = len(arms) * len(seeds)
    report = count_progress("runs done:", progress)
    for i, (label, scenario) in enumerate(arms.items()):
        for r, seed in enumerate(seeds):
            rows.append({"arm": label, "replication": r, "seed": seed, **simulate_summary(scenario, seed)})
            if report is not None:
                report(i * len(seeds) + r + 1, total, label)
    return pd.DataFrame(rows)


def usd(amount: float, sign: bool = True) -> str:
    """``+$1,234`` / ``-$56`` (whole dollars); ``n/a`` for NaN."""
    if math.isnan(amount):
        return "n/a"
    prefix = ("+" if amount >= 0 else "-") if sign else ("-" if amount < 0 else "")
    return f"{prefix}${abs(amount):,.0f}"


def _difference(row: Mapping[str, Any], scale: float, suffix: str) -> str:
    mean, low, high = (scale * row[k] for k in ("mean", "ci_low", "ci_high"))
    if math.isnan(mean):
        return "n/a"
    if math.isnan(low):
        return f"{mean:+.3g}{suffix}"
    return f"{mean:+.3g}{suffix} [{low:+.3g}, {high:+.3g}]"


def _caveat_marks(differences: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Per row of ``differences``: a footnote mark ("" when none), and the footnotes."""
    from speedtrap.analysis.statistics import ci_caveat

    notes: list[str] = []
    marks = []
    for row in differences.to_dict("records"):
        caveat = ci_caveat(int(row["n"]), row["ci_low"], row["ci_high"])
        if caveat is None:
            marks.append("")
            continue
        if caveat not in notes:
            notes.append(caveat)
        marks.append(" " + "*" * (notes.index(caveat) + 1))
    return marks, notes


def analyse(runs: pd.DataFrame, arms: Mapping[str, Scenario]) -> tuple[pd.DataFrame, list[Any]]:
    """Paired differences of every outcome from the first arm (with ``verdict`` and ``caveat``
    columns), and each other arm's economics (:class:`speedtrap.analysis.value.ArmValue`)."""

    from speedtrap.analysis.intervals import two_interval_differences
    from speedtrap.analysis.statistics import ci_caveat, difference_verdict
    from speedtrap.analysis.value import arm_value, paired_runs

    baseline = next(iter(arms))
    outcomes = [key for key, *_ in COMPARE_OUTCOMES]
    differences = two_interval_differences(runs, "arm", baseline, outcomes)
    bounds = list(zip(differences["n"], differences["ci_low"], differences["ci_high"], strict=True))
    differences["verdict"] = [difference_verdict(lo, hi) for _, lo, hi in bounds]
    differences["behaviour_verdict"] = [
        difference_verdict(lo, hi) if math.isfinite(lo) else "n/a"
        for lo, hi in zip(differences["behaviour_low"], differences["behaviour_high"], strict=True)
    ]
    differences["caveat"] = [ci_caveat(int(n), lo, hi) for n, lo, hi in bounds]
    values = [
        arm_value(
            paired_runs(runs, "arm", baseline, label),
            label,
            value=arms[label].value,
            workday_s=arms[label].workday_s,
        )
        for label in list(arms)[1:]
    ]
    return differences, values


def print_differences(
    differences: pd.DataFrame, values: Sequence[Any], first: Scenario, baseline: str, replications: int
) -> None:
    """The paired table (with footnoted caveats) and the economics table."""
    marks, notes = _caveat_marks(differences)
    labels = {key: (label, scale, suffix) for key, label, scale, suffix in COMPARE_OUTCOMES}
    rows = []
    for record, mark in zip(differences.to_dict("records"), marks, strict=True):
        label, scale, suffix = labels[record["outcome"]]
        rows.append(
            [
                label,
                record["arm"],
                shown(scale * record["baseline_mean"], ".4g"),
                shown(scale * record["level_mean"], ".4g"),
                _difference(record, scale, suffix) + mark,
                _behaviour(record, scale, suffix),
                record["dominant"],
                record["verdict"],
            ]
        )
    days = first.horizon_s / first.workday_s
    members = int(differences["members"].max()) if len(differences) else 1
    design = (
        f"{members} members × {replications // members} seeds" if members > 1 else f"{replications} seeds"
    )
    print_table(
        f"Paired differences from {baseline}: {first.developers} developers × {days:g} "
        f"day{'s' if days != 1 else ''}, {design} per arm (the same on every arm), "
        "mean [95% seed interval] [95% behavioural interval]",
        [
            "outcome",
            "arm",
            baseline,
            "arm mean",
            "difference [seed]",
            "behavioural 95%",
            "dominates",
            "verdict",
        ],
        rows,
    )
    for i, note in enumerate(notes):
        typer.echo(f"{'*' * (i + 1)} {note}")
    for note in dict.fromkeys(n for n in differences["notes"] if n):
        typer.echo(f"note: {note}")
    print_economics(values, first, baseline)


def _behaviour(row: Mapping[str, Any], scale: float, suffix: str) -> str:
    from speedtrap.analysis.intervals import behaviour_words

    low, high = scale * row["behaviour_low"], scale * row["behaviour_high"]
    words = behaviour_words(low, high, int(row["members"]))
    return words + suffix if words.startswith("[") else words


def print_economics(values: Sequence[Any], first: Scenario, baseline: str) -> None:
    """The economics table (net value with both intervals, the break-evens with theirs, where each
    arm's output comes from other work)."""

    from speedtrap.analysis.intervals import behaviour_words

    def both(v: Any) -> str:
        seed = f"[{usd(v.net_ci_low)}, {usd(v.net_ci_high)}]"
        if math.isnan(v.net_behaviour_low):
            return seed if v.members < 2 else f"{seed} {behaviour_words(math.nan, math.nan, v.members)}"
        return f"{seed} [{usd(v.net_behaviour_low)}, {usd(v.net_behaviour_high)}]"

    print_table(
        f"Economics against {baseline} at ${first.value.usd_per_dev_hour:g} per developer-hour: "
        "[95% seed interval] [95% behavioural interval]; a break-even's intervals are the prices at "
        "which the net value's interval holds 0",
        [
            "arm",
            "net $/dev-day",
            "net $/dev-month",
            "break-even price (×)",
            "break-even $/dev-hour",
            "other work (% of output)",
            "dominates",
        ],
        [
            [
                v.arm,
                f"{usd(v.net_usd_per_dev_day)} {both(v)}",
                usd(v.net_usd_per_dev_month),
                shown(v.break_even_price_multiple, ".2f") + f" (seed: {v.price_multiple_seed}; "
                f"behaviour: {v.price_multiple_behaviour})",
                (
                    f"{v.break_even_usd_per_dev_hour:,.0f} ({v.pays})"
                    if not math.isnan(v.break_even_usd_per_dev_hour)
                    else v.pays
                )
                + f" (seed: {v.usd_per_dev_hour_seed}; behaviour: {v.usd_per_dev_hour_behaviour})",
                f"{percent(v.other_work_share_base)} {baseline}, {percent(v.other_work_share_arm)} {v.arm}",
                v.dominant,
            ]
            for v in values
        ],
    )
    for note in dict.fromkeys(v.notes for v in values if v.notes):
        typer.echo(f"note: {note}")


def finding(differences: pd.DataFrame, values: Sequence[Any], baseline: str, usd_per_hour: float) -> str:
    """The comparison in words: each arm's tasks per developer-day and its economics against the
    baseline, with the 95% seed interval, the behavioural interval and which dominates."""
    from speedtrap.analysis.statistics import ci_caveat, difference_verdict

    parts = []
    tasks = differences[differences["outcome"] == "tasks_per_dev_day"].set_index("arm")
    for value in values:
        row = tasks.loc[value.arm]
        verdict = difference_verdict(row["ci_low"], row["ci_high"])
        caveat = f"; {row['caveat']}" if isinstance(row.get("caveat"), str) else ""  # NaN/None: no caveat
        behaviour = (
            f"; behavioural interval {row['behaviour_low']:+.2f} to {row['behaviour_high']:+.2f}, "
            f"{row['dominance']}"
            if math.isfinite(row["behaviour_low"])
            else ""
        )
        if verdict == "no detectable difference":
            output = (
                f"{value.arm} shows no detectable difference in tasks per developer-day from {baseline} "
                f"({row['mean']:+.2f}, 95% CI {row['ci_low']:+.2f} to {row['ci_high']:+.2f}"
                f"{caveat}{behaviour})"
            )
        else:
            output = (
                f"{value.arm} completes {abs(row['mean']):.2f} {'more' if verdict == 'higher' else 'fewer'} "
                f"tasks per developer-day than {baseline} ({100 * (row['ratio'] - 1):+.1f}%, 95% CI "
                f"{row['ci_low']:+.2f} to {row['ci_high']:+.2f}{caveat}{behaviour})"
            )
        net = value.net_usd_per_dev_day
        net_caveat = ci_caveat(value.n, value.net_ci_low, value.net_ci_high)
        net_note = f"; {net_caveat}" if net_caveat else ""
        if math.isfinite(value.net_behaviour_low):
            net_note += (
                f"; behavioural interval {usd(value.net_behaviour_low)} to {usd(value.net_behaviour_high)}, "
                f"{value.dominant} dominates"
            )
        pays = difference_verdict(value.net_ci_low, value.net_ci_high)
        worth = {
            "higher": "it pays",
            "lower": "it does not pay",
            "no detectable difference": "whether it pays is not resolved",
        }[pays]
        economics = (
            f"at ${usd_per_hour:g} per developer-hour {worth}: net {usd(net)} per developer-day "
            f"(95% CI {usd(value.net_ci_low)} to {usd(value.net_ci_high)}{net_note}; "
            f"{usd(value.net_usd_per_dev_month)} per developer-month; other work while agents run is "
            f"{percent(value.other_work_share_arm)} of its output)"
        )
        side = {
            "above": f"it starts to pay above ${value.break_even_usd_per_dev_hour:,.0f} per developer-hour",
            "below": f"it pays below ${value.break_even_usd_per_dev_hour:,.0f} per developer-hour",
            "always": "it pays at any developer cost",
            "never": "it pays at no developer cost",
            "n/a": "no break-even developer cost",
        }[value.pays]
        unresolved = {
            "nowhere": "",
            "n/a": "",
            "everywhere": " (seed noise leaves it unresolved at every developer cost)",
        }.get(
            value.usd_per_dev_hour_seed,
            f" (seed noise leaves it unresolved at {value.usd_per_dev_hour_seed})",
        )
        parts.append(f"{output}; {economics}; on the same per-run basis {side}{unresolved}.")
    return " ".join(parts)


def write_differences(
    differences: pd.DataFrame,
    values: Sequence[Any],
    baseline: str,
    usd_per_dev_hour: float,
    path: Path,
    option: str,
) -> list[Path]:
    """Draw the paired differences and the economics (:func:`speedtrap.plots.differences.plot_differences`)
    and write them to ``path`` (PNG or SVG; another suffix or none: both, beside each other); an
    error while writing is one line naming ``option``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from speedtrap.plots.differences import plot_differences

    fig = plot_differences(differences, baseline, COMPARE_OUTCOMES, values, usd_per_dev_hour)
    written = [path] if path.suffix in (".png", ".svg") else [path.with_suffix(e) for e in (".png", ".svg")]
    try:
        with writing(path, option):
            path.parent.mkdir(parents=True, exist_ok=True)
            for target in written:
                fig.savefig(target, dpi=150, bbox_inches="tight")
    finally:
        plt.close(fig)
    return written


def compare(
    scenario_file: Annotated[
        Path | None,
        typer.Argument(metavar="SCENARIO.toml", help="Scenario file (default: built-in defaults)."),
    ] = None,
    backends: Annotated[
        list[str] | None,
        typer.Option(
            "--backend", help="An arm served by this backend (repeatable; the first is the baseline)."
        ),
    ] = None,
    arms: Annotated[
        list[str] | None,
        typer.Option(
            "--arm",
            metavar="LABEL:PATH=VALUE[;...]",
            help="An arm that is the scenario with these overrides (repeatable), after the --backend arms.",
        ),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Override a field of every arm: path.to.field=value (policy.kind=KIND rebuilds the policy).",
        ),
    ] = None,
    replications: Annotated[
        int,
        typer.Option(
            "--replications",
            min=2,
            max=MAX_REPLICATIONS,
            help="Seeds per arm (the same seeds on every arm).",
        ),
    ] = 10,
    seed: SeedOption = DEFAULT_SEED,
    quick: Annotated[
        bool,
        typer.Option("--quick", help=f"A smoke run: {QUICK_REPLICATIONS} replications of one developer-day."),
    ] = False,
    figure: Annotated[
        Path | None, typer.Option("--figure", help="Write the paired differences as a figure (PNG + SVG).")
    ] = None,
    ensemble: EnsembleOption = None,
    single: SingleOption = False,
    json_out: JsonOption = False,
    decisions: Annotated[
        Path | None,
        typer.Option(
            "--decisions",
            file_okay=False,
            help="Also analyse each decision over the ensemble's members (share paying, boundary, EVPPI "
            "of each parameter and of what a team can measure) and write its CSVs and figure here.",
        ),
    ] = None,
    measured: Annotated[
        list[str] | None,
        typer.Option(
            "--measured",
            metavar="NAME=VALUE:SE",
            help="With --decisions: a team's measurement on the first arm ± its standard error, e.g. "
            "share_idle=0.12:0.03; each decision is also read over the members consistent with it.",
        ),
    ] = None,
    latency_csv: LatencyCsvOption = None,
) -> None:
    """Compare arms on the same seeds: each outcome's paired difference from the first arm with its 95%
    CI, and whether the difference in output pays for the difference in inference spend at the
    scenario's value of developer time (value.usd_per_dev_hour; set it with --set).

    Net value per developer-day = extra tasks × the value of a task (value.usd_per_task, default: its
    full cost on the baseline, developer time plus inference) − extra inference spend. The break-even
    price multiple is the factor by which an arm's prices could rise before it stops paying; the
    break-even developer cost is the $/hour above which it starts to pay. Output counts tasks plus
    the other work developers do while agents run, in task-equivalents.

    Every difference has two 95% intervals (docs/intervals.md): seed noise (the paired interval over
    seeds) and behavioural uncertainty (the spread over the calibrated ensemble: K members × r seeds,
    --replications = K·r runs per arm, r ≥ 2), and says which dominates. The stored ensemble is used
    by default; --ensemble FILE picks another, --single the scenario's own parameter set.

    JSON (--json), schema_version 1: {"schema_version": 1, "baseline": str, "arms": list of str,
    "replications", "seed": int, "seeds": list of int, "developers": int, "horizon_s": float,
    "value": {...}, "differences": [{"arm", "outcome": str, "n": int, "baseline_mean",
    "level_mean", "mean", "std", "ci_low", "ci_high", "ratio": float|null, "verdict": str,
    "caveat": str|null, "behaviour_low", "behaviour_high", "sd_seed", "sd_behaviour": float|null,
    "dominant", "dominance", "behaviour_verdict", "notes": str, "members": int, "seeds_per_member"}],
    "economics": [{"arm": str, "n": int, "net_usd_per_dev_day", "net_ci_low", "net_ci_high",
    "net_behaviour_low", "net_behaviour_high", "net_usd_per_dev_month", "break_even_price_multiple",
    "break_even_usd_per_dev_hour": float|null, "pays": "above"|"below"|"always"|"never"|"n/a",
    "price_multiple_seed", "price_multiple_behaviour", "usd_per_dev_hour_seed",
    "usd_per_dev_hour_behaviour": str (where the interval holds 0), "other_work_share_base",
    "other_work_share_arm": float, "dominant", "notes": str, "members": int, "seeds_per_member"}],
    "behaviour": {"lines": list of str, "members": list of int, "seeds_per_member": int},
    "latency": [{"arm": str, "runs": int, "ttft_p50_s", …, "e2e_p99_s": float|null (seconds, the mean
    over runs of each run's percentile)}], "latency_csv": str|null, "finding": str, "narrowing": [{"arm",
    "outcome", "width_before", "width_after", …}] (a team ensemble), "figures": list of str, "scenarios":
    {arm: resolved scenario}, "provenance": {"speedtrap", "git_commit", "python": str, "libraries": {…}}}.
    """
    from dataclasses import asdict

    import speedtrap.cli.latency as lat
    from speedtrap.cli.behaviour import behaviour_runs, plan_behaviour
    from speedtrap.cli.team import team_narrowing
    from speedtrap.experiments.seeds import replication_seeds
    from speedtrap.models.typed_core import engines_of
    from speedtrap.provenance import provenance

    with bad_input_exits():
        built = build_arms(scenario_file, backends or (), arms or (), sets or ())
        if quick:
            built = {
                label: s.with_overrides({"horizon_s": QUICK_HORIZON_DAYS * s.workday_s})
                for label, s in built.items()
            }
    kept = {label: [parse_set(a)[0] for a in (sets or ())] for label in built}
    for text in arms or ():
        label, arm_sets = parse_arm(text)
        kept[label] += [parse_set(a)[0] for a in arm_sets]
    try:
        if quick:  # MIN_MEMBERS members × 2 seeds under an ensemble, so that both intervals exist
            probe = plan_behaviour(built, 4, ensemble=ensemble, single=single, kept=kept)
            replications = quick_replications(probe.available, QUICK_REPLICATIONS)
        plan = plan_behaviour(built, replications, ensemble=ensemble, single=single, kept=kept)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        fail(one_line(exc))
    if figure is not None:
        check_output_path(figure, "--figure")
    if latency_csv is not None:
        check_output_path(latency_csv, "--latency-csv")
    if decisions is not None and (single or plan.available < 2):
        fail("--decisions needs runs over a calibrated ensemble (not --single)")
    observed = check_measured(measured or (), decisions)
    seeds = replication_seeds(seed, replications)
    baseline = next(iter(built))
    first = built[baseline]
    if not json_out:
        for line in plan.lines:
            typer.echo(line)  # the design is part of the results
    try:
        per_request: list[pd.DataFrame] | None = [] if latency_csv is not None else None
        runs = behaviour_runs(plan, seeds, lat.summary_with_latency(per_request), progress=not json_out)
    except (ValueError, KeyError) as exc:
        fail(one_line(exc))
    differences, values = analyse(runs, built)
    usd_per_hour = first.value.usd_per_dev_hour
    text = finding(differences, values, baseline, usd_per_hour)
    decide = partial(decisions_of_runs, runs, built, ensemble, observed=observed)
    decided = decide(decisions, quiet=True) if decisions and json_out else []
    narrowed = team_narrowing(ensemble, built, kept, seeds, differences, COMPARE_OUTCOMES, quiet=json_out)
    if json_out:
        written = (
            write_differences(differences, values, baseline, usd_per_hour, figure, "--figure")
            if figure is not None
            else []
        )
        if latency_csv is not None:
            lat.write_request_latency(runs, per_request or [], latency_csv, "--latency-csv")
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "baseline": baseline,
                "arms": list(built),
                "replications": replications,
                "seed": seed,
                "seeds": seeds,
                "developers": first.developers,
                "horizon_s": first.horizon_s,
                "value": first.value.model_dump(mode="json"),
                "differences": [
                    {k: json_number(v) for k, v in record.items()}
                    for record in differences.to_dict("records")
                ],
                "economics": [{k: json_number(x) for k, x in asdict(v).items()} for v in values],
                "behaviour": {
                    "lines": plan.lines,
                    "members": [m for m, _ in next(iter(plan.arms.values()))],
                    "seeds_per_member": plan.seeds_per_member,
                },
                "latency": lat.latency_records(runs),
                "latency_csv": str(latency_csv) if latency_csv is not None else None,
                "finding": text,
                "decisions": [{k: json_number(v) for k, v in row.items()} for row in decided],
                "narrowing": narrowed,
                "figures": [str(p) for p in written],
                "scenarios": {label: s.model_dump(mode="json") for label, s in built.items()},
                "provenance": provenance(engines_of(built)),  # which engine ran each arm
            }
        )
        return
    print_differences(differences, values, first, baseline, replications)
    lat.print_latency_table(runs)
    typer.echo(f"Finding: {text}")
    if decisions is not None:
        decide(decisions, quiet=False)
    if quick:
        typer.echo(
            f"(--quick: {replications} replications of {QUICK_HORIZON_DAYS:g} developer-day, every interval "
            "unreliable; for the answer to act on, run the same command without --quick and with "
            f"--replications {FULL_REPLICATIONS}.)"
        )
    if figure is not None:  # after the results, so that a figure that cannot be written loses nothing else
        written = write_differences(differences, values, baseline, usd_per_hour, figure, "--figure")
        typer.echo("Wrote " + ", ".join(str(p) for p in written))
    if latency_csv is not None:
        lat.write_request_latency(runs, per_request or [], latency_csv, "--latency-csv")
        typer.echo(f"Wrote {latency_csv}")
