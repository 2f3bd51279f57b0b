"""Task and session structure from logs, and fits that say which fields the logs could not fit."""

import numpy as np
import pandas as pd
import pytest

from speedtrap.sessions import Sessions, fit_scenario, load_sessions, scenario_toml
from speedtrap.sessions.fit import MIN_OPEN_S
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.structure import LONG_GAP_S, concurrency, fold_subagents, tasks


def _trace(rows: list[dict]) -> pd.DataFrame:
    return normalize_trace(pd.DataFrame(rows), LoadReport())


def _session(
    name: str, start: float, n: int, *, gaps: dict[int, float] | None = None, **columns
) -> list[dict]:
    """``n`` requests of 5 s each with 5 s of tool time; ``gaps[k]``: human seconds before request k."""
    rows, t = [], start
    for k in range(n):
        t += (gaps or {}).get(k, 0.0)
        row = {
            "session": name,
            "start_s": t,
            "end_s": t + 5.0,
            "input_tokens": 10_000 + 500 * k,
            "cached_tokens": 9_000,
            "output_tokens": 200,
            "tool_s": 5.0,
            "human_gap_s": np.nan if k == 0 else (gaps or {}).get(k, 0.0),
        }
        row.update({c: v.get(k, "") if isinstance(v, dict) else v for c, v in columns.items()})
        rows.append(row)
        t += 10.0
    return rows


def test_tasks_start_at_clear_compact_commit_and_after_time_away() -> None:
    gaps = {3: 20.0, 6: 40.0, 9: 15.0, 12: LONG_GAP_S + 1, 15: 30.0}
    boundary = {6: "clear", 9: "commit", 15: "compact"}
    trace = _trace(_session("s", 0.0, 18, gaps=gaps, boundary=boundary))
    tk = tasks(trace)
    assert list(tk["started_by"]) == ["session", "clear", "commit", "gap", "compact"]
    assert list(tk["turns"]) == [6, 3, 3, 3, 3]
    assert list(tk["human_turns"]) == [2, 1, 1, 1, 1]  # the check-in before request 3 is inside task 0


def test_two_short_overlaps_in_three_days_are_not_two_sessions_at_once() -> None:
    """Three days of one session each (8 h open a day), and on two of them a second session for 5
    min: the developer mostly had one session open. The old fit said every developer keeps two."""
    rows = []
    for day in range(3):
        rows += _session(f"main-{day}", day * 86_400.0, 2_880)  # 8 h of 10-s turns
        if day < 2:
            rows += _session(f"side-{day}", day * 86_400.0 + 3_600.0, 30)  # 5 min
    trace = _trace(rows)
    shares = concurrency(trace).shares()
    assert shares[1] == pytest.approx(600 / (3 * 28_800), rel=0.01)
    fitted = fit_scenario(Sessions(trace, LoadReport()))
    probs = fitted.scenario.developer.attention.parallel_sessions_probs
    assert probs is not None and probs[0] > 0.99 and len(probs) == 2


def test_parallel_sessions_need_a_working_day_of_logs() -> None:
    rows = _session("a", 0.0, 60) + _session("b", 100.0, 60)
    fitted = fit_scenario(Sessions(_trace(rows), LoadReport()))
    path = "developer.attention.parallel_sessions_probs"
    assert fitted.scenario.developer.attention.parallel_sessions_probs is None
    assert fitted.kept[path].startswith("too little data: 0.2 h of open sessions")
    assert MIN_OPEN_S == 8 * 3600


def test_a_single_session_says_which_fields_kept_their_defaults(tmp_path) -> None:
    trace = _trace(_session("only", 0.0, 30, gaps={10: 25.0, 20: 35.0}))
    fitted = fit_scenario(Sessions(trace, LoadReport()))
    for path in ("task_mix.turns", "task_mix.initial_context_tokens", "developer.checkin_s"):
        assert fitted.kept[path].startswith("too little data"), path
    assert "first prompt" in fitted.kept["developer.prompt_s"]
    text = scenario_toml(fitted)
    assert "# kept: too little data: 1 tasks (need 5): default kept\nturns_at_reference" not in text
    assert "# kept: developer.prompt_s: the logs do not record" in text or "[developer.prompt_s]" in text
    for path in fitted.kept:
        assert path in text or fitted.kept[path] in text
    (tmp_path / "f.toml").write_text(text)


def test_subagents_run_inside_the_tool_call_that_waited_on_them() -> None:
    parent = _session("p", 0.0, 3)
    parent[0]["tool_s"] = 100.0  # a Task call from 5 s to 105 s; the next request at 105 s
    for k, row in enumerate(parent[1:], start=1):
        row["start_s"], row["end_s"] = 105.0 + 10 * (k - 1), 110.0 + 10 * (k - 1)
    sub = _session("p/agent-1", 10.0, 4, parent_session="p")
    folded, kept = fold_subagents(_trace(parent + sub))
    assert kept == 0 and list(folded["session"].unique()) == ["p"]
    assert len(folded) == 7
    assert folded["tool_s"].iloc[0] == pytest.approx(5.0)  # until the subagent started
    assert folded["tool_s"].iloc[4] == pytest.approx(105.0 - 45.0)  # the rest of the Task call
    assert (folded["human_gap_s"].iloc[1:5] == 0).all()


def test_subagent_tokens_count_in_the_fit(tmp_path, with_subagent) -> None:
    fitted = fit_scenario(load_sessions([with_subagent(tmp_path, [1_000 + k for k in range(6)])]))
    assert fitted.fits["task_mix.output_tokens"].n == 8


@pytest.mark.parametrize("damage", ["year 9999", "inf", "huge"])
def test_damaged_values_never_blame_a_scenario_field(tmp_path, damage) -> None:
    rows = pd.DataFrame(_session("s", 0.0, 40, gaps={10: 25.0, 20: 35.0, 30: 15.0}))
    if damage == "year 9999":
        rows["start_s"] = "9999-12-31T23:59:59Z"
        rows["end_s"] = "9999-12-31T23:59:59Z"
    elif damage == "inf":
        rows.loc[::2, "tool_s"] = np.inf
    else:
        rows["output_tokens"] = rows["output_tokens"].astype(object)
        rows.loc[::3, "output_tokens"] = 10**30
    path = tmp_path / "t.csv"
    rows.to_csv(path, index=False)
    loaded = load_sessions([path])
    assert sum(loaded.report.skipped.values()) > 0
    if len(loaded.trace):
        fit_scenario(loaded)
    else:
        with pytest.raises(
            ValueError,
            match="no usable request in the session logs: read 1 file; skipped 40 rows with implausible",
        ):
            fit_scenario(loaded)
