"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as a trace.

There is no published schema; what the loader relies on is what community tools that read these
files describe (claude-code-log, ccusage) and what real transcripts of versions 1.0 to 2.1 show
(docs/sessions.md has the details). One JSON object per line, in any order (lines are read in
time order); ``type`` ``"user"`` or ``"assistant"`` for conversation events (``summary``,
``system``, ``progress``, ``file-history-snapshot``… carry no request and are ignored);
``timestamp`` (ISO 8601), ``sessionId``, ``uuid``, ``parentUuid``; ``isSidechain`` with
``agentId`` for a subagent's events (2.x writes them to ``<session>/subagents/agent-<id>.jsonl``,
1.x into the session's own file); ``isMeta`` / ``isCompactSummary`` /
``isVisibleInTranscriptOnly`` for user events the human did not type; ``message`` with
``content`` (a string or blocks of type ``text`` / ``thinking`` / ``tool_use`` / ``tool_result``)
and, on assistant lines, ``id``, ``stop_reason`` and ``usage`` (``input_tokens``,
``cache_creation_input_tokens``, ``cache_read_input_tokens``, ``output_tokens``).

User lines that are not tool results are told apart by their text: ``[Request interrupted by
user…]`` is an interruption (also as a tool result's text, as 1.x wrote it),
``<task-notification>`` a background task's notice, ``<local-command-stdout>`` /
``<local-command-stderr>`` / ``<local-command-caveat>`` / ``<system-reminder>`` a command's or
the system's output, ``<command-name>/clear`` … a command the human typed (``/clear`` and
``/compact`` start a new task), anything else (an image alone too) a human prompt. A
tool result whose text says the user did not want to proceed is a refused tool call. A subagent's
requests form a session of their own (``<session>/agent-<id>``) whose ``parent_session`` is the
session that started it: fleet load and cost, not the human's turns. Only timestamps, counts,
ids and the length of the visible output are read; no text reaches the trace.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from speedtrap.sessions.conversation import Event, Kind, session_requests
from speedtrap.sessions.plain_trace import DEFAULT_DEVELOPER, MAX_EPOCH_S, LoadReport, trace_from_rows

__all__ = ["is_placeholder_id", "load_claude_code", "parse_timestamp", "read_json_lines"]

NOT_JSON = "lines that are not JSON (e.g. a truncated last line) or nested too deeply"
NOT_OBJECT = "lines that are not JSON objects"
UNKNOWN_TYPE = "events of unknown type"
NO_TIMESTAMP = "events without a readable timestamp (missing, malformed, or outside 2000–2099)"
NO_USAGE = "assistant messages without token usage"
DUPLICATE_EVENT = "duplicate events (already seen, e.g. copied into a resumed session)"
OTHER_EVENTS = "non-conversation events (summary, system, progress, snapshots, session state)"
META_EVENTS = "user events not typed by the human (meta, compaction summaries)"
SYNTHETIC = "assistant messages Claude Code wrote itself (errors; no request)"
UNREADABLE_FILE = "files that could not be read"
SUBAGENT_SESSIONS = "subagent sessions (their requests are kept: fleet load and cost)"
ORPHAN_NOTE = (
    "{n} subagent session(s) whose parent session is not among the logs: kept as sessions of "
    "their own, without human turns"
)

KNOWN_OTHER_TYPES = frozenset(
    {
        "summary",
        "system",
        "progress",
        "file-history-snapshot",
        "queue-operation",
        "result",
        "attachment",
        "mode",
        "permission-mode",
        "ai-title",
        "last-prompt",
    }
)
"""Event types Claude Code writes that carry no request (ignored, not skipped): ``mode``,
``permission-mode``, ``ai-title`` and ``last-prompt`` are the session state 2.1.157 writes around
turn boundaries (tests/sessions/data/real-tracelab/)."""
MIN_EPOCH_S = 946_684_800.0
"""2000-01-01 in Unix seconds: an earlier timestamp in a coding-agent log is damage."""
INTERRUPTED = "[Request interrupted by user"
NOTICE_TAG = "<task-notification>"
OUTPUT_TAGS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "<bash-stdout>",
    "<bash-stderr>",
)
COMMAND = re.compile(r"<command-name>\s*/?([^<\s]+)")
BOUNDARY_COMMANDS = {"clear": "clear", "compact": "compact"}
REFUSED = ("The user doesn't want to proceed with this tool use", "The user doesn't want to take this action")
GIT_COMMIT = re.compile(r"\bgit\b[^\n|;&]*\bcommit\b")
PLACEHOLDER_ID = re.compile(
    r"redact|anonym|placeholder|saniti[sz]|removed|hidden|^[^A-Za-z0-9]*$", re.IGNORECASE
)
"""A message id a sanitiser put in place of the real one (``REDACTED``, ``<redacted>``, ``***``)."""


