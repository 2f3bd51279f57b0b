"""A run's trace-structure statistics (:mod:`speedtrap.analysis.trace_structure`): the tool calls per
agent stretch and the prompt cache after a pause, computed from the run as the logs' are computed
from a trace (:func:`speedtrap.sessions.targets.trace_targets`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from speedtrap.analysis.trace_structure import cached_share_after_gap, tool_call_values
from speedtrap.models.results import RunResult

__all__ = ["request_human_gaps", "stretch_tool_calls", "structure_statistics"]

_KEY = ["developer", "task", "attempt"]


def stretch_tool_calls(result: RunResult) -> pd.DataFrame:
    """One row per finished agent stretch of ``result`` (a hand-off to the agent's next check-in or
    result: ``need_s`` known): ``session`` (the transcript, as ``human_turns_per_session`` counts
    it: developer, task, attempt, transcript), ``requests`` (those sent from the hand-off until the
    agent stopped) and ``tool_calls`` (requests − 1: the simulated agent calls one tool after every
    request but the stretch's last)."""
    st = result.stretches
    assert st is not None
    st = st[st["need_s"].notna()].copy()
    st["stretch"] = np.arange(len(st))
    req = result.requests[[*_KEY, "arrival_s"]].sort_values("arrival_s", kind="stable")
    merged = pd.merge_asof(
        req,
        st[[*_KEY, "handoff_s", "need_s", "stretch"]].sort_values("handoff_s", kind="stable"),
        left_on="arrival_s",
        right_on="handoff_s",
        by=_KEY,
        direction="backward",
    )
    merged = merged[merged["arrival_s"] < merged["need_s"]]
    counts = merged.groupby("stretch").size().reindex(st["stretch"], fill_value=0).to_numpy()
    session = [
        f"{d}-{t}-{a}-{s}"
        for d, t, a, s in zip(st["developer"], st["task"], st["attempt"], st["transcript"], strict=True)
    ]
    return pd.DataFrame({"session": session, "requests": counts, "tool_calls": np.maximum(counts - 1, 0)})


def request_human_gaps(result: RunResult) -> pd.DataFrame:
    """The requests of the run's finished tasks with the human gap before each, as the run written as
    logs has it (:func:`speedtrap.sessions.export.trace_from_result`, which a test holds this to):
    the prompt (the hand-off less the task's start) before the first request of a task's first
    attempt, the developer's reply (the request's arrival less the previous stretch's stop) before
    the first request of a later stretch, 0 before a request that follows a tool call, NaN before a
    later attempt's first. Columns ``human_gap_s``, ``cached_tokens``, ``input_tokens``."""
    st = result.stretches
    assert st is not None
    done = result.tasks.loc[result.tasks["outcome"] != "open", ["developer", "task", "start_s"]]
    req = result.requests.merge(done, on=["developer", "task"])
    st = st.sort_values([*_KEY, "handoff_s"], kind="stable").copy()
    st["stretch"] = st.groupby(_KEY).cumcount()
    st["prev_need_s"] = st.groupby(_KEY)["need_s"].shift()
    merged = pd.merge_asof(
        req.sort_values("arrival_s", kind="stable"),
        st[[*_KEY, "handoff_s", "stretch", "prev_need_s"]].sort_values("handoff_s", kind="stable"),
        left_on="arrival_s",
        right_on="handoff_s",
        by=_KEY,
        direction="backward",
    ).sort_values([*_KEY, "turn"], kind="stable")
    first = merged.groupby([*_KEY, "stretch"]).cumcount().to_numpy() == 0
    stretch, attempt = merged["stretch"].to_numpy(), merged["attempt"].to_numpy()
    prompt = merged["handoff_s"].to_numpy() - merged["start_s"].to_numpy()
    reply = merged["arrival_s"].to_numpy() - merged["prev_need_s"].to_numpy()
    gap = np.where(first, np.where(stretch == 0, np.where(attempt == 0, prompt, np.nan), reply), 0.0)
    return pd.DataFrame(
        {
            "human_gap_s": gap,
            "cached_tokens": merged["cached_tokens"].to_numpy(),
            "input_tokens": merged["input_tokens"].to_numpy(),
        }
    )


def structure_statistics(result: RunResult) -> dict[str, float]:
    """The :data:`~speedtrap.analysis.trace_structure.TOOL_CALL_STATISTICS` and
    :data:`~speedtrap.analysis.trace_structure.CACHE_STATISTICS` of one run (the cache statistic
    over :func:`request_human_gaps`)."""
    calls = stretch_tool_calls(result)
    out = tool_call_values(calls["tool_calls"].to_numpy(), calls["session"].to_numpy())
    gaps = request_human_gaps(result)
    share, _ = cached_share_after_gap(
        gaps["human_gap_s"].to_numpy(), gaps["cached_tokens"].to_numpy(), gaps["input_tokens"].to_numpy()
    )
    return out | {"cached_share_after_long_gap": share}
