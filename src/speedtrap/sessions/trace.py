"""The plain trace format (one row per agent request) and its loader, with a report of what was skipped.

Columns (documented in docs/sessions.md):

=================  ========  ======================================================================
``session``        str       the agent session the request belongs to (required)
``developer``      str       who ran the session (optional; default ``"developer-0"``)
``start_s``        float     when the request was sent, seconds on any clock (required)
``end_s``          float     when its last token arrived, seconds on the same clock (required)
``input_tokens``   int       input tokens of the request, cached ones included (required)
``cached_tokens``  int       of those, tokens read from the prompt cache (optional; default 0)
``output_tokens``  int       output tokens (required)
``tool_s``         float     seconds of tool execution after the request (optional; default 0)
``human_gap_s``    float     seconds the human took before this request: > 0 means a human turn
                             (prompt, check-in) preceded it, 0 or empty that the agent went on
                             after a tool call (optional)
``backend``        str       the backend that served it (optional)
=================  ========  ======================================================================

``start_s`` and ``end_s`` may also be ISO 8601 timestamps. Only timings and counts are read; any
other column is ignored. Rows that cannot be used are skipped and counted by kind
(:class:`LoadReport`), never raised.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "DEFAULT_DEVELOPER",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "TRACE_COLUMNS",
    "LoadReport",
    "load_trace_file",
    "normalize_trace",
]

TRACE_COLUMNS: dict[str, str] = {
    "session": "str",
    "developer": "str",
    "start_s": "float64",
    "end_s": "float64",
    "input_tokens": "int64",
    "cached_tokens": "int64",
    "output_tokens": "int64",
    "tool_s": "float64",
    "human_gap_s": "float64",
    "backend": "str",
}
"""Columns of a normalized trace, in order, with their dtypes."""
REQUIRED_COLUMNS = ("session", "start_s", "end_s", "input_tokens", "output_tokens")
OPTIONAL_COLUMNS = {
    "developer": None,
    "cached_tokens": 0,
    "tool_s": 0.0,
    "human_gap_s": np.nan,
    "backend": "",
}
DEFAULT_DEVELOPER = "developer-0"

# Kinds of skipped input: the report's one line per kind.
MISSING_FIELD = "rows with a missing or unreadable required field"
NEGATIVE = "rows with negative times or token counts, or more cached than input tokens"
SKEW_ORDER = "requests that end before they start (clock skew)"
SKEW_OVERLAP = "requests that start before the previous request of their session ended (clock skew)"
DUPLICATE = "duplicate requests"
TRUNCATED_ROW = "truncated last lines"
MISSING_COLUMNS = "files without the required columns"
UNREADABLE = "files that could not be read"
ZERO_OUTPUT = "requests with no output tokens (counted as 1 token)"


@dataclass
class LoadReport:
    """What a loader skipped (``skipped``, by kind), kept after a correction (``adjusted``) and
    ignored as irrelevant (``ignored``)."""

    skipped: Counter[str] = field(default_factory=Counter)
    adjusted: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)
    files: int = 0

    def skip(self, kind: str, n: int = 1) -> None:
        if n:
            self.skipped[kind] += n

    def adjust(self, kind: str, n: int = 1) -> None:
        if n:
            self.adjusted[kind] += n

    def ignore(self, kind: str, n: int = 1) -> None:
        if n:
            self.ignored[kind] += n

    def lines(self) -> list[str]:
        """One line per kind: what was skipped, corrected, then ignored."""
        out = [f"skipped {n} {kind}" for kind, n in sorted(self.skipped.items())]
        out += [f"kept {n} {kind}" for kind, n in sorted(self.adjusted.items())]
        out += [f"ignored {n} {kind}" for kind, n in sorted(self.ignored.items())]
        return out


def _read_table(path: Path, report: LoadReport) -> pd.DataFrame | None:
    if path.suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith("\n") and len(lines) > 1:
        header = lines[0].count(",")
        if lines[-1].count(",") < header:  # written while the writer was stopped
            report.skip(TRUNCATED_ROW)
            text = "\n".join(lines[:-1]) + "\n"
    return pd.read_csv(io.StringIO(text), dtype={"session": str, "developer": str, "backend": str})


def load_trace_file(path: Path, report: LoadReport) -> pd.DataFrame:
    """A CSV or Parquet trace file, normalized (:func:`normalize_trace`); an unusable file is
    counted in ``report`` and gives an empty frame."""
    try:
        raw = _read_table(path, report)
    except (OSError, ValueError, ImportError) as exc:  # pandas' parser errors are ValueErrors
        del exc
        report.skip(UNREADABLE)
        return empty_trace()
    assert raw is not None
    report.files += 1
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        report.skip(MISSING_COLUMNS)
        return empty_trace()
    return normalize_trace(raw, report)


def empty_trace() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in TRACE_COLUMNS.items()})


def _seconds(column: pd.Series) -> pd.Series:
    numbers = pd.to_numeric(column, errors="coerce")
    if not pd.api.types.is_numeric_dtype(column) and numbers.isna().all() and column.notna().any():
        times = pd.to_datetime(column, errors="coerce", utc=True, format="ISO8601")
        return (times - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    return numbers.astype("float64")


def normalize_trace(
    raw: pd.DataFrame, report: LoadReport, *, developer: str = DEFAULT_DEVELOPER
) -> pd.DataFrame:
    """Validate and clean a trace table: fill optional columns, skip (and count) unusable rows,
    order by developer, session and start; keep only the trace columns."""
    df = raw.copy()
    for column, default in OPTIONAL_COLUMNS.items():
        if column not in df.columns:
            df[column] = developer if column == "developer" else default
    df["developer"] = df["developer"].fillna(developer).astype(str)
    df["backend"] = df["backend"].fillna("").astype(str)
    df["session"] = df["session"].astype("string")
    for column in ("start_s", "end_s"):
        df[column] = _seconds(df[column])
    for column in ("input_tokens", "cached_tokens", "output_tokens", "tool_s", "human_gap_s"):
        df[column] = pd.to_numeric(df[column], errors="coerce")
    df["cached_tokens"] = df["cached_tokens"].fillna(0)
    df["tool_s"] = df["tool_s"].fillna(0.0)
    required = ["session", "start_s", "end_s", "input_tokens", "output_tokens"]
    bad = df[required].isna().any(axis=1)
    report.skip(MISSING_FIELD, int(bad.sum()))
    df = df[~bad]
    negative = (
        (df[["input_tokens", "cached_tokens", "output_tokens", "tool_s"]] < 0).any(axis=1)
        | (df["human_gap_s"] < 0)
        | (df["cached_tokens"] > df["input_tokens"])
    )
    report.skip(NEGATIVE, int(negative.sum()))
    df = df[~negative]
    backwards = df["end_s"] < df["start_s"]
    report.skip(SKEW_ORDER, int(backwards.sum()))
    df = df[~backwards]
    dup = df.duplicated(["developer", "session", "start_s", "end_s", "input_tokens", "output_tokens"])
    report.skip(DUPLICATE, int(dup.sum()))
    df = df[~dup]
    df = df.sort_values(["developer", "session", "start_s"], kind="stable")
    # A request that starts before the previous one of its session ended: the clocks disagree.
    overlap = _overlaps(df)
    report.skip(SKEW_OVERLAP, int(overlap.sum()))
    df = df[~overlap]
    zero = df["output_tokens"] < 1
    report.adjust(ZERO_OUTPUT, int(zero.sum()))
    df.loc[zero, "output_tokens"] = 1
    out = pd.DataFrame({c: df[c].astype(t) for c, t in TRACE_COLUMNS.items()}).reset_index(drop=True)
    return out


def _overlaps(df: pd.DataFrame) -> np.ndarray:
    """Rows starting before the last kept request of their session ended (iterated, so that one
    bad row does not condemn the rows after it)."""
    keep = np.ones(len(df), dtype=bool)
    session = df["session"].to_numpy()
    developer = df["developer"].to_numpy()
    start, end = df["start_s"].to_numpy(), df["end_s"].to_numpy()
    last_end = -np.inf
    for i in range(len(df)):
        if i == 0 or session[i] != session[i - 1] or developer[i] != developer[i - 1]:
            last_end = -np.inf
        if start[i] < last_end:
            keep[i] = False
        else:
            last_end = end[i]
    return ~keep


def concat_traces(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Several normalized traces as one (ordered by developer, session and start)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_trace()
    return (
        pd.concat(frames, ignore_index=True)
        .sort_values(["developer", "session", "start_s"], kind="stable")
        .reset_index(drop=True)
    )
