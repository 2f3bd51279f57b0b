"""Replay: the example trace (simulated on gpu-batched) replayed on gpu-batched gives back its
recorded request timings; on faster backends the waiting on the model falls and every
developer's ledger still sums to the horizon."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.config.ledger import WAITING_CATEGORIES
from speedtrap.config.scenario import Scenario
from speedtrap.sessions import load_sessions
from speedtrap.sessions.replay import (
    logged_tasks_per_day,
    recorded_backend,
    recorded_sessions,
    replay,
    replay_pair,
    request_timing_error,
)

MEDIAN_TOLERANCE = 0.01
"""Replayed vs recorded seconds per request on the recorded backend: median |relative error| ≤ 1%,"""
P90_TOLERANCE = 0.05
"""90th percentile ≤ 5%,"""
TOTAL_TOLERANCE = 0.01
"""and the total within 1%."""
MODEL_WAIT = [c for c in WAITING_CATEGORIES if c != "waiting_tool"]


@pytest.fixture(scope="module")
def trace() -> pd.DataFrame:
    return load_sessions([Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"]).trace


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    """The built-in developer (not the one the trace was simulated with), two developer-days."""
    # Two developer-days: the built-in developer (slower between turns than the recorded one) replays
    # the example's 601 recorded requests in about a day and a quarter (560 in one day).
    return Scenario(name="replay", horizon_s=2 * 28_800.0)


def test_recorded_backend_reproduces_the_recorded_request_times(trace, scenario) -> None:
    assert recorded_backend(trace) == "gpu-batched"
    run = replay(trace, scenario.with_backend("gpu-batched"), seed=0)
    error = request_timing_error(run)
    assert error["requests"] == len(trace)  # every recorded request was replayed in the first pass
    assert error["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert error["p90_abs_rel_error"] <= P90_TOLERANCE
    assert abs(error["total_ratio"] - 1.0) <= TOTAL_TOLERANCE


def test_the_client_seconds_before_sending_are_taken_from_the_log(trace, scenario) -> None:
    """The example's requests, each sent 0.5-3 s after its trigger (``client_s``, as a Codex trace
    records): the replay sends each request that long after its trigger, and re-times only the rest
    of its logged time."""
    client = pd.Series(np.linspace(0.5, 3.0, len(trace)), index=trace.index)
    after = client.groupby([trace["developer"], trace["session"]]).cumsum()
    logs = trace.assign(
        start_s=trace["start_s"] + after - client, end_s=trace["end_s"] + after, client_s=client
    )
    run = replay(logs, scenario.with_backend("gpu-batched"), seed=0)
    times = run.request_times()
    first = times[times["cycle"] == 0]
    for rec in run.sessions[0][:3]:
        rows = first[first["session"] == rec.name]
        assert list(rows["client_s"]) == pytest.approx(list(rec.client_s))
        logged = np.array(rec.end_s) - np.array(rec.start_s) - np.array(rec.client_s)
        assert list(rows["recorded_s"]) == pytest.approx(list(logged))
    req = run.result.requests.sort_values(["developer", "task", "turn"]).reset_index(drop=True)
    checked = 0
    for i in range(1, len(req)):
        a, b = req.iloc[i - 1], req.iloc[i]
        rec = run.sessions[int(b["developer"])][int(b["task"]) % len(run.sessions[int(b["developer"])])]
        k = int(b["turn"])
        if (a["developer"], a["task"]) != (b["developer"], b["task"]) or k in rec.checkin_after:
            continue  # a new task, or after a check-in: the human comes first
        # within an agent stretch: the tool call, the client's logged seconds, then the request
        assert b["arrival_s"] - a["done_s"] == pytest.approx(rec.tool_s[k - 1] + rec.client_s[k], abs=1e-6)
        checked += 1
    assert checked > 100
    error = request_timing_error(run)  # the backend's part is re-timed as exactly as without them
    assert error["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    assert abs(error["total_ratio"] - 1.0) <= TOTAL_TOLERANCE


def test_replay_keeps_the_recorded_turns_tokens_tools_and_check_ins(trace, scenario) -> None:
    run = replay(trace, scenario.with_backend("gpu-fast"), seed=0)
    sessions = run.sessions
    req = run.result.requests
    tasks = run.result.tasks
    for d, developer_sessions in enumerate(sessions):
        for i, rec in enumerate(developer_sessions):
            task = tasks[(tasks["developer"] == d) & (tasks["task"] == i)].iloc[0]
            if task["outcome"] == "open":
                continue
            mine = req[(req["developer"] == d) & (req["task"] == i)].sort_values("turn")
            assert len(mine) == rec.turns
            np.testing.assert_array_equal(mine["output_tokens"], rec.output_tokens)
            np.testing.assert_array_equal(mine["input_tokens"], rec.input_tokens)
            assert task["tool_s"] == pytest.approx(sum(rec.tool_s))
            stretches = run.result.stretches
            n = ((stretches["developer"] == d) & (stretches["task"] == i)).sum()
            assert n == len(rec.checkin_after) + 1
            assert task["outcome"] == "ok"


@pytest.mark.parametrize("faster", ["gpu-fast", "wafer-distilled"])
def test_faster_backend_cuts_waiting_and_the_ledger_sums_to_the_horizon(trace, scenario, faster) -> None:
    # Developers who always watch: with away episodes, a slower backend sends them away for more of
    # its turns (less of its wait is sat through), so the wait is compared where attention is fixed.
    watching = scenario.with_overrides(
        {
            "developer.attention.patience_s": {"median": 1e9, "sigma": 0.0},
            "developer.attention.patience_episode_sigma": 0.0,
        }
    )
    base = replay(trace, watching.with_backend("gpu-batched"), seed=0).result
    fast = replay(trace, watching.with_backend(faster), seed=0).result
    for result in (base, fast):
        per_developer = result.ledger.groupby("developer")["seconds"].sum()
        np.testing.assert_allclose(per_developer, scenario.horizon_s, rtol=1e-9)
    model_wait = [r.ledger_wide()[MODEL_WAIT].sum().sum() for r in (base, fast)]
    assert model_wait[1] < 0.7 * model_wait[0]
    waiting = [r.summary()["waiting_share"] for r in (base, fast)]
    assert waiting[1] < waiting[0]


def test_a_smaller_context_window_compacts_and_grows_again(trace, scenario) -> None:
    wafer = scenario.with_backend("wafer-distilled")
    run = replay(trace, wafer, seed=0)
    req = run.result.requests
    window = wafer.backends["wafer-distilled"].llm.context_window_tokens
    assert (req["input_tokens"] + req["output_tokens"] <= window).all()
    compacted = req["input_tokens"] == wafer.task_mix.compact_to_tokens
    assert 0 < compacted.sum() < 0.1 * len(req)  # compacts now and then, not stuck at the compacted size
    assert len(req) >= len(trace)


def test_replay_pair_is_paired_on_one_seed(trace, scenario) -> None:
    table = replay_pair(trace, scenario, "wafer-distilled", recorded="gpu-batched", seed=0).set_index(
        "measure"
    )
    assert table.loc["mean_request_s", "change"] < 0
    same = replay_pair(trace, scenario, "gpu-batched", recorded="gpu-batched", seed=0)
    assert (same["change"] == 0).all()


def test_recorded_sessions_mark_check_ins_after_human_gaps() -> None:
    trace = pd.DataFrame(
        {
            "developer": "d",
            "session": "s",
            "start_s": [0.0, 10.0, 20.0, 60.0],
            "end_s": [5.0, 15.0, 25.0, 65.0],
            "input_tokens": [100, 200, 300, 400],
            "cached_tokens": 0,
            "output_tokens": [10, 10, 10, 10],
            "tool_s": [5.0, 5.0, 0.0, 0.0],
            "human_gap_s": [np.nan, 0.0, 0.0, 35.0],
        }
    )
    (rec,) = recorded_sessions(trace)["d"]
    assert rec.checkin_after == (3,) and rec.checkin_s == (35.0,) and np.isnan(rec.prompt_s)


def test_run_replay_command(tmp_path: Path) -> None:
    logs = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"
    result = CliRunner().invoke(
        app,
        ["run", "--replay", str(logs), "--backend", "gpu-fast", "--set", "horizon_s=14400", "--json"],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["recorded_backend"] == "gpu-batched" and payload["backend"] == "gpu-fast"
    assert payload["recorded_timing"]["median_abs_rel_error"] <= MEDIAN_TOLERANCE
    measures = {m["measure"]: m for m in payload["measures"]}
    assert measures["mean_request_s"]["replayed"] < measures["mean_request_s"]["recorded"]


def test_run_replay_rejects_logs_without_requests(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("session,start_s,end_s,input_tokens,output_tokens\n")
    result = CliRunner().invoke(app, ["run", "--replay", str(empty)])
    assert result.exit_code == 2 and "no usable request" in result.output


def test_run_replay_shows_the_logged_figures_and_the_speed_that_would_match(tmp_path: Path) -> None:
    logs = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"
    result = CliRunner().invoke(app, ["run", "--replay", str(logs), "--set", "horizon_s=14400"])
    assert result.exit_code == 0, result.output
    assert "logged" in result.output and "gpu-batched (re-simulated, fitted speed)" in result.output
    assert "re-times the" in result.output
    payload = json.loads(
        CliRunner().invoke(app, ["run", "--replay", str(logs), "--set", "horizon_s=14400", "--json"]).output
    )
    measures = {m["measure"]: m for m in payload["measures"]}
    assert measures["mean_request_s"]["logged"] > 0  # the logged figure, not a re-simulation
    assert measures["waiting_share"]["logged"] is None  # the logs alone cannot say
    assert set(payload["backend_speed"]) >= {"decode_speedup", "ttft_overhead_s", "reason"}
    assert payload["report"]


PATIENT = {
    "developer.attention.rule": "threshold",
    "developer.attention.flow_threshold_s": 1e9,
    "developer.attention.other_work_prob": 0.0,
    "developer.attention.max_parallel_sessions": 1,
}
"""A developer who always waits on the agent: the time between two tasks is theirs alone."""


def _two_tasks() -> pd.DataFrame:
    """One session, two tasks (a /clear after 200 s of the human's), no tool time after a task."""
    return pd.DataFrame(
        {
            "developer": "d",
            "session": "s",
            "start_s": [0.0, 10.0, 230.0, 240.0],
            "end_s": [5.0, 30.0, 235.0, 250.0],
            "input_tokens": [10_000, 11_000, 12_000, 13_000],
            "cached_tokens": [0, 10_000, 0, 12_000],
            "output_tokens": [100, 400, 100, 300],
            "tool_s": [5.0, 0.0, 5.0, 0.0],
            "human_gap_s": [np.nan, 0.0, 200.0, 0.0],
            "boundary": ["", "", "clear", ""],
        }
    )


@pytest.mark.parametrize("backend", ["gpu-batched", "wafer-distilled"])
def test_the_human_time_between_tasks_is_the_logged_one_on_any_backend(backend: str) -> None:
    scenario = Scenario(name="patient", horizon_s=3_600.0).with_overrides(PATIENT).with_backend(backend)
    run = replay(_two_tasks(), scenario, seed=0)
    req = run.result.requests.set_index(["task", "turn"])
    # task 1 (the /clear) starts 200 s after task 0's last request: no review drawn on top of it
    assert req.loc[(1, 0), "arrival_s"] - req.loc[(0, 1), "done_s"] == pytest.approx(200.0, abs=1e-6)
    assert run.coverage()["recorded_tasks"] == 2


def test_a_replay_says_when_it_loops_the_logs_and_the_logs_give_their_own_day(trace, scenario) -> None:
    table = replay_pair(trace, scenario, "gpu-batched", recorded="gpu-batched", seed=0)
    coverage = table.attrs["coverage"]["gpu-batched"]
    assert coverage["passes"] > 1  # two developer-days from the example's ~1.3 days of work: looped
    logged = table.set_index("measure").loc["tasks_per_dev_day", "logged"]
    assert logged == pytest.approx(logged_tasks_per_day(trace)) and logged > 0
    short = replay_pair(
        trace, scenario.with_overrides({"horizon_s": 3_600.0}), "gpu-batched", recorded="gpu-batched"
    )
    assert short.attrs["coverage"]["gpu-batched"]["passes"] <= 1


def test_logged_tasks_per_day_count_the_days_with_requests() -> None:
    two = _two_tasks()
    later = two.assign(session="t", start_s=two["start_s"] + 3 * 86_400.0, end_s=two["end_s"] + 3 * 86_400.0)
    assert logged_tasks_per_day(two) == 2.0 and logged_tasks_per_day(pd.concat([two, later])) == 2.0


def test_run_replay_states_the_baseline_and_the_looping(tmp_path: Path) -> None:
    logs = Path(__file__).resolve().parents[2] / "examples" / "sessions" / "trace.csv"
    result = CliRunner().invoke(app, ["run", "--replay", str(logs), "--set", "horizon_s=144000"])
    assert result.exit_code == 0, result.output
    assert "Baseline of the change: gpu-batched at the speed fitted to the logs." in result.output
    assert "times over to fill the horizon: per-day figures count the repeats" in result.output
