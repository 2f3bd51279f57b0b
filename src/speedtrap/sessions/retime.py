"""How honestly a replay re-times the logged requests, what the backend would need to match them,
and the rework the logs record.

:func:`timing_check` sets every replayed request of the first pass beside its logged seconds.
:func:`fit_backend_speed` asks what the recorded backend's speed would have to be: a logged
request took ``recorded ≈ first_token + δ + decode / s`` where the replay gave ``first_token``
(queue, prefill and the backend's fixed overhead) and ``decode`` at the preset's rate; the
Theil–Sen line of ``recorded − first_token`` on ``decode`` gives ``1 / s`` (its slope, with a 95%
interval) and ``δ`` (its intercept: the median of ``recorded − first_token − decode / s``, Sen's
(1968), so that as many requests are replayed short as long; the median of ``recorded −
first_token`` less the slope times the median of ``decode`` need not do that, and left five of the
six Codex 0.104 requests short). ``recorded`` is a request's logged seconds from sending: the
client's seconds before sending, where the log records them, are not the backend's. The fitted
backend multiplies its ``decode_speedup`` by ``s`` and adds ``δ`` to its ``ttft_overhead_s``; the
replay on it is checked again.
:func:`rework_signals` counts the interruptions and refused tool calls of the logs, and
:func:`expected_rework` scales them to another backend by its failure multiplier.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from speedtrap.config.scenario import Scenario
from speedtrap.sessions.codex import CLIENT_COLUMN, seconds_before_sending
from speedtrap.sessions.fit import MIN_SAMPLES
from speedtrap.sessions.replay import ReplayRun, replay, request_timing_error
from speedtrap.sessions.structure import fold_subagents, tasks

__all__ = [
    "MIN_SPEED_REQUESTS",
    "SpeedFit",
    "expected_rework",
    "fit_backend_speed",
    "logged_figures",
    "rework_signals",
    "timing_check",
]

MIN_SPEED_REQUESTS = MIN_SAMPLES
"""Fewest logged requests (with output tokens spread over a factor of 2 or more) a backend speed is
fitted from: as for any fitted parameter (:data:`~speedtrap.sessions.fit.MIN_SAMPLES`); the 95%
interval of the speed says how little a few requests pin it down."""


def timing_check(run: ReplayRun) -> pd.DataFrame:
    """The first pass of a replay, request by request: developer, session, turn, logged and
    replayed seconds, their ratio (replayed / logged), the replay's seconds to the first token and
    of decoding, and the output tokens. Requests logged with no duration are left out."""
    times = run.request_times()
    first = times[(times["cycle"] == 0) & (times["recorded_s"] > 0)].drop(columns="cycle")
    first = first.reset_index(drop=True)
    first["ratio"] = first["replayed_s"] / first["recorded_s"]
    return first


@dataclass(frozen=True)
class SpeedFit:
    """What the recorded backend's speed would have to be for the replay to match the logs:
    ``decode_speedup`` (× the preset's decode rate, with its 95% interval) and
    ``ttft_overhead_s`` (seconds before the first token beyond queue and prefill; the preset's in
    ``preset_ttft_overhead_s``); the per-request
    timing error before and after (:func:`~speedtrap.sessions.replay.request_timing_error`), the
    scenario with the fitted backend, and how many of the ``n`` requests have estimated output
    tokens (``estimated``). ``reason`` says why nothing was fitted (then the fields are NaN and
    ``scenario`` is the one given)."""

    backend: str
    n: int
    decode_speedup: float
    decode_speedup_ci: tuple[float, float]
    ttft_overhead_s: float
    preset_ttft_overhead_s: float
    before: dict[str, float]
    after: dict[str, float]
    scenario: Scenario
    reason: str = ""
    estimated: int = 0

    def lines(self) -> list[str]:
        """A few lines for a report."""
        b = self.before
        out = [
            f"{self.backend} re-times the {int(b['requests'])} logged requests with a median error of "
            f"{100 * b['median_abs_rel_error']:.1f}% (90th percentile {100 * b['p90_abs_rel_error']:.1f}%, "
            f"total {100 * (b['total_ratio'] - 1):+.1f}%)."
        ]
        if self.reason:
            return [*out, f"backend speed not fitted: {self.reason}"]
        lo, hi = self.decode_speedup_ci
        a = self.after
        estimated = (
            [
                f"The speed rests on {self.n} requests, {self.estimated} of them with estimated output "
                "tokens (no final count in the log: 1 token per 4 visible characters, a lower bound)."
            ]
            if self.estimated
            else []
        )
        return [
            *out,
            f"To match, {self.backend} would decode at {self.decode_speedup:.3g}× its preset rate (95% "
            f"interval {lo:.3g}–{hi:.3g}) with a first-token overhead of {self.ttft_overhead_s:.2f} s "
            f"(preset {self.preset_ttft_overhead_s:.2f} s), fitted from {self.n} requests; so "
            f"re-timed, the median error is {100 * a['median_abs_rel_error']:.1f}%, "
            f"total {100 * (a['total_ratio'] - 1):+.1f}%.",
            *estimated,
        ]


def fit_backend_speed(
    trace: pd.DataFrame, scenario: Scenario, backend: str, seed: int | None = 0
) -> SpeedFit:
    """Fit ``backend``'s decode speed-up and first-token overhead to the logged request times of
    ``trace`` (see the module docstring); ``scenario`` must hold ``backend`` or name its preset."""
    base = scenario.with_backend(backend)
    run = replay(trace, base, seed)
    before = request_timing_error(run)
    check = timing_check(run)
    nan = (math.nan, math.nan)

    def unfitted(reason: str) -> SpeedFit:
        preset = base.backends[backend].ttft_overhead_s
        estimated = int(check["estimated"].sum())
        return SpeedFit(
            backend, len(check), math.nan, nan, math.nan, preset, before, before, base, reason, estimated
        )

    decode = check["decode_s"].to_numpy(float)
    y = (check["recorded_s"] - check["ttft_s"]).to_numpy(float)
    ok = np.isfinite(decode) & np.isfinite(y) & (decode > 0)
    out = check["output_tokens"].to_numpy(float)[ok]
    if ok.sum() < MIN_SPEED_REQUESTS:
        return unfitted(f"too little data: {int(ok.sum())} logged requests (need {MIN_SPEED_REQUESTS})")
    if np.quantile(out, 0.9) < 2 * np.quantile(out, 0.1):
        return unfitted(
            "the logged requests' output tokens hardly vary: speed and overhead cannot be told apart"
        )
    slope, intercept, low, high = stats.theilslopes(y[ok], decode[ok], alpha=0.95, method="joint")
    if not slope > 0:
        return unfitted(f"logged seconds do not grow with output tokens (slope {slope:.3g})")
    spec = base.backends[backend]
    speedup = spec.decode_speedup / slope
    ci = (
        spec.decode_speedup / high if high > 0 else math.inf,
        spec.decode_speedup / low if low > 0 else math.inf,
    )
    overhead = max(0.0, spec.ttft_overhead_s + float(intercept))
    fitted = base.with_overrides(
        {f"backends.{backend}.decode_speedup": speedup, f"backends.{backend}.ttft_overhead_s": overhead}
    )
    after = request_timing_error(replay(trace, fitted, seed))
    estimated = int(check["estimated"].to_numpy(bool)[ok].sum())
    return SpeedFit(
        backend,
        int(ok.sum()),
        speedup,
        ci,
        overhead,
        spec.ttft_overhead_s,
        before,
        after,
        fitted,
        estimated=estimated,
    )


def logged_figures(trace: pd.DataFrame) -> dict[str, float]:
    """What the logs themselves say, without any simulation: requests, sessions and tasks (human
    sessions), subagent requests, mean and median seconds per request (from sending to the last
    token), the client's seconds before sending, in all (``client_s``: a Codex trace's column, NaN
    for logs that do not record it), tool seconds, the share of agent time spent in the model
    (request seconds / (request + tool seconds)), input, cached and output tokens, and rework
    signals."""
    folded, _ = fold_subagents(trace)
    client = seconds_before_sending(trace)
    seconds = (trace["end_s"] - trace["start_s"]).to_numpy(float) - client
    request_s, tool_s = float(seconds.sum()), float(folded["tool_s"].sum())
    subagent = (
        trace["parent_session"] != "" if "parent_session" in trace else pd.Series(False, index=trace.index)
    )
    signals = rework_signals(trace)
    return {
        "requests": float(len(trace)),
        "subagent_requests": float(subagent.sum()),
        "sessions": float(trace.loc[~subagent].groupby(["developer", "session"]).ngroups),
        "tasks": float(len(tasks(folded))),
        "mean_request_s": float(seconds.mean()) if len(seconds) else math.nan,
        "median_request_s": float(np.median(seconds)) if len(seconds) else math.nan,
        "client_s": float(client.sum()) if CLIENT_COLUMN in trace.columns else math.nan,
        "tool_s": tool_s,
        "llm_share_of_agent_time": request_s / (request_s + tool_s) if request_s + tool_s > 0 else math.nan,
        "input_tokens": float(trace["input_tokens"].sum()),
        "cached_tokens": float(trace["cached_tokens"].sum()),
        "output_tokens": float(trace["output_tokens"].sum()),
        "interrupted": signals["interrupted"],
        "rejected": signals["rejected"],
    }


def rework_signals(trace: pd.DataFrame) -> dict[str, float]:
    """Requests the human interrupted or whose tool call they refused, in all and per 100 requests."""
    rework = trace["rework"] if "rework" in trace.columns else pd.Series("", index=trace.index)
    n = len(trace)
    interrupted, rejected = float((rework == "interrupted").sum()), float((rework == "rejected").sum())
    per100 = 100.0 * (interrupted + rejected) / n if n else math.nan
    return {
        "requests": float(n),
        "interrupted": interrupted,
        "rejected": rejected,
        "per_100_requests": per100,
    }


def expected_rework(trace: pd.DataFrame, scenario: Scenario, recorded: str, backend: str) -> dict[str, float]:
    """The logged rework signals, and as many scaled to ``backend`` by its failure multiplier
    relative to ``recorded``'s (a weaker model gets more of the work wrong, and the human stops or
    refuses it more often). An assumption, stated in docs/sessions.md: interruptions and refusals
    are proportional to the model's mistakes."""
    signals = rework_signals(trace)
    quality = {
        name: scenario.with_backend(name).backends[name].quality.failure_multiplier
        for name in (recorded, backend)
    }
    factor = quality[backend] / quality[recorded] if quality[recorded] > 0 else math.nan
    logged = signals["interrupted"] + signals["rejected"]
    return {**signals, "logged": logged, "factor": factor, "expected": logged * factor}
