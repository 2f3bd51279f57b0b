"""A recorded Claude Code 2.1.14 session of DRMacIver/claude-reliability's snapshot tests
(tests/sessions/data/real-reliability/, MIT): one prompt, 14 responses whose usage is never final.
Held out from the fit's tests (which read tests/sessions/data/real/)."""

import json
from pathlib import Path

from speedtrap.config.scenario import Scenario
from speedtrap.sessions import conversation as cv
from speedtrap.sessions import load_sessions
from speedtrap.sessions.retime import fit_backend_speed

LOGS = Path(__file__).resolve().parent / "data" / "real-reliability"
TOTAL_TOLERANCE = 0.10
"""Issue 42's acceptance: within 10% of the logged total request time,"""
MEDIAN_TOLERANCE = 0.20
"""with a per-request median error of at most 20%."""


def test_one_request_per_response_and_the_estimates_are_counted() -> None:
    (path,) = (LOGS / "claude-code").glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    replies = [o["message"] for o in lines if o["type"] == "assistant"]
    ids = {m["id"] for m in replies}
    never_final = {m["id"] for m in replies} - {m["id"] for m in replies if m["stop_reason"] is not None}
    loaded = load_sessions([LOGS])
    trace = loaded.trace
    assert not loaded.report.skipped, loaded.report.lines()
    assert len(trace) == len(ids) == 14
    estimated = int((trace["estimated"] == "output").sum())
    assert 0 < estimated <= len(never_final) and loaded.report.adjusted[cv.PARTIAL_USAGE] == estimated
    assert any(f": {estimated} of 14 requests have estimated output tokens" in n for n in loaded.report.notes)


def test_the_fitted_recorded_backend_replays_it_within_the_acceptance() -> None:
    trace = load_sessions([LOGS]).trace
    fit = fit_backend_speed(trace, Scenario(name="real"), "gpu-batched", seed=0)
    assert not fit.reason, fit.reason
    assert fit.after["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert abs(fit.after["total_ratio"] - 1.0) <= TOTAL_TOLERANCE
    assert fit.estimated == int((trace["estimated"] != "").sum())
