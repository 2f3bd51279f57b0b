"""Trace statistics of an agent session's structure that logs and simulated runs share: the tool
calls between one human message and the next, and the prompt cache after a pause (pure functions).

One definition serves both sides, as for :mod:`speedtrap.analysis.signatures`: logs hand their
stretches and requests (:func:`speedtrap.sessions.targets.trace_targets`), a run hands its own
(:mod:`speedtrap.validation.trace_statistics`).

=================================  ===============================================================
statistic                          what
=================================  ===============================================================
zero_tool_call_span_share          share of agent stretches (from a human message to the agent's
                                   stop) in which the agent called no tool
tool_calls_per_nonzero_span_mean   mean tool calls per stretch, over stretches with at least one
session_max_tool_calls_median      median over sessions of the most tool calls in one stretch
cached_share_after_long_gap        cached share of the input tokens of the requests sent after a
                                   human gap of more than 5 and at most 30 minutes
=================================  ===============================================================

**Tool calls.** A stretch of ``k`` requests has ``k − 1`` tool calls: every request but the last
ends in a tool call, the last in the agent's reply to the human (Claude Code and Codex alike; a
request that calls several tools at once counts once, which the simulated agent never does). These
are the statistics of a published trace corpus (M. Isaac, "Autonomy Has a Half-Life", 2026:
50.1% of spans with no tool call, 10.56 per span with any, a median session maximum of 11), held
out from the calibration (docs/heldout_studies.md).

**Cache after a pause.** A prompt cache outlives a pause only if its lifetime is longer than the
pause, so the cached share of the requests sent after pauses of :data:`GAP_WINDOW_S` identifies
the lifetime (``task_mix.cache_ttl_s``, sourced 5 minutes to 1 hour): near the share of a warm
cache if the lifetime exceeds most such pauses, near the shared prefix's alone if it is 5 minutes.
The window starts at 300 s, the shortest lifetime sold (Anthropic's 5 minutes), and ends at
:data:`speedtrap.sessions.structure.LONG_GAP_S` (30 min), beyond which a gap is time away before a
new task on both sides.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "CACHE_STATISTICS",
    "GAP_WINDOW_S",
    "TOOL_CALL_STATISTICS",
    "cached_share_after_gap",
    "tool_call_values",
]

TOOL_CALL_STATISTICS: dict[str, str] = {
    "zero_tool_call_span_share": "fraction",
    "tool_calls_per_nonzero_span_mean": "count",
    "session_max_tool_calls_median": "count",
}
"""The tool-call statistics of :func:`tool_call_values`, with their units."""
CACHE_STATISTICS: dict[str, str] = {"cached_share_after_long_gap": "fraction"}
"""The cache statistic of :func:`cached_share_after_gap`, with its unit."""
GAP_WINDOW_S = (300.0, 1_800.0)
"""Human gaps, s, after which the cache statistic looks (more than the first, at most the second):
Anthropic's 5-minute lifetime, and the 30 minutes beyond which a gap is time away (module
docstring)."""


def tool_call_values(tool_calls: np.ndarray, sessions: np.ndarray) -> dict[str, float]:
    """:data:`TOOL_CALL_STATISTICS` of stretches with ``tool_calls`` each (≥ 0), in ``sessions``
    (one label per stretch); NaN where no stretch (or none with a tool call) is behind one."""
    calls = np.asarray(tool_calls, dtype=float)
    if calls.size and np.nanmin(calls) < 0:
        raise ValueError("tool calls per stretch must be at least 0")
    labels = np.asarray(sessions).astype(str)
    if not len(calls):
        return dict.fromkeys(TOOL_CALL_STATISTICS, math.nan)
    nonzero = calls[calls > 0]
    keys, codes = np.unique(labels, return_inverse=True)
    most = np.full(len(keys), -np.inf)
    np.maximum.at(most, codes, calls)
    return {
        "zero_tool_call_span_share": float(np.mean(calls == 0)),
        "tool_calls_per_nonzero_span_mean": float(nonzero.mean()) if len(nonzero) else math.nan,
        "session_max_tool_calls_median": float(np.median(most)),
    }


def cached_share_after_gap(
    human_gap_s: np.ndarray,
    cached_tokens: np.ndarray,
    input_tokens: np.ndarray,
    window_s: tuple[float, float] = GAP_WINDOW_S,
) -> tuple[float, int]:
    """The cached share of the input tokens (their sums) of the requests whose human gap lies in
    ``window_s`` (above the first bound, at most the second), and how many requests that is; NaN
    where there are none (or they have no input)."""
    gap = np.asarray(human_gap_s, dtype=float)
    low, high = window_s
    inside = (gap > low) & (gap <= high)
    total = float(np.asarray(input_tokens, dtype=float)[inside].sum())
    cached = float(np.asarray(cached_tokens, dtype=float)[inside].sum())
    return (cached / total if total > 0 else math.nan), int(inside.sum())
