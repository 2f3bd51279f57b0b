"""Write the example session logs in examples/sessions/ (synthetic: no real person's logs).

A small simulated day (two developers on gpu-batched, up to two agent sessions each) is exported as
a plain trace (``trace.csv``, ``trace.parquet``; the scenario it came from is ``recorded.toml``)
and re-written as Claude Code transcripts (``claude/``). ``awkward/`` holds one of every kind of
damage real logs have, each of which the loaders skip and count (tests/sessions/):

* ``awkward/trace.csv``: a missing field, a negative token count, a request ending before it
  starts, a request starting before the previous one of its session ended, a duplicate row, a
  request with no output tokens, and a truncated last line.
* ``awkward/claude/``: a summary, a file-history snapshot, a meta event and a compaction summary
  (ignored), an event of
  unknown type, a line that is not an object, an event without timestamp, an assistant message
  without usage, a subagent (sidechain) event, a reply stamped before its trigger (clock skew), a
  resumed session repeating another file's events, and a truncated last line.

Run: ``python scripts/make_session_fixtures.py [OUT_DIR]`` (deterministic; default examples/sessions).
"""

from __future__ import annotations

import json
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from speedtrap.config.scenario import Scenario
from speedtrap.models.workflow import simulate
from speedtrap.sessions.export import trace_from_result

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "sessions"
SEED = 7
EPOCH = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
NAMESPACE = uuid.UUID("6f1c3a52-0d1e-4c55-9a0e-5e7d7c1b2a90")

RECORDED = {
    "name": "recorded",
    "developers": 2,
    "horizon_s": 4 * 3600.0,
    "task_mix": {"effort_s": {"median": 1200.0, "sigma": 0.8}},
    "developer": {"attention": {"max_parallel_sessions": 2}},
}
"""The scenario the example logs were simulated from: two developers, half a day, shorter tasks."""


def _stamp(seconds: float) -> str:
    t = EPOCH + timedelta(seconds=float(seconds))
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Writer:
    """Claude Code events of one session file, with deterministic uuids and a parent chain."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.n = 0

    def _base(self, kind: str, t: float | None) -> dict[str, Any]:
        self.n += 1
        uid = str(uuid.uuid5(NAMESPACE, f"{self.session_id}/{self.n}"))
        event: dict[str, Any] = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/project",
            "sessionId": self.session_id,
            "version": "2.0.0",
            "type": kind,
            "uuid": uid,
        }
        if t is not None:
            event["timestamp"] = _stamp(t)
        self.parent = uid
        return event

    def prompt(self, t: float) -> None:
        e = self._base("user", t)
        e["message"] = {"role": "user", "content": "Synthetic prompt."}
        self.lines.append(e)

    def tool_result(self, t: float | None, k: int) -> None:
        e = self._base("user", t)
        block = {
            "type": "tool_result",
            "tool_use_id": f"toolu_{self.session_id[:8]}_{k}",
            "content": "(output)",
        }
        e["message"] = {"role": "user", "content": [block]}
        self.lines.append(e)

    def reply(self, row: Any, k: int, *, end: float | None = None) -> None:
        """One response as two lines (a text block, then a tool call) sharing message id and usage;
        the first carries a streaming snapshot with fewer output tokens."""
        end = float(row.end_s) if end is None else end
        start = float(row.start_s)
        cached = int(row.cached_tokens)
        created = max(0, int(row.input_tokens) - cached - 3)
        usage = {
            "input_tokens": int(row.input_tokens) - cached - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": cached,
            "output_tokens": int(row.output_tokens),
        }
        msg_id = f"msg_{uuid.uuid5(NAMESPACE, f'{self.session_id}/msg/{k}').hex[:20]}"
        for i, (t, block) in enumerate(
            [
                (start + 0.5 * (end - start), {"type": "text", "text": "(synthetic)"}),
                (
                    end,
                    {
                        "type": "tool_use",
                        "id": f"toolu_{self.session_id[:8]}_{k}",
                        "name": "Bash",
                        "input": {},
                    },
                ),
            ]
        ):
            e = self._base("assistant", t)
            part = dict(usage, output_tokens=max(1, usage["output_tokens"] // 2)) if i == 0 else usage
            e["message"] = {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "content": [block],
                "usage": part,
            }
            self.lines.append(e)

    def raw(self, event: dict[str, Any]) -> None:
        self.lines.append(event)

    def text(self) -> str:
        return "".join(json.dumps(e) + "\n" for e in self.lines)


def claude_session(session_id: str, rows: pd.DataFrame) -> _Writer:
    """A Claude Code transcript of one trace session (its requests in order)."""
    w = _Writer(session_id)
    rows = rows.sort_values("start_s")
    prev = None
    for k, row in enumerate(rows.itertuples()):
        if prev is None:
            w.prompt(float(row.start_s))
        elif row.human_gap_s > 0:
            if prev.tool_s > 0:
                w.tool_result(float(prev.end_s + prev.tool_s), k - 1)
            w.prompt(float(row.start_s))
        else:
            w.tool_result(float(row.start_s), k - 1)
        w.reply(row, k)
        prev = row
    if prev is not None and prev.tool_s > 0:
        w.tool_result(float(prev.end_s + prev.tool_s), len(rows) - 1)
    return w


def _session_id(name: str) -> str:
    return str(uuid.uuid5(NAMESPACE, name))


def write_claude(trace: pd.DataFrame, out: Path) -> None:
    """The first developer's sessions as one project of Claude Code transcripts."""
    project = out / "-home-dev-project"
    project.mkdir(parents=True, exist_ok=True)
    mine = trace[trace["developer"] == "developer-0"]
    for name, rows in mine.groupby("session", sort=False):
        sid = _session_id(str(name))
        (project / f"{sid}.jsonl").write_text(claude_session(sid, rows).text())