def is_placeholder_id(msg_id: str) -> bool:
    """Whether ``msg_id`` cannot tell messages apart: a sanitiser's placeholder, or one character
    repeated after its ``msg_`` prefix (``msg_xxxxxxxx``)."""
    tail = msg_id.removeprefix("msg_")
    return bool(PLACEHOLDER_ID.search(msg_id)) or (len(tail) > 2 and len(set(tail)) == 1)


def parse_timestamp(value: Any) -> float:
    """Unix seconds of an ISO 8601 timestamp between 2000 and 2099; NaN otherwise."""
    if not isinstance(value, str) or len(value) > 64:
        return math.nan
    try:
        t = datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError, OSError):
        return math.nan
    return t if MIN_EPOCH_S <= t < MAX_EPOCH_S else math.nan


def read_json_lines(path: Path, report: LoadReport, not_json: str = NOT_JSON) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (a byte-order mark anywhere at a line's start is
    dropped); lines that are not JSON objects are counted and skipped."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.lstrip("\ufeff").strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError, ValueError):
                report.skip(not_json)
                continue
            if not isinstance(obj, dict):
                report.skip(NOT_OBJECT)
                continue
            yield obj


def _number(value: Any) -> float | None:
    """A finite, non-negative count (missing: 0); None if unreadable."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0 else None


def _usage(usage: Any) -> tuple[float, float, float] | None:
    """Input (cached included), cached and output tokens of a usage record; None unless every count
    present is a finite non-negative number and the output count is there."""
    if not isinstance(usage, dict) or usage.get("output_tokens") is None:
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    values = [_number(usage.get(key)) for key in keys]
    if any(v is None for v in values):
        return None
    fresh, created, cached, output = (float(v) for v in values if v is not None)
    return fresh + created + cached, cached, output


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(block: dict[str, Any]) -> str:
    value = block.get("text", block.get("content", ""))
    if isinstance(value, list):
        return " ".join(str(v.get("text", "")) for v in value if isinstance(v, dict))
    return value if isinstance(value, str) else ""


def _reply(obj: dict[str, Any], t: float, order: int, report: LoadReport, session: str) -> Event | None:
    message = obj.get("message")
    if not isinstance(message, dict):
        report.skip(NO_USAGE)
        return None
    if message.get("model") == "<synthetic>":
        report.ignore(SYNTHETIC)
        return None
    counts = _usage(message.get("usage"))
    if counts is None:
        report.skip(NO_USAGE)
        return None
    chars, calls, commit = 0, [], False
    for block in _blocks(message):
        kind = block.get("type")
        if kind == "text":
            chars += len(_text(block))
        elif kind == "thinking":
            thinking = block.get("thinking")
            chars += len(thinking) if isinstance(thinking, str) else 0
        elif kind == "tool_use":
            tool_input = block.get("input")
            with contextlib.suppress(TypeError, ValueError, RecursionError):
                chars += len(json.dumps(tool_input, ensure_ascii=False))
            if isinstance(block.get("id"), str):
                calls.append(block["id"])
            command = tool_input.get("command") if isinstance(tool_input, dict) else None
            commit = commit or (isinstance(command, str) and bool(GIT_COMMIT.search(command)))
    msg_id = message.get("id")
    uuid = obj.get("uuid")
    if not isinstance(msg_id, str):
        msg_id = f"line:{uuid if isinstance(uuid, str) else order}"
    elif is_placeholder_id(msg_id):  # one response's lines share its input counts; others do not
        msg_id = f"{session}|{msg_id}|{counts[0]:.0f}|{counts[1]:.0f}"
    return Event(
        Kind.REPLY,
        t,
        order,
        msg_id=msg_id,
        input_tokens=counts[0],
        cached_tokens=counts[1],
        output_tokens=counts[2],
        final=message.get("stop_reason") is not None,
        chars=chars,
        calls=tuple(calls),
        commit=commit,
    )


def _user(obj: dict[str, Any], t: float, order: int, human: bool) -> list[Event]:
    blocks = _blocks(obj.get("message"))
    results = [b for b in blocks if b.get("type") == "tool_result"]
    events: list[Event] = []
    if results:
        calls = tuple(b["tool_use_id"] for b in results if isinstance(b.get("tool_use_id"), str))
        bodies = [_text(b).lstrip() for b in results]
        refused = any(body.startswith(REFUSED) for body in bodies)
        events.append(Event(Kind.TOOL, t, order, calls=calls, rejected=refused))
        if any(body.startswith(INTERRUPTED) for body in bodies):  # 1.x wrote it as the result
            events.append(Event(Kind.INTERRUPT, t, order))
    text = " ".join(_text(b) for b in blocks if b.get("type") == "text").strip()
    if not text:
        if blocks and not results:  # an image or a document the human pasted, without text
            events.append(Event(Kind.PROMPT, t, order, human=human))
        return events
    if text.startswith(INTERRUPTED):
        events.append(Event(Kind.INTERRUPT, t, order))
    elif text.startswith(NOTICE_TAG):
        events.append(Event(Kind.NOTICE, t, order))
    elif text.startswith(OUTPUT_TAGS):
        events.append(Event(Kind.OUTPUT, t, order))
    elif not results:
        command = COMMAND.search(text[:2000])
        name = command.group(1).lower() if command else ""
        boundary = BOUNDARY_COMMANDS.get(name, "")
        events.append(Event(Kind.PROMPT, t, order, human=human, command=bool(name), boundary=boundary))
    return events


@dataclass
class _Reader:
    """Reads the files of one load: events by session, each subagent session's parent."""

    report: LoadReport
    uuids: set[str] = field(default_factory=set)
    events: dict[str, list[Event]] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    order: int = 0

    def read(self, path: Path) -> None:
        lines = list(read_json_lines(path, self.report))
        roots = _sidechain_roots(lines)
        for obj in lines:
            self.order += 1
            self._line(obj, path, roots)

    def _line(self, obj: dict[str, Any], path: Path, roots: dict[str, str]) -> None:
        kind = obj.get("type")
        if kind not in ("user", "assistant"):
            if kind in KNOWN_OTHER_TYPES:
                self.report.ignore(OTHER_EVENTS)
            else:
                self.report.skip(UNKNOWN_TYPE)
            return
        uuid = obj.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.uuids:
                self.report.skip(DUPLICATE_EVENT)
                return
            self.uuids.add(uuid)
        t = parse_timestamp(obj.get("timestamp"))
        if math.isnan(t):
            self.report.skip(NO_TIMESTAMP)
            return
        session_id = obj.get("sessionId")
        session = session_id if isinstance(session_id, str) and session_id else path.stem
        human = not obj.get("isSidechain")
        if not human:
            agent = obj.get("agentId")
            name = f"agent-{agent}" if isinstance(agent, str) and agent else None
            root = roots.get(uuid) if isinstance(uuid, str) else None
            thread = name or (f"sidechain-{root[:12]}" if root else f"sidechain-{path.stem}")
            self.parents[f"{session}/{thread}"] = session
            session = f"{session}/{thread}"
        if kind == "assistant":
            reply = _reply(obj, t, self.order, self.report, session)
            new = [reply] if reply is not None else []
        elif obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
            self.report.ignore(META_EVENTS)
            return
        else:
            new = _user(obj, t, self.order, human)
        self.events.setdefault(session, []).extend(new)


