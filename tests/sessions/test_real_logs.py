"""Real logs from public repositories (tests/sessions/data/real/SOURCES.md): Claude Code 2.1.39
with a subagent, and a Codex 0.104 rollout. A further set of real logs is held back: set
SPEEDTRAP_HELD_BACK_LOGS to a directory of them to check the loaders' invariants on it."""

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.sessions import codex as cx
from speedtrap.sessions import conversation as cv
from speedtrap.sessions import fit_scenario, load_sessions, scenario_toml
from speedtrap.sessions.replay import replay, replay_pair
from speedtrap.sessions.retime import SpeedFit, fit_backend_speed, logged_figures, timing_check
from speedtrap.sessions.structure import fold_subagents
from speedtrap.sessions.targets import trace_targets

SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"
HELD_BACK = os.environ.get("SPEEDTRAP_HELD_BACK_LOGS")


def test_claude_code_responses_are_whole_requests(real: Path) -> None:
    loaded = load_sessions([real / "claude-code"])
    assert not loaded.report.skipped, loaded.report.lines()
    main = loaded.trace[loaded.trace["parent_session"] == ""]
    # four responses, one of them written as four lines with two parallel Bash calls between
    assert len(main) == 4 and set(main["session"]) == {SESSION}
    assert list(main["input_tokens"]) == [
        3 + 15005 + 11442,
        1 + 1598 + 26447,
        1 + 1315 + 28045,
        1 + 149 + 29360,
    ]
    assert list(main["cached_tokens"]) == [11442, 26447, 28045, 29360]
    # the second response's single line is its final count; the others never got one
    assert main["output_tokens"].iloc[1] == 81
    assert (main["output_tokens"] > 9).all()  # no mid-stream count of 9, 8 or 1 token is kept
    assert main["output_tokens"].iloc[3] > 250  # 1 token logged for a 1.2k-character Task call
    assert loaded.report.adjusted[cv.PARTIAL_USAGE] == 5  # three main responses and both of the subagent's
    # the first request: prompt at 16:02:25.284, last line at 16:02:29.673, results until 16:02:31.740
    first = main.iloc[0]
    assert first["end_s"] - first["start_s"] == pytest.approx(4.389, abs=1e-3)
    assert first["tool_s"] == pytest.approx(2.067, abs=1e-3)


def test_claude_code_subagent_is_kept_on_the_fleet(real: Path) -> None:
    trace = load_sessions([real / "claude-code"]).trace
    sub = trace[trace["parent_session"] == SESSION]
    assert list(sub["session"].unique()) == [f"{SESSION}/agent-a2898e3"]
    # ten parallel Read calls written line by line between their error results: one request
    assert len(sub) == 2 and list(sub["input_tokens"]) == [3 + 13522, 7 + 11563 + 13522]
    folded, kept = fold_subagents(trace)
    assert kept == 0 and len(folded) == 6 and folded["session"].nunique() == 1


def test_codex_rollout_requests(real: Path) -> None:
    loaded = load_sessions([real / "codex"])
    trace = loaded.trace
    assert not loaded.report.skipped
    assert loaded.report.ignored[cx.REPEATED_COUNT] == 5  # every count but the last written twice
    assert len(trace) == 6 and trace["session"].iloc[0] == "019c8bfe-ec25-79e0-97d7-bda6a9c575ff"
    assert list(trace["output_tokens"]) == [204, 96, 245, 179, 113, 286]
    assert list(trace["input_tokens"])[:2] == [42772, 44218] and list(trace["cached_tokens"])[:2] == [
        3456,
        42880,
    ]
    assert math.isnan(trace["human_gap_s"].iloc[0]) and (trace["human_gap_s"].iloc[1:] == 0).all()
    assert trace["tool_s"].iloc[4] == pytest.approx(54.254, abs=1e-3)  # the long workflow call
    # the prompt at 19:34:26.099, the first request's last output at its token count 19:34:39.388
    assert trace["end_s"].iloc[0] - trace["start_s"].iloc[0] == pytest.approx(13.289, abs=1e-3)
    # of which Codex wrote the turn_context line it writes before sending at 19:34:33.389: 7.290 s
    # of the client's; the later requests were sent 0-15 ms after their tool results
    client = trace[cx.CLIENT_COLUMN].to_numpy()
    assert client[0] == pytest.approx(7.290, abs=1e-3) and (client[1:] <= 0.015 + 1e-6).all()
    assert loaded.report.adjusted[cx.CLIENT_TIME] == int((client > 0).sum()) == 5
    assert logged_figures(trace)["client_s"] == pytest.approx(client.sum())


def test_both_tools_load_together_and_fit_with_reasons(real: Path) -> None:
    loaded = load_sessions([real])
    assert loaded.n_sessions == 3 and len(loaded.trace) == 12
    fitted = fit_scenario(loaded)
    text = scenario_toml(fitted)
    assert "developer.prompt_s" in fitted.kept and "# kept:" in text
    targets = trace_targets(loaded.trace, n_boot=200).set_index("statistic")
    assert targets.loc["human_turns_per_session", "sessions"] == 2  # the subagent is not a session


