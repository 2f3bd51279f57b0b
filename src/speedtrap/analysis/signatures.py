"""Behavioural signatures of patience and switching away: how fast a developer answers an agent's
check-in, given how long the agent ran before it.

A developer who stayed while the agent ran answers its check-in within seconds; one who switched
away answers only when their time away ends, after a resumption. Whether they stay depends on
the wait they expect against their patience, so short stretches should mostly get fast answers
and long stretches slow ones. How the fast share and the typical answer change with the stretch's
length is what identifies patience and switching; the marginal medians of response and stretch
(the ``headline`` targets) cannot, since any patience can reproduce them with another time away.

One definition serves logs and simulated runs: both hand pairs of (stretch seconds, response
seconds) — a stretch from the hand-off to the agent's check-in, the response from that check-in
to the developer's next message in the same task — to :func:`signature_values`
(:func:`speedtrap.sessions.targets.trace_targets` from a trace,
:func:`speedtrap.validation.signatures.signature_statistics` from a run).

================================  ================================================================
statistic                         what (thresholds below)
================================  ================================================================
fast_response_share_after_short   share of responses ≤ 15 s after stretches < 60 s
fast_response_share_after_long    share of responses ≤ 15 s after stretches > 300 s
response_median_after_short       median response (s) after stretches < 60 s
response_median_after_long        median response (s) after stretches > 300 s
response_stretch_rank_correlation Spearman's rank correlation of response with stretch, all pairs
================================  ================================================================

The thresholds were fixed from the sources before any simulated output was looked at:

* :data:`FAST_RESPONSE_S` (15 s): an answer from a developer who stayed. Nielsen (1993) puts the
  limit for keeping attention on a dialogue at 10 s; a short suspension adds a resumption lag of
  ≈2–5 s (Monk, Trafton & Boehm-Davis 2008), and response speed recovers within ≈15 s (Altmann &
  Trafton 2007). A developer who left cannot answer this fast: coming back alone costs more.
* :data:`SHORT_STRETCH_S` (60 s): below the geometric middle of patience's sourced range (10–600 s,
  docs/calibration.md: √(10·600) ≈ 77 s) and near TraceLab's median stretch (38 s), so most
  developers sit through such a stretch.
* :data:`LONG_STRETCH_S` (300 s): five minutes, the middle of the 2–10 min build waits that cost
  developers the most (C. Winter 2017, docs/calibration.md) and near TraceLab's 90th percentile
  stretch (384 s); only the most patient developers (up to 600 s) wait through it.

A response of :data:`AWAY_GAP_S` or more is not a check-in response: the logs cannot tell it from
time away before a new task (:data:`speedtrap.sessions.structure.LONG_GAP_S`, the same 30 min), so
both sides drop it. Nor is one under :data:`MIN_RESPONSE_S`: nobody reads a check-in and types and
sends a reply within 1 s (the keystroke-level model: 1.35 s of mental preparation before the first
of ≈0.2–0.3 s keystrokes, Card, Moran & Newell 1983); such a message was typed while the agent still
worked (Codex sends it after the running tool call) and counts as an interruption in the logs
(:func:`speedtrap.sessions.targets.trace_targets`). This floor came after the three thresholds, when
the Codex logs showed five messages 0.01–0.15 s after the agent's stop; it drops no simulated
response (the shortest in a default headline run is 3.6 s). A statistic with no pair behind it is NaN; the
rank correlation needs at least :data:`MIN_CORRELATION_PAIRS` pairs and some spread in both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = [
    "AWAY_GAP_S",
    "FAST_RESPONSE_S",
    "LONG_STRETCH_S",
    "MIN_CORRELATION_PAIRS",
    "MIN_RESPONSE_S",
    "RESPONSE_SPREAD",
    "SHORT_STRETCH_S",
    "SIGNATURE_STATISTICS",
    "SignatureEstimate",
    "response_log_sd",
    "signature_bootstrap",
    "signature_pairs",
    "signature_values",
]

FAST_RESPONSE_S = 15.0
"""A response within 15 s is one from a developer who stayed (Nielsen's 10 s attention limit
plus a short-suspension resumption lag, Monk et al. 2008; recovery within ≈15 s, Altmann &
Trafton 2007)."""

SHORT_STRETCH_S = 60.0
"""A stretch under 60 s is short: most developers wait through it (below the geometric middle,
≈77 s, of patience's sourced range 10–600 s)."""

LONG_STRETCH_S = 300.0
"""A stretch over 300 s is long: the middle of the 2–10 min build waits that cost the most
(C. Winter 2017), near TraceLab's 90th percentile stretch (384 s)."""

AWAY_GAP_S = 1_800.0
"""Responses of 30 min or more are time away, not check-in responses (the logs start a new task
after such a gap: ``speedtrap.sessions.structure.LONG_GAP_S``)."""

MIN_RESPONSE_S = 1.0
"""A human message less than 1 s after the agent stopped was typed while it worked: not a response
(keystroke-level model, Card, Moran & Newell 1983: 1.35 s to prepare, ≈0.2–0.3 s a keystroke)."""

MIN_CORRELATION_PAIRS = 3
"""The fewest pairs a rank correlation is computed from (NaN below)."""

SIGNATURE_STATISTICS: dict[str, str] = {
    "fast_response_share_after_short": "fraction",
    "fast_response_share_after_long": "fraction",
    "response_median_after_short": "s",
    "response_median_after_long": "s",
    "response_stretch_rank_correlation": "rank correlation",
}
"""The statistics :func:`signature_values` computes, with their units."""

RESPONSE_SPREAD = "response_log_sd_after_short"
"""The spread of check-in responses after short stretches (:func:`response_log_sd`): not a target
but the source of the range of ``developer.checkin_s.sigma`` (docs/calibration.md)."""


def signature_pairs(
    stretch_s: Sequence[float] | np.ndarray,
    response_s: Sequence[float] | np.ndarray,
    away_gap_s: float = AWAY_GAP_S,
) -> np.ndarray:
    """Which (stretch, response) pairs the signatures use: both finite, the stretch ≥ 0, the response
    at least :data:`MIN_RESPONSE_S` and shorter than ``away_gap_s``. A boolean mask."""
    s = np.asarray(stretch_s, dtype=float)
    r = np.asarray(response_s, dtype=float)
    if s.shape != r.shape:
        raise ValueError(f"stretch and response arrays differ in shape: {s.shape} and {r.shape}")
    return np.isfinite(s) & np.isfinite(r) & (s >= 0) & (r >= MIN_RESPONSE_S) & (r < away_gap_s)


def _rank_correlation(s: np.ndarray, r: np.ndarray) -> float:
    if len(s) < MIN_CORRELATION_PAIRS or np.ptp(s) == 0 or np.ptp(r) == 0:
        return math.nan
    return float(stats.spearmanr(s, r).statistic)


def _values(s: np.ndarray, r: np.ndarray) -> dict[str, float]:
    """The statistics of already filtered pairs."""
    short = r[s < SHORT_STRETCH_S]
    long = r[s > LONG_STRETCH_S]
    return {
        "fast_response_share_after_short": float(np.mean(short <= FAST_RESPONSE_S))
        if len(short)
        else math.nan,
        "fast_response_share_after_long": float(np.mean(long <= FAST_RESPONSE_S)) if len(long) else math.nan,
        "response_median_after_short": float(np.median(short)) if len(short) else math.nan,
        "response_median_after_long": float(np.median(long)) if len(long) else math.nan,
        "response_stretch_rank_correlation": _rank_correlation(s, r),
    }


def response_log_sd(
    stretch_s: Sequence[float] | np.ndarray,
    response_s: Sequence[float] | np.ndarray,
    away_gap_s: float = AWAY_GAP_S,
) -> float:
    """The sample standard deviation (ddof 1) of the log of the responses after stretches shorter
    than :data:`SHORT_STRETCH_S` (usable pairs only, :func:`signature_pairs`); NaN below two.

    Most developers sit through a short stretch, so these responses are mostly the time to read a
    check-in and reply; the few from developers who left add their time away and widen the spread.
    The log-sd is therefore an upper bound on the spread of the reply time itself
    (``developer.checkin_s.sigma``). Pure."""
    s = np.asarray(stretch_s, dtype=float)
    r = np.asarray(response_s, dtype=float)
    keep = signature_pairs(s, r, away_gap_s) & (s < SHORT_STRETCH_S)
    logs = np.log(r[keep])
    return float(np.std(logs, ddof=1)) if len(logs) >= 2 else math.nan


def signature_values(
    stretch_s: Sequence[float] | np.ndarray,
    response_s: Sequence[float] | np.ndarray,
    away_gap_s: float = AWAY_GAP_S,
) -> dict[str, float]:
    """The :data:`SIGNATURE_STATISTICS` of pairs of agent stretch and the developer's response
    after it, both in seconds (unusable pairs, :func:`signature_pairs`, left out). Pure."""
    keep = signature_pairs(stretch_s, response_s, away_gap_s)
    return _values(np.asarray(stretch_s, dtype=float)[keep], np.asarray(response_s, dtype=float)[keep])


@dataclass(frozen=True)
class SignatureEstimate:
    """One signature statistic from pairs grouped by session: its value, the percentile bootstrap
    95% interval over sessions (NaN with fewer than two sessions behind it, or when no draw had a
    value), the sessions behind it and the pairs behind it (``n``)."""

    value: float
    low: float
    high: float
    sessions: int
    n: int


def signature_bootstrap(
    stretch_s: Sequence[float] | np.ndarray,
    response_s: Sequence[float] | np.ndarray,
    groups: Sequence[str] | np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    away_gap_s: float = AWAY_GAP_S,
) -> dict[str, SignatureEstimate]:
    """:func:`signature_values` of the pairs, each with a percentile bootstrap 95% interval when the
    groups (sessions) are resampled with replacement, and the sessions and pairs behind it: for the
    conditional statistics those with a stretch in the condition, for the correlation all."""
    keep = signature_pairs(stretch_s, response_s, away_gap_s)
    s = np.asarray(stretch_s, dtype=float)[keep]
    r = np.asarray(response_s, dtype=float)[keep]
    g = np.asarray(groups).astype(str)[keep]
    point = _values(s, r)
    keys, codes = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(codes == k) for k in range(len(keys))]
    draws: dict[str, list[float]] = {name: [] for name in SIGNATURE_STATISTICS}
    for _ in range(n_boot if len(keys) > 1 else 0):
        pick = np.concatenate([members[i] for i in rng.integers(0, len(keys), len(keys))])
        for name, v in _values(s[pick], r[pick]).items():
            draws[name].append(v)
    conditions = {
        "fast_response_share_after_short": s < SHORT_STRETCH_S,
        "fast_response_share_after_long": s > LONG_STRETCH_S,
        "response_median_after_short": s < SHORT_STRETCH_S,
        "response_median_after_long": s > LONG_STRETCH_S,
        "response_stretch_rank_correlation": np.ones(len(s), dtype=bool),
    }
    out: dict[str, SignatureEstimate] = {}
    for name in SIGNATURE_STATISTICS:
        d = np.asarray(draws[name], dtype=float)
        d = d[np.isfinite(d)]
        low, high = (float(q) for q in np.quantile(d, [0.025, 0.975])) if len(d) else (math.nan, math.nan)
        inside = conditions[name]
        out[name] = SignatureEstimate(
            value=point[name], low=low, high=high, sessions=len(np.unique(g[inside])), n=int(inside.sum())
        )
    return out
