"""``fast_mode_externality``: a growing share of developers buys fast mode on one fixed fleet.

Outcomes per run (:func:`fleet_outcomes`): for each tier, the mean queue wait, time to first token
(arrival to first token, queueing included) and decode speed of its requests; for each group of
developers (fast adopters, standard), tasks per developer-day, inference spend per developer-day
and the share of time spent waiting; for the provider, output tokens per second per GPU and revenue
per GPU-hour (all traffic on the fleet is simulated: the scenario has no background streams).

The economics (:func:`economics_table`, :mod:`speedtrap.analysis.value`) compare each adoption
share with no adoption, paired by seed (the same developers meet the same tasks at every share):
the team's net value per developer-day, and that of each group against all developers at 0% (the
same population, not the same people: the adopters are developers 0 … n − 1 of every run).
"""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from speedtrap.analysis.latency import run_percentiles
from speedtrap.analysis.statistics import summarize
from speedtrap.analysis.value import VALUE_COLUMNS, arm_value, net_phrase, paired_runs
from speedtrap.config.experiment import Experiment
from speedtrap.config.ledger import WAITING_CATEGORIES
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.canonical import Contrast, Report
from speedtrap.models.latency import request_metrics
from speedtrap.models.results import COMPLETED_OUTCOMES, RunSummary
from speedtrap.models.typed_core import Engine
from speedtrap.models.workflow import simulate
from speedtrap.plots import LOG_CUT_NOTE, band_handle, interval_note, plot_lines, save_figure
from speedtrap.policies.fast_share import FastShareSpec
from speedtrap.serving.economics import SECONDS_PER_HOUR
from speedtrap.serving.replica import ReplicaPhysics
from speedtrap.serving.request import decode_rate_tok_s

TIERS = ("standard", "fast")
SHARE = "policy.share"


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else math.nan


def fleet_outcomes(scenario: Scenario, seed: int) -> RunSummary:
    """Per-tier, per-group and provider outcomes of one run of a ``fast_share`` scenario, naming the
    engine that ran it (a :class:`~speedtrap.models.results.RunSummary` of these keys, so the sweep
    store and ``claim.json`` record it as they do for :func:`~speedtrap.models.simulate_summary`).

    Keys: ``<tier>_queue_wait_s``, ``<tier>_ttft_s``, ``<tier>_decode_tok_s`` (mean per request;
    NaN when the tier served nothing), ``<group>_tasks_per_dev_day`` (tasks completed, as the run
    summary counts them), ``<group>_usd_per_dev_day`` (US dollars billed for the group's requests),
    ``<group>_waiting_share`` (group = fast / standard developers; NaN for an empty group),
    ``tasks_per_dev_day``, ``usd_per_task``, ``usd_per_dev_day``, ``provider_tok_s_per_gpu`` (output
    tokens / s / GPU over the horizon) and ``revenue_usd_per_gpu_hour`` (US dollars billed / GPU-hour).
    """
    policy = scenario.policy
    if not isinstance(policy, FastShareSpec):
        raise ValueError(f"policy.kind: fleet_outcomes needs a 'fast_share' policy, got {policy.kind!r}")
    result = simulate(scenario, seed)
    summary = result.summary()
    out: dict[str, float] = {
        "tasks_per_dev_day": summary["tasks_per_dev_day"],
        "usd_per_task": summary["usd_per_task"],
        "usd_per_dev_day": summary["usd_per_dev_day"],
        "backend_utilization": summary["backend_utilization"],
    }
    requests = result.requests
    for tier in TIERS:
        mine = requests[requests["tier"] == tier]
        rate = pd.Series(decode_rate_tok_s(mine["output_tokens"], mine["decode_s"]))
        out[f"{tier}_queue_wait_s"] = _mean(mine["queue_wait_s"])
        out[f"{tier}_ttft_s"] = _mean(mine["ttft_s"])
        out[f"{tier}_decode_tok_s"] = _mean(rate.dropna())
        out.update({f"{tier}_{k}": v for k, v in run_percentiles(request_metrics(mine)).items()})
    n_fast = round(policy.share * scenario.developers)  # the policy's adopters: developers 0 … n_fast − 1
    days_per_developer = result.horizon_s / scenario.workday_s
    ledger = result.ledger
    tasks = result.tasks
    done = tasks[tasks["outcome"].isin(COMPLETED_OUTCOMES)]
    for group, members in (("fast", range(n_fast)), ("standard", range(n_fast, scenario.developers))):
        if len(members) == 0:
            for key in ("tasks_per_dev_day", "usd_per_dev_day", "waiting_share"):
                out[f"{group}_{key}"] = math.nan
            continue
        in_group = ledger["developer"].isin(members)
        waiting = ledger[in_group & ledger["category"].isin(WAITING_CATEGORIES)]["seconds"].sum()
        out[f"{group}_waiting_share"] = float(waiting / ledger[in_group]["seconds"].sum())
        dev_days = len(members) * days_per_developer
        out[f"{group}_tasks_per_dev_day"] = int(done["developer"].isin(members).sum()) / dev_days
        out[f"{group}_usd_per_dev_day"] = (
            float(tasks.loc[tasks["developer"].isin(members), "cost_usd"].sum()) / dev_days
        )
    backend = scenario.backends[policy.references(scenario.backends)["fast_tier"][0]]
    gpu_s = backend.replicas * ReplicaPhysics.from_backend(backend).counted_chips * result.horizon_s
    out["provider_tok_s_per_gpu"] = float(requests["output_tokens"].sum()) / gpu_s
    out["revenue_usd_per_gpu_hour"] = summary["usd_total"] / (gpu_s / SECONDS_PER_HOUR)
    return RunSummary(out, Engine(result.engine, result.engine_reason))