@pytest.mark.skipif(not HELD_BACK, reason="set SPEEDTRAP_HELD_BACK_LOGS to a directory of real logs")
def test_held_back_logs() -> None:
    """Whatever real logs are given: nothing raises; no request is left with a mid-stream count below
    its content's bound; no request starts before the previous one of its session ended; requests
    are not dropped as clock skew; every fitted field or kept field is accounted for."""
    assert HELD_BACK is not None
    loaded = load_sessions([Path(HELD_BACK)])
    trace = loaded.trace
    assert len(trace) > 0, loaded.report.lines()
    assert not any("clock skew" in kind for kind in loaded.report.skipped), loaded.report.lines()
    for _, g in trace.groupby(["developer", "session"]):
        assert (g["start_s"].to_numpy()[1:] >= g["end_s"].to_numpy()[:-1] - 1e-6).all()
    assert np.isfinite(trace[["start_s", "end_s", "tool_s"]].to_numpy()).all()
    fitted = fit_scenario(loaded)
    assert set(fitted.kept) | {p.rsplit(".", 1)[0] for p in fitted.values} >= {"developer.prompt_s"}


TOTAL_TOLERANCE = 0.10
"""Issue 42's acceptance: the recorded backend, at the speed fitted to the logs, replays them within
10% of the logged total request time,"""
MEDIAN_TOLERANCE = 0.20
"""with a per-request median error of at most 20%."""


def _fitted(logs: Path) -> tuple[pd.DataFrame, SpeedFit]:
    trace = load_sessions([logs]).trace
    fit = fit_backend_speed(trace, Scenario(name="real"), "gpu-batched", seed=0)
    assert not fit.reason, fit.reason
    return trace, fit


def test_claude_code_replays_on_its_fitted_backend_within_the_acceptance(real: Path) -> None:
    _, fit = _fitted(real / "claude-code")
    assert fit.before["median_abs_rel_error"] > MEDIAN_TOLERANCE  # the preset alone does not
    assert fit.after["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert abs(fit.after["total_ratio"] - 1.0) <= TOTAL_TOLERANCE
    assert fit.estimated == 5  # and it says how many requests' output tokens are estimates
    assert "rests on 6 requests, 5 of them with estimated output tokens" in " ".join(fit.lines())


def test_codex_replays_on_its_fitted_backend_within_the_acceptance(real: Path) -> None:
    """The rollout's first request is logged at 13.3 s from the prompt, 7.3 s of them before Codex
    wrote the turn_context line it writes just before sending: the client's seconds, taken from
    the log by the replay, not re-timed as the backend's (docs/sessions.md)."""
    trace, fit = _fitted(real / "codex")
    assert fit.before["median_abs_rel_error"] > MEDIAN_TOLERANCE  # the preset alone does not
    assert fit.after["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert abs(fit.after["total_ratio"] - 1.0) <= TOTAL_TOLERANCE
    run = replay(trace, fit.scenario, 0)
    check = timing_check(run)
    assert check["client_s"].iloc[0] == pytest.approx(7.290, abs=1e-3)
    assert check["recorded_s"].iloc[0] == pytest.approx(13.289 - 7.290, abs=1e-3)
    # the replay sends the first request the client's 7.290 s after the prompt
    unsent = replay(trace.assign(client_s=0.0), fit.scenario, 0).result.requests["arrival_s"].min()
    assert run.result.requests["arrival_s"].min() - unsent == pytest.approx(7.290, abs=1e-3)
    # the replay table says so: the client's mean seconds, logged and taken over by the replay
    table = replay_pair(trace, fit.scenario, "gpu-batched", recorded="gpu-batched", seed=0)
    client = table.set_index("measure").loc["mean_client_s"]
    assert client["logged"] == pytest.approx(trace["client_s"].mean())
    assert client["recorded"] == pytest.approx(client["logged"], rel=0.05)
    # the fitted line's intercept is its residuals' median: the requests are not all replayed short
    short = int((check["replayed_s"] < check["recorded_s"]).sum())
    assert 2 <= short <= 4


def test_figures_on_estimated_output_tokens_say_how_many_requests_they_rest_on(real: Path) -> None:
    loaded = load_sessions([real])
    assert int((loaded.trace["estimated"] == "output").sum()) == 5  # the Claude Code 2.1.39 responses
    assert any(": 5 of 12 requests have estimated output tokens" in n for n in loaded.report.notes)
    fitted = fit_scenario(loaded)
    assert "12 requests, 5 with estimated output" in fitted.values["task_mix.output_tokens.median"][1]
    assert "5 with estimated output" in scenario_toml(fitted)
    assert not any("estimates" in n for n in load_sessions([real / "codex"]).report.notes)


def test_a_codex_desktop_session_replays_on_its_fitted_backend_within_the_acceptance(real: Path) -> None:
    """The public Codex Desktop session of tests/sessions/data/real-checkins/ (83 requests), whose
    requests were sent up to 0.9 s after their trigger (the client's, from the log)."""
    trace, fit = _fitted(real.parent / "real-checkins")
    assert 0.0 < trace["client_s"].max() < 0.9
    assert fit.n == 83 and fit.estimated == 0
    assert fit.after["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert abs(fit.after["total_ratio"] - 1.0) <= TOTAL_TOLERANCE
