"""Real Claude Code sessions of five developers vendored from entireio/cli's Entire checkpoint
branch (tests/sessions/data/real-further/, one directory per developer; sources and trimming in its
SOURCES.md, MIT). Held out from the fit's tests (which read tests/sessions/data/real/): the loader is
checked on them against the counts SOURCES.md records and against counts made here from the files."""

import json
from pathlib import Path

import numpy as np
import pytest

from speedtrap.sessions import load_sessions
from speedtrap.sessions.targets import trace_targets

REAL_FURTHER = Path(__file__).resolve().parent / "data" / "real-further"

RECORDED = {
    "stefan-haubold": {"files": 14, "requests": 507, "human_turns": 47, "checkins": 44},
    "alex-ong": {"files": 10, "requests": 385, "human_turns": 70, "checkins": 67},
    "victor-gutierrez": {"files": 16, "requests": 437, "human_turns": 41, "checkins": 39},
    "paul": {"files": 22, "requests": 657, "human_turns": 32, "checkins": 29},
    "daniel-adams": {"files": 7, "requests": 545, "human_turns": 22, "checkins": 17},
}
"""Per developer, as SOURCES.md records them: files (one session each), requests, requests after a
human turn (``human_gap_s`` > 0) and check-ins (``n`` of ``human_response_median``)."""


def test_the_directories_are_the_recorded_developers_and_every_file_is_small() -> None:
    assert {p.name for p in REAL_FURTHER.iterdir() if p.is_dir()} == set(RECORDED)
    files = list(REAL_FURTHER.rglob("*.jsonl"))
    assert all(p.stat().st_size < 1 << 20 for p in files)
    assert sum(p.stat().st_size for p in files) < 8_000_000


@pytest.mark.parametrize("developer", sorted(RECORDED))
def test_each_developer_loads_with_the_counts_its_sources_file_records(developer: str) -> None:
    loaded = load_sessions([REAL_FURTHER / developer])
    trace, report, recorded = loaded.trace, loaded.report, RECORDED[developer]
    assert report.files == recorded["files"] == len(list((REAL_FURTHER / developer).glob("*.jsonl")))
    assert len(trace) == recorded["requests"]
    assert trace["session"].nunique() == recorded["files"] and loaded.n_developers == 1
    assert int((trace["human_gap_s"].fillna(0.0) > 0).sum()) == recorded["human_turns"]
    targets = trace_targets(trace, n_boot=20, seed=0).set_index("statistic")
    assert int(targets.loc["human_response_median", "n"]) == recorded["checkins"]
    assert not report.skipped, report.lines()  # the trimmed files hold no damage and no copies
    for column in ("start_s", "end_s", "input_tokens", "cached_tokens", "output_tokens"):
        assert np.isfinite(trace[column].to_numpy(float)).all(), column
    assert (trace["end_s"] >= trace["start_s"]).all()
    assert (trace["cached_tokens"] <= trace["input_tokens"]).all()
    for session, requests in trace.groupby("session", sort=False):
        assert (np.diff(requests["start_s"].to_numpy(float)) >= 0).all(), session


@pytest.mark.parametrize("developer", sorted(RECORDED))
def test_every_line_is_a_conversation_event_of_its_files_session(developer: str) -> None:
    """Each file is one session, named by its id; only user and assistant lines were kept, and
    every message id of a response (Claude Code's own error messages aside) is one request."""
    ids: set[str] = set()
    for path in sorted((REAL_FURTHER / developer).glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            assert obj["type"] in ("user", "assistant") and obj["sessionId"] == path.stem
            if obj["type"] == "assistant" and obj["message"].get("model") != "<synthetic>":
                ids.add(obj["message"]["id"])
    assert len(ids) == RECORDED[developer]["requests"]
