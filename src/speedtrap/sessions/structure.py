"""Task and session structure of a trace: which requests are human turns, where tasks begin, the
agent stretches between human turns, and how many sessions a developer had open at once.

A session's requests are numbered in time order (``turn``); a request is a *human turn* when it is
a session's first or a human gap (> 0) came before it. A human turn starts a new *task* when the
log marks a boundary (``clear``, ``compact``, ``commit``: docs/sessions.md) or the human came
back after at least :data:`LONG_GAP_S`; a session's first request starts its first task. A human
gap shorter than that inside a task is a check-in; one before a task's first request, the review of
the previous task and the next prompt; one of :data:`LONG_GAP_S` or more, time away.

A session is *open* from the start of a request until the next request of the session starts,
except across a gap of :data:`LONG_GAP_S` or more (the developer was away), and until the end of
its last request's tool call. Subagent sessions (``parent_session`` set) are the agent's, not the
developer's: they are left out of everything here, and :func:`fold_subagents` puts their requests
into their parent's session for fitting and replay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "LONG_GAP_S",
    "Concurrency",
    "concurrency",
    "fold_subagents",
    "human_sessions",
    "stretches",
    "task_starts",
    "tasks",
    "with_structure",
]

LONG_GAP_S = 1_800.0
"""A human gap of 30 min or more is time away, and the prompt after it starts a new task.
Assumption: longer than any check-in the headline targets describe (TraceLab's human response
median ≈1.4 min, 90th percentile a few minutes), shorter than a meeting or a lunch break."""


_DEFAULTS = {"tool_s": 0.0, "human_gap_s": math.nan, "boundary": "", "parent_session": ""}
"""Optional trace columns these functions read, and their values when a table lacks them."""


def human_sessions(trace: pd.DataFrame) -> pd.DataFrame:
    """The requests of sessions a human started (no ``parent_session``), with every optional
    column these functions read (filled with its default where missing)."""
    missing = {c: v for c, v in _DEFAULTS.items() if c not in trace.columns}
    df = trace.assign(**missing) if missing else trace
    return df[df["parent_session"].fillna("").astype(str) == ""]


def task_starts(session: pd.DataFrame, long_gap_s: float = LONG_GAP_S) -> np.ndarray:
    """Why each request of one session (in time order) starts a task: ``session`` for the first,
    the log's boundary, or ``gap`` after time away, at a human turn; empty inside a task."""
    gap = session["human_gap_s"].fillna(0.0).to_numpy(float)
    boundary = (
        session["boundary"].to_numpy(str) if "boundary" in session.columns else np.full(len(session), "")
    )
    human = gap > 0
    reason = np.where(human & (boundary != ""), boundary, np.where(human & (gap >= long_gap_s), "gap", ""))
    if len(reason):
        reason = reason.astype(object)
        reason[0] = "session"
    return reason.astype(str)


def with_structure(trace: pd.DataFrame, long_gap_s: float = LONG_GAP_S) -> pd.DataFrame:
    """The human sessions' requests in order with ``turn`` (0, 1, … per session), ``human`` (a human
    turn), ``away`` (the gap before it is time away), ``task`` (0, 1, … per session) and
    ``task_start`` (why a task starts here: ``session``, ``clear``, ``compact``, ``commit``,
    ``gap``; empty inside a task)."""
    df = human_sessions(trace).sort_values(["developer", "session", "start_s"], kind="stable")
    df = df.reset_index(drop=True)
    df["turn"] = df.groupby(["developer", "session"]).cumcount()
    gap = df["human_gap_s"].fillna(0.0)
    df["human"] = (df["turn"] == 0) | (gap > 0)
    df["away"] = gap >= long_gap_s
    reason = np.full(len(df), "", dtype=object)
    for _, rows in df.groupby(["developer", "session"], sort=False).indices.items():
        reason[rows] = task_starts(df.iloc[rows], long_gap_s)
    df["task_start"] = reason.astype(str)
    df["task"] = df.assign(s=reason != "").groupby(["developer", "session"])["s"].cumsum() - 1
    return df


