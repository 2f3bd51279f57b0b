"""From the events of a coding agent's log to requests (trace rows), for every log format.

A loader (Claude Code, Codex CLI) turns each line of a log into at most a few :class:`Event` s:
a human prompt, a tool result, a background task's notice, a local command's output, an
interruption, or one line of a model response. :func:`session_requests` then builds one session's
requests:

* Events are read in time order (ties in file order), whatever order the file has them in; the
  lines written out of time order are counted.
* The lines of one response (one ``msg_id``) form one request, however many lines it was written
  in and whatever came between them (tool results of its own parallel calls, notices). The final
  usage is the largest output count of its lines. When no line says the response finished (every
  line written mid-stream, as Claude Code 2.1 does) and the count is below one token per
  :data:`CHARS_PER_TOKEN` visible characters, the output is raised to that lower bound (the row's
  ``estimated`` says ``output``). A response the loader recovered without any count (``estimate``)
  carries the loader's estimates of input and output (``estimated``: ``input+output``).
* A request starts at the event that triggered it (the human's prompt, a tool result, a notice),
  never before the previous request of the session ended, and ends at its last line.
* Tool time after a request runs to the last result of its own tool calls (paired by call id;
  results without an id, and notices of background tasks, belong to the latest request).
* The human gap before a request runs from the agent's last activity (a response, a tool result,
  the moment the human interrupted) to the human's last prompt before it, less the time local
  commands the human ran in between took to answer (``/compact`` compacting, say). Prompts in a
  subagent's session are the parent agent's, not a human's: no gap.
* An interruption marks the latest request ``interrupted``; a refused tool call marks its request
  ``rejected``. A human's ``/clear`` or ``/compact``, or a git commit made by a tool call since
  the last human turn, marks the next human-started request as a task boundary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from speedtrap.sessions.plain_trace import LoadReport

__all__ = [
    "CHARS_PER_TOKEN",
    "DUPLICATE_RESPONSE",
    "NO_TRIGGER",
    "PARTIAL_USAGE",
    "REORDERED",
    "Event",
    "Kind",
    "session_requests",
]

CHARS_PER_TOKEN = 4.0
"""Visible characters per output token for the lower bound on a response whose final usage was
never written: about 4 characters per token of English text and code (Anthropic's and OpenAI's
tokenizer guidance); thinking that is not shown makes the true count higher, never lower."""

REORDERED = "log lines written out of time order (read in time order)"
PARTIAL_USAGE = (
    "responses whose usage was only written mid-stream (output raised to 1 token per "
    f"{CHARS_PER_TOKEN:g} visible characters)"
)
NO_TRIGGER = "responses with no event before them in their session"
DUPLICATE_RESPONSE = "duplicate responses (already read, e.g. copied into a resumed session)"


class Kind(StrEnum):
    """What a log event is."""

    PROMPT = "prompt"
    """the human typed a prompt or a command (in a subagent: the parent agent's prompt)"""
    TOOL = "tool"
    """a tool result"""
    NOTICE = "notice"
    """a background task finished: the agent goes on without the human"""
    OUTPUT = "output"
    """a local command's output or a system reminder: no request, not the human"""
    INTERRUPT = "interrupt"
    """the human stopped the agent"""
    REPLY = "reply"
    """one line of a model response"""


@dataclass(slots=True)
class Event:
    """One event of a log. ``order`` is its position in the file (ties in time, and counting the
    lines written out of order). Prompts: ``human`` (False in a subagent's session) and
    ``boundary`` (``clear`` / ``compact`` for the human's command). Tool results: the call ids
    answered (``calls``) and whether the human refused the call (``rejected``). Response lines: the
    response id, its token counts, whether this line's usage is final, the visible characters of
    this line's content, the tool calls it makes and whether one of them makes a git commit;
    ``estimate`` when the log has no count for it at all (its tokens are the loader's estimates)."""

    kind: Kind
    t: float
    order: int
    human: bool = True
    command: bool = False
    boundary: str = ""
    calls: tuple[str, ...] = ()
    rejected: bool = False
    msg_id: str = ""
    input_tokens: float = 0.0
    cached_tokens: float = 0.0
    output_tokens: float = 0.0
    final: bool = False
    chars: int = 0
    commit: bool = False
    estimate: bool = False


@dataclass(slots=True)
class _Response:
    """The lines of one response, merged."""

    first_t: float
    last_t: float
    order: int
    input_tokens: float
    cached_tokens: float
    output_tokens: float
    final: bool
    chars: int
    calls: list[str] = field(default_factory=list)
    commit: bool = False
    estimate: bool = False

    def add(self, e: Event) -> None:
        self.first_t = min(self.first_t, e.t)
        self.last_t = max(self.last_t, e.t)
        if e.output_tokens >= self.output_tokens:  # counts grow while streaming: the last is final
            self.input_tokens, self.cached_tokens = e.input_tokens, e.cached_tokens
            self.output_tokens = e.output_tokens
        self.final = self.final or e.final
        self.chars += e.chars
        self.calls.extend(e.calls)
        self.commit = self.commit or e.commit
        self.estimate = self.estimate or e.estimate

    def output(self) -> tuple[float, bool]:
        """The output tokens, and whether they were raised to the visible content's lower bound."""
        bound = math.ceil(self.chars / CHARS_PER_TOKEN)
        if not self.final and bound > self.output_tokens:
            return float(bound), True
        return self.output_tokens, False


def _merge_responses(
    events: list[Event], report: LoadReport, seen: set[str]
) -> tuple[list[Event], dict[int, _Response]]:
    """The events without response lines, and the responses keyed by their first line's order."""
    others: list[Event] = []
    by_id: dict[str, _Response] = {}
    first: dict[int, _Response] = {}
    for e in events:
        if e.kind is not Kind.REPLY:
            others.append(e)
            continue
        response = by_id.get(e.msg_id)
        if response is not None:
            response.add(e)
            continue
        if e.msg_id in seen:
            report.skip(DUPLICATE_RESPONSE)
            continue
        seen.add(e.msg_id)
        response = _Response(
            e.t, e.t, e.order, e.input_tokens, e.cached_tokens, e.output_tokens, e.final, e.chars
        )
        response.calls.extend(e.calls)
        response.commit = e.commit
        response.estimate = e.estimate
        by_id[e.msg_id] = first[e.order] = response
    return others, first


def count_reordered(events: list[Event]) -> int:
    """Events that come after a later-stamped event in the file."""
    latest = -math.inf
    n = 0
    for e in sorted(events, key=lambda e: e.order):
        if e.t < latest:
            n += 1
        latest = max(latest, e.t)
    return n


def session_requests(events: list[Event], report: LoadReport, seen: set[str]) -> list[dict[str, Any]]:
    """One session's requests (trace rows without session, developer and backend) from its
    events in any order; ``seen`` holds the response ids already read (a response read again is a
    duplicate). See the module docstring for the rules."""
    report.adjust(REORDERED, count_reordered(events))
    others, responses = _merge_responses(events, report, seen)
    timeline: list[tuple[float, int, Event | _Response]] = [(e.t, e.order, e) for e in others]
    timeline += [(r.first_t, order, r) for order, r in responses.items()]
    timeline.sort(key=lambda item: (item[0], item[1]))
    rows: list[dict[str, Any]] = []
    owner: dict[str, int] = {}  # tool call id → the request that made it
    trigger = agent_t = gap = command_t = math.nan
    busy = 0.0  # seconds the human's local commands took to answer since the agent's last activity
    human = False
    boundary = ""
    commit_since_human = False
    for t, _, item in timeline:
        if isinstance(item, _Response):
            if math.isnan(trigger):
                report.skip(NO_TRIGGER)
                continue
            output, raised = item.output()
            report.adjust(PARTIAL_USAGE, int(raised and not item.estimate))
            start = max(trigger, rows[-1]["end_s"]) if rows else trigger
            mark = boundary or ("commit" if commit_since_human else "")
            rows.append(
                {
                    "start_s": start,
                    "end_s": max(item.last_t, start),
                    "input_tokens": item.input_tokens,
                    "cached_tokens": item.cached_tokens,
                    "output_tokens": output,
                    "tool_s": 0.0,
                    "human_gap_s": (gap if human else 0.0) if len(rows) else math.nan,
                    "boundary": mark if human and len(rows) else "",
                    "rework": "",
                    "estimated": "input+output" if item.estimate else ("output" if raised else ""),
                }
            )
            if human:
                boundary, commit_since_human = "", False
            commit_since_human = commit_since_human or item.commit
            for call in item.calls:
                owner[call] = len(rows) - 1
            trigger = agent_t = rows[-1]["end_s"]
            human, gap, busy, command_t = False, 0.0, 0.0, math.nan
            continue
        e = item
        if e.kind is Kind.PROMPT and e.human:
            gap = max(0.0, t - agent_t - busy) if not math.isnan(agent_t) else math.nan
            human, trigger = True, t
            boundary = e.boundary or boundary
            command_t = t if e.command else math.nan
        elif e.kind is Kind.PROMPT:
            trigger = t  # a subagent's prompt, from the parent agent
        elif e.kind in (Kind.TOOL, Kind.NOTICE):
            mine = [owner[c] for c in e.calls if c in owner]
            k = max(mine) if mine else (len(rows) - 1 if rows else None)
            if k is not None:
                rows[k]["tool_s"] = max(rows[k]["tool_s"], t - rows[k]["end_s"])
                if e.rejected:
                    rows[k]["rework"] = "rejected"
            trigger = t
            agent_t = t if math.isnan(agent_t) else max(agent_t, t)
        elif e.kind is Kind.INTERRUPT:
            if rows and not rows[-1]["rework"]:  # a refused call is the more telling signal
                rows[-1]["rework"] = "interrupted"
            agent_t = t if math.isnan(agent_t) else max(agent_t, t)
        elif not math.isnan(command_t):  # a command's output: the time it took is not the human's
            busy += t - command_t
            command_t = math.nan
    return rows
