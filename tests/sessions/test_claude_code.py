"""The Claude Code loader: the transcripts written from trace.csv give back its requests, and every
awkward event of examples/sessions/awkward/claude/ is skipped (or ignored) and counted."""

import json
from pathlib import Path

import numpy as np
import pytest

from speedtrap.sessions import claude_code as cc
from speedtrap.sessions import conversation as cv
from speedtrap.sessions import load_sessions
from speedtrap.sessions.fit import max_parallel

EPOCH_S = 1_772_442_000.0  # 2026-03-02T09:00:00Z, the fixtures' time zero


def test_transcripts_give_back_the_trace_they_were_written_from(examples: Path) -> None:
    claude = load_sessions([examples / "claude"])
    assert not claude.report.skipped
    mine = load_sessions([examples / "trace.csv"]).trace
    mine = mine[mine["developer"] == "developer-0"].sort_values("start_s").reset_index(drop=True)
    got = claude.trace.sort_values("start_s").reset_index(drop=True)
    assert len(got) == len(mine) and claude.n_sessions == mine["session"].nunique()
    np.testing.assert_allclose(got["start_s"] - EPOCH_S, mine["start_s"], atol=1e-3)
    np.testing.assert_allclose(got["end_s"] - EPOCH_S, mine["end_s"], atol=1e-3)
    for column in ("input_tokens", "cached_tokens", "output_tokens"):
        np.testing.assert_array_equal(got[column], mine[column])
    np.testing.assert_allclose(got["tool_s"], mine["tool_s"], atol=2e-3)
    inside = got.groupby("session").cumcount() > 0  # a transcript does not show the first prompt's gap
    np.testing.assert_allclose(got.loc[inside, "human_gap_s"], mine.loc[inside, "human_gap_s"], atol=2e-3)


@pytest.mark.parametrize(
    ("kind", "count"),
    [
        (cc.NOT_JSON, 1),  # the truncated last line
        (cc.NOT_OBJECT, 1),
        (cc.UNKNOWN_TYPE, 1),
        (cc.NO_TIMESTAMP, 1),
        (cc.NO_USAGE, 1),
        (cv.NO_TRIGGER, 1),  # the lone subagent (sidechain) line: no prompt in its thread
        (cc.DUPLICATE_EVENT, 4),  # the resumed session's copy of four events
    ],
)
def test_each_awkward_event_is_skipped_and_counted(examples: Path, kind: str, count: int) -> None:
    loaded = load_sessions([examples / "awkward" / "claude"])
    assert loaded.report.skipped[kind] == count


def test_a_reply_stamped_before_its_trigger_is_read_in_time_order(examples: Path) -> None:
    """The awkward example's reply stamped 30 s before the tool result written above it: lines are
    read in time order (it and the result are counted as reordered), not dropped as clock skew."""
    loaded = load_sessions([examples / "awkward" / "claude"])
    assert loaded.report.adjusted[cv.REORDERED] == 2
    assert "clock skew" not in " ".join(loaded.report.lines())


def test_irrelevant_events_are_ignored_not_skipped(examples: Path) -> None:
    loaded = load_sessions([examples / "awkward" / "claude"])
    assert loaded.report.ignored == {cc.OTHER_EVENTS: 2, cc.META_EVENTS: 2}
    assert len(loaded.trace) == 7 and loaded.n_sessions == 1


def test_no_text_reaches_the_trace(examples: Path) -> None:
    loaded = load_sessions([examples / "claude", examples / "awkward" / "claude"])
    text = loaded.trace.to_csv()
    assert "Synthetic prompt" not in text and "(output)" not in text and "Bash" not in text


@pytest.mark.parametrize(
    "usage",
    [
        None,
        {},
        {"input_tokens": 3},
        {"output_tokens": "many"},
        {"output_tokens": 5, "cache_read_input_tokens": "x"},
    ],
)
def test_unreadable_usage_is_skipped_and_counted(tmp_path: Path, usage: object) -> None:
    lines = [
        '{"type": "user", "uuid": "u1", "sessionId": "s", "timestamp": "2026-03-02T09:00:00Z", '
        '"message": {"role": "user", "content": "x"}}',
        '{"type": "assistant", "uuid": "a1", "sessionId": "s", "timestamp": "2026-03-02T09:00:03Z", '
        f'"message": {{"id": "m1", "role": "assistant", "usage": {json.dumps(usage)}}}}}',
    ]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    loaded = load_sessions([tmp_path])
    assert loaded.report.skipped == {cc.NO_USAGE: 1} and len(loaded.trace) == 0


def test_overlapping_sessions_are_kept_as_parallel_sessions(examples: Path) -> None:
    """The example developer ran up to two sessions at once: nothing is skipped, and the overlap is
    measured as two parallel sessions."""
    loaded = load_sessions([examples / "claude"])
    spans = (
        loaded.trace.groupby("session")
        .agg(start=("start_s", "min"), end=("end_s", "max"))
        .sort_values("start")
    )
    assert (spans["start"].shift(-1) < spans["end"]).any()  # some session starts before another ended
    assert not loaded.report.skipped
    assert max_parallel(loaded.trace).to_dict() == {"developer-0": 2}


def test_sanitised_message_ids_never_merge_different_messages(tmp_path: Path, transcript) -> None:
    """A sanitised export writes "REDACTED" for every message id: the lines of one response (same
    input counts) stay one request, different responses stay apart, in one session and across two."""
    for session in ("s1", "s2"):
        t = transcript(session).prompt(0.0)
        t.reply(1.0, "REDACTED", out=5, call="c1", cached=20_000).reply(1.5, "REDACTED", out=5, call="c2")
        t.result(2.0, "c1").result(2.1, "c2")
        t.reply(3.0, "REDACTED", out=40, text="x" * 400, cached=20_105, stop="end_turn")
        t.prompt(10.0).reply(11.0, "REDACTED", out=7, text="ok", cached=20_300, stop="end_turn")
        t.write(tmp_path / f"{session}.jsonl")
    loaded = load_sessions([tmp_path])
    assert not loaded.report.skipped, loaded.report.lines()
    assert len(loaded.trace) == 6 and loaded.trace.groupby("session").size().tolist() == [3, 3]
    first = loaded.trace[loaded.trace["session"] == "s1"]
    assert list(first["cached_tokens"]) == [20_000, 20_105, 20_300]
    assert list(first["estimated"]) == ["output", "", ""]  # the first response never got a final count


@pytest.mark.parametrize(
    ("msg_id", "placeholder"),
    [
        ("REDACTED", True),
        ("<redacted>", True),
        ("msg_REDACTED", True),
        ("[ANONYMISED]", True),
        ("***", True),
        ("msg_xxxxxxxx", True),
        ("msg_01XFDUDYJgAACzvnptvVoYEL", False),
        ("m1", False),
    ],
)
def test_placeholder_ids_are_told_from_real_ones(msg_id: str, placeholder: bool) -> None:
    assert cc.is_placeholder_id(msg_id) is placeholder
