"""Load session logs of any supported kind: Claude Code transcripts (``.jsonl``) and plain traces
(``.csv``, ``.parquet``); a directory stands for every such file under it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from speedtrap.sessions.claude_code import load_claude_code
from speedtrap.sessions.trace import DEFAULT_DEVELOPER, LoadReport, concat_traces, load_trace_file

__all__ = ["SUFFIXES", "Sessions", "load_sessions"]

SUFFIXES = (".jsonl", ".csv", ".parquet")


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


def load_sessions(paths: Sequence[Path | str], *, developer: str = DEFAULT_DEVELOPER) -> Sessions:
    """Every request of the logs at ``paths``. Claude Code transcripts are one developer's
    (``developer``); traces name their own. Unusable input is skipped and counted, never raised;
    a path that does not exist raises ``ValueError``."""
    files = _files([Path(p) for p in paths])
    report = LoadReport()
    jsonl = [p for p in files if p.suffix.lower() == ".jsonl"]
    tables = [p for p in files if p.suffix.lower() in (".csv", ".parquet")]
    unknown = [p for p in files if p.suffix.lower() not in SUFFIXES]
    report.skip("files of unknown kind (not .jsonl, .csv or .parquet)", len(unknown))
    frames = [load_trace_file(p, report) for p in tables]
    if jsonl:
        frames.append(load_claude_code(jsonl, report, developer=developer))
    return Sessions(concat_traces(frames), report)
