"""Each defect found when real Claude Code 2.1 transcripts met the loader, as a transcript written
the way Claude Code writes it (conftest.Transcript) and the behaviour the loader must have."""

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.sessions import NoRequestsError, load_sessions
from speedtrap.sessions import claude_code as cc
from speedtrap.sessions import conversation as cv


def _load(tmp_path: Path, t, name: str = "s1.jsonl"):
    t.write(tmp_path / name)
    return load_sessions([tmp_path])


def test_a_response_written_over_lines_with_events_between_keeps_its_final_usage(tmp_path, transcript):
    """2.1 writes a response block by block; a notice between two of its lines must not cut it
    (the old loader kept the first line's partial count and dropped the rest as duplicates)."""
    t = transcript().prompt(0.0).reply(2.0, "m1", out=1, call="A").result(2.5, "A")
    t.user(2.6, "<task-notification>\n<task-id>b1</task-id>\n</task-notification>")
    t.reply(3.0, "m1", out=250, call="B").result(4.0, "B").reply(6.0, "m2", out=40, text="done")
    trace = _load(tmp_path, t).trace
    assert list(trace["output_tokens"]) == [250, 40]
    assert trace["end_s"].iloc[0] - trace["start_s"].iloc[0] == pytest.approx(3.0, abs=1e-3)


def test_a_response_whose_final_usage_was_never_written_is_bounded_by_its_content(tmp_path, transcript):
    """Every line mid-stream (stop_reason null) with 2 output tokens and ≈22k visible characters:
    at least one token per four characters."""
    body = "word " * 4_400
    t = transcript().prompt(0.0).reply(2.0, "m1", out=2, text=body).reply(3.0, "m1", out=2, call="A")
    loaded = _load(tmp_path, t)
    (output,) = loaded.trace["output_tokens"]
    assert output >= len(body) / cv.CHARS_PER_TOKEN
    assert loaded.report.adjusted[cv.PARTIAL_USAGE] == 1


def test_a_final_usage_is_never_raised(tmp_path, transcript):
    t = transcript().prompt(0.0).reply(2.0, "m1", out=2, text="x" * 400, stop="end_turn")
    assert list(_load(tmp_path, t).trace["output_tokens"]) == [2]


def test_a_task_notification_is_not_a_human_turn(tmp_path, transcript):
    t = transcript().prompt(0.0).reply(2.0, "m1", out=30, text="started", stop="end_turn")
    t.user(2.5, "<task-notification>\n<task-id>b7</task-id>\n<status>completed</status>\n")
    t.reply(5.0, "m2", out=30, text="it finished", stop="end_turn")
    trace = _load(tmp_path, t).trace
    assert len(trace) == 2 and trace["human_gap_s"].iloc[1] == 0.0
    assert trace["tool_s"].iloc[0] == pytest.approx(0.5, abs=1e-3)  # the background task's time


def test_a_local_command_is_the_human_and_its_output_is_not(tmp_path, transcript):
    """/compact typed 8 s after the agent stopped, compacted for 60 s, the next prompt 5 s after:
    13 s of human time, and the next request starts a new task."""
    t = transcript().prompt(0.0).reply(2.0, "m1", out=30, text="done", stop="end_turn")
    t.user(10.0, "<command-name>/compact</command-name>\n<command-message>compact</command-message>")
    t.user(70.0, "<local-command-stdout>Compacted</local-command-stdout>")
    t.prompt(75.0, "next thing").reply(77.0, "m2", out=30, text="ok", stop="end_turn")
    trace = _load(tmp_path, t).trace
    assert trace["human_gap_s"].iloc[1] == pytest.approx(13.0, abs=1e-3)
    assert list(trace["boundary"]) == ["", "compact"]


