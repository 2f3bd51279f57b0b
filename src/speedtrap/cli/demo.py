"""``speedtrap demo``: the headline scenario on the three backends, replicated, compared as
``speedtrap compare`` compares arms (:mod:`speedtrap.cli.compare`), with both intervals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from speedtrap.cli.behaviour import EnsembleOption, SingleOption, quick_replications
from speedtrap.cli.common import (
    DEFAULT_SEED,
    DEMO_BACKENDS,
    SeedOption,
    bad_input_exits,
    check_output_path,
    count_of,
    headline_scenario_path,
    load_scenario,
    print_table,
    writing,
)
from speedtrap.cli.compare import analyse, finding, print_differences, write_differences

if TYPE_CHECKING:
    import pandas as pd


DEMO_DEVELOPERS = 10
DEMO_DAYS = 4.0
DEMO_REPLICATIONS = 10
"""The demo's reduced size: the headline team of 10 for 4 developer-days (not 20) × 10 replications
(5 members of the ensemble × 2 seeds: the fewest members that give a behavioural interval,
``speedtrap.analysis.intervals.MIN_MEMBERS``); ``speedtrap experiment headline`` runs the full design."""
HEADLINE_DAYS = 20.0
"""Developer-days of the full headline scenario (experiments/scenarios/headline.toml)."""
QUICK_DEMO = (2, 1.0, 3)
"""``demo --quick``: 2 developers × 1 developer-day × 3 replications (a smoke run)."""


def demo_finding(differences: pd.DataFrame, baseline: str, runs: pd.DataFrame) -> str:
    """Where the baseline's time goes, how waiting, fixing and switching move on each other backend,
    and the paired comparison of output and economics."""
    from speedtrap.analysis.statistics import difference_verdict

    base = runs[runs["arm"] == baseline]
    shares = ", ".join(
        f"{100 * base[key].mean():.1f}% {label}"
        for key, label in (("waiting_share", "waiting on the agent"), ("fixing_share", "fixing its mistakes"))
    )
    moves = []
    for arm in differences["arm"].drop_duplicates():
        rows = differences[differences["arm"] == arm].set_index("outcome")
        parts = []
        for key, label in (
            ("waiting_share", "waiting"),
            ("fixing_share", "fixing"),
            ("share_switching", "switching"),
        ):
            row = rows.loc[key]
            low, high = 100 * row["ci_low"], 100 * row["ci_high"]
            behaviour = (
                f"; behaviour {100 * row['behaviour_low']:+.1f} to {100 * row['behaviour_high']:+.1f}, "
                f"{row['dominant']} dominates"
                if row["behaviour_low"] == row["behaviour_low"]  # not NaN
                else ""
            )
            if difference_verdict(row["ci_low"], row["ci_high"]) == "no detectable difference":
                parts.append(f"{label}: no detectable difference ({low:+.1f} to {high:+.1f} pp{behaviour})")
            else:
                parts.append(f"{label}: {100 * row['mean']:+.1f} pp ({low:+.1f} to {high:+.1f}{behaviour})")
        moves.append(f"on {arm}, {', '.join(parts)}")
    return f"On {baseline}, developers spend {shares}; " + "; ".join(moves) + "."


def demo(
    seed: SeedOption = DEFAULT_SEED,
    out: Annotated[Path, typer.Option("--out", help="Directory for the figure and tables.")] = Path(
        "results/demo"
    ),
    quick: Annotated[
        bool, typer.Option("--quick", help="2 developers × 1 developer-day × 3 replications (a smoke run).")
    ] = False,
    ensemble: EnsembleOption = None,
    single: SingleOption = False,
) -> None:
    """The headline, replicated: the same developers and tasks on each of the three backends (10
    developers × 4 developer-days × 10 replications, a reduced size of the headline's 20 days) —
    waiting, fixing and switching, tasks per developer-day and $ per task as paired differences from
    gpu-batched with 95% CIs, the economics at the scenario's value of developer time, latency
    percentiles per backend (time to first token, between tokens, end to end; latency.csv) and a
    figure of the ledger. Every difference has a seed interval and a behavioural interval over the
    calibrated ensemble (K members × r seeds per backend; --quick takes 5 × 2 under an ensemble;
    --ensemble FILE, --single: as in compare). The full design: speedtrap experiment headline."""
    from speedtrap.cli.behaviour import behaviour_runs, plan_behaviour
    from speedtrap.cli.common import fail, one_line
    from speedtrap.cli.latency import arm_latency, print_latency_table, summary_with_latency
    from speedtrap.experiments.seeds import replication_seeds

    developers, days, replications = QUICK_DEMO if quick else (DEMO_DEVELOPERS, DEMO_DAYS, DEMO_REPLICATIONS)
    with bad_input_exits():
        scenario = load_scenario(headline_scenario_path())
        scenario = scenario.with_overrides({"developers": developers, "horizon_s": days * scenario.workday_s})
        arms = {name: scenario.with_backend(name) for name in DEMO_BACKENDS}
    try:
        plan = plan_behaviour(arms, replications, ensemble=ensemble, single=single)
        if quick and plan.available > 1:  # MIN_MEMBERS members × 2 seeds, so that both intervals exist
            replications = quick_replications(plan.available, replications)
            plan = plan_behaviour(arms, replications, ensemble=ensemble, single=single)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        fail(one_line(exc))
    check_output_path(out, "--out", directory=True)
    seeds = replication_seeds(seed, replications)
    typer.echo(
        f"demo: {developers} developers × {count_of(days, 'developer-day')} × {replications} replications on "
        f"{len(arms)} backends (the headline scenario reduced from {HEADLINE_DAYS:g} days; the full "
        "design is `speedtrap experiment headline`)",
        err=True,
    )
    for line in plan.lines:
        typer.echo(line)  # the design is part of the results
    runs = behaviour_runs(plan, seeds, summary_with_latency())
    differences, values = analyse(runs, arms)
    baseline = next(iter(arms))
    frame = runs.rename(columns={"arm": "backend"})
    means = (
        frame.drop(columns=["replication", "seed", "member"])
        .groupby("backend", sort=False)
        .mean()
        .reset_index()
    )
    with writing(out, "--out"):
        out.mkdir(parents=True, exist_ok=True)
        means.to_csv(out / "summary.csv", index=False)
        frame.to_csv(out / "runs.csv", index=False)
        differences.to_csv(out / "differences.csv", index=False)
        arm_latency(frame, "backend").to_csv(out / "latency.csv", index=False)
    print_table(
        f"{scenario.name}: means over {replications} replications (same tasks on every backend)",
        ["backend", "tok/s per request", "waiting", "fixing", "switching", "tasks per dev-day", "$ per task"],
        [
            [
                row.backend,
                f"{row.mean_decode_tok_s:.0f}",
                f"{100 * row.waiting_share:.1f}%",
                f"{100 * row.fixing_share:.1f}%",
                f"{100 * row.share_switching:.1f}%",
                f"{row.tasks_per_dev_day:.2f}",
                f"${row.usd_per_task:.2f}",
            ]
            for row in means.itertuples()
        ],
    )
    print_differences(differences, values, arms[baseline], baseline, replications)
    print_latency_table(frame, "backend")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from speedtrap.plots import figure_of, plot_ledger, save_figure

    ax = plot_ledger(
        frame,
        "backend",
        workday_s=scenario.workday_s,
        title=f"Where a developer-day goes, by backend (mean of {replications} runs; bars: 95% CI)",
    )
    fig = figure_of(ax)
    with writing(out, "--out"):
        paths = save_figure(fig, out, "ledger")
    plt.close(fig)
    usd_per_hour = arms[baseline].value.usd_per_dev_hour
    paths += write_differences(differences, values, baseline, usd_per_hour, out / "differences.png", "--out")
    typer.echo(
        "Finding: "
        + demo_finding(differences, baseline, runs)
        + " "
        + finding(differences, values, baseline, usd_per_hour)
    )
    if quick:
        typer.echo(f"(--quick: {replications} replications; drop --quick for the demo's CIs.)")
    typer.echo(
        f"Wrote {out / 'summary.csv'}, {out / 'runs.csv'}, {out / 'differences.csv'}, {out / 'latency.csv'}, "
        + ", ".join(map(str, paths))
    )
