"""The app's views as matplotlib figures and plain numbers (pure: results in, figures out).

Figures are made with ``matplotlib.figure.Figure`` (no pyplot, no global state), so that the page
can draw them from a worker thread. Numbers shown on the page come from :func:`ledger_table` and
:func:`finding`, which the browser tests read back.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from speedtrap.config.ledger import LEDGER_CATEGORIES
from speedtrap.config.scenario import NO_AI
from speedtrap.models.results import COMPLETED_OUTCOMES, RunResult
from speedtrap.plots import CATEGORY_COLOURS, CATEGORY_LABELS, plot_ledger
from speedtrap.serving.economics import SECONDS_PER_HOUR
from speedtrap.serving.request import decode_rate_tok_s

__all__ = [
    "cumulative_figure",
    "finding",
    "ledger_figure",
    "ledger_table",
    "pool_figure",
    "pool_frame",
    "timeline_figure",
]

_HOUR = SECONDS_PER_HOUR


def ledger_table(results: Mapping[str, RunResult]) -> pd.DataFrame:
    """Hours per developer-day in each ledger category (rows) for each arm (columns), as simulated
    so far; plus tasks completed per developer-day and $ per developer-day."""
    columns = {}
    for name, result in results.items():
        summary = result.summary()
        hours = result.scenario.workday_s / _HOUR
        column = {c: summary[f"share_{c}"] * hours for c in LEDGER_CATEGORIES}
        column["tasks_per_dev_day"] = summary["tasks_per_dev_day"]
        column["usd_per_dev_day"] = summary["usd_per_dev_day"]
        columns[name] = column
    return pd.DataFrame(columns)


def ledger_figure(results: Mapping[str, RunResult]) -> Figure:
    """Where a developer-day goes, one stacked bar per arm (as the headline figure)."""
    rows = [{"backend": name, **result.summary()} for name, result in results.items()]
    fig = Figure(figsize=(9, 1.3 + 0.6 * len(rows)), layout="constrained")
    ax = fig.add_subplot()
    workday_s = next(iter(results.values())).scenario.workday_s
    plot_ledger(pd.DataFrame(rows), "backend", workday_s=workday_s, ax=ax, title="Where a developer-day goes")
    return fig


def timeline_figure(result: RunResult, name: str, *, max_developers: int = 12) -> Figure:
    """One lane per developer coloured by activity over the last developer-day simulated (at most
    ``workday_s``, so that lanes stay readable and quick to draw in long runs); task starts as thin
    black lines, the agent's stretches of work (hand-off to the next check-in or review, every
    session) as a purple bar over the lane and its turns (request arrivals) as ticks under it."""
    now = max(result.horizon_s, 1.0)
    start = max(0.0, now - result.scenario.workday_s)
    developers = sorted(result.ledger["developer"].unique())[:max_developers]
    fig = Figure(figsize=(9, max(2.8, 0.9 + 0.45 * len(developers))), layout="constrained")
    ax = fig.add_subplot()
    trace = result.trace
    if trace is not None:
        trace = trace[(trace["end_s"] > start) & trace["developer"].isin(developers)]
        for category in LEDGER_CATEGORIES:
            for developer, group in trace[trace["category"] == category].groupby("developer"):
                left = group["start_s"].clip(lower=start)
                spans = list(zip(left / _HOUR, (group["end_s"] - left) / _HOUR, strict=True))
                ax.broken_barh(spans, (developer - 0.35, 0.6), facecolors=CATEGORY_COLOURS[category])
    tasks = result.tasks[result.tasks["developer"].isin(developers) & (result.tasks["start_s"] >= start)]
    ax.vlines(
        tasks["start_s"] / _HOUR, tasks["developer"] - 0.38, tasks["developer"] + 0.28, colors="black", lw=0.8
    )
    stretches = result.stretches
    if stretches is not None and len(stretches):
        mine = stretches[stretches["developer"].isin(developers)]
        end = mine["need_s"].fillna(now)
        mine, end = mine[end > start], end[end > start]
        left = mine["handoff_s"].clip(lower=start)
        ax.hlines(mine["developer"] - 0.43, left / _HOUR, end / _HOUR, colors="#7570b3", lw=2)
    requests = result.requests
    turns = requests[requests["developer"].isin(developers) & (requests["arrival_s"] >= start)]
    ax.plot(turns["arrival_s"] / _HOUR, turns["developer"] + 0.33, "|", color="#444444", ms=3)
    ax.set_yticks(developers, [f"dev {d}" for d in developers])
    ax.set_ylim(max(developers, default=0) + 0.6, -0.6)
    ax.set_xlim(start / _HOUR, now / _HOUR)
    ax.set_xlabel("hours")
    ax.set_title(f"{name}: each developer's time" + (" (the last developer-day)" if start > 0 else ""))
    used = [c for c in LEDGER_CATEGORIES if trace is not None and (trace["category"] == c).any()]
    handles = [Patch(color=CATEGORY_COLOURS[c], label=CATEGORY_LABELS[c]) for c in used] + [
        Line2D([], [], color="#7570b3", lw=2, label="agent working"),
        Line2D([], [], color="black", lw=0.8, label="task start"),
        Line2D([], [], color="#444444", marker="|", ls="none", label="agent turn"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    return fig


def count_steps(up: np.ndarray, down: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Times and levels of a count that rises at ``up`` and falls at ``down`` (each item leaves no
    earlier than it arrives). At one instant arrivals come before departures, so an item that
    arrives and leaves at once never takes the count below zero."""
    times = np.concatenate([up, down])
    steps = np.concatenate([np.ones(len(up)), -np.ones(len(down))])
    order = np.lexsort((-steps, times))
    return np.concatenate([[0.0], times[order]]), np.concatenate([[0.0], np.cumsum(steps[order])])


