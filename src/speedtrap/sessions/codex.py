"""OpenAI Codex CLI and Codex Desktop session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``)
as a trace.

What the loader relies on (the rollout format of Codex CLI 0.3 and later, as its recorder writes
it and as real rollouts show; docs/sessions.md): one JSON object per line, ``{"timestamp": ISO
8601, "type": ..., "payload": {...}}``. ``session_meta`` names the session (``payload.id``);
``event_msg`` lines of ``payload.type`` ``user_message`` are the human's prompts,
``turn_aborted`` an interruption and ``token_count`` the end of one model request, whose
``info.last_token_usage`` has ``input_tokens`` (cached included), ``cached_input_tokens`` and
``output_tokens`` (reasoning included); ``response_item`` lines are the request's output
(``reasoning``, ``message``, ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` with
a ``call_id``) and the tool results (``function_call_output`` / ``custom_tool_call_output``).

Lines are grouped by identity and time, never by their place in the file, so a rollout whose lines
are shuffled gives the same requests:

* A request is one ``token_count``, identified by its cumulative ``total_token_usage``: Codex writes
  the same count again after a tool result, and a copy (the same cumulative total, wherever it
  stands in the file) is not a new request. The request ends at the first copy's time.
* An output line belongs to the first request that ends at or after it; a tool result to the call
  with its ``call_id``. Lines with the same timestamp are read prompt, output, count, result,
  interruption (then by content).
* A request is sent when Codex writes the ``turn_context`` line before it: Codex persists that
  line, then opens the model's stream (``try_run_turn`` in ``codex-rs/core/src/codex.rs``). Codex
  0.104 writes one before every request; the 0.114 rollout of the tests, one per turn, at its
  prompt. The seconds from a request's trigger (its prompt or tool result) to the latest such line
  before its first output are the client's, not the model's (what the client did then, the log
  does not say): the trace's extra column ``client_s`` holds them (0 where no such line lies
  between), the request still starts at its trigger, and a replay takes them from the log
  (:mod:`speedtrap.sessions.replay`).
* A rollout with no ``token_count`` at all (Codex Desktop writes some without) still has its
  requests: the outputs between two triggers (a prompt, a tool result) are one request, whose
  output tokens are estimated from the visible characters and whose input from the characters of
  the conversation before it (1 token per :data:`~speedtrap.sessions.conversation.CHARS_PER_TOKEN`
  characters; the request is marked as an estimate). Outputs after a rollout's last count are
  skipped: the log ends mid-request, or the count was never written.

Rollouts of the early format (a bare first object and items without timestamps or token counts)
cannot be timed and are skipped. Only timestamps, counts, call ids and lengths are read; no text
reaches the trace.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.sessions.claude_code import parse_timestamp, read_json_lines
from speedtrap.sessions.conversation import (
    CHARS_PER_TOKEN,
    REORDERED,
    Event,
    Kind,
    count_reordered,
    session_requests,
)
from speedtrap.sessions.plain_trace import DEFAULT_DEVELOPER, LoadReport, trace_from_rows

__all__ = [
    "CLIENT_COLUMN",
    "CLIENT_TIME",
    "ESTIMATED_COUNTS",
    "client_seconds",
    "is_codex_rollout",
    "load_codex",
    "seconds_before_sending",
]

NOT_JSON = "Codex lines that are not JSON (e.g. a truncated last line) or nested too deeply"
NO_TIMESTAMP = "Codex lines without a readable timestamp (missing, malformed, or outside 2000–2099)"
UNKNOWN_TYPE = "Codex lines of unknown type"
NO_USAGE = (
    "Codex responses after their rollout's last token count (the log ends mid-request, or the count "
    "was never written)"
)
BAD_USAGE = "Codex token counts that are unreadable (not finite non-negative numbers)"
EARLY_FORMAT = "Codex rollouts of the early format (no timestamps or token counts)"
REPEATED_COUNT = "Codex token counts written again (not a new request)"
OTHER_LINES = "Codex lines that carry no request (context, reasoning summaries, task markers)"
UNREADABLE_FILE = "Codex files that could not be read"
ESTIMATED_COUNTS = (
    "Codex requests of rollouts without token counts (recovered from their lines; input and output "
    f"tokens estimated at 1 token per {CHARS_PER_TOKEN:g} characters)"
)

CLIENT_COLUMN = "client_s"
"""The extra trace column of a Codex trace: of each request's logged seconds, those before Codex
sent it (from its trigger to the ``turn_context`` line written just before sending; module
docstring). An optional column of the plain trace too (``speedtrap.sessions.plain_trace``,
``EXTRA_COLUMNS``): ``speedtrap.sessions.export.write_trace`` writes it and a read-back trace keeps
it; a trace without it counts every request's seconds as the request's, as for other logs."""


def seconds_before_sending(trace: pd.DataFrame) -> np.ndarray:
    """Per request of a normalized trace, the client's seconds before it was sent: its
    :data:`CLIENT_COLUMN` (0 where the trace has none or a cell is empty; never below 0). Every
    figure that times a request from its sending subtracts these from ``end_s − start_s``."""
    if CLIENT_COLUMN not in trace.columns:
        return np.zeros(len(trace))
    return np.clip(trace[CLIENT_COLUMN].fillna(0.0).to_numpy(float), 0.0, None)


CLIENT_TIME = (
    "Codex requests sent after their trigger (the client's seconds from the prompt or tool result "
    "to the turn_context line written before sending; the client_s column, taken from the log in a "
    "replay, not timed as the model's)"
)

TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})
OUTPUTS = frozenset({"reasoning", "message", "web_search_call", *CALLS})
REFUSED = re.compile(r"(rejected|declined|denied|aborted) by (the )?user", re.IGNORECASE)
GIT_COMMIT = re.compile(r"\bgit\b[^\n|;&]*\bcommit\b")

# Ranks of lines with the same timestamp: a prompt, then outputs, their count, results, the rest.
_PROMPT, _OUTPUT, _COUNT, _RESULT, _LAST = range(5)


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
    if isinstance(value, dict):
        return _length(value.get("text", value.get("content", value.get("output", ""))))
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
class _Line:
    """One timestamped line: its time, rank among lines of the same time, content key (ties),
    place in the file, and payload."""

    t: float
    rank: int
    key: str
    position: int
    kind: str
    payload: dict[str, Any]


@dataclass
class _Count:
    """One request's token count (its first copy)."""

    t: float
    order: int
    usage: tuple[float, float, float] | None  # fresh (cached included), cached, output; None: unreadable