def tasks(trace: pd.DataFrame, long_gap_s: float = LONG_GAP_S) -> pd.DataFrame:
    """One row per task: developer, session, task, turns (requests, subagents' not included),
    human turns, output tokens, first start and last end (+ tool), what started it, and the human
    gap before it (NaN for a session's first task)."""
    df = with_structure(trace, long_gap_s)
    if not len(df):
        columns = ["developer", "session", "task", "turns", "human_turns", "output_tokens"]
        return pd.DataFrame(columns=[*columns, "start_s", "end_s", "started_by", "gap_before_s"])
    df["stop_s"] = df["end_s"] + df["tool_s"]
    g = df.groupby(["developer", "session", "task"], sort=False)
    return g.agg(
        turns=("turn", "size"),
        human_turns=("human", "sum"),
        output_tokens=("output_tokens", "sum"),
        start_s=("start_s", "min"),
        end_s=("stop_s", "max"),
        started_by=("task_start", "first"),
        gap_before_s=("human_gap_s", "first"),
    ).reset_index()


def stretches(trace: pd.DataFrame, long_gap_s: float = LONG_GAP_S) -> pd.DataFrame:
    """Agent stretches (the turns from one human turn to the next) inside tasks: developer, session,
    task, turns, seconds from the human turn's start to the stretch's last request end (+ tool),
    whether a check-in ended it (``checkin``; else the task ended: censored) and the human gap
    that ended it (NaN if censored)."""
    df = with_structure(trace, long_gap_s)
    df["stretch"] = df.groupby(["developer", "session"])["human"].cumsum()
    df["stop_s"] = df["end_s"] + df["tool_s"]
    key = ["developer", "session", "task", "stretch"]
    st = df.groupby(key, sort=False).agg(
        turns=("turn", "size"), start_s=("start_s", "min"), stop_s=("stop_s", "max")
    )
    st = st.reset_index()
    st["seconds"] = st["stop_s"] - st["start_s"]
    nxt = df.groupby(key, sort=False)["turn"].max().reset_index(drop=True) + 1
    following = df.set_index(["developer", "session", "turn"])
    index = pd.MultiIndex.from_arrays([st["developer"], st["session"], nxt])
    after = following.reindex(index)
    same_task = after["task"].to_numpy() == st["task"].to_numpy()
    st["checkin"] = same_task
    st["gap_after_s"] = np.where(same_task, after["human_gap_s"].to_numpy(), np.nan)
    return st.drop(columns=["stop_s"])


@dataclass(frozen=True)
class Concurrency:
    """How many human sessions a developer had open at once: seconds with 1, 2, 3 … open (index
    k − 1), per developer (``seconds``), and in all."""

    seconds: dict[str, np.ndarray]

    @property
    def total(self) -> np.ndarray:
        width = max((len(v) for v in self.seconds.values()), default=1)
        out = np.zeros(width)
        for v in self.seconds.values():
            out[: len(v)] += v
        return out

    @property
    def open_s(self) -> float:
        """Seconds with at least one session open, all developers."""
        return float(self.total.sum())

    def shares(self) -> np.ndarray:
        """The share of open time with 1, 2, 3 … sessions open (all developers)."""
        total = self.total
        return total / total.sum() if total.sum() > 0 else np.array([1.0])


def _open_spans(g: pd.DataFrame, long_gap_s: float) -> list[tuple[float, float]]:
    """The spans in which one session was open (see the module docstring)."""
    start = g["start_s"].to_numpy(float)
    stop = np.maximum(g["end_s"].to_numpy(float) + g["tool_s"].to_numpy(float), start)
    gap = g["human_gap_s"].fillna(0.0).to_numpy(float)
    spans: list[tuple[float, float]] = []
    begin = start[0]
    for k in range(1, len(g)):
        if gap[k] >= long_gap_s:
            spans.append((begin, max(stop[k - 1], begin)))
            begin = start[k]
    spans.append((begin, max(stop[-1], begin)))
    return spans


