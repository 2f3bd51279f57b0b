"""``headline``: the three backends on the headline population — where the time goes, tasks per
developer-day and $ per task, with 95% confidence intervals and differences paired by seed."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from speedtrap.analysis.statistics import paired_differences, summarize
from speedtrap.config.experiment import Experiment
from speedtrap.experiments.canonical import Report
from speedtrap.models.workflow import simulate_summary
from speedtrap.plots import plot_ledger, plot_outcome, save_figure

MODEL = simulate_summary
BASELINE = "gpu-batched"
KEY_OUTCOMES = ("tasks_per_dev_day", "waiting_share", "fixing_share", "share_switching", "usd_per_task")


def analyze(table: pd.DataFrame, spec: Experiment, out: Path) -> Report:
    """Tables (``summary.csv``, ``paired.csv``) and figures (``ledger``, ``outcomes``) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    backends = list(dict.fromkeys(table["backend"]))
    summary = summarize(table, by=["backend"])
    paired = paired_differences(table, "backend", BASELINE, outcomes=list(KEY_OUTCOMES))
    files = [out / "summary.csv", out / "paired.csv"]
    summary.to_csv(files[0], index=False)
    paired.to_csv(files[1], index=False)

    scenario = spec.scenario
    ax = plot_ledger(
        table,
        "backend",
        workday_s=scenario.workday_s,
        order=backends,
        title=f"Where a developer-day goes ({scenario.developers} developers, {spec.replications} runs each)",
    )
    files += save_figure(ax.figure, out, "ledger")
    plt.close(ax.figure)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
    plot_outcome(table, "tasks_per_dev_day", "tasks per developer-day", order=backends, ax=axes[0])
    plot_outcome(table, "usd_per_task", "US$ per completed task", order=backends, ax=axes[1])
    files += save_figure(fig, out, "outcomes")
    plt.close(fig)
    return Report(finding(summary, paired), files)


def _mean(summary: pd.DataFrame, backend: str, outcome: str) -> float:
    row = summary[(summary["backend"] == backend) & (summary["outcome"] == outcome)]
    return float(row["mean"].iloc[0])


def finding(summary: pd.DataFrame, paired: pd.DataFrame) -> str:
    """The answer in words, with the numbers (shares in % of developer time, CIs at 95%)."""
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
        lines.append(
            f"{backend}: {100 * (tasks['ratio'] - 1):+.1f}% tasks per developer-day "
            f"(paired difference {tasks['mean']:+.2f}, "
            f"95% CI {tasks['ci_low']:+.2f} to {tasks['ci_high']:+.2f}), "
            f"fixing {100 * fixing['level_mean']:.1f}% of the time, ${cost['level_mean']:.2f} per task "
            f"({cost['ratio']:.1f}× {BASELINE})."
        )
    return "\n".join(lines)
