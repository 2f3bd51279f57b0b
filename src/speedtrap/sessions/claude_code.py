"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as a trace.

What the loader relies on (docs/sessions.md has the details and where the format is described):
one JSON object per line; ``type`` ``"user"`` or ``"assistant"`` for conversation events (other
types — ``summary``, ``system``, ``progress``, ``file-history-snapshot``… — are ignored);
``timestamp`` (ISO 8601), ``sessionId``, ``uuid``, ``isSidechain`` (subagent events), ``isMeta``
/ ``isCompactSummary`` / ``isVisibleInTranscriptOnly`` (user events the human did not type), and
``message`` with ``content`` (a string or a list of blocks of ``type`` text / tool_use /
tool_result…) and, on assistant messages, ``id`` and ``usage`` (``input_tokens``,
``cache_creation_input_tokens``, ``cache_read_input_tokens``, ``output_tokens``).

One API response is written as several lines (one per content block) sharing ``message.id`` and
its usage: they form one request, ending at the last of them. A request starts at the event that
triggered it (the human's prompt or the tool result before it). Resumed sessions copy earlier
events into a new file: events already seen (same ``uuid``, or same ``message.id`` in an earlier
response) are duplicates. Only timestamps and token counts are read; no text is kept.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from speedtrap.sessions.trace import (
    DEFAULT_DEVELOPER,
    TRACE_COLUMNS,
    LoadReport,
    empty_trace,
    normalize_trace,
)

__all__ = ["load_claude_code"]

NOT_JSON = "lines that are not JSON (e.g. a truncated last line)"
NOT_OBJECT = "lines that are not JSON objects"
UNKNOWN_TYPE = "events of unknown type"
NO_TIMESTAMP = "events without a readable timestamp"
NO_USAGE = "assistant messages without token usage"
SIDECHAIN = "subagent (sidechain) events"
DUPLICATE_EVENT = "duplicate events (already seen, e.g. copied into a resumed session)"
NO_TRIGGER = "assistant messages with no event before them"
OTHER_EVENTS = "non-conversation events (summary, system, progress, snapshots)"
META_EVENTS = "user events not typed by the human (meta, compaction summaries)"

KNOWN_OTHER_TYPES = frozenset(
    {"summary", "system", "progress", "file-history-snapshot", "queue-operation", "result", "attachment"}
)
"""Event types Claude Code writes that carry no request (ignored, not skipped)."""


@dataclass
class _Seen:
    """Events and responses already read, across the files of one load (resumed sessions)."""

    uuids: set[str]
    messages: set[str]


def _timestamp(value: Any) -> float:
    if not isinstance(value, str):
        return math.nan
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return math.nan


def _usage(usage: Any) -> tuple[float, float, float, float] | None:
    """Input, cache-write, cache-read and output tokens of a usage record; None unless every count
    present is a finite number and the output count is there (missing input counts are 0)."""
    if not isinstance(usage, dict) or usage.get("output_tokens") is None:
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    values = []
    for key in keys:
        value = usage.get(key)
        value = 0 if value is None else value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        values.append(float(value))
    return values[0], values[1], values[2], values[3]


def _is_tool_result(message: Any) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _events(path: Path, report: LoadReport, seen: _Seen) -> list[dict[str, Any]]:
    """The usable conversation events of one file, in file order: kind (prompt / tool / reply),
    time, session, and for replies the message id and token counts."""
    events: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                report.skip(NOT_JSON)
                continue
            if not isinstance(obj, dict):
                report.skip(NOT_OBJECT)
                continue
            kind = obj.get("type")
            if kind not in ("user", "assistant"):
                if kind in KNOWN_OTHER_TYPES:
                    report.ignore(OTHER_EVENTS)
                else:
                    report.skip(UNKNOWN_TYPE)
                continue
            uuid = obj.get("uuid")
            if isinstance(uuid, str):
                if uuid in seen.uuids:
                    report.skip(DUPLICATE_EVENT)
                    continue
                seen.uuids.add(uuid)
            if obj.get("isSidechain"):
                report.skip(SIDECHAIN)
                continue
            t = _timestamp(obj.get("timestamp"))
            if math.isnan(t):
                report.skip(NO_TIMESTAMP)
                continue
            session = str(obj.get("sessionId") or path.stem)
            message = obj.get("message")
            if kind == "user":
                if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
                    report.ignore(META_EVENTS)
                    continue
                events.append(
                    {"kind": "tool" if _is_tool_result(message) else "prompt", "t": t, "session": session}
                )
                continue
            usage = message.get("usage") if isinstance(message, dict) else None
            counts = _usage(usage)
            if counts is None:
                report.skip(NO_USAGE)
                continue
            assert isinstance(message, dict)
            msg_id = message.get("id") if isinstance(message.get("id"), str) else f"uuid:{uuid}"
            fresh, created, cached, output = counts
            uncached = fresh + created
            events.append(
                {
                    "kind": "reply",
                    "t": t,
                    "session": session,
                    "id": msg_id,
                    "input": uncached + cached,
                    "cached": cached,
                    "output": output,
                }
            )
    return events


def _requests(events: list[dict[str, Any]], report: LoadReport, seen: _Seen) -> list[dict[str, Any]]:
    """Turn one session's events into requests (trace rows)."""
    rows: list[dict[str, Any]] = []
    trigger = math.nan  # when the event that will trigger the next request happened
    agent_t = math.nan  # when the agent last did something (reply ended, tool returned)
    gap = 0.0  # human seconds before the next request
    current: dict[str, Any] | None = None
    for e in events:
        if e["kind"] == "reply":
            if current is not None and e["id"] == current["_id"]:
                current["end_s"] = max(current["end_s"], e["t"])  # another block of the same response
                current["output_tokens"] = max(current["output_tokens"], e["output"])
                agent_t = trigger = current["end_s"]
                continue
            if e["id"] in seen.messages:
                report.skip(DUPLICATE_EVENT)
                continue
            seen.messages.add(e["id"])
            if math.isnan(trigger):
                report.skip(NO_TRIGGER)
                continue
            current = {
                "_id": e["id"],
                "session": e["session"],
                "start_s": trigger,
                "end_s": e["t"],
                "input_tokens": e["input"],
                "cached_tokens": e["cached"],
                "output_tokens": e["output"],
                "tool_s": 0.0,
                "human_gap_s": gap if rows else math.nan,
            }
            rows.append(current)
            agent_t = trigger = e["t"]
            gap = 0.0
        elif e["kind"] == "tool":
            if current is not None:
                current["tool_s"] = max(current["tool_s"], e["t"] - current["end_s"])
            agent_t = trigger = e["t"]
        else:  # the human typed a prompt
            gap = e["t"] - agent_t if not math.isnan(agent_t) else math.nan
            trigger = e["t"]
            current = None
    for row in rows:
        del row["_id"]
    return rows


def load_claude_code(
    paths: list[Path], report: LoadReport, *, developer: str = DEFAULT_DEVELOPER
) -> pd.DataFrame:
    """The requests of Claude Code transcript files as a normalized trace (one developer)."""
    seen = _Seen(set(), set())
    by_session: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        try:
            events = _events(path, report, seen)
        except OSError:
            report.skip("files that could not be read")
            continue
        report.files += 1
        for e in events:
            by_session.setdefault(e["session"], []).append(e)
    rows = [row for events in by_session.values() for row in _requests(events, report, seen)]
    if not rows:
        return empty_trace()
    raw = pd.DataFrame(rows)
    raw["developer"] = developer
    raw["backend"] = ""
    return normalize_trace(raw[list(TRACE_COLUMNS)], report, developer=developer)
