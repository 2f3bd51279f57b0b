"""The statistics a team ensemble is matched on: every one present with its unit, an observation
error from the logs' own sample size, and the rule that too few values are not used."""

import math

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import load_sessions, trace_from_result
from speedtrap.sessions.fit import MIN_SAMPLES
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.retime import logged_figures
from speedtrap.sessions.team_statistics import STATISTIC_COLUMNS, TEAM_STATISTICS, team_statistics


@pytest.fixture(scope="module")
def simulated() -> pd.DataFrame:
    scenario = Scenario.model_validate({"name": "t", "developers": 2, "horizon_s": 28_800.0})
    return normalize_trace(trace_from_result(simulate(scenario, 3)), LoadReport())


def test_every_statistic_with_its_unit_and_error(simulated: pd.DataFrame) -> None:
    table = team_statistics(simulated, n_boot=100)
    assert list(table.columns) == STATISTIC_COLUMNS
    assert list(table["statistic"]) == list(TEAM_STATISTICS)
    assert list(table["unit"]) == [unit for unit, _ in TEAM_STATISTICS.values()]
    used = table[table["used"]]
    assert len(used) >= 8
    assert (used["sd"] > 0).all() and np.isfinite(used["sd"]).all()
    assert (used["n"] >= MIN_SAMPLES).all()
    # the sd is at least the bootstrap's (the larger of the two estimates)
    boot = (used["high"] - used["low"]) / (2 * 1.959963984540054)
    assert (used["sd"] >= boot.fillna(0) - 1e-12).all()


def test_a_share_of_zero_still_has_an_error() -> None:
    """Jeffreys' p̃ = (k + ½)/(n + 1): one open session all the time gives concurrent_sessions_2 = 0 with
    a positive sd, so a member that opens two sessions can be told apart, and one that does not is not
    ruled out by a zero variance."""
    trace = pd.DataFrame(
        {
            "session": ["a"] * 6 + ["b"] * 6,
            "developer": "d",
            "start_s": [0, 10, 20, 100, 110, 120, 86_400, 86_410, 86_420, 86_500, 86_510, 86_520],
            "end_s": [5, 15, 25, 105, 115, 125, 86_405, 86_415, 86_425, 86_505, 86_515, 86_525],
            "input_tokens": 1000,
            "output_tokens": 100,
            "tool_s": 2.0,
            "human_gap_s": [math.nan, 0, 0, 60, 0, 0, math.nan, 0, 0, 70, 0, 0],
        }
    )
    table = team_statistics(normalize_trace(trace, LoadReport()), n_boot=50).set_index("statistic")
    assert table.loc["concurrent_sessions_2", "value"] == 0.0
    assert table.loc["concurrent_sessions_2", "sd"] > 0
    assert table.loc["tool_share_of_agent_time", "value"] == pytest.approx(2.0 / 7.0)


def test_too_few_values_are_not_used(real) -> None:
    """The vendored Claude Code session is too short for most statistics: they are not used, and say why."""
    logs = load_sessions([real / "claude-code"])
    table = team_statistics(logs.trace, n_boot=50).set_index("statistic")
    few = table[table["n"] < MIN_SAMPLES]
    assert len(few) and not few["used"].any()
    assert all(why.startswith(("too few values", "no value")) for why in few["why"])


def test_the_same_seed_gives_the_same_table(simulated: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        team_statistics(simulated, n_boot=50, seed=2), team_statistics(simulated, n_boot=50, seed=2)
    )


def test_the_clients_seconds_before_sending_are_not_the_models() -> None:
    """Requests of 5 s with 2 s of tools after each give a tools' share of 2/7; when 1 s of each
    request passed before it was sent (``client_s``, as a Codex trace records), the model had 4 s of
    it and the share is 2/6, as the replay re-times them (from sending); the agent stretch keeps the
    client's seconds (the agent's time, from the human turn to its last tool call)."""
    trace = pd.DataFrame(
        {
            "session": ["a"] * 6,
            "developer": "d",
            "start_s": [0, 10, 20, 100, 110, 120],
            "end_s": [5, 15, 25, 105, 115, 125],
            "input_tokens": 1000,
            "output_tokens": 100,
            "tool_s": 2.0,
            "human_gap_s": [math.nan, 0, 0, 60, 0, 0],
        }
    )
    plain = team_statistics(normalize_trace(trace, LoadReport()), n_boot=20).set_index("statistic")
    client = team_statistics(normalize_trace(trace.assign(client_s=1.0), LoadReport()), n_boot=20)
    client = client.set_index("statistic")
    assert plain.loc["tool_share_of_agent_time", "value"] == pytest.approx(2.0 / 7.0)
    assert client.loc["tool_share_of_agent_time", "value"] == pytest.approx(2.0 / 6.0)
    stretch = ["agent_stretch_median", "agent_stretch_p90"]
    pd.testing.assert_frame_equal(plain.loc[stretch], client.loc[stretch])


def test_the_tools_share_of_real_codex_logs_is_the_logged_figures(real) -> None:
    """On the vendored Codex 0.104 rollout (7.3 s of client time before its requests were sent) the
    tools' share is one less the model's share of :func:`~speedtrap.sessions.retime.logged_figures`,
    which times requests from sending, and not the share with the client's seconds as the model's."""
    trace = load_sessions([real / "codex"]).trace
    share = team_statistics(trace, n_boot=20).set_index("statistic").loc["tool_share_of_agent_time", "value"]
    assert share == pytest.approx(1.0 - logged_figures(trace)["llm_share_of_agent_time"], rel=1e-12)
    tool = trace["tool_s"].sum()
    as_the_models = tool / (tool + (trace["end_s"] - trace["start_s"]).sum())
    assert as_the_models == pytest.approx(0.567, abs=1e-3) and share == pytest.approx(0.613, abs=1e-3)