def concurrency(trace: pd.DataFrame, long_gap_s: float = LONG_GAP_S) -> Concurrency:
    """Seconds each developer had 1, 2, 3 … human sessions open at once."""
    df = human_sessions(trace).sort_values(["developer", "session", "start_s"], kind="stable")
    out: dict[str, np.ndarray] = {}
    for developer, dev in df.groupby("developer", sort=True):
        edges: list[tuple[float, int]] = []
        for _, g in dev.groupby("session", sort=False):
            for a, b in _open_spans(g, long_gap_s):
                if b > a:
                    edges += [(a, 1), (b, -1)]
        edges.sort(key=lambda e: (e[0], e[1]))  # a session's end before another's start at one instant
        seconds: dict[int, float] = {}
        level, last = 0, math.nan
        for t, step in edges:
            if level > 0:
                seconds[level] = seconds.get(level, 0.0) + t - last
            level += step
            last = t
        width = max(seconds, default=1)
        out[str(developer)] = np.array([seconds.get(k, 0.0) for k in range(1, width + 1)])
    return Concurrency(out)


def _retimed(rows: pd.DataFrame) -> pd.DataFrame:
    """One session's requests, in the order given, moved so that each starts when the previous
    one's tool call and the human gap before it are over (durations kept)."""
    out = rows.reset_index(drop=True).copy()
    duration = (out["end_s"] - out["start_s"]).to_numpy(float)
    tool = out["tool_s"].to_numpy(float)
    gap = out["human_gap_s"].fillna(0.0).to_numpy(float)
    start = np.empty(len(out))
    start[0] = float(out["start_s"].iloc[0])
    for k in range(1, len(out)):
        start[k] = start[k - 1] + duration[k - 1] + tool[k - 1] + gap[k]
    out["start_s"] = start
    out["end_s"] = start + duration
    return out


def fold_subagents(trace: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The trace with every subagent session's requests put into its parent's session after the
    parent's last request before the subagent started, and the number of subagent sessions kept
    as sessions of their own (their parent is not in the trace, or they started before it). A
    subagent that started during that request's tool call (a Task call, which waits on it) splits
    it: the parent's tool time until the subagent started, the subagent's requests with their own
    tool times, then the rest of the parent's tool time. One that started later (a compaction
    between turns) comes between the two parent requests. Subagents that ran in parallel run one
    after the other, so a folded session can last longer than the recorded one (it is re-timed:
    every request keeps its duration, tool time and human gap). Folded requests have no human
    gap: agents prompt them."""
    if "parent_session" not in trace.columns or not (trace["parent_session"] != "").any():
        return trace, 0
    df = trace.sort_values(["developer", "session", "start_s"], kind="stable").reset_index(drop=True)
    main = df[df["parent_session"] == ""]
    inserts: dict[int, list[pd.DataFrame]] = {}
    own: list[pd.DataFrame] = []
    for _, g in df[df["parent_session"] != ""].groupby(["developer", "session"], sort=False):
        parent = main[
            (main["developer"] == g["developer"].iloc[0]) & (main["session"] == g["parent_session"].iloc[0])
        ]
        start = float(g["start_s"].min())
        before = parent[parent["end_s"] <= start]
        if len(before):
            inserts.setdefault(int(before.index[-1]), []).append(g)
        else:
            own.append(g)
    sessions: list[pd.DataFrame] = []
    for _, g in main.groupby(["developer", "session"], sort=False):
        if not any(i in inserts for i in g.index):
            sessions.append(g)
            continue
        rows: list[pd.DataFrame] = []
        for i in g.index:
            row = g.loc[[i]].copy()
            rows.append(row)
            if i not in inserts:
                continue
            call_end = float(row["end_s"].iloc[0] + row["tool_s"].iloc[0])
            chain = sorted(inserts[i], key=lambda s: float(s["start_s"].min()))
            first_start = float(chain[0]["start_s"].min())
            if first_start <= call_end:  # the tool call waited on the subagents
                row["tool_s"] = max(0.0, first_start - float(row["end_s"].iloc[0]))
            else:
                call_end = -math.inf
            for n, sub in enumerate(chain):
                sub = sub.copy()
                sub["session"], sub["parent_session"], sub["human_gap_s"] = row["session"].iloc[0], "", 0.0
                nxt = float(chain[n + 1]["start_s"].min()) if n + 1 < len(chain) else call_end
                last = sub.index[-1]
                sub.loc[last, "tool_s"] = max(0.0, nxt - float(sub.loc[last, "end_s"]))
                rows.append(sub)
        sessions.append(_retimed(pd.concat(rows)))
    folded = pd.concat(sessions + own, ignore_index=True)
    return folded.sort_values(["developer", "session", "start_s"], kind="stable").reset_index(drop=True), len(
        own
    )