MODEL = fleet_outcomes

PANELS: tuple[tuple[str, str, str], ...] = (
    ("ttft_s", "tier", "time to first token incl. queue (s, log scale)"),
    ("decode_tok_s", "tier", "decode speed per request (tok/s)"),
    ("tasks_per_dev_day", "developers", "tasks per developer-day"),
    ("waiting_share", "developers", "share of time waiting (%)"),
    ("provider_tok_s_per_gpu", "", "provider output (tok/s per GPU)"),
    ("revenue_usd_per_gpu_hour", "", "provider revenue (US$ per GPU-hour)"),
)
LOG_Y = frozenset({"ttft_s", "queue_wait_s"})
"""Waits on a log axis: they grow by orders of magnitude as the fast tier's share rises."""
PERCENT = frozenset({"waiting_share"})
"""Shares of time, drawn in %."""
STARVED_TASKS_PER_DEV_DAY = 0.01
"""A group of developers completing fewer tasks than this per developer-day (mean over the
replications) is starved: assumption, fewer than one task per 100 developer-days counts as none.
Its points are marked, because its waits and waiting share describe requests and days that produce
no work (a starved tier serves few requests, and those quickly)."""
ADOPTION = "fast_tier_pct"
"""The x axis of the figure: the share of developers on the fast tier, in %."""
_STARVED_STYLE: dict[str, Any] = {
    "marker": "X",
    "ms": 11,
    "mfc": "#d62728",
    "mec": "white",
    "ls": "none",
    "zorder": 5,
}


def _long(table: pd.DataFrame, measure: str, groups: tuple[str, ...], hue: str) -> pd.DataFrame:
    frames = [
        table[[SHARE, f"{g}_{measure}"]].rename(columns={f"{g}_{measure}": measure}).assign(**{hue: g})
        for g in groups
    ]
    return pd.concat(frames, ignore_index=True).dropna(subset=[measure])


def contrasts(table: pd.DataFrame, spec: Experiment) -> list[Contrast]:
    """The differences split into seed and behavioural intervals under an ensemble: every adoption
    share against none (the finding says 10%, 50% and 100%), on the standard tier's tasks and
    first-token time, all developers' tasks and the provider's revenue per GPU-hour."""
    outcomes = (
        "standard_tasks_per_dev_day",
        "standard_ttft_s",
        "tasks_per_dev_day",
        "revenue_usd_per_gpu_hour",
    )
    return [Contrast(SHARE, 0.0, outcomes, label="no adoption", said=(0.1, 0.5, 1.0))]


