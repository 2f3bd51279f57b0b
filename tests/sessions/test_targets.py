"""Trace statistics for the workflow calibration: values, bootstrap intervals, sessions behind them;
and the figures public real logs give (src/speedtrap/validation/data/session_trace_targets.csv)."""

import importlib.util
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.analysis.signatures import RESPONSE_SPREAD, SIGNATURE_STATISTICS, response_log_sd
from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions import load_sessions, trace_from_result
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.structure import stretches
from speedtrap.sessions.targets import TARGET_STATISTICS, trace_targets

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def simulated() -> tuple[pd.DataFrame, object]:
    scenario = Scenario.model_validate({"name": "t", "developers": 3, "horizon_s": 2 * 28_800.0})
    result = simulate(scenario, 5)
    return normalize_trace(trace_from_result(result), LoadReport()), result


def test_every_statistic_has_an_interval_and_its_sessions(simulated) -> None:
    trace, _ = simulated
    table = trace_targets(trace, n_boot=500).set_index("statistic")
    assert list(table.index) == list(TARGET_STATISTICS)
    finite = table[np.isfinite(table["value"])]
    assert ((finite["low"] <= finite["value"] + 1e-12) & (finite["value"] <= finite["high"] + 1e-12)).all()
    every = trace.groupby(["developer", "session"]).ngroups
    conditional = [name for name in SIGNATURE_STATISTICS if name != "response_stretch_rank_correlation"]
    conditional.append("cached_share_after_long_gap")  # the sessions with a request after a 5–30 min gap
    assert (table.drop(index=conditional)["sessions"] == every).all()
    assert (table.loc[conditional, "sessions"] <= every).all()  # the sessions with such a stretch
    shares = table.loc[
        ["concurrent_sessions_1", "concurrent_sessions_2", "concurrent_sessions_3plus"], "value"
    ]
    assert shares.sum() == pytest.approx(1.0)


def test_statistics_agree_with_the_simulation_that_wrote_the_logs(simulated) -> None:
    """The human response and agent stretch of the logs are the run's own stretches (export writes
    each stretch's hand-off and hand-back), so the medians match the run's."""
    trace, result = simulated
    table = trace_targets(trace, n_boot=200).set_index("statistic")
    st = result.stretches
    human = (st["back_s"] - st["need_s"]).dropna()
    assert table.loc["human_response_median", "value"] == pytest.approx(human.median(), rel=0.15)


def test_the_same_seed_gives_the_same_table(simulated) -> None:
    trace, _ = simulated
    pd.testing.assert_frame_equal(
        trace_targets(trace, n_boot=100, seed=3), trace_targets(trace, n_boot=100, seed=3)
    )


def test_the_recorded_figures_name_their_source_and_how_few_sessions_they_rest_on() -> None:
    path = resources.files("speedtrap.validation.data").joinpath("session_trace_targets.csv")
    with path.open("rb") as f:
        table = pd.read_csv(f)
    entire_cli = ("stefan_haubold", "alex_ong", "victor_gutierrez", "paul", "daniel_adams")
    tools = (  # one developer each
        "claude_code",
        "codex",
        "claude_code_oh_my_posh",
        "codex_agentv",
        *(f"claude_code_entire_{name}" for name in entire_cli),
    )
    assert set(table["tool"]) == {*tools, "pooled"}
    for tool in tools:
        assert list(table.loc[table["tool"] == tool, "statistic"]) == list(TARGET_STATISTICS)
    # the statistics written as target rows, and the spread behind checkin_s.sigma's range
    pooled = [*SIGNATURE_STATISTICS, "cached_share_after_long_gap", RESPONSE_SPREAD]
    assert list(table.loc[table["tool"] == "pooled", "statistic"]) == pooled
    for column in ("repository", "commit", "licence", "files", "how_computed", "note"):
        assert table[column].notna().all(), column
    assert table["commit"].str.fullmatch(r"[0-9a-f]{40}(; [0-9a-f]{40})*").all()
    bounded = table.dropna(subset=["low", "high"])
    assert ((bounded["low"] <= bounded["value"]) & (bounded["value"] <= bounded["high"])).all()
    assert (table["note"].str.contains("human sessions")).all()
    assert (table.loc[table["tool"].isin(tools[:2]), "sessions"] <= 8).all()  # a handful: the note says so
    few = table[
        (table["sessions"] <= 3) & (table["n"] > 0) & ~table["statistic"].str.startswith("concurrent")
    ]
    assert few["note"].str.contains("wide interval").all()
    assert table.loc[table["value"].isna(), "n"].lt(3).all()  # no value only where almost no pair


