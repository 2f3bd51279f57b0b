"""Traces written as plain trace files (:mod:`speedtrap.sessions.export`) read back as they were
loaded: the vendored Codex 0.104 rollout (tests/sessions/data/real/codex), written as CSV and as
Parquet, keeps the client's seconds before each request was sent (``client_s``), and its speed fit
and replay give the same figures before and after the round trip."""

from pathlib import Path

import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import load_sessions, trace_from_result
from speedtrap.sessions.export import plain_trace_table, write_trace
from speedtrap.sessions.plain_trace import TRACE_COLUMNS
from speedtrap.sessions.replay import replay, replay_pair
from speedtrap.sessions.retime import SpeedFit, fit_backend_speed, timing_check

BACKEND = "gpu-batched"
REAL = Path(__file__).resolve().parent / "data" / "real"


@pytest.fixture(scope="module")
def codex() -> tuple[pd.DataFrame, SpeedFit]:
    """The vendored Codex 0.104 rollout's trace and the recorded backend's speed fitted to it."""
    trace = load_sessions([REAL / "codex"]).trace
    fit = fit_backend_speed(trace, Scenario(name="real"), BACKEND, seed=0)
    assert not fit.reason, fit.reason
    return trace, fit


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_codex_trace_written_and_read_back_replays_the_same(
    codex: tuple[pd.DataFrame, SpeedFit], tmp_path: Path, suffix: str
) -> None:
    trace, fit = codex
    assert int((trace["client_s"] > 0).sum()) == 5  # the first request sent 7.290 s after its prompt
    back = load_sessions([write_trace(trace, tmp_path / f"codex{suffix}")])
    assert not back.report.skipped and not back.report.adjusted, back.report.lines()
    pd.testing.assert_frame_equal(back.trace, trace, check_exact=True)

    refit = fit_backend_speed(back.trace, Scenario(name="real"), BACKEND, seed=0)
    assert not refit.reason, refit.reason
    assert (refit.decode_speedup, refit.decode_speedup_ci, refit.ttft_overhead_s) == (
        fit.decode_speedup,
        fit.decode_speedup_ci,
        fit.ttft_overhead_s,
    )
    assert refit.before == fit.before and refit.after == fit.after
    check = timing_check(replay(trace, fit.scenario, 0))
    pd.testing.assert_frame_equal(timing_check(replay(back.trace, fit.scenario, 0)), check, check_exact=True)
    assert check["client_s"].iloc[0] == pytest.approx(7.290, abs=1e-3)
    pd.testing.assert_frame_equal(
        replay_pair(back.trace, fit.scenario, BACKEND, recorded=BACKEND, seed=0),
        replay_pair(trace, fit.scenario, BACKEND, recorded=BACKEND, seed=0),
        check_exact=True,
    )


def test_without_the_column_a_codex_request_is_timed_from_its_trigger(
    codex: tuple[pd.DataFrame, SpeedFit],
) -> None:
    """What the round trip keeps: a trace read back without ``client_s`` (as before the column was
    part of the plain trace) times the first request from its prompt, 13.289 s instead of 5.999 s
    from its sending, and its replay sends it at once."""
    trace, fit = codex
    kept, lost = replay(trace, fit.scenario, 0), replay(trace.drop(columns="client_s"), fit.scenario, 0)
    assert timing_check(kept)["recorded_s"].iloc[0] == pytest.approx(5.999, abs=1e-3)
    assert timing_check(lost)["recorded_s"].iloc[0] == pytest.approx(13.289, abs=1e-3)
    sent = kept.result.requests["arrival_s"].min() - lost.result.requests["arrival_s"].min()
    assert sent == pytest.approx(7.290, abs=1e-3)


def test_a_simulated_run_is_written_without_client_seconds() -> None:
    """A simulation sends every request at its trigger: its trace has no ``client_s`` (read as 0),
    and the table written is the trace's own columns."""
    scenario = Scenario.model_validate({"name": "t", "developers": 1, "horizon_s": 7_200.0})
    trace = trace_from_result(simulate(scenario, 0))
    assert len(trace) and "client_s" not in trace.columns
    assert list(trace.columns) == [c for c in TRACE_COLUMNS if c in trace.columns]
    pd.testing.assert_frame_equal(plain_trace_table(trace), trace)