def analyze(table: pd.DataFrame, spec: Experiment, out: Path) -> Report:
    """``summary.csv``, ``economics.csv`` and the six-panel figure ``externality`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(table, by=[SHARE])
    files = [out / "summary.csv"]
    summary.to_csv(files[0], index=False)
    fig = plot_externality(table, spec)
    files += save_figure(fig, out, "externality")
    plt.close(fig)
    economics = economics_table(table, spec)
    files.append(out / "economics.csv")
    economics.to_csv(files[-1], index=False)
    text = finding(summary) + "\n" + economics_finding(economics, table, spec.scenario.value.usd_per_dev_hour)
    return Report(text, files)


def starved_shares(table: pd.DataFrame, group: str) -> list[float]:
    """The levels of :data:`SHARE` at which ``group`` (fast / standard developers) is starved: its
    mean tasks per developer-day over the replications is below :data:`STARVED_TASKS_PER_DEV_DAY`."""
    means = table.groupby(SHARE)[f"{group}_tasks_per_dev_day"].mean().dropna()
    return [float(s) for s in means.index[means < STARVED_TASKS_PER_DEV_DAY]]


def plot_externality(table: pd.DataFrame, spec: Experiment) -> Figure:
    """The six panels of :data:`PANELS` against the share of developers on the fast tier (%).

    Lines are means over the replications with 95% t-interval bands (unpaired); waits on a log
    axis (:data:`LOG_Y`), shares of time in % (:data:`PERCENT`). A starved group's points
    (:func:`starved_shares`) carry a red ✕ in the tier and developer panels. One legend under the
    panels names the lines, the bands (with the number of replications) and the ✕.
    """
    frame = table.assign(**{ADOPTION: 100.0 * table[SHARE]})
    colours = dict(zip(TIERS, sns.color_palette("colorblind", len(TIERS)).as_hex(), strict=True))
    starved = {group: starved_shares(table, group) for group in TIERS}
    fig, axes = plt.subplots(2, 3, figsize=(13, 7.6), layout="constrained")
    cut = False
    for ax, (measure, hue, label) in zip(axes.flat, PANELS, strict=True):
        percent, log = measure in PERCENT, measure in LOG_Y
        if hue:
            long = _long(table, measure, TIERS, hue)
            long[ADOPTION] = 100.0 * long[SHARE]
            plot_lines(long, ADOPTION, measure, label, hue=hue, ax=ax, percent=percent, log=log)
            for group in TIERS:
                rows = long[(long[hue] == group) & long[SHARE].isin(starved[group])]
                means = rows.groupby(ADOPTION)[measure].mean() * (100.0 if percent else 1.0)
                ax.plot(means.index, means.to_numpy(), **_STARVED_STYLE)
        else:
            plot_lines(frame, ADOPTION, measure, label, ax=ax, percent=percent, log=log, color="#333333")
        legend = ax.get_legend()
        if legend is not None:  # one legend for the figure, below
            cut |= any(LOG_CUT_NOTE in " ".join(t.get_text().split()) for t in legend.get_texts())
            legend.remove()
        ax.set_xlabel("developers on the fast tier (%)")
        ax.set_xticks(sorted(frame[ADOPTION].unique()))
    counts = table.groupby(SHARE).size()
    handles = [
        Line2D([], [], color=colours["standard"], marker="o", label="standard tier / its developers"),
        Line2D([], [], color=colours["fast"], marker="o", label="fast tier / its adopters"),
        Line2D([], [], color="#333333", marker="o", label="the provider (whole fleet)"),
        band_handle(
            interval_note("bands", counts, of="replications") + (f";\n{LOG_CUT_NOTE}" if cut else "")
        ),
        Line2D(
            [],
            [],
            **_STARVED_STYLE,
            label=f"starved: < {STARVED_TASKS_PER_DEV_DAY:g} tasks per developer-day\n"
            "(its waits and speeds describe no completed work)",
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False, fontsize="small")
    scenario = spec.scenario
    fleet = next(iter(scenario.backends.values()))
    gpus = ReplicaPhysics.from_backend(fleet).counted_chips  # decode and prefill GPUs of a replica
    fig.suptitle(
        f"Fast-mode adoption on a fixed fleet ({fleet.replicas} × {gpus} GPUs, "
        f"{scenario.developers} developers)"
    )
    return fig


def finding(summary: pd.DataFrame) -> str:
    """The externality in words, from the per-share means."""
    means = summary.pivot(index=SHARE, columns="outcome", values="mean")
    shares = sorted(means.index)
    low = shares[0]
    mixed = [s for s in shares if 0 < s < 1]
    worst = max(mixed, key=lambda s: means.loc[s, "standard_ttft_s"]) if mixed else shares[-1]
    top = shares[-1]
    m0, mw, mt = means.loc[low], means.loc[worst], means.loc[top]
    return (
        f"With {100 * low:.0f}% on fast mode, standard requests get their first token after "
        f"{m0['standard_ttft_s']:.2f} s and decode at {m0['standard_decode_tok_s']:.0f} tok/s. "
        f"With {100 * worst:.0f}% on fast mode, the developers who stay on the standard tier wait "
        f"{mw['standard_ttft_s']:.2f} s for a first token, decode at {mw['standard_decode_tok_s']:.0f} "
        f"tok/s and complete {mw['standard_tasks_per_dev_day']:.2f} tasks per developer-day "
        f"(vs {m0['standard_tasks_per_dev_day']:.2f}); fast adopters decode at "
        f"{mw['fast_decode_tok_s']:.0f} tok/s. The provider's output goes from "
        f"{m0['provider_tok_s_per_gpu']:.1f} to {mt['provider_tok_s_per_gpu']:.1f} tok/s per GPU and its "
        f"revenue from ${m0['revenue_usd_per_gpu_hour']:.2f} to ${mt['revenue_usd_per_gpu_hour']:.2f} per "
        f"GPU-hour between {100 * low:.0f}% and {100 * top:.0f}% adoption."
    )


GROUPS: dict[str, tuple[str, str]] = {
    "team": ("", "the team"),
    "fast": ("fast_", "fast adopters"),
    "standard": ("standard_", "standard tier"),
}
"""Whose economics :func:`economics_table` reports: (column prefix of its outcomes, name)."""


def with_spend(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the team's inference US$ per developer-day: its ``usd_per_dev_day`` where
    recorded, else ``usd_per_task × tasks_per_dev_day`` (the same number, NaN for a run without
    completed tasks), so that runs stored without it can be analysed without running them again."""
    derived = table["usd_per_task"] * table["tasks_per_dev_day"]
    if "usd_per_dev_day" not in table:
        return table.assign(usd_per_dev_day=derived)
    return table.assign(usd_per_dev_day=table["usd_per_dev_day"].fillna(derived))


