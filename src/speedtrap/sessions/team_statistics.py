"""The trace statistics a team ensemble is history-matched on, each with its observation error.

:func:`team_statistics` computes, from one trace (real logs, or a simulated run written as logs by
:func:`speedtrap.sessions.trace_from_result`: the same function serves both sides), the statistics
of :data:`TEAM_STATISTICS`:

* from :func:`speedtrap.sessions.targets.trace_targets`: the human response at a check-in and the
  agent stretch (median and 90th percentile), human turns per session, the shares of open time with
  1, 2 and 3 or more sessions open, and the five behavioural signatures of
  :mod:`speedtrap.analysis.signatures` (response after short and long stretches, rank correlation);
* added here: human turns per task, the tools' share of agent time (tool seconds over tool and
  request seconds) and the median output tokens per request (requests whose output count the log
  gave; estimated counts left out).

**The client's seconds before sending** (``client_s``, a Codex trace's column: from a request's
trigger to its sending) are neither the tools' nor the model's. The tools' share leaves them out of
both sides: its request seconds run from sending to the last token, as a replay re-times them (it
takes the client's seconds from the log and sends the request after them) and as
:func:`~speedtrap.sessions.retime.logged_figures` and the fit check's tools' share count them; a
simulated run sends every request at its trigger and has none. They stay in the agent stretch (from
the human turn to the agent's last activity), whose seconds the developer waited on the agent.

``interruptions_per_stretch`` is not one: the model has no interruption of a running agent.

**Observation error.** Each statistic's standard deviation ``sd`` is the larger of two estimates
(the convention of ``validation/data/signature_target_rows.csv``, docs/sessions.md):

* the percentile bootstrap over sessions (over developer-days for the open-time shares): the 95%
  interval's width over 2·1.96 (with a single session, the requests or values are resampled);
* the statistic's sampling error from its ``n`` values: binomial ``√(p̃(1 − p̃)/n)`` for a share,
  with Jeffreys' ``p̃ = (k + ½)/(n + 1)`` so that a share of 0 or 1 still has an error;
  ``value/√n`` for a median and ``1.36·value/√n`` for a 90th percentile (the relative standard
  error of a log-normal sample's median and 90th percentile at log-sd 0.8: ``1.2533·0.8`` and
  ``1.7094·0.8``); ``s/√n`` for a mean; ``1.06(1 − ρ²)/√(n − 3)`` for Spearman's ρ (Fieller,
  Hartley & Pearson 1957).

A statistic from fewer than :data:`~speedtrap.sessions.fit.MIN_SAMPLES` values is not used (the
``why`` column says so), as a field is not fitted from fewer.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from speedtrap.analysis.signatures import SIGNATURE_STATISTICS
from speedtrap.sessions.codex import seconds_before_sending
from speedtrap.sessions.fit import MIN_SAMPLES
from speedtrap.sessions.structure import LONG_GAP_S, fold_subagents, tasks, with_structure
from speedtrap.sessions.targets import trace_targets

__all__ = ["STATISTIC_COLUMNS", "TEAM_STATISTICS", "team_statistics"]

Rule = str
"""How a statistic's sampling error is computed: ``median``, ``p90``, ``share``, ``mean``,
``correlation`` or ``bootstrap`` (the bootstrap alone)."""

TEAM_STATISTICS: dict[str, tuple[str, Rule]] = {
    "human_response_median": ("s", "median"),
    "human_response_p90": ("s", "p90"),
    "agent_stretch_median": ("s", "median"),
    "agent_stretch_p90": ("s", "p90"),
    "human_turns_per_session": ("count", "mean"),
    "human_turns_per_task": ("count", "mean"),
    "concurrent_sessions_1": ("fraction", "share"),
    "concurrent_sessions_2": ("fraction", "share"),
    "concurrent_sessions_3plus": ("fraction", "share"),
    "fast_response_share_after_short": ("fraction", "share"),
    "fast_response_share_after_long": ("fraction", "share"),
    "response_median_after_short": ("s", "median"),
    "response_median_after_long": ("s", "median"),
    "response_stretch_rank_correlation": ("rank correlation", "correlation"),
    "tool_share_of_agent_time": ("fraction", "bootstrap"),
    "output_tokens_median": ("tokens", "median"),
}
"""The statistics, with their units and the rule of their sampling error (module docstring)."""

assert set(SIGNATURE_STATISTICS) <= set(TEAM_STATISTICS)

P90_FACTOR = 1.7094 * 0.8 / (1.2533 * 0.8)
"""A 90th percentile's standard error over a median's for a log-normal sample (the quantile's
``√(q(1 − q))/φ(z_q)``: 1.7094 at q = 0.9, 1.2533 at the median); the median's rule is ``value/√n``."""

Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile: a 95% interval is 2·1.96 sd wide."""

STATISTIC_COLUMNS = [
    "statistic",
    "unit",
    "value",
    "sd",
    "low",
    "high",
    "n",
    "sessions",
    "error",
    "used",
    "why",
]
"""The columns of :func:`team_statistics`' table."""