def _rank(kind: str, sub: Any) -> int:
    if kind == "event_msg" and sub == "user_message":
        return _PROMPT
    if kind == "event_msg" and sub == "token_count":
        return _COUNT
    if kind == "response_item" and sub in RESULTS:
        return _RESULT
    if kind == "response_item" and sub in OUTPUTS:
        return _OUTPUT
    return _LAST


def _usage_of(info: dict[str, Any]) -> tuple[float, float, float] | None:
    last = info.get("last_token_usage")
    counts = [_count(last, k) for k in ("input_tokens", "cached_input_tokens", "output_tokens")]
    if not isinstance(last, dict) or any(c is None for c in counts):
        return None
    fresh, cached, output = (float(c) for c in counts if c is not None)
    return fresh, min(cached, fresh), output


@dataclass
class _Rollout:
    """Reads one rollout file into events (one session), by identity and time (module docstring)."""

    report: LoadReport
    session: str
    lines: list[_Line] = field(default_factory=list)
    context_chars: int = 0  # the session's instructions, where the rollout keeps them

    def marks(self) -> tuple[list[float], list[float]]:
        """The times of the rollout's ``turn_context`` lines (a request about to be sent) and of its
        model outputs."""
        sent = [x.t for x in self.lines if x.kind == "turn_context"]
        outputs = [
            x.t
            for x in self.lines
            if x.kind == "response_item"
            and x.payload.get("type") in OUTPUTS
            and x.payload.get("role", "assistant") == "assistant"
        ]
        return sent, outputs

    def add(self, obj: dict[str, Any], position: int) -> None:
        kind, payload = obj.get("type"), obj.get("payload")
        if kind not in TYPES or not isinstance(payload, dict):
            self.report.skip(UNKNOWN_TYPE)
            return
        if kind == "session_meta":
            if isinstance(payload.get("id"), str) and payload["id"]:
                self.session = payload["id"]
            self.context_chars += _length(payload.get("base_instructions", ""))
            return
        t = parse_timestamp(obj.get("timestamp"))
        if math.isnan(t):
            self.report.skip(NO_TIMESTAMP)
            return
        try:
            key = json.dumps(obj, sort_keys=True, default=str)
        except (TypeError, ValueError, RecursionError):
            key = ""
        self.lines.append(_Line(t, _rank(str(kind), payload.get("type")), key, position, str(kind), payload))

    def events(self, first_order: int) -> list[Event]:
        """The rollout's events, ordered by time, rank and content (not by the file)."""
        self.lines.sort(key=lambda x: (x.t, x.rank, x.key))
        counts = self._counts(first_order)
        ends = [c.t for c in counts]
        estimate = not counts
        events: list[Event] = []
        outputs: dict[int, list[Event]] = {}
        trailing = 0
        chars = self.context_chars  # characters of the conversation so far (for estimates)
        request = -1  # a request being recovered from a rollout without counts
        for order, line in enumerate(self.lines, start=first_order):
            p, sub = line.payload, line.payload.get("type")
            if line.kind == "event_msg" and sub == "user_message":
                events.append(Event(Kind.PROMPT, line.t, order))
                request = -1
            elif line.kind == "event_msg" and sub == "turn_aborted":
                events.append(Event(Kind.INTERRUPT, line.t, order))
            elif line.kind == "response_item" and sub in RESULTS:
                call = p.get("call_id")
                refused = bool(REFUSED.search(str(p.get("output", ""))[:500]))
                calls = (call,) if isinstance(call, str) else ()
                events.append(Event(Kind.TOOL, line.t, order, calls=calls, rejected=refused))
                chars += _length(p.get("output"))
                request = -1
            elif (
                line.kind == "response_item" and sub in OUTPUTS and p.get("role", "assistant") == "assistant"
            ):
                arguments = p.get("arguments", p.get("input", p.get("action", "")))
                n = _length(p.get("content")) + _length(arguments if not isinstance(arguments, dict) else "")
                if isinstance(arguments, dict):
                    n += len(json.dumps(arguments, default=str))
                call = p.get("call_id")
                e = Event(
                    Kind.REPLY,
                    line.t,
                    order,
                    chars=n,
                    calls=(call,) if sub in CALLS and isinstance(call, str) else (),
                    commit=sub in CALLS and bool(GIT_COMMIT.search(str(arguments)[:5000])),
                )
                if estimate:
                    if request < 0:
                        request = len(outputs)
                        outputs[request] = []
                        e.input_tokens = float(math.ceil(chars / CHARS_PER_TOKEN))
                    e.msg_id, e.estimate = f"{self.session}#~{request + 1}", True
                    outputs[request].append(e)
                else:
                    k = bisect.bisect_left(ends, line.t)
                    if k == len(ends):
                        trailing += 1
                    else:
                        outputs.setdefault(k, []).append(e)
                chars += n
            elif line.kind == "response_item" and sub == "message":
                chars += _length(p.get("content"))  # the human's or the instructions' message
                self.report.ignore(OTHER_LINES)
            elif not (line.kind == "event_msg" and sub == "token_count"):
                self.report.ignore(OTHER_LINES)
        if trailing:
            self.report.skip(NO_USAGE, trailing)
        if estimate:
            self.report.adjust(ESTIMATED_COUNTS, len(outputs))
            inputs = [float(r[0].input_tokens) for _, r in sorted(outputs.items())]
            for k, lines in outputs.items():
                for e in lines:  # the previous request's input is the prefix this one shares
                    e.input_tokens = inputs[k]
                    e.cached_tokens = min(inputs[k - 1], inputs[k]) if k > 0 else 0.0
            return events + [e for lines in outputs.values() for e in lines]
        for k, count in enumerate(counts):
            if count.usage is None:
                continue  # an unreadable count: its outputs go with it
            msg_id = f"{self.session}#{k + 1}"
            for e in outputs.get(k, []):
                e.msg_id = msg_id
                events.append(e)
            fresh, cached, output = count.usage
            final = Event(Kind.REPLY, count.t, count.order, msg_id=msg_id, final=True)
            final.input_tokens, final.cached_tokens, final.output_tokens = fresh, cached, output
            events.append(final)
        return events

    def _counts(self, first_order: int) -> list[_Count]:
        """The rollout's distinct token counts in time order (``first_order``: the first line's
        order); a copy of a cumulative total already seen is ignored and counted."""
        seen: set[tuple[float | None, ...]] = set()
        out: list[_Count] = []
        for order, line in enumerate(self.lines, start=first_order):
            if not (line.kind == "event_msg" and line.payload.get("type") == "token_count"):
                continue
            info = line.payload.get("info")
            if not isinstance(info, dict):
                self.report.ignore(OTHER_LINES)  # a rate-limit update without counts
                continue
            total = info.get("total_token_usage")
            keys = ("input_tokens", "output_tokens", "total_tokens")
            if isinstance(total, dict):
                identity = tuple(_count(total, k) for k in keys)
                if identity in seen:
                    self.report.ignore(REPEATED_COUNT)
                    continue
                seen.add(identity)
            usage = _usage_of(info)
            if usage is None:
                self.report.skip(BAD_USAGE)
            out.append(_Count(line.t, order, usage))
        return out

    def reordered(self) -> int:
        """Lines written after a later-stamped line (the file's order, for the report)."""
        by_file = sorted(self.lines, key=lambda x: x.position)
        return count_reordered([Event(Kind.OUTPUT, x.t, x.position) for x in by_file])