def write_awkward_claude(trace: pd.DataFrame, out: Path) -> None:
    project = out / "-home-dev-other"
    project.mkdir(parents=True, exist_ok=True)
    names = list(trace.loc[trace["developer"] == "developer-1", "session"].drop_duplicates())
    rows = trace[trace["session"] == names[0]].sort_values("start_s").head(6)
    sid = _session_id("awkward")
    w = _Writer(sid)
    w.raw({"type": "summary", "summary": "Synthetic session", "leafUuid": "x"})
    w.raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
    w.raw({"type": "mystery-event", "timestamp": _stamp(0.0), "sessionId": sid})
    w.raw([1, 2, 3])  # type: ignore[arg-type]
    meta = w._base("user", float(rows["start_s"].iloc[0]) - 1.0)
    meta["isMeta"] = True
    meta["message"] = {"role": "user", "content": "(command caveat)"}
    w.raw(meta)
    summary = w._base("user", float(rows["start_s"].iloc[0]) - 0.5)
    summary["isCompactSummary"] = True
    summary["message"] = {"role": "user", "content": "(summary of an earlier conversation)"}
    w.raw(summary)
    first = True
    for k, row in enumerate(rows.itertuples()):
        if first:
            w.prompt(float(row.start_s))
            first = False
        else:
            w.tool_result(float(row.start_s), k - 1)
        w.reply(row, k)
        if k == 1:
            stamped = w._base("user", None)  # an event without timestamp
            stamped["message"] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}
            w.raw(stamped)
            no_usage = w._base("assistant", float(row.end_s) + 0.1)
            no_usage["message"] = {"id": "msg_nousage", "role": "assistant", "content": []}
            w.raw(no_usage)
            side = w._base("assistant", float(row.end_s) + 0.2)
            side["isSidechain"] = True
            side["message"] = {
                "id": "msg_side",
                "role": "assistant",
                "content": [],
                "usage": {"output_tokens": 5},
            }
            w.raw(side)
    last = rows.iloc[-1]
    w.tool_result(float(last.end_s + last.tool_s), len(rows) - 1)
    skewed = last.copy()
    skewed["start_s"] = float(last.end_s + last.tool_s)
    w.reply(skewed, 99, end=float(last.end_s + last.tool_s) - 30.0)  # stamped before its trigger
    text = w.text()
    text += '{"parentUuid": "x", "type": "assistant", "timestamp": "2026-03-02T1'  # cut off mid-line
    (project / f"{sid}.jsonl").write_text(text)
    # A resumed session: its file starts with a copy of the first events of the one above.
    copied = [line for line in w.text().splitlines()[5:9]]
    rid = _session_id("resumed")
    (project / f"{rid}.jsonl").write_text("\n".join(copied) + "\n")


def write_awkward_csv(trace: pd.DataFrame, out: Path) -> None:
    rows = trace[trace["session"] == trace["session"].iloc[0]].head(8).copy().reset_index(drop=True)
    rows.loc[1, "output_tokens"] = None  # a missing field
    rows.loc[2, "cached_tokens"] = -5  # a negative count
    rows.loc[3, "end_s"] = rows.loc[3, "start_s"] - 2.0  # ends before it starts
    rows.loc[5, "start_s"] = rows.loc[4, "end_s"] - 1.0  # starts before the previous one ended
    rows.loc[6, "output_tokens"] = 0  # no output tokens
    rows = pd.concat([rows, rows.iloc[[7]]], ignore_index=True)  # a duplicate
    text = rows.to_csv(index=False)
    last = text.splitlines()[-1]
    text += last[: len(last) // 2]  # a truncated last line
    (out / "trace.csv").write_text(text)


def main(out: Path = OUT) -> None:
    """Write every example file under ``out``."""
    scenario = Scenario.model_validate(RECORDED)
    result = simulate(scenario, SEED)
    trace = trace_from_result(result)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recorded.toml").write_text(
        f"# The scenario examples/sessions/trace.csv was simulated from (seed {SEED}); written by\n"
        "# scripts/make_session_fixtures.py.\n" + scenario.to_toml()
    )
    rounded = trace.round({"start_s": 3, "end_s": 3, "tool_s": 3, "human_gap_s": 3})
    rounded.to_csv(out / "trace.csv", index=False)
    rounded.to_parquet(out / "trace.parquet", index=False)
    write_claude(rounded, out / "claude")
    awkward = out / "awkward"
    awkward.mkdir(exist_ok=True)
    write_awkward_csv(rounded, awkward)
    write_awkward_claude(rounded, awkward / "claude")
    n = rounded.groupby(["developer", "session"]).ngroups
    print(f"wrote {len(rounded)} requests of {n} sessions to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