def test_a_notice_stamped_before_an_interruption_gives_no_negative_gap(tmp_path, transcript):
    """The real sequence: a refused tool call, the interruption, and a notice written after them but
    stamped 15 ms earlier. The old loader read a −0.015 s human gap and dropped the request."""
    t = transcript().prompt(0.0).reply(1.0, "m1", out=40, call="A")
    t.result(10.720, "A", text="The user doesn't want to proceed with this tool use.", error=True)
    t.user(10.733, [{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    t.user(10.715, "<task-notification>\n<task-id>b0</task-id>\n</task-notification>")
    t.reply(15.0, "m2", out=30, text="ok", stop="end_turn")
    loaded = _load(tmp_path, t)
    trace = loaded.trace
    assert len(trace) == 2 and not loaded.report.skipped
    assert trace["human_gap_s"].iloc[1] == 0.0
    assert list(trace["rework"]) == ["rejected", ""]
    assert loaded.report.adjusted[cv.REORDERED] == 1


def test_an_interruption_is_a_rework_signal_not_a_prompt(tmp_path, transcript):
    t = transcript().prompt(0.0).reply(1.0, "m1", out=40, call="A").result(3.0, "A")
    t.reply(4.0, "m2", out=40, text="working")
    t.user(6.0, [{"type": "text", "text": "[Request interrupted by user]"}])
    t.prompt(20.0, "no, do it differently").reply(22.0, "m3", out=40, text="ok", stop="end_turn")
    trace = _load(tmp_path, t).trace
    assert list(trace["rework"]) == ["", "interrupted", ""]
    assert list(trace["human_gap_s"].iloc[1:]) == [0.0, pytest.approx(14.0, abs=1e-3)]


def test_an_interruption_written_as_a_tool_result_and_an_image_prompt(tmp_path, transcript):
    """1.x wrote an interruption as the text of a tool result; a prompt may be an image alone."""
    t = transcript().prompt(0.0).reply(1.0, "m1", out=40, call="A", stop="tool_use")
    t.result(5.0, "A", text="[Request interrupted by user for tool use]", error=True)
    t.user(30.0, [{"type": "image", "source": {"type": "base64", "data": "..."}}])
    t.reply(32.0, "m2", out=40, text="I see", stop="end_turn")
    trace = _load(tmp_path, t).trace
    assert list(trace["rework"]) == ["interrupted", ""]
    assert trace["human_gap_s"].iloc[1] == pytest.approx(25.0, abs=1e-3)


def test_parallel_tool_results_written_out_of_order_are_paired_by_id(tmp_path, transcript):
    """Three parallel calls; their results written L, X, W but stamped X, W, L (a real 2.1 file).
    The old loader started the next request before this one ended and dropped it as clock skew."""
    t = transcript().prompt(0.0)
    t.reply(1.0, "m1", out=9, call="X").reply(1.5, "m1", out=9, call="W").reply(2.0, "m1", out=263, call="L")
    t.result(2.004, "L").result(1.007, "X").result(1.504, "W")
    t.reply(6.0, "m2", out=50, text="all three done", stop="end_turn")
    loaded = _load(tmp_path, t)
    trace = loaded.trace
    assert len(trace) == 2 and not loaded.report.skipped
    assert trace["start_s"].iloc[1] == pytest.approx(trace["end_s"].iloc[0] + 0.004, abs=1e-3)
    assert trace["output_tokens"].iloc[0] == 263


def _session(transcript):
    t = transcript()
    t.prompt(0.0)
    for k in range(12):
        t.reply(2.0 + 10 * k, f"m{k}", out=5, call=f"c{k}a")
        t.reply(2.5 + 10 * k, f"m{k}", out=100 + k, call=f"c{k}b")
        t.result(4.0 + 10 * k, f"c{k}b").result(3.9 + 10 * k, f"c{k}a")
    t.reply(200.0, "end", out=30, text="done", stop="end_turn").prompt(300.0, "thanks")
    return t.reply(302.0, "bye", out=5, text="bye", stop="end_turn")


@pytest.mark.parametrize("order", ["shuffled", "reversed"])
def test_line_order_does_not_matter(tmp_path, transcript, order):
    """Shuffled or reversed, a transcript gives the same requests; the reordered lines are counted."""
    t = _session(transcript)
    straight = _load(tmp_path / "a", t).trace
    lines = t.text().splitlines(keepends=True)
    random.Random(1).shuffle(lines) if order == "shuffled" else lines.reverse()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "s1.jsonl").write_text("".join(lines))
    moved = load_sessions([tmp_path / "b"])
    assert len(straight) == 14 and moved.trace.equals(straight)
    assert moved.report.adjusted[cv.REORDERED] > 0 and not moved.report.skipped


def test_no_usable_request_says_why_with_the_counts(tmp_path, transcript):
    """Timestamps removed: the error carries the load report, on the Python and the CLI path."""
    t = _session(transcript)
    for line in t.lines:
        del line["timestamp"]
    t.write(tmp_path / "s1.jsonl")
    loaded = load_sessions([tmp_path])
    with pytest.raises(NoRequestsError, match="without a readable timestamp") as caught:
        loaded.require_requests()
    assert caught.value.report is loaded.report
    result = CliRunner().invoke(app, ["fit", str(tmp_path), "--out", str(tmp_path / "f.toml")])
    assert result.exit_code == 2
    assert "no usable request" in result.output and f"skipped {len(t.lines)} events" in result.output


def test_a_byte_order_mark_is_not_damage(tmp_path, transcript):
    t = _session(transcript)
    (tmp_path / "s1.jsonl").write_bytes(b"\xef\xbb\xbf" + t.text().encode())
    loaded = load_sessions([tmp_path])
    assert not loaded.report.skipped and len(loaded.trace) == 14


def test_subagent_requests_are_kept_on_the_fleet(tmp_path, transcript):
    main = transcript("s1").prompt(0.0).reply(1.0, "m1", out=40, call="task")
    main.result(60.0, "task").reply(62.0, "m2", out=30, text="done", stop="end_turn")
    main.write(tmp_path / "s1.jsonl")
    sub = transcript("s1", agent="a1").prompt(1.5, "explore the code")
    sub.reply(3.0, "x1", out=80, call="r1", cached=9_000).result(4.0, "r1")
    sub.reply(8.0, "x2", out=300, text="findings", stop="end_turn", cached=9_500)
    sub.write(tmp_path / "s1" / "subagents" / "agent-a1.jsonl")
    loaded = load_sessions([tmp_path])
    trace = loaded.trace
    agents = trace[trace["parent_session"] == "s1"]
    assert len(trace) == 4 and len(agents) == 2 and set(agents["session"]) == {"s1/agent-a1"}
    assert list(agents["output_tokens"]) == [80, 300]
    assert (agents["human_gap_s"].iloc[1:] == 0).all()  # the parent agent prompts, not the human


def test_a_folder_of_only_subagent_files_loads_and_says_so(tmp_path, transcript):
    sub = transcript("s9", agent="a1").prompt(1.5, "explore").reply(3.0, "x1", out=80, text="x", stop="x")
    sub.write(tmp_path / "s9" / "subagents" / "agent-a1.jsonl")
    loaded = load_sessions([tmp_path])
    assert len(loaded.trace) == 1
    assert any("parent session is not among the logs" in line for line in loaded.report.lines())


def test_a_sidechain_inside_the_session_file_is_a_subagent_session(tmp_path, transcript):
    """1.x wrote subagents into the session's own file; each thread (parentUuid chain) is one."""
    t = transcript("s1").prompt(0.0).reply(1.0, "m1", out=40, call="task")
    side = transcript("s1", agent="x")
    side.prompt(1.2, "look around").reply(2.0, "x1", out=70, call="r").result(2.5, "r")
    side.reply(3.0, "x2", out=90, text="found", stop="end_turn")
    for line in side.lines:
        del line["agentId"]
        line["uuid"] = "side-" + line["uuid"]
        line["parentUuid"] = line["parentUuid"] and "side-" + line["parentUuid"]
    t.lines += side.lines
    t.result(5.0, "task").reply(6.0, "m2", out=30, text="ok", stop="end_turn")
    trace = _load(tmp_path, t).trace
    assert trace.groupby("parent_session").size().to_dict() == {"": 2, "s1": 2}
    assert trace.loc[trace["parent_session"] == "s1", "session"].iloc[0].startswith("s1/sidechain-")


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("[" * 100_000, cc.NOT_JSON),
        ('{"type": "assistant", "timestamp": "9999-12-31T23:59:59Z", "message": {}}', cc.NO_TIMESTAMP),
        ('{"type": "user", "timestamp": "1970-01-01T00:00:01Z", "message": {}}', cc.NO_TIMESTAMP),
    ],
)
def test_damaged_lines_are_counted_by_name(tmp_path, transcript, line, kind):
    t = _session(transcript)
    (tmp_path / "s1.jsonl").write_text(t.text() + line + "\n")
    loaded = load_sessions([tmp_path])
    assert loaded.report.skipped == {kind: 1} and len(loaded.trace) == 14


def test_usage_in_the_json_as_nan_or_huge_is_counted(tmp_path, transcript):
    t = _session(transcript)
    text = t.text().replace('"output_tokens": 30', '"output_tokens": NaN')
    text = text.replace('"output_tokens": 100}', '"output_tokens": 1e300}')
    (tmp_path / "s1.jsonl").write_text(text)
    loaded = load_sessions([tmp_path])
    assert loaded.report.skipped[cc.NO_USAGE] == 1
    assert sum(loaded.report.skipped.values()) == 2, loaded.report.lines()
    assert json.dumps(loaded.report.lines())