def _analytic_sd(rule: Rule, value: float, n: int, values: np.ndarray | None) -> float:
    if n < 1 or not math.isfinite(value):
        return math.nan
    if rule == "share":
        p = (value * n + 0.5) / (n + 1)
        return math.sqrt(p * (1 - p) / n)
    if rule == "median":
        return abs(value) / math.sqrt(n)
    if rule == "p90":
        return P90_FACTOR * abs(value) / math.sqrt(n)
    if rule == "correlation":
        return 1.06 * (1 - value**2) / math.sqrt(n - 3) if n > 3 else math.nan
    if rule == "mean" and values is not None and len(values) > 1:
        return float(np.std(values, ddof=1)) / math.sqrt(n)
    return math.nan


_ERROR_WORDS = {
    "share": "binomial (Jeffreys)",
    "median": "value/√n",
    "p90": "1.36·value/√n",
    "mean": "s/√n",
    "correlation": "1.06(1 − ρ²)/√(n − 3)",
    "bootstrap": "",
}


def _bootstrap_groups(
    groups: list[np.ndarray], stat: Callable[[list[np.ndarray]], float], n_boot: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile 95% interval of ``stat`` when the groups are resampled with replacement (with one
    group, its rows are)."""
    if not groups:
        return math.nan, math.nan
    if len(groups) == 1:
        rows = groups[0]
        groups = [rows[i : i + 1] for i in range(len(rows))]
        if len(groups) < 2:
            return math.nan, math.nan
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(groups), len(groups))
        draws.append(stat([groups[i] for i in pick]))
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if not len(d):
        return math.nan, math.nan
    low, high = np.quantile(d, [0.025, 0.975])
    return float(low), float(high)


def _extras(trace: pd.DataFrame, n_boot: int, rng: np.random.Generator) -> list[dict[str, object]]:
    """Human turns per task, the tools' share of agent time, median output tokens per request."""
    rows: list[dict[str, object]] = []
    folded, _ = fold_subagents(trace)
    per_task = tasks(folded, LONG_GAP_S)
    keys = per_task["developer"].astype(str) + "/" + per_task["session"].astype(str)
    turns = per_task["human_turns"].to_numpy(float)
    groups = [turns[(keys == k).to_numpy()] for k in keys.unique()]
    low, high = _bootstrap_groups(groups, lambda g: float(np.mean(np.concatenate(g))), n_boot, rng)
    rows.append(
        _row(
            "human_turns_per_task",
            float(np.mean(turns)) if len(turns) else math.nan,
            low,
            high,
            len(turns),
            len(groups),
            turns,
        )
    )
    df = with_structure(folded, LONG_GAP_S)
    request_s = (df["end_s"] - df["start_s"]).to_numpy(float) - seconds_before_sending(df)  # from sending
    tool_s = df["tool_s"].fillna(0.0).to_numpy(float)
    pair = np.column_stack([tool_s, request_s])
    skeys = (df["developer"].astype(str) + "/" + df["session"].astype(str)).to_numpy()
    sgroups = [pair[skeys == k] for k in pd.unique(skeys)]

    def share(g: list[np.ndarray]) -> float:
        both = np.concatenate(g)
        total = both.sum()
        return float(both[:, 0].sum() / total) if total > 0 else math.nan

    value = share([pair]) if len(pair) else math.nan
    low, high = _bootstrap_groups(sgroups, share, n_boot, rng)
    rows.append(_row("tool_share_of_agent_time", value, low, high, len(pair), len(sgroups), None))
    estimated = trace["estimated"].fillna("").astype(str) if "estimated" in trace.columns else None
    logged = trace if estimated is None else trace[estimated == ""]
    out = logged["output_tokens"].to_numpy(float)
    okeys = (logged["developer"].astype(str) + "/" + logged["session"].astype(str)).to_numpy()
    ogroups = [out[okeys == k] for k in pd.unique(okeys)]
    low, high = _bootstrap_groups(ogroups, lambda g: float(np.median(np.concatenate(g))), n_boot, rng)
    rows.append(
        _row(
            "output_tokens_median",
            float(np.median(out)) if len(out) else math.nan,
            low,
            high,
            len(out),
            len(ogroups),
            None,
        )
    )
    return rows


def _row(
    name: str, value: float, low: float, high: float, n: int, sessions: int, values: np.ndarray | None
) -> dict[str, object]:
    unit, rule = TEAM_STATISTICS[name]
    boot = (high - low) / (2 * Z95) if math.isfinite(low) and math.isfinite(high) else math.nan
    analytic = _analytic_sd(rule, value, n, values)
    candidates = [s for s in (boot, analytic) if math.isfinite(s)]
    sd = max(candidates) if candidates else math.nan
    words = _ERROR_WORDS[rule]
    error = f"max(bootstrap, {words})" if words else "bootstrap"
    why = ""
    if not math.isfinite(value):
        why = "no value in the logs"
    elif n < MIN_SAMPLES:
        why = f"too few values: {n} (need {MIN_SAMPLES})"
    elif not math.isfinite(sd):
        why = "no error estimable (a single value or session)"
    return {
        "statistic": name,
        "unit": unit,
        "value": value,
        "sd": sd,
        "low": low,
        "high": high,
        "n": int(n),
        "sessions": int(sessions),
        "error": error,
        "used": why == "",
        "why": why,
    }


def team_statistics(trace: pd.DataFrame, *, n_boot: int = 1_000, seed: int = 0) -> pd.DataFrame:
    """One row per :data:`TEAM_STATISTICS` entry (columns :data:`STATISTIC_COLUMNS`): its value and
    unit, the observation ``sd`` (module docstring) and the bootstrap 95% interval it rests on
    (``low``, ``high``), the values and sessions behind it, how the error was computed, and whether
    the statistic is ``used`` (else ``why`` not). Pure: the same trace and seed give the same table."""
    rng = np.random.default_rng(seed)
    targets = trace_targets(trace, n_boot=n_boot, seed=seed).set_index("statistic")
    folded, _ = fold_subagents(trace)
    per_session = with_structure(folded, LONG_GAP_S).groupby(["developer", "session"])["human"].sum()
    rows: dict[str, dict[str, object]] = {}
    for name in TEAM_STATISTICS:
        if name not in targets.index:
            continue
        t = targets.loc[name]
        values = per_session.to_numpy(float) if name == "human_turns_per_session" else None
        rows[name] = _row(
            name,
            float(t["value"]),
            float(t["low"]),
            float(t["high"]),
            int(t["n"]),
            int(t["sessions"]),
            values,
        )
    for row in _extras(trace, n_boot, rng):
        rows[str(row["statistic"])] = row
    return pd.DataFrame([rows[name] for name in TEAM_STATISTICS], columns=STATISTIC_COLUMNS)