def pool_frame(result: RunResult) -> pd.DataFrame:
    """Per backend: mean queue length and batch occupancy (streams per replica) over the run so
    far, time-averaged from the finished requests, and their mean per-stream decode speed."""
    rows = []
    span = max(result.horizon_s, 1e-9)
    for backend, frame in result.requests.groupby("backend", sort=False):
        replicas = int(result.scenario.backends[backend].replicas)
        waiting = float(frame["queue_wait_s"].sum()) / span
        busy = float((frame["done_s"] - frame["admitted_s"]).sum()) / span / replicas
        rate = decode_rate_tok_s(frame["output_tokens"], frame["decode_s"])
        rate = rate[np.isfinite(rate)]
        rows.append(
            {
                "backend": backend,
                "mean_queue": waiting,
                "mean_streams_per_replica": busy,
                "tok_s_per_stream": float(rate.mean()) if len(rate) else math.nan,
            }
        )
    return pd.DataFrame(rows)


def pool_figure(result: RunResult, name: str) -> Figure:
    """The serving pool over time: queue length, streams in service per replica, per-stream tok/s."""
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    queue_ax, batch_ax, rate_ax = fig.subplots(3, 1, sharex=True)
    requests = result.requests
    if len(requests):
        t, level = count_steps(requests["arrival_s"].to_numpy(), requests["admitted_s"].to_numpy())
        queue_ax.step(t / _HOUR, level, where="post", color="#d95f02", lw=1)
        for replica, rows in requests.groupby("replica"):
            t, level = count_steps(rows["admitted_s"].to_numpy(), rows["done_s"].to_numpy())
            batch_ax.step(t / _HOUR, level, where="post", lw=1, label=f"replica {replica}")
        rate = decode_rate_tok_s(requests["output_tokens"], requests["decode_s"])
        ok = np.isfinite(rate)
        rate_ax.plot(requests["done_s"].to_numpy()[ok] / _HOUR, rate[ok], ".", ms=2, color="#1b9e77")
        batch_ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    queue_ax.set_ylabel("queue")
    batch_ax.set_ylabel("streams")
    rate_ax.set_ylabel("tok/s")
    rate_ax.set_xlabel("hours")
    rate_ax.set_xlim(0, max(result.horizon_s, 1.0) / _HOUR)
    queue_ax.set_title(
        f"{name}: requests waiting, streams per replica (simulated developers only), decode speed"
    )
    return fig


def cumulative_figure(results: Mapping[str, RunResult]) -> Figure:
    """Tasks completed and US dollars spent so far, per arm."""
    fig = Figure(figsize=(9, 2.6), layout="constrained")
    tasks_ax, usd_ax = fig.subplots(1, 2)
    for name, result in results.items():
        done = np.sort(result.tasks.loc[result.tasks["outcome"].isin(COMPLETED_OUTCOMES), "end_s"].to_numpy())
        tasks_ax.step(
            np.concatenate([[0.0], done]) / _HOUR, np.arange(len(done) + 1), where="post", label=name
        )
        requests = result.requests.sort_values("done_s")
        usd_ax.plot(
            np.concatenate([[0.0], requests["done_s"].to_numpy()]) / _HOUR,
            np.concatenate([[0.0], requests["cost_usd"].cumsum().to_numpy()]),
            label=name,
        )
    tasks_ax.set_title("tasks completed (done right)")
    usd_ax.set_title("US dollars spent")
    for ax in (tasks_ax, usd_ax):
        ax.set_xlabel("hours")
        ax.legend(frameon=False, fontsize="small")
    return fig


def finding(results: Mapping[str, RunResult]) -> str:
    """The finding in words, with the numbers (so far, if the run is not finished)."""
    summaries = {name: result.summary() for name, result in results.items()}
    parts = []
    for name, s in summaries.items():
        if results[name].scenario.policy.kind == NO_AI:
            parts.append(
                f"By hand ({name}), developers spend {100 * s['fixing_share']:.1f}% of their time fixing "
                f"their own mistakes and complete {s['tasks_per_dev_day']:.2f} tasks per developer-day."
            )
            continue
        parts.append(
            f"On {name}, developers spend {100 * s['waiting_share']:.1f}% of their time waiting on the agent "
            f"and {100 * s['fixing_share']:.1f}% fixing its mistakes, and complete "
            f"{s['tasks_per_dev_day']:.2f} tasks per developer-day "
            f"at ${s['usd_per_dev_day']:.2f} per developer-day."
        )
    if len(summaries) == 2:
        (a, sa), (b, sb) = summaries.items()
        gap = sb["tasks_per_dev_day"] - sa["tasks_per_dev_day"]
        if gap == 0:
            parts.append(f"With the same tasks (same seed), {b} and {a} complete as many tasks.")
        else:
            more, fewer = (b, a) if gap > 0 else (a, b)
            parts.append(
                f"With the same tasks (same seed), {more} completes {abs(gap):.2f} more tasks per "
                f"developer-day than {fewer}; one seed on a small team is noisy: run several seeds "
                "before trusting a gap."
            )
    return " ".join(parts)
