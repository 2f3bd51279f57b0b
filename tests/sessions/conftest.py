import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sessions"
REAL = Path(__file__).resolve().parent / "data" / "real"
EPOCH_S = 1_772_442_000.0  # 2026-03-02T09:00:00Z


@pytest.fixture
def examples() -> Path:
    return EXAMPLES


@pytest.fixture
def real() -> Path:
    """Real logs from public repositories, trimmed (tests/sessions/data/real/SOURCES.md)."""
    return REAL


class Transcript:
    """A Claude Code transcript written line by line, as version 2.1 writes it: one line per
    content block of a response, usage as counted when the line was written, ``stop_reason`` null
    (``stop`` sets it), times in seconds after 2026-03-02T09:00:00Z."""

    def __init__(self, session: str = "s1", *, agent: str | None = None, version: str = "2.1.39") -> None:
        self.session, self.agent, self.version = session, agent, version
        self.lines: list[dict[str, Any]] = []

    def _base(self, kind: str, t: float) -> dict[str, Any]:
        n = len(self.lines)
        line: dict[str, Any] = {
            "parentUuid": self.lines[-1]["uuid"] if self.lines else None,
            "isSidechain": self.agent is not None,
            "userType": "external",
            "sessionId": self.session,
            "version": self.version,
            "type": kind,
            "uuid": f"{self.session}-{self.agent or 'main'}-{n:04d}",
            "timestamp": datetime.fromtimestamp(EPOCH_S + t, UTC).isoformat(timespec="milliseconds"),
        }
        if self.agent is not None:
            line["agentId"] = self.agent
        return line

    def user(self, t: float, content: Any, **flags: Any) -> "Transcript":
        line = self._base("user", t)
        line["message"] = {"role": "user", "content": content}
        line.update(flags)
        self.lines.append(line)
        return self

    def prompt(self, t: float, text: str = "please do the thing") -> "Transcript":
        return self.user(t, text)

    def result(self, t: float, *calls: str, text: str = "ok", error: bool = False) -> "Transcript":
        blocks = [
            {"type": "tool_result", "tool_use_id": c, "content": text, "is_error": error} for c in calls
        ]
        return self.user(t, blocks)

    def reply(
        self,
        t: float,
        msg: str,
        *,
        out: int,
        text: str = "",
        call: str | None = None,
        command: str = "ls",
        stop: str | None = None,
        input_tokens: int = 3,
        created: int = 100,
        cached: int = 20_000,
    ) -> "Transcript":
        """One line of response ``msg``: a text block (``text``) or a tool call (``call``)."""
        line = self._base("assistant", t)
        block: dict[str, Any] = (
            {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
            if call
            else {"type": "text", "text": text or "."}
        )
        line["message"] = {
            "id": msg,
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [block],
            "stop_reason": stop,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": created,
                "cache_read_input_tokens": cached,
                "output_tokens": out,
            },
        }
        self.lines.append(line)
        return self

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.text(), encoding="utf-8")
        return path


@pytest.fixture
def transcript() -> type[Transcript]:
    return Transcript


def task_with_subagent(tmp_path: Path, outputs: list[int]) -> Path:
    """Transcripts of a session whose Task call (from 1 s to 60 s) waited on a subagent that made
    one request per output count (a tool call each): the session's directory."""
    main = Transcript("s1").prompt(0.0).reply(1.0, "m1", out=40, call="task")
    main.result(60.0, "task").reply(62.0, "m2", out=30, text="done", stop="end_turn")
    main.write(tmp_path / "s1.jsonl")
    sub = Transcript("s1", agent="a1").prompt(1.5, "explore")
    for k, out in enumerate(outputs):
        sub.reply(3.0 + 5 * k, f"x{k}", out=out, call=f"r{k}").result(4.0 + 5 * k, f"r{k}")
    sub.write(tmp_path / "s1" / "subagents" / "agent-a1.jsonl")
    return tmp_path


@pytest.fixture
def with_subagent() -> Callable[[Path, list[int]], Path]:
    return task_with_subagent
