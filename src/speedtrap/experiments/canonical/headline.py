"""``headline``: the three backends and working without AI (``manual``) on the headline population —
where the time goes, tasks per developer-day and $ per task, with 95% confidence intervals and
differences paired by seed, against ``gpu-batched`` and against no AI."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from speedtrap.analysis.statistics import caveat_suffix, paired_differences, summarize
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.canonical import Contrast, Report
from speedtrap.models.latency import simulate_summary_with_latency
from speedtrap.plots import figure_of, plot_ledger, plot_outcome, save_figure

MODEL = simulate_summary_with_latency  # the summary, and each run's latency percentiles (latency.csv)
BASELINE = "gpu-batched"
NO_AI = "manual"
KEY_OUTCOMES = ("tasks_per_dev_day", "waiting_share", "fixing_share", "share_switching", "usd_per_task")


def analyze(table: pd.DataFrame, spec: Experiment, out: Path) -> Report:
    """Tables (``summary.csv``, ``paired.csv``, ``economics.csv``) and figures (``ledger``,
    ``outcomes``, and ``headline``: both in one, the README's figure) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    backends = list(dict.fromkeys(table["backend"]))
    summary = summarize(table, by=["backend"])
    paired = paired_differences(table, "backend", BASELINE, outcomes=list(KEY_OUTCOMES))
    files = [out / "summary.csv", out / "paired.csv"]
    summary.to_csv(files[0], index=False)
    paired.to_csv(files[1], index=False)
    vs_manual = None
    if NO_AI in backends:
        vs_manual = paired_differences(table, "backend", NO_AI, outcomes=["tasks_per_dev_day"])
        files.append(out / "paired_vs_manual.csv")
        vs_manual.to_csv(files[-1], index=False)

    scenario = spec.scenario
    economics = economics_table(table, spec)
    if not economics.empty:
        files.append(out / "economics.csv")
        economics.to_csv(files[-1], index=False)
    ax = plot_ledger(
        table,
        "backend",
        workday_s=scenario.workday_s,
        order=backends,
        title=f"Where a developer-day goes ({scenario.developers} developers, {spec.replications} runs each)",
    )
    fig = figure_of(ax)
    files += save_figure(fig, out, "ledger")
    plt.close(fig)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), layout="constrained")
    plot_outcomes(table, backends, axes)
    files += save_figure(fig, out, "outcomes")
    plt.close(fig)
    fig = plot_headline(table, spec)
    files += save_figure(fig, out, "headline")
    plt.close(fig)
    text = finding(summary, paired, vs_manual)
    if not economics.empty:
        text += "\n" + economics_finding(economics, scenario.value.usd_per_dev_hour)
    return Report(text, files)


def contrasts(table: pd.DataFrame, spec: Experiment) -> list[Contrast]:
    """The differences split into seed and behavioural intervals under an ensemble: every backend
    against ``gpu-batched`` (tasks, waiting and fixing shares, $ per task) and against no AI (tasks)."""
    return [
        Contrast("backend", BASELINE, ("tasks_per_dev_day", "waiting_share", "fixing_share", "usd_per_task")),
        Contrast("backend", NO_AI, ("tasks_per_dev_day",)),
    ]


OUTCOME_PANELS: tuple[tuple[str, str], ...] = (
    ("tasks_per_dev_day", "tasks per developer-day"),
    ("usd_per_task", "US$ per task (inference)"),
)
"""The outcome bars of the headline figures: (outcome, axis label)."""


def plot_outcomes(table: pd.DataFrame, backends: list[str], axes: Sequence[Axes]) -> None:
    """Tasks per developer-day and US$ per task per backend (:data:`OUTCOME_PANELS`) on two axes:
    means with 95% t-interval error bars over the runs (:func:`speedtrap.plots.plot_outcome`); a
    backend without inference spend (no AI) is marked "no AI: $0" in the $ panel."""
    for ax, (outcome, label) in zip(axes, OUTCOME_PANELS, strict=True):
        plot_outcome(table, outcome, label, order=backends, ax=ax)
        ax.set_title(label)
        for bars in ax.containers:
            if isinstance(bars, BarContainer):
                labels = [f"{v:.2f}" if v else "" for v in np.asarray(bars.datavalues, dtype=float)]
                ax.bar_label(bars, labels=labels, label_type="center", color="white", fontsize="small")
        if outcome == "usd_per_task":
            means = table.groupby("backend")[outcome].mean()
            for i, backend in enumerate(backends):
                if means.get(backend) == 0:
                    ax.annotate("no AI: $0", (i, 0), xytext=(0, 3), textcoords="offset points", ha="center")