def _read(path: Path, report: LoadReport, order: int) -> tuple[_Rollout | None, list[Event], int]:
    rollout = _Rollout(report, path.stem)
    lines = list(read_json_lines(path, report, NOT_JSON))
    if lines and not is_codex_rollout(lines[0]) and "instructions" in lines[0]:
        report.skip(EARLY_FORMAT)
        return None, [], order
    for position, obj in enumerate(lines):
        rollout.add(obj, position)
    events = rollout.events(order + 1)
    return rollout, events, order + len(rollout.lines) + 1


def client_seconds(trace: pd.DataFrame, marks: dict[str, tuple[list[float], list[float]]]) -> np.ndarray:
    """Per request of ``trace``: seconds from its start (its trigger) to the latest ``turn_context``
    line of its session at or before its first output (its end if it has none), 0 where none lies
    in between; ``marks[session]``: the session's ``turn_context`` and output times, sorted."""
    out = np.zeros(len(trace))
    for i, (session, start, end) in enumerate(
        zip(trace["session"], trace["start_s"].to_numpy(float), trace["end_s"].to_numpy(float), strict=True)
    ):
        sent, outputs = marks.get(str(session), ([], []))
        k = bisect.bisect_left(outputs, start)
        first = min(outputs[k], end) if k < len(outputs) else end
        j = bisect.bisect_right(sent, first) - 1
        if j >= 0 and sent[j] >= start:
            out[i] = sent[j] - start
    return out


