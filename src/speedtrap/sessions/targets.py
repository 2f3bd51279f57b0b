"""Trace statistics a workflow calibration needs, from loaded logs, with their uncertainty.

:func:`trace_targets` gives, for the human sessions of a trace (subagents folded into their
parents; :mod:`speedtrap.sessions.structure` defines tasks, stretches and open sessions):

==============================  ====================================================================
statistic                       what
==============================  ====================================================================
human_response_median / _p90    seconds from the agent's last activity to the human's reply at a
                                check-in (gaps inside a task, time away left out)
agent_stretch_median / _p90     seconds from a human turn to the agent's last request (and tool call)
                                before the next human turn or the end of the task
human_turns_per_session         human turns (the first prompt, check-ins, new tasks) per session
concurrent_sessions_1 / _2 /    share of the time with at least one session open that had 1, 2,
_3plus                          3 or more human sessions open
fast_response_share_after_      the behavioural signatures of :mod:`speedtrap.analysis.signatures`
short / _long, response_median  over the check-ins: (seconds of the stretch a check-in ended, the
_after_short / _long, response  human gap after it) — the share of responses ≤ 15 s and the median
_stretch_rank_correlation       response after stretches < 60 s and > 300 s, and Spearman's rank
                                correlation of response with stretch
interruptions_per_stretch       human messages while the agent still worked, per agent stretch:
                                requests the human interrupted (``rework == "interrupted"``) and
                                messages sent within 1 s of the agent's stop (typed during it)
zero_tool_call_span_share,      the tool calls per agent stretch (its requests less one) of
tool_calls_per_nonzero_span_    :mod:`speedtrap.analysis.trace_structure`: the share of stretches
mean, session_max_tool_calls_   with none, the mean over those with any, the median over sessions
median                          of the most in one stretch
cached_share_after_long_gap     cached share of the input tokens of requests sent after a human gap
                                of 5–30 min (:mod:`speedtrap.analysis.trace_structure`)
response_log_sd_after_short     the log-sd of the check-in responses after stretches < 60 s
                                (:func:`speedtrap.analysis.signatures.response_log_sd`): the source
                                of ``developer.checkin_s.sigma``'s range, not a target
==============================  ====================================================================

Each comes with a percentile bootstrap 95% interval over sessions (resampled with replacement;
for the shares of open time, over developer-days), the number of sessions behind it and the
number of values (for a conditional signature, the check-ins after a stretch in the condition).
These are the statistics of the ``headline`` workflow targets (TraceLab's human
response and agent stretch, Anthropic's human turns per transcript), computed the same way from
one's own logs; a handful of sessions gives wide intervals, which the table says.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from speedtrap.analysis.signatures import (
    MIN_RESPONSE_S,
    RESPONSE_SPREAD,
    SHORT_STRETCH_S,
    SIGNATURE_STATISTICS,
    response_log_sd,
    signature_bootstrap,
    signature_pairs,
)
from speedtrap.analysis.trace_structure import (
    CACHE_STATISTICS,
    TOOL_CALL_STATISTICS,
    cached_share_after_gap,
    tool_call_values,
)
from speedtrap.sessions.structure import LONG_GAP_S, concurrency, fold_subagents, stretches, with_structure

__all__ = ["TARGET_STATISTICS", "trace_targets"]

TARGET_STATISTICS: dict[str, str] = {
    "human_response_median": "s",
    "human_response_p90": "s",
    "agent_stretch_median": "s",
    "agent_stretch_p90": "s",
    "human_turns_per_session": "count",
    "concurrent_sessions_1": "fraction",
    "concurrent_sessions_2": "fraction",
    "concurrent_sessions_3plus": "fraction",
    **SIGNATURE_STATISTICS,
    "interruptions_per_stretch": "count",
    **TOOL_CALL_STATISTICS,
    **CACHE_STATISTICS,
    RESPONSE_SPREAD: "log-sd",
}
"""The statistics :func:`trace_targets` computes, with their units."""


def _quantile(q: float) -> Callable[[np.ndarray], float]:
    return lambda x: float(np.quantile(x, q)) if len(x) else math.nan


def _bootstrap(
    values: pd.Series,
    groups: pd.Series,
    stat: Callable[[np.ndarray], float],
    n_boot: int,
    rng: np.random.Generator,
) -> tuple[float, float, float]:
    """The statistic of ``values`` and its percentile 95% interval when the groups (sessions) are
    resampled with replacement."""
    x = values.to_numpy(float)
    if not len(x):
        return math.nan, math.nan, math.nan
    keys, codes = np.unique(groups.to_numpy(str), return_inverse=True)
    members = [x[codes == k] for k in range(len(keys))]
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(keys), len(keys))
        draws.append(stat(np.concatenate([members[i] for i in pick])))
    low, high = np.nanquantile(draws, [0.025, 0.975]) if len(keys) > 1 else (math.nan, math.nan)
    return stat(x), float(low), float(high)


def _day_concurrency(trace: pd.DataFrame, long_gap_s: float) -> pd.DataFrame:
    """Seconds with 1, 2, 3+ sessions open per developer-day (sessions by the UTC day they began)."""
    df = trace.copy()
    first = df.groupby(["developer", "session"])["start_s"].transform("min")
    df["day"] = df["developer"].astype(str) + "/" + (first // 86_400).astype(int).astype(str)
    rows = []
    for day, g in df.groupby("day", sort=True):
        seconds = concurrency(g, long_gap_s).total
        padded = np.zeros(3)
        padded[: min(3, len(seconds))] = seconds[:3]
        padded[2] += seconds[3:].sum()
        rows.append({"day": day, "c1": padded[0], "c2": padded[1], "c3": padded[2]})
    return pd.DataFrame(rows, columns=["day", "c1", "c2", "c3"])


def trace_targets(
    trace: pd.DataFrame, *, n_boot: int = 2_000, seed: int = 0, long_gap_s: float = LONG_GAP_S
) -> pd.DataFrame:
    """One row per :data:`TARGET_STATISTICS` entry: ``statistic``, ``value``, ``low`` and
    ``high`` (bootstrap 95%; NaN with a single session or day), ``unit``, ``sessions`` (human
    sessions behind it) and ``n`` (values). Pure: the same trace and seed give the same table."""
    rng = np.random.default_rng(seed)
    folded, _ = fold_subagents(trace)
    df = with_structure(folded, long_gap_s)
    st = stretches(folded, long_gap_s)
    sessions = df["developer"].astype(str) + "/" + df["session"].astype(str)
    rows: list[dict[str, object]] = []

    def add(name: str, values: pd.Series, groups: pd.Series, stat: Callable[[np.ndarray], float]) -> None:
        value, low, high = _bootstrap(values, groups, stat, n_boot, rng)
        rows.append(
            {
                "statistic": name,
                "value": value,
                "low": low,
                "high": high,
                "unit": TARGET_STATISTICS[name],
                "sessions": int(groups.nunique()),
                "n": len(values),
            }
        )

    checkin = df[(df["task_start"] == "") & df["human"] & ~df["away"]]
    checkin_groups = sessions[checkin.index]
    add("human_response_median", checkin["human_gap_s"], checkin_groups, _quantile(0.5))
    add("human_response_p90", checkin["human_gap_s"], checkin_groups, _quantile(0.9))
    st_groups = st["developer"].astype(str) + "/" + st["session"].astype(str)
    add("agent_stretch_median", st["seconds"], st_groups, _quantile(0.5))
    add("agent_stretch_p90", st["seconds"], st_groups, _quantile(0.9))
    turns = df.groupby(["developer", "session"])["human"].sum().reset_index()
    turn_groups = turns["developer"].astype(str) + "/" + turns["session"].astype(str)
    add("human_turns_per_session", turns["human"].astype(float), turn_groups, lambda x: float(np.mean(x)))
    days = _day_concurrency(df, long_gap_s)
    n_sessions = int(sessions.nunique())
    for k, name in enumerate(("concurrent_sessions_1", "concurrent_sessions_2", "concurrent_sessions_3plus")):
        col = ["c1", "c2", "c3"][k]
        total = days[["c1", "c2", "c3"]].sum(axis=1).to_numpy()
        value = float(days[col].sum() / total.sum()) if total.sum() > 0 else math.nan
        draws = []
        for _ in range(n_boot if len(days) > 1 else 0):
            pick = rng.integers(0, len(days), len(days))
            t = total[pick].sum()
            draws.append(days[col].to_numpy()[pick].sum() / t if t > 0 else math.nan)
        low, high = np.nanquantile(draws, [0.025, 0.975]) if draws else (math.nan, math.nan)
        rows.append(
            {
                "statistic": name,
                "value": value,
                "low": float(low),
                "high": float(high),
                "unit": "fraction",
                "sessions": n_sessions,
                "n": len(days),
            }
        )
    checkins = st[st["checkin"]]
    signatures = signature_bootstrap(
        checkins["seconds"].to_numpy(float),
        checkins["gap_after_s"].to_numpy(float),
        st_groups[checkins.index].to_numpy(str),
        n_boot=n_boot,
        rng=rng,
        away_gap_s=long_gap_s,
    )
    for name, estimate in signatures.items():
        rows.append(
            {
                "statistic": name,
                "value": estimate.value,
                "low": estimate.low,
                "high": estimate.high,
                "unit": TARGET_STATISTICS[name],
                "sessions": estimate.sessions,
                "n": estimate.n,
            }
        )
    per_stretch = _interruptions(df, st)
    stretch_groups = per_stretch["developer"].astype(str) + "/" + per_stretch["session"].astype(str)
    add("interruptions_per_stretch", per_stretch["interrupted"], stretch_groups, _mean)
    calls = (st["turns"] - 1).clip(lower=0).to_numpy(float)
    labels = st_groups.to_numpy(str)
    rows += _session_bootstrap(
        labels,
        lambda pick: tool_call_values(calls[pick], labels[pick]),
        TOOL_CALL_STATISTICS,
        n_boot,
        rng,
        counts=lambda _name, pick: len(pick),
    )
    gaps, cached, inputs = (df[c].to_numpy(float) for c in ("human_gap_s", "cached_tokens", "input_tokens"))
    request_labels = sessions.to_numpy(str)
    rows += _session_bootstrap(
        request_labels,
        lambda pick: {
            "cached_share_after_long_gap": cached_share_after_gap(gaps[pick], cached[pick], inputs[pick])[0]
        },
        CACHE_STATISTICS,
        n_boot,
        rng,
        counts=lambda _name, pick: cached_share_after_gap(gaps[pick], cached[pick], inputs[pick])[1],
        behind=lambda pick: cached_share_after_gap(gaps[pick], cached[pick], inputs[pick])[1] > 0,
    )
    # last, so that adding it left every earlier statistic's bootstrap draws as they were
    pair_stretch = checkins["seconds"].to_numpy(float)
    pair_response = checkins["gap_after_s"].to_numpy(float)
    after_short = signature_pairs(pair_stretch, pair_response, long_gap_s) & (pair_stretch < SHORT_STRETCH_S)
    rows += _session_bootstrap(
        st_groups[checkins.index].to_numpy(str),
        lambda pick: {RESPONSE_SPREAD: response_log_sd(pair_stretch[pick], pair_response[pick], long_gap_s)},
        {RESPONSE_SPREAD: "log-sd"},
        n_boot,
        rng,
        counts=lambda _name, pick: int(after_short[pick].sum()),
        behind=lambda pick: bool(after_short[pick].any()),
    )
    return pd.DataFrame(rows)


def _session_bootstrap(
    labels: np.ndarray,
    values: Callable[[np.ndarray], dict[str, float]],
    statistics: dict[str, str],
    n_boot: int,
    rng: np.random.Generator,
    *,
    counts: Callable[[str, np.ndarray], int],
    behind: Callable[[np.ndarray], bool] | None = None,
) -> list[dict[str, object]]:
    """Rows of ``statistics`` whose ``values`` are computed from the items (stretches, requests) at an
    index array, each with its percentile bootstrap 95% interval when the sessions (``labels``, one
    per item) are resampled with replacement (NaN with one session), the sessions behind it (those
    with an item the statistic uses: all, or where ``behind`` of the session's items holds) and
    ``counts`` of its values."""
    everything = np.arange(len(labels))
    point = values(everything)
    keys, codes = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(codes == k) for k in range(len(keys))]
    draws: dict[str, list[float]] = {name: [] for name in statistics}
    for _ in range(n_boot if len(keys) > 1 else 0):
        pick = np.concatenate([members[i] for i in rng.integers(0, len(keys), len(keys))])
        for name, v in values(pick).items():
            draws[name].append(v)
    sessions = sum(1 for m in members if behind is None or behind(m))
    out: list[dict[str, object]] = []
    for name, unit in statistics.items():
        d = np.asarray(draws[name], dtype=float)
        d = d[np.isfinite(d)]
        no_value = not math.isfinite(point[name])  # no interval around no value (one pair resampled)
        low, high = (math.nan, math.nan)
        if len(d) and not no_value:
            low, high = (float(q) for q in np.quantile(d, [0.025, 0.975]))
        out.append(
            {
                "statistic": name,
                "value": point[name],
                "low": low,
                "high": high,
                "unit": unit,
                "sessions": sessions,
                "n": int(counts(name, everything)),
            }
        )
    return out


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _interruptions(df: pd.DataFrame, st: pd.DataFrame) -> pd.DataFrame:
    """Human messages while the agent still worked, per agent stretch (``df``: :func:`with_structure`'s
    table; ``st``: :func:`stretches`'): the requests the human interrupted in it, and the message that
    ended it if it came less than :data:`~speedtrap.analysis.signatures.MIN_RESPONSE_S` after the
    agent's stop. Columns developer, session, stretch, interrupted."""
    rework = df["rework"] if "rework" in df.columns else pd.Series("", index=df.index)
    out = df.assign(
        stretch=df.groupby(["developer", "session"])["human"].cumsum(),
        interrupted=(rework.astype(str) == "interrupted").astype(float),
    )
    key = ["developer", "session", "stretch"]
    counts = out.groupby(key, sort=False)["interrupted"].sum().reset_index()
    typed_ahead = st.assign(ahead=(st["gap_after_s"] < MIN_RESPONSE_S).astype(float))[[*key, "ahead"]]
    counts = counts.merge(typed_ahead, on=key, how="left")
    counts["interrupted"] += counts["ahead"].fillna(0.0)
    return counts.drop(columns=["ahead"])