def _sidechain_roots(lines: list[dict[str, Any]]) -> dict[str, str]:
    """For the sidechain events of one file, the uuid of the first event of their thread (the
    subagent's prompt), following ``parentUuid`` links (lines in any order)."""
    parent: dict[str, str | None] = {}
    for obj in lines:
        uuid, up = obj.get("uuid"), obj.get("parentUuid")
        if obj.get("isSidechain") and isinstance(uuid, str):
            parent[uuid] = up if isinstance(up, str) else None
    roots: dict[str, str] = {}
    for uuid in parent:
        path: list[str] = []
        node = uuid
        while node in parent and node not in roots and len(path) <= len(parent):
            path.append(node)
            up = parent[node]
            if up is None or up not in parent:
                break
            node = up
        root = roots.get(node, path[-1] if path else uuid)
        for n in path:
            roots[n] = root
    return roots


def load_claude_code(
    paths: list[Path], report: LoadReport, *, developer: str = DEFAULT_DEVELOPER
) -> pd.DataFrame:
    """The requests of Claude Code transcript files as a normalized trace (one developer)."""
    reader = _Reader(report)
    for path in paths:
        try:
            reader.read(path)
        except (OSError, UnicodeError):
            report.skip(UNREADABLE_FILE)
            continue
        report.files += 1
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    for session, events in reader.events.items():
        for row in session_requests(events, report, seen):
            row["session"] = session
            row["parent_session"] = reader.parents.get(session, "")
            rows.append(row)
    sessions_with_requests = {row["session"] for row in rows}
    subagents = [s for s in reader.parents if s in sessions_with_requests]
    if subagents:
        report.adjust(SUBAGENT_SESSIONS, len(subagents))
        orphans = [s for s in subagents if reader.parents[s] not in sessions_with_requests]
        if orphans:
            report.note(ORPHAN_NOTE.format(n=len(orphans)))
    return trace_from_rows(rows, report, developer=developer)