def _trace(rows: list[tuple[str, float, float, float, float, str]]) -> pd.DataFrame:
    """A trace of one developer from (session, start, end, tool seconds, human gap, rework)."""
    df = pd.DataFrame(rows, columns=["session", "start_s", "end_s", "tool_s", "human_gap_s", "rework"])
    df = df.assign(developer="d", input_tokens=100, output_tokens=10)
    return normalize_trace(df, LoadReport())


def test_signatures_of_a_trace_with_known_check_ins() -> None:
    """Session a: a 20 s stretch answered in 5 s, a 400 s stretch answered in 200 s (interrupted
    once); session b: a 30 s stretch answered in 8 s, a 10 s stretch answered in 12 s, then a 5 s
    stretch ended by a message 0.01 s after the agent stopped (typed while it worked: an
    interruption, not a response)."""
    trace = _trace(
        [
            ("a", 0.0, 20.0, 0.0, np.nan, ""),
            ("a", 25.0, 225.0, 0.0, 5.0, "interrupted"),
            ("a", 225.0, 425.0, 0.0, 0.0, ""),
            ("a", 625.0, 630.0, 0.0, 200.0, ""),
            ("b", 0.0, 30.0, 0.0, np.nan, ""),
            ("b", 38.0, 48.0, 0.0, 8.0, ""),
            ("b", 60.0, 65.0, 0.0, 12.0, ""),
            ("b", 65.01, 70.0, 0.0, 0.01, ""),
        ]
    )
    table = trace_targets(trace, n_boot=200).set_index("statistic")
    assert table.loc["fast_response_share_after_short", "value"] == 1.0  # 5, 8, 12 s after 20, 30, 10 s
    assert table.loc["fast_response_share_after_short", "n"] == 3
    assert table.loc["fast_response_share_after_short", "sessions"] == 2
    assert table.loc["fast_response_share_after_long", "value"] == 0.0  # 200 s after 400 s
    assert table.loc["response_median_after_long", "value"] == 200.0
    assert table.loc["response_median_after_short", "value"] == 8.0
    assert table.loc["response_stretch_rank_correlation", "n"] == 4
    # an interrupted request and a message typed ahead in 7 stretches (3 in a, 4 in b)
    assert table.loc["interruptions_per_stretch", "value"] == pytest.approx(2 / 7)
    assert table.loc["interruptions_per_stretch", "n"] == 7


def test_the_script_writes_both_tables_from_the_vendored_excerpts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_trace_targets", ROOT / "scripts" / "make_trace_targets.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, script)  # its dataclasses look themselves up there
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "N_BOOT", 200)  # what is written is checked here, not the intervals' width
    real = ROOT / "tests" / "sessions" / "data" / "real"
    out, rows = tmp_path / "targets.csv", tmp_path / "rows.csv"
    script.main(
        [
            f"--logs=claude_code={real / 'claude-code'}",
            f"--logs=codex={real / 'codex'}",
            f"--out={out}",
            f"--rows={rows}",
        ]
    )
    table = pd.read_csv(out)
    # the real-more and real-further sources are vendored whole and read from there without --logs
    assert set(table["tool"]) == {"claude_code", "codex", "pooled", *script.VENDORED}
    assert len(script.VENDORED) == 7 and all(path.is_dir() for path in script.VENDORED.values())
    written = pd.read_csv(rows)
    assert written["source"].str.contains("9 developers of marot/spotter").all()
    assert written["url"].str.contains("https://github.com/entireio/cli").all()


