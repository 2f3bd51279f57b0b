"""Load session logs of any supported kind: Claude Code transcripts and Codex CLI rollouts
(``.jsonl``, told apart by their first line, or named by ``log_format``) and plain traces
(``.csv``, ``.parquet``); a directory stands for every such file under it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

import pandas as pd

from speedtrap.sessions.claude_code import load_claude_code
from speedtrap.sessions.codex import CLIENT_COLUMN, is_codex_rollout, load_codex
from speedtrap.sessions.plain_trace import (
    DEFAULT_DEVELOPER,
    LoadReport,
    NoRequestsError,
    concat_traces,
    estimate_note,
    load_trace_file,
)

__all__ = ["LOG_FORMATS", "SUFFIXES", "LogFormat", "Sessions", "load_sessions"]

SUFFIXES = (".jsonl", ".csv", ".parquet")
LogFormat = Literal["auto", "claude-code", "codex"]
LOG_FORMATS: tuple[str, ...] = get_args(LogFormat)
"""How ``.jsonl`` files are read: ``auto`` tells Claude Code transcripts and Codex rollouts apart by
their first line; ``claude-code`` and ``codex`` read every ``.jsonl`` file as that format."""
UNKNOWN_FILES = "files of unknown kind (not .jsonl, .csv or .parquet)"


@dataclass(frozen=True)
class Sessions:
    """A normalized trace (``trace``: one row per request, docs/sessions.md) and what loading it
    skipped (``report``)."""

    trace: pd.DataFrame
    report: LoadReport

    @property
    def n_sessions(self) -> int:
        return int(self.trace.groupby(["developer", "session"]).ngroups) if len(self.trace) else 0

    @property
    def n_developers(self) -> int:
        return int(self.trace["developer"].nunique())

    def require_requests(self) -> Sessions:
        """These sessions, or :class:`NoRequestsError` (a ``ValueError`` whose one-line message
        carries every count of the load report) when they hold no request."""
        if not len(self.trace):
            raise NoRequestsError(self.report)
        return self


def _files(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise ValueError(f"{path}: no such file or directory")
    return found


def _first_object(path: Path) -> dict[str, object]:
    """The first JSON object of a JSON Lines file (empty if none can be read in its first lines)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(20), f, strict=False):
                try:
                    obj = json.loads(line.lstrip("\ufeff"))
                except (ValueError, RecursionError):
                    continue
                if isinstance(obj, dict):
                    return obj
    except OSError:
        pass
    return {}


def load_sessions(
    paths: Sequence[Path | str], *, developer: str = DEFAULT_DEVELOPER, log_format: LogFormat = "auto"
) -> Sessions:
    """Every request of the logs at ``paths``. Claude Code transcripts and Codex rollouts are one
    developer's (``developer``); traces name their own. Unusable input is skipped and counted,
    never raised; a path that does not exist, or an unknown ``log_format``, raises ``ValueError``."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format {log_format!r}: expected one of {', '.join(LOG_FORMATS)}")
    files = _files([Path(p) for p in paths])
    report = LoadReport()
    jsonl = [p for p in files if p.suffix.lower() == ".jsonl"]
    tables = [p for p in files if p.suffix.lower() in (".csv", ".parquet")]
    report.skip(UNKNOWN_FILES, len([p for p in files if p.suffix.lower() not in SUFFIXES]))
    if log_format == "auto":
        codex = [p for p in jsonl if p.name.startswith("rollout-") or is_codex_rollout(_first_object(p))]
    else:
        codex = jsonl if log_format == "codex" else []
    claude = [p for p in jsonl if p not in codex]
    frames = [load_trace_file(p, report) for p in tables]
    if claude:
        frames.append(load_claude_code(claude, report, developer=developer))
        report.note(f"{len(claude)} Claude Code transcript file(s)")
    if codex:
        frames.append(load_codex(codex, report, developer=developer))
        report.note(f"{len(codex)} Codex CLI or Desktop rollout file(s)")
    if not files:
        report.note("no .jsonl, .csv or .parquet file at the paths given")
    trace = concat_traces(frames)
    if CLIENT_COLUMN in trace.columns:  # the client's seconds before sending: none in other logs
        trace[CLIENT_COLUMN] = trace[CLIENT_COLUMN].fillna(0.0)
    note = estimate_note(trace, "output-token figures (fits, replays, costs)")
    if note:
        report.note(note)
    return Sessions(trace, report)
