"""Traces written in the plain trace format (docs/sessions.md): a simulated run's agent sessions
(:func:`trace_from_result`: the logs a developer would have, had the simulated week been real — for
fitting round trips and replays), and any loaded trace (:func:`plain_trace_table`,
:func:`write_trace`: Claude Code or Codex logs converted once, read back by
:func:`speedtrap.sessions.load_sessions` as they were loaded, the client's seconds before sending
included)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from speedtrap.sessions.plain_trace import EXTRA_COLUMNS, TRACE_COLUMNS

if TYPE_CHECKING:
    from speedtrap.models.results import RunResult

__all__ = ["plain_trace_table", "trace_from_result", "write_trace"]

_KEY = ["developer", "task", "attempt"]


def trace_from_result(result: RunResult, *, complete_only: bool = True) -> pd.DataFrame:
    """One row per finished request of ``result``. A session is one attempt at a task
    (``"<developer>-<task>-<attempt>"``); ``tool_s`` is the tool call after a request (until the
    next request or the agent's stop), ``human_gap_s`` the human time before the first request of
    each agent stretch (the prompt for a task's first session, else the gap from the agent's stop
    to the hand-back). ``complete_only`` drops the tasks still open at the horizon. A simulation has
    no subagents, task boundaries or rework signals in its logs, and sends every request at its
    trigger (no client seconds before sending): those optional columns are left out (a loader reads
    them as empty, ``client_s`` as 0)."""
    st = result.stretches
    assert st is not None
    req = result.requests.sort_values(["developer", "task", "attempt", "turn"], kind="stable")
    if complete_only:
        done = result.tasks.loc[result.tasks["outcome"] != "open", ["developer", "task"]]
        req = req.merge(done, on=["developer", "task"])
    st = st.sort_values([*_KEY, "handoff_s"], kind="stable").copy()
    st["stretch"] = st.groupby(_KEY).cumcount()
    st["prev_need_s"] = st.groupby(_KEY)["need_s"].shift()
    req = req.sort_values("arrival_s", kind="stable")
    merged = pd.merge_asof(
        req,
        st.sort_values("handoff_s"),
        left_on="arrival_s",
        right_on="handoff_s",
        by=_KEY,
        direction="backward",
    ).sort_values([*_KEY, "turn"], kind="stable")
    g = merged.groupby([*_KEY, "stretch"])
    first = g.cumcount().to_numpy() == 0
    next_arrival = g["arrival_s"].shift(-1).to_numpy()
    done_s = merged["done_s"].to_numpy()
    tool_s = np.where(np.isnan(next_arrival), merged["need_s"].to_numpy() - done_s, next_arrival - done_s)
    starts = result.tasks.set_index(["developer", "task"])["start_s"]
    task_start = starts.reindex(pd.MultiIndex.from_frame(merged[["developer", "task"]])).to_numpy()
    prompt_gap = merged["handoff_s"].to_numpy() - task_start
    checkin_gap = merged["arrival_s"].to_numpy() - merged["prev_need_s"].to_numpy()
    stretch = merged["stretch"].to_numpy()
    attempt = merged["attempt"].to_numpy()
    human = np.where(
        first, np.where(stretch == 0, np.where(attempt == 0, prompt_gap, np.nan), checkin_gap), 0.0
    )
    out = pd.DataFrame(
        {
            "session": [
                f"{d}-{t}-{a}" for d, t, a in zip(merged["developer"], merged["task"], attempt, strict=True)
            ],
            "developer": [f"developer-{d}" for d in merged["developer"]],
            "start_s": merged["arrival_s"].to_numpy(),
            "end_s": done_s,
            "input_tokens": merged["input_tokens"].to_numpy(),
            "cached_tokens": merged["cached_tokens"].to_numpy(),
            "output_tokens": merged["output_tokens"].to_numpy(),
            "tool_s": np.nan_to_num(tool_s, nan=0.0),
            "human_gap_s": human,
            "backend": merged["backend"].astype(str).to_numpy(),
        }
    )
    return plain_trace_table(out)


def plain_trace_table(trace: pd.DataFrame) -> pd.DataFrame:
    """The plain-trace columns of ``trace`` (:data:`~speedtrap.sessions.plain_trace.TRACE_COLUMNS`,
    then :data:`~speedtrap.sessions.plain_trace.EXTRA_COLUMNS`, each where ``trace`` has it), in
    order and with their dtypes: what a loader reads back as ``trace``. ``client_s`` (a Codex
    trace's client seconds before sending) is written with the rest, its missing values as 0 (sent
    at ``start_s``; a trace concatenated from Codex and other logs has them for the others)."""
    columns = {c: t for c, t in {**TRACE_COLUMNS, **EXTRA_COLUMNS}.items() if c in trace.columns}
    out = pd.DataFrame({c: trace[c] for c in columns})
    if "client_s" in out.columns:
        out["client_s"] = out["client_s"].fillna(0.0)
    return pd.DataFrame({c: out[c].astype(t) for c, t in columns.items()}).reset_index(drop=True)


def write_trace(trace: pd.DataFrame, path: Path) -> Path:
    """Write ``trace`` (a loaded or simulated one) as a plain trace file, Parquet if ``path`` ends in
    ``.parquet``, else CSV (:func:`plain_trace_table`'s columns; times in seconds, floats in their
    shortest exact form). Returns ``path``."""
    table = plain_trace_table(trace)
    if path.suffix.lower() == ".parquet":
        table.to_parquet(path, index=False)
    else:
        table.to_csv(path, index=False)
    return path