CHECKINS = ROOT / "tests" / "sessions" / "data" / "real-checkins" / "codex"


def test_signatures_of_a_real_codex_session_are_its_check_ins_read_by_hand() -> None:
    """A public Codex Desktop rollout (tests/sessions/data/real/SOURCES.md) has five check-ins. Read
    by hand from its events (a prompt's ``user_message`` to the turn's ``task_complete``, then to
    the next ``user_message``), stretch → response in seconds: 202.6 → 168.1, 526.8 → 1054.6,
    68.3 → 732.7, 10.1 → 24.8, 13.3 → 47.7 (the sixth prompt's turn ends the file unanswered). No
    answer within 15 s, even after the two short stretches; the longer the stretch, the later the
    answer, bar one (rank correlation 0.9)."""
    trace = load_sessions([CHECKINS]).trace
    st = stretches(trace)
    pairs = st.loc[st["checkin"], ["seconds", "gap_after_s"]].to_numpy()
    by_hand = [(202.6, 168.1), (526.8, 1054.6), (68.3, 732.7), (10.1, 24.8), (13.3, 47.7)]
    np.testing.assert_allclose(pairs, by_hand, atol=0.5)
    table = trace_targets(trace, n_boot=50).set_index("statistic")
    assert table.loc["fast_response_share_after_short", ["value", "n"]].tolist() == [0.0, 2]
    assert table.loc["fast_response_share_after_long", ["value", "n"]].tolist() == [0.0, 1]
    assert table.loc["response_median_after_short", "value"] == pytest.approx((24.8 + 47.7) / 2, abs=0.5)
    assert table.loc["response_stretch_rank_correlation", "value"] == pytest.approx(0.9)
    assert np.isnan(table.loc["response_stretch_rank_correlation", "low"])  # one session: no interval


def test_the_response_spread_is_the_log_sd_of_the_responses_after_short_stretches_only() -> None:
    stretch = np.array([10.0, 20.0, 59.0, 61.0, 400.0, 30.0, 30.0, 30.0])
    response = np.array([5.0, 50.0, 500.0, 3.0, 2000.0, 0.5, 1_900.0, np.nan])
    # usable and after a stretch < 60 s: 5, 50 and 500 s (0.5 s was typed during the stretch; 1,900 s
    # is time away; 61 and 400 s stretches are not short)
    assert response_log_sd(stretch, response) == pytest.approx(np.std(np.log([5.0, 50.0, 500.0]), ddof=1))
    assert np.isnan(response_log_sd(stretch[:1], response[:1]))  # one response: no spread


def test_the_check_in_spread_s_range_is_the_recorded_figure_of_the_logs() -> None:
    """developer.checkin_s.sigma's sourced high end is the upper bound of the pooled logs' bootstrap
    95% interval of the responses' log-sd after short stretches, which bounds the reply's own spread
    from above (the parameter's source says so)."""
    from speedtrap.validation.parameters import load_parameters

    path = resources.files("speedtrap.validation.data").joinpath("session_trace_targets.csv")
    with path.open("rb") as f:
        table = pd.read_csv(f)
    row = table[(table["tool"] == "pooled") & (table["statistic"] == RESPONSE_SPREAD)].iloc[0]
    parameter = load_parameters().set_index("path").loc["developer.checkin_s.sigma"]
    assert row["low"] < row["value"] < row["high"] <= parameter["high"] < row["high"] + 0.01
    assert f"{row['value']:.2f}" in parameter["source"] and f"{row['high']:.2f}" in parameter["source"]
    assert int(row["n"]) == 201 and f"{int(row['n'])} responses" in parameter["source"]
