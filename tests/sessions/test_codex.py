"""The Codex loader reads a rollout by identity and time, not by file order: a shuffled rollout gives
the same requests and figures; a rollout without token counts (as Codex Desktop writes some) has its
requests recovered, with estimated tokens marked as estimates."""

import json
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from speedtrap.config.scenario import Scenario
from speedtrap.sessions import codex as cx
from speedtrap.sessions import conversation as cv
from speedtrap.sessions import fit_scenario, load_sessions
from speedtrap.sessions.replay import replay
from speedtrap.sessions.retime import logged_figures, timing_check
from speedtrap.sessions.structure import stretches, tasks

ROLLOUT = "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"


def _lines(real: Path) -> list[str]:
    return (real / "codex" / ROLLOUT).read_text(encoding="utf-8").splitlines()


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_shuffled_rollout_gives_identical_results(real: Path, tmp_path: Path, seed: int) -> None:
    lines = _lines(real)
    shuffled = lines[:]
    random.Random(seed).shuffle(shuffled)
    assert shuffled != lines
    ordered = load_sessions([real / "codex"])
    moved = load_sessions([_write(tmp_path / ROLLOUT, shuffled)])
    pd.testing.assert_frame_equal(ordered.trace, moved.trace)
    # the report differs only in saying (truly) that lines came out of time order
    assert moved.report.adjusted[cv.REORDERED] > 0 and cv.REORDERED not in ordered.report.adjusted
    assert moved.report.skipped == ordered.report.skipped == {}
    assert moved.report.ignored == ordered.report.ignored
    assert moved.report.ignored[cx.REPEATED_COUNT] == 5
    assert logged_figures(moved.trace) == logged_figures(ordered.trace)
    pd.testing.assert_frame_equal(tasks(moved.trace), tasks(ordered.trace))
    pd.testing.assert_frame_equal(stretches(moved.trace), stretches(ordered.trace))
    pd.testing.assert_frame_equal(fit_scenario(moved).table(), fit_scenario(ordered).table())
    scenario = Scenario(name="check").with_backend("gpu-batched")
    pd.testing.assert_frame_equal(
        timing_check(replay(moved.trace, scenario, 0)), timing_check(replay(ordered.trace, scenario, 0))
    )


def test_a_copied_count_far_from_its_request_is_no_new_request(real: Path, tmp_path: Path) -> None:
    lines = _lines(real)
    copies = [i for i, line in enumerate(lines) if '"token_count"' in line and '"total_token_usage"' in line]
    # move the second copy of the first request's count to the end of the file
    moved = [*lines[: copies[1]], *lines[copies[1] + 1 :], lines[copies[1]]]
    loaded = load_sessions([_write(tmp_path / ROLLOUT, moved)])
    assert loaded.report.ignored[cx.REPEATED_COUNT] == 5
    pd.testing.assert_frame_equal(loaded.trace, load_sessions([real / "codex"]).trace)


def _without_counts(real: Path) -> list[str]:
    """The vendored rollout as a Codex Desktop rollout without token counts (synthetic: the real
    rollout with every token_count line dropped and a later version named)."""
    out = []
    for line in _lines(real):
        obj = json.loads(line)
        if obj["payload"].get("type") == "token_count":
            continue
        if obj["type"] == "session_meta":
            obj["payload"]["cli_version"] = "0.128.0"
        out.append(json.dumps(obj))
    return out


def test_a_rollout_without_token_counts_is_read_with_estimates(real: Path, tmp_path: Path) -> None:
    lines = _without_counts(real)
    loaded = load_sessions([_write(tmp_path / ROLLOUT, lines)])
    trace, counted = loaded.trace, load_sessions([real / "codex"]).trace
    assert not loaded.report.skipped, loaded.report.lines()
    assert loaded.report.adjusted[cx.ESTIMATED_COUNTS] == 6
    assert cv.PARTIAL_USAGE not in loaded.report.adjusted  # said once, as estimates of both counts
    assert len(trace) == len(counted) == 6 and (trace["estimated"] == "input+output").all()
    # the same triggers: starts as logged, each request ends at its last output line (before its count)
    np.testing.assert_allclose(trace["start_s"], counted["start_s"])
    assert (trace["end_s"] <= counted["end_s"]).all() and (trace["end_s"] > counted["end_s"] - 0.1).all()
    assert trace["tool_s"].iloc[4] == pytest.approx(54.321, abs=1e-3)
    assert math.isnan(trace["human_gap_s"].iloc[0]) and (trace["human_gap_s"].iloc[1:] == 0).all()
    # output: the visible characters of each request's lines at 4 per token
    chars = []
    for line in lines:
        p = json.loads(line)["payload"]
        if p.get("type") in ("message", "function_call") and p.get("role", "assistant") == "assistant":
            content = p.get("content") or []
            chars.append(sum(len(c["text"]) for c in content) + len(p.get("arguments", "")))
    groups = [chars[k : k + 2] for k in range(0, 10, 2)] + [chars[10:]]  # message + call; the answer
    assert list(trace["output_tokens"]) == [math.ceil(sum(g) / cv.CHARS_PER_TOKEN) for g in groups]
    # input grows with the conversation; each request's cached input is the previous one's
    assert (np.diff(trace["input_tokens"]) > 0).all()
    assert list(trace["cached_tokens"].iloc[1:]) == list(trace["input_tokens"].iloc[:-1])


def test_outputs_after_the_last_count_are_skipped_for_that_reason(real: Path, tmp_path: Path) -> None:
    lines = _lines(real)
    final = [json.loads(line) for line in lines if '"final_answer"' in line and '"response_item"' in line]
    extra = final[0]  # the final message, written again a minute later without a count
    extra["timestamp"] = "2026-02-23T19:37:02.615Z"
    loaded = load_sessions([_write(tmp_path / ROLLOUT, [*lines, json.dumps(extra)])])
    assert loaded.report.skipped == {cx.NO_USAGE: 1} and len(loaded.trace) == 6
    assert "the log ends mid-request, or the count was never written" in cx.NO_USAGE


def test_a_shuffled_desktop_rollout_with_check_ins_gives_identical_results(
    real: Path, tmp_path: Path
) -> None:
    """The public Codex Desktop session of tests/sessions/data/real-checkins/ (83 requests, five
    check-ins), shuffled."""
    (path,) = (real.parent / "real-checkins" / "codex").glob("*.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    random.Random(0).shuffle(lines)
    ordered, moved = load_sessions([path]), load_sessions([_write(tmp_path / path.name, lines)])
    assert len(ordered.trace) == 83
    pd.testing.assert_frame_equal(ordered.trace, moved.trace)
    assert moved.report.ignored == ordered.report.ignored and moved.report.skipped == ordered.report.skipped
    assert logged_figures(moved.trace) == logged_figures(ordered.trace)
    pd.testing.assert_frame_equal(stretches(moved.trace), stretches(ordered.trace))
