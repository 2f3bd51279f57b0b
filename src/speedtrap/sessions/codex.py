"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as a trace.

What the loader relies on (the rollout format of Codex CLI 0.3 and later, as its recorder writes
it and as real rollouts show; docs/sessions.md): one JSON object per line, ``{"timestamp": ISO
8601, "type": ..., "payload": {...}}``. ``session_meta`` names the session (``payload.id``);
``event_msg`` lines of ``payload.type`` ``user_message`` are the human's prompts,
``turn_aborted`` an interruption and ``token_count`` the end of one model request, whose
``info.last_token_usage`` has ``input_tokens`` (cached included), ``cached_input_tokens`` and
``output_tokens`` (reasoning included); ``response_item`` lines are the request's output
(``reasoning``, ``message``, ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` with
a ``call_id``) and the tool results (``function_call_output`` / ``custom_tool_call_output``).
Codex writes the same ``token_count`` again after a tool result; a repeat (the same cumulative
``total_token_usage``) is not a new request. Rollouts of the early format (a bare first object
and items without timestamps or token counts) cannot be timed and are skipped. Only timestamps,
counts, call ids and lengths are read; no text reaches the trace.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from speedtrap.sessions.claude_code import parse_timestamp, read_json_lines
from speedtrap.sessions.conversation import Event, Kind, session_requests
from speedtrap.sessions.plain_trace import DEFAULT_DEVELOPER, LoadReport, trace_from_rows

__all__ = ["is_codex_rollout", "load_codex"]

NOT_JSON = "Codex lines that are not JSON (e.g. a truncated last line) or nested too deeply"
NO_TIMESTAMP = "Codex lines without a readable timestamp (missing, malformed, or outside 2000–2099)"
UNKNOWN_TYPE = "Codex lines of unknown type"
NO_USAGE = "Codex responses without a token count (the log ends mid-request)"
BAD_USAGE = "Codex token counts that are unreadable (not finite non-negative numbers)"
EARLY_FORMAT = "Codex rollouts of the early format (no timestamps or token counts)"
REPEATED_COUNT = "Codex token counts written again (not a new request)"
OTHER_LINES = "Codex lines that carry no request (context, reasoning summaries, task markers)"
UNREADABLE_FILE = "Codex files that could not be read"

TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})
OUTPUTS = frozenset({"reasoning", "message", "web_search_call", *CALLS})
REFUSED = re.compile(r"(rejected|declined|denied|aborted) by (the )?user", re.IGNORECASE)
GIT_COMMIT = re.compile(r"\bgit\b[^\n|;&]*\bcommit\b")


def is_codex_rollout(first: dict[str, Any]) -> bool:
    """Whether the first JSON object of a ``.jsonl`` file is a Codex rollout line."""
    return ("payload" in first and first.get("type") in TYPES) or (
        "instructions" in first and "id" in first and "sessionId" not in first
    )


def _length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_length(v.get("text", "")) for v in value if isinstance(v, dict))
    return 0


def _count(usage: Any, key: str) -> float | None:
    value = usage.get(key, 0) if isinstance(usage, dict) else None
    if value is None:
        value = 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


@dataclass
class _Rollout:
    """Reads one rollout file into events (one session)."""

    report: LoadReport
    session: str
    events: list[Event] = field(default_factory=list)
    pending: list[Event] = field(default_factory=list)
    requests: int = 0
    last_total: tuple[float | None, ...] | None = None
    prompts: int = 0

    def line(self, obj: dict[str, Any], order: int) -> None:
        kind, payload = obj.get("type"), obj.get("payload")
        if kind not in TYPES or not isinstance(payload, dict):
            self.report.skip(UNKNOWN_TYPE)
            return
        if kind == "session_meta":
            if isinstance(payload.get("id"), str) and payload["id"]:
                self.session = payload["id"]
            return
        t = parse_timestamp(obj.get("timestamp"))
        if math.isnan(t):
            self.report.skip(NO_TIMESTAMP)
            return
        sub = payload.get("type")
        if kind == "event_msg" and sub == "user_message":
            self.prompts += 1
            self.events.append(Event(Kind.PROMPT, t, order))
        elif kind == "event_msg" and sub == "turn_aborted":
            self.events.append(Event(Kind.INTERRUPT, t, order))
        elif kind == "event_msg" and sub == "token_count":
            self._token_count(payload.get("info"), t, order)
        elif kind == "response_item" and sub in RESULTS:
            call = payload.get("call_id")
            refused = bool(REFUSED.search(str(payload.get("output", ""))[:500]))
            calls = (call,) if isinstance(call, str) else ()
            self.events.append(Event(Kind.TOOL, t, order, calls=calls, rejected=refused))
        elif kind == "response_item" and sub in OUTPUTS and payload.get("role", "assistant") == "assistant":
            call = payload.get("call_id")
            arguments = payload.get("arguments", payload.get("input", payload.get("action", "")))
            chars = _length(payload.get("content")) + _length(arguments)
            commit = sub in CALLS and bool(GIT_COMMIT.search(str(arguments)[:5000]))
            calls = (call,) if sub in CALLS and isinstance(call, str) else ()
            self.pending.append(Event(Kind.REPLY, t, order, chars=chars, calls=calls, commit=commit))
        else:
            self.report.ignore(OTHER_LINES)

    def _token_count(self, info: Any, t: float, order: int) -> None:
        if not isinstance(info, dict):
            self.report.ignore(OTHER_LINES)  # a rate-limit update without counts
            return
        total = info.get("total_token_usage")
        keys = ("input_tokens", "output_tokens", "total_tokens")
        key = tuple(_count(total, k) for k in keys) if isinstance(total, dict) else None
        if key is not None and key == self.last_total:
            self.report.ignore(REPEATED_COUNT)
            return
        last = info.get("last_token_usage")
        counts = [_count(last, k) for k in ("input_tokens", "cached_input_tokens", "output_tokens")]
        if not isinstance(last, dict) or any(c is None for c in counts):
            self.report.skip(BAD_USAGE)
            self.pending.clear()
            return
        self.last_total = key
        fresh, cached, output = (float(c) for c in counts if c is not None)
        self.requests += 1
        msg_id = f"{self.session}#{self.requests}"
        for e in self.pending:
            e.msg_id = msg_id
            self.events.append(e)
        self.pending.clear()
        self.events.append(
            Event(
                Kind.REPLY,
                t,
                order,
                msg_id=msg_id,
                input_tokens=fresh,
                cached_tokens=min(cached, fresh),
                output_tokens=output,
                final=True,
            )
        )


def _read(path: Path, report: LoadReport, order: int) -> tuple[_Rollout | None, int]:
    rollout = _Rollout(report, path.stem)
    lines = list(read_json_lines(path, report, NOT_JSON))
    if lines and not is_codex_rollout(lines[0]) and "instructions" in lines[0]:
        report.skip(EARLY_FORMAT)
        return None, order
    for obj in lines:
        order += 1
        rollout.line(obj, order)
    if rollout.pending:
        report.skip(NO_USAGE)
    return rollout, order


def load_codex(paths: list[Path], report: LoadReport, *, developer: str = DEFAULT_DEVELOPER) -> pd.DataFrame:
    """The requests of Codex CLI rollout files as a normalized trace (one developer)."""
    order = 0
    seen: set[str] = set()
    sessions: dict[str, list[Event]] = {}
    for path in paths:
        try:
            rollout, order = _read(path, report, order)
        except (OSError, UnicodeError):
            report.skip(UNREADABLE_FILE)
            continue
        report.files += 1
        if rollout is not None:
            sessions.setdefault(rollout.session, []).extend(rollout.events)
    rows: list[dict[str, Any]] = []
    for session, events in sessions.items():
        for row in session_requests(events, report, seen):
            row["session"] = session
            row["parent_session"] = ""
            rows.append(row)
    return trace_from_rows(rows, report, developer=developer)