def economics_table(table: pd.DataFrame, spec: Experiment) -> pd.DataFrame:
    """Per adoption share above 0 and group (:data:`GROUPS`): the group's economics against all
    developers at share 0, paired by seed, at the scenario's value of developer time
    (:func:`speedtrap.analysis.value.arm_value`: net US$ per developer-day of the group with its 95%
    CI, and the break-even numbers). The adopters and the standard tier are compared with the same
    population at 0% (not the same developers); their rows need runs that record each group's spend
    (``<group>_usd_per_dev_day``) and are left out otherwise. Columns ``share``, ``group``, then
    :data:`~speedtrap.analysis.value.VALUE_COLUMNS`; empty without the 0% point."""
    runs = with_spend(table)
    shares = sorted(set(runs[SHARE]))
    rows = []
    if 0.0 in shares:
        scenario = spec.scenario
        for share in shares[1:]:
            for group, (prefix, name) in GROUPS.items():
                if f"{prefix}usd_per_dev_day" not in runs:
                    continue
                pairs = paired_runs(runs, SHARE, 0.0, share, arm_prefix=prefix)
                if pairs.empty:  # no such group at this share (no standard developers at 100%)
                    continue
                arm = f"{name} at {100 * share:g}% adoption"
                value = arm_value(pairs, arm, value=scenario.value, workday_s=scenario.workday_s)
                rows.append({"share": share, "group": group} | asdict(value))
    return pd.DataFrame(rows, columns=["share", "group", *VALUE_COLUMNS])


def economics_finding(economics: pd.DataFrame, table: pd.DataFrame, usd_per_dev_hour: float) -> str:
    """The economics in words: the team's net value at the first and the full adoption share, and
    at the first share the standard tier's and the adopters' (when the runs record their spend)."""
    if economics.empty:
        return "No economics: the design has no 0% adoption point to compare with."
    rows = {(r["share"], r["group"]): r for r in economics.to_dict("records")}
    team = sorted(share for share, group in rows if group == "team")
    first, top = team[0], team[-1]
    text = (
        f"At ${usd_per_dev_hour:g} per developer-hour, against no adoption (paired by seed), the team's "
        f"net value is {net_phrase(rows[first, 'team'])} at {100 * first:g}% adoption"
    )
    if top != first:
        text += f" and {net_phrase(rows[top, 'team'])} at {100 * top:g}%"
    if (first, "standard") in rows and (first, "fast") in rows:
        text += (
            f". At {100 * first:g}% the standard tier's net value is {net_phrase(rows[first, 'standard'])} "
            f"and the adopters' {net_phrase(rows[first, 'fast'])}, each against all developers at 0% "
            "(the same population)."
        )
    elif "standard_usd_per_dev_day" not in table:
        text += (
            ". These runs were made by an earlier fleet_outcomes, which recorded no group's inference spend "
            "and counted a group's accepted defective tasks as done: the standard tier's and the adopters' "
            "economics are left out (delete the runs and run again for them)."
        )
    else:
        text += "."
    return text