def plot_headline(table: pd.DataFrame, spec: Experiment) -> Figure:
    """The headline figure: where a developer-day goes (ledger) above tasks per developer-day and
    US$ per task per backend, every error bar a 95% t-interval over the runs (the legends say so)."""
    scenario = spec.scenario
    backends = list(dict.fromkeys(table["backend"]))
    fig = plt.figure(figsize=(11, 7.8), layout="constrained")
    grid = fig.add_gridspec(2, 2, height_ratios=[1.2, 0.9])
    ledger = fig.add_subplot(grid[0, :])
    plot_ledger(table, "backend", workday_s=scenario.workday_s, order=backends, ax=ledger)
    ledger.set_title("where a developer-day goes")
    plot_outcomes(table, backends, [fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])])
    days = scenario.horizon_s / scenario.workday_s
    fig.suptitle(
        f"{scenario.developers} developers × {days:g} working day{'' if days == 1 else 's'} on each backend, "
        f"{spec.replications} runs each (same seeds on every backend)"
    )
    return fig


def economics_table(table: pd.DataFrame, spec: Experiment) -> pd.DataFrame:
    """Each AI backend's economics against the baseline at the scenario's value of developer time
    (:func:`speedtrap.analysis.value.arm_value`, paired by seed): one row per backend."""
    from dataclasses import asdict

    from speedtrap.analysis.value import VALUE_COLUMNS, arm_value, paired_runs

    needed = {"tasks_per_dev_day", "usd_per_dev_day"}
    if not needed <= set(table.columns) or BASELINE not in set(table["backend"]):
        return pd.DataFrame(columns=list(VALUE_COLUMNS))
    rows = []
    for backend in dict.fromkeys(table["backend"]):
        if backend in (BASELINE, NO_AI):
            continue
        pairs = paired_runs(table, "backend", BASELINE, backend)
        value = arm_value(pairs, backend, value=spec.scenario.value, workday_s=spec.scenario.workday_s)
        rows.append(asdict(value))
    return pd.DataFrame(rows, columns=list(VALUE_COLUMNS))


def economics_finding(economics: pd.DataFrame, usd_per_dev_hour: float) -> str:
    """The economics in words: net value per developer-day with its CI and the break-even numbers."""
    from speedtrap.analysis.value import value_sentence

    return "\n".join(
        value_sentence(row, against=BASELINE, usd_per_dev_hour=usd_per_dev_hour)
        for row in economics.to_dict("records")
    )


def _mean(summary: pd.DataFrame, backend: str, outcome: str) -> float:
    row = summary[(summary["backend"] == backend) & (summary["outcome"] == outcome)]
    return float(row["mean"].iloc[0])


def finding(summary: pd.DataFrame, paired: pd.DataFrame, vs_manual: pd.DataFrame | None = None) -> str:
    """The answer in words, with the numbers (shares in % of developer time, CIs at 95%, paired by
    seed)."""
    base = {o: _mean(summary, BASELINE, o) for o in KEY_OUTCOMES}
    lines = [
        f"On {BASELINE} developers spend {100 * base['waiting_share']:.1f}% of their time waiting on the "
        f"agent, {100 * base['share_switching']:.1f}% getting back into work after switching away, and "
        f"{100 * base['fixing_share']:.1f}% fixing its mistakes; they complete "
        f"{base['tasks_per_dev_day']:.2f} tasks per developer-day at ${base['usd_per_task']:.2f} per task."
    ]
    for backend, rows in paired.groupby("backend", sort=False):
        by = rows.set_index("outcome")
        tasks = by.loc["tasks_per_dev_day"]
        cost = by.loc["usd_per_task"]
        fixing = by.loc["fixing_share"]
        waiting = by.loc["waiting_share"]
        price = (
            f"${cost['level_mean']:.2f} per task ({cost['ratio']:.1f}× {BASELINE})"
            if backend != NO_AI
            else "no inference spend"
        )
        lines.append(
            f"{backend}: {100 * (tasks['ratio'] - 1):+.1f}% tasks per developer-day "
            f"(paired difference {tasks['mean']:+.2f}, "
            f"95% CI {tasks['ci_low']:+.2f} to {tasks['ci_high']:+.2f}"
            f"{caveat_suffix(int(tasks['n']), tasks['ci_low'], tasks['ci_high'])}), "
            f"waiting {100 * waiting['level_mean']:.1f}% of the time "
            f"(paired difference {100 * waiting['mean']:+.1f} points, "
            f"95% CI {100 * waiting['ci_low']:+.1f} to "
            f"{100 * waiting['ci_high']:+.1f}"
            f"{caveat_suffix(int(waiting['n']), waiting['ci_low'], waiting['ci_high'])}), "
            f"fixing {100 * fixing['level_mean']:.1f}%, {price}."
        )
    if vs_manual is not None:
        for backend, rows in vs_manual.groupby("backend", sort=False):
            tasks = rows.set_index("outcome").loc["tasks_per_dev_day"]
            lines.append(
                f"{backend} against no AI: {tasks['ratio']:.2f}× the tasks per developer-day of working "
                f"by hand (paired difference {tasks['mean']:+.2f}, "
                f"95% CI {tasks['ci_low']:+.2f} to {tasks['ci_high']:+.2f}"
                f"{caveat_suffix(int(tasks['n']), tasks['ci_low'], tasks['ci_high'])})."
            )
    return "\n".join(lines)