def load_codex(paths: list[Path], report: LoadReport, *, developer: str = DEFAULT_DEVELOPER) -> pd.DataFrame:
    """The requests of Codex CLI or Desktop rollout files as a normalized trace (one developer),
    with the extra column :data:`CLIENT_COLUMN`."""
    order = 0
    seen: set[str] = set()
    sessions: dict[str, list[Event]] = {}
    marks: dict[str, tuple[list[float], list[float]]] = {}
    reordered = 0
    for path in paths:
        try:
            rollout, events, order = _read(path, report, order)
        except (OSError, UnicodeError):
            report.skip(UNREADABLE_FILE)
            continue
        report.files += 1
        if rollout is not None:
            reordered += rollout.reordered()
            sessions.setdefault(rollout.session, []).extend(events)
            sent, outputs = rollout.marks()
            both = marks.setdefault(rollout.session, ([], []))
            both[0].extend(sent)
            both[1].extend(outputs)
    rows: list[dict[str, Any]] = []
    for session, events in sessions.items():
        for row in session_requests(events, report, seen):
            row["session"] = session
            row["parent_session"] = ""
            rows.append(row)
    report.adjust(REORDERED, reordered)
    trace = trace_from_rows(rows, report, developer=developer)
    for sent, outputs in marks.values():
        sent.sort()
        outputs.sort()
    trace[CLIENT_COLUMN] = client_seconds(trace, marks)
    report.adjust(CLIENT_TIME, int((trace[CLIENT_COLUMN] > 0).sum()))
    return trace
