"""Real sessions of two developers vendored from public repositories' Entire checkpoint branches
(tests/sessions/data/real-more/, sources and trimming in its SOURCES.md): 44 Claude Code
2.1.205–2.1.219 transcripts of JanDeDobbeleer/oh-my-posh (MIT) and 11 Codex CLI 0.140–0.142
rollouts of EntityProcess/agentv (MIT). Held out from the fit's tests (which read
tests/sessions/data/real/): the loaders are checked on them against the counts SOURCES.md records
and against counts made here from the files themselves."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.sessions import load_sessions
from speedtrap.sessions.targets import trace_targets

REAL_MORE = Path(__file__).resolve().parent / "data" / "real-more"

RECORDED = {
    "claude-code": {"files": 44, "sessions": 44, "requests": 3840, "human_turns": 159, "checkins": 96},
    "codex": {"files": 11, "sessions": 11, "requests": 1309, "human_turns": 103, "checkins": 87},
}
"""Per source, as tests/sessions/data/real-more/SOURCES.md records them: files, sessions, requests,
requests after a human turn (``human_gap_s`` > 0: the session's first prompt has no gap) and
check-ins (the human turns inside a task that ``trace_targets`` reads the human response from)."""


def _load(tool: str) -> tuple[pd.DataFrame, object]:
    loaded = load_sessions([REAL_MORE / tool])
    return loaded.trace, loaded.report


@pytest.mark.parametrize("tool", sorted(RECORDED))
def test_each_source_loads_with_the_counts_its_sources_file_records(tool: str) -> None:
    trace, report = _load(tool)
    recorded = RECORDED[tool]
    assert report.files == recorded["files"] == len(list((REAL_MORE / tool).glob("*.jsonl")))
    assert len(trace) == recorded["requests"] > 0
    assert trace["session"].nunique() == recorded["sessions"]
    human = trace["human_gap_s"].fillna(0.0) > 0
    assert int(human.sum()) == recorded["human_turns"] > 0
    targets = trace_targets(trace, n_boot=20, seed=0).set_index("statistic")
    assert int(targets.loc["human_response_median", "n"]) == recorded["checkins"]
    assert not any("unknown" in reason for reason in report.skipped), report.lines()


@pytest.mark.parametrize("tool", sorted(RECORDED))
def test_every_session_runs_forward_in_time_with_positive_counts(tool: str) -> None:
    trace, _ = _load(tool)
    for column in ("start_s", "end_s", "input_tokens", "cached_tokens", "output_tokens"):
        assert np.isfinite(trace[column].to_numpy(float)).all(), column
    assert (trace["end_s"] >= trace["start_s"]).all()
    assert (trace["input_tokens"] > 0).all() and (trace["output_tokens"] >= 0).all()
    assert (trace["cached_tokens"] <= trace["input_tokens"]).all()
    for session, requests in trace.groupby("session", sort=False):
        starts = requests["start_s"].to_numpy(float)
        assert (np.diff(starts) >= 0).all(), session
        assert (requests["human_gap_s"].dropna() >= 0).all(), session


def test_every_claude_code_message_is_one_request() -> None:
    """Counted from the files: one request per distinct message id (Claude Code's own error
    messages, model ``<synthetic>``, are none); the one response whose session has no event
    before it is the only one left out, and said so."""
    ids: set[str] = set()
    for path in sorted((REAL_MORE / "claude-code").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            if obj["type"] == "assistant" and obj["message"].get("model") != "<synthetic>":
                ids.add(obj["message"]["id"])
    trace, report = _load("claude-code")
    left_out = sum(report.skipped.values())
    assert left_out == 1
    assert len(trace) == len(ids) - left_out


def test_every_codex_rollout_is_one_interactive_session() -> None:
    """Each file is one Codex CLI TUI session (its ``session_meta`` first) with at least one
    prompt the human typed, and the loader names the session by the rollout's id."""
    trace, _ = _load("codex")
    sessions = set(trace["session"])
    for path in sorted((REAL_MORE / "codex").glob("*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        meta = lines[0]
        assert meta["type"] == "session_meta"
        assert meta["payload"]["originator"] == "codex-tui" and meta["payload"]["source"] == "cli"
        assert meta["payload"]["id"] in sessions
        assert any(x["type"] == "event_msg" and x["payload"]["type"] == "user_message" for x in lines)
