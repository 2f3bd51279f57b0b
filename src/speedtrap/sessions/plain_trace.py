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
``parent_session`` str       the session whose agent started this one (a subagent); empty for a
                             session a human started (optional)
``boundary``       str       why this request starts a new task inside its session: ``clear``,
                             ``compact`` (the human's command), ``commit`` (a git commit since the
                             last human turn); empty otherwise (optional)
``rework``         str       ``interrupted`` (the human stopped this request or the tool call after
                             it) or ``rejected`` (the human refused its tool call); empty otherwise
                             (optional)
``estimated``      str       which token counts the log did not give and the loader estimated at
                             1 token per 4 characters: ``output`` (only a mid-stream count was
                             written) or ``input+output`` (no count at all); empty: as logged
                             (optional)
``client_s``       float     of the seconds from ``start_s`` to ``end_s``, those before the request
                             was sent: ``start_s`` is then its trigger (prompt or tool result) and
                             it was sent ``client_s`` later (a Codex trace's column; optional;
                             absent or empty: 0, sent at ``start_s``)
=================  ========  ======================================================================

``start_s`` and ``end_s`` may also be ISO 8601 timestamps. Only timings and counts are read; any
other column is ignored. ``client_s`` is kept only by a trace that has it (:data:`EXTRA_COLUMNS`):
a trace without it says nothing about the client, and every reader takes its requests as sent at
``start_s``. Rows that cannot be used are skipped and counted by kind
(:class:`LoadReport`), never raised; a load that leaves no request raises :class:`NoRequestsError`,
which carries the report.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "BOUNDARIES",
    "DEFAULT_DEVELOPER",
    "ESTIMATES",
    "EXTRA_COLUMNS",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "REWORK_SIGNALS",
    "TRACE_COLUMNS",
    "LoadReport",
    "NoRequestsError",
    "estimate_note",
    "estimated_outputs",
    "load_trace_file",
    "normalize_trace",
    "trace_from_rows",
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
    "parent_session": "str",
    "boundary": "str",
    "rework": "str",
    "estimated": "str",
}
"""Columns of a normalized trace, in order, with their dtypes."""
EXTRA_COLUMNS: dict[str, str] = {"client_s": "float64"}
"""Optional columns a normalized trace keeps, after :data:`TRACE_COLUMNS`, only where its input has
them (empty cells: 0): ``client_s``, the client's seconds before a request was sent (module
docstring; :data:`speedtrap.sessions.codex.CLIENT_COLUMN`). Where a trace has none, nothing is known
of them and every reader takes them as 0."""
REQUIRED_COLUMNS = ("session", "start_s", "end_s", "input_tokens", "output_tokens")
OPTIONAL_COLUMNS = {
    "developer": None,
    "cached_tokens": 0,
    "tool_s": 0.0,
    "human_gap_s": np.nan,
    "backend": "",
    "parent_session": "",
    "boundary": "",
    "rework": "",
    "estimated": "",
}
TEXT_COLUMNS = ("session", "developer", "backend", "parent_session", "boundary", "rework", "estimated")
DEFAULT_DEVELOPER = "developer-0"
BOUNDARIES = ("clear", "compact", "commit")
"""Values of the ``boundary`` column: what in the log says a new task starts at this request."""
REWORK_SIGNALS = ("interrupted", "rejected")
"""Values of the ``rework`` column: what the human did to this request's output."""
ESTIMATES = ("output", "input+output")
"""Values of the ``estimated`` column: which token counts of this request are estimates."""

MAX_TOKENS = 100_000_000
"""Most tokens one request can have (no model's context window reaches 100 million): more is damage."""
MAX_REQUEST_S = 86_400.0
"""Longest plausible request, seconds (a day): a longer one is a clock error."""
MAX_EPOCH_S = 4_102_444_800.0
"""2100-01-01 in Unix seconds: later timestamps (e.g. year 9999) are damage."""

# Kinds of skipped input: the report's one line per kind.
MISSING_FIELD = "rows with a missing or unreadable required field"
NOT_FINITE = "rows with infinite or not-a-number times or counts"
NEGATIVE = "rows with negative times or token counts, or more cached than input tokens"
HUGE = "rows with implausible values (over 100 million tokens, a request over a day, a date after 2099)"
SKEW_ORDER = "requests that end before they start (clock skew)"
SKEW_OVERLAP = "requests that start before the previous request of their session ended (clock skew)"
DUPLICATE = "duplicate requests"
TRUNCATED_ROW = "truncated last lines"
MISSING_COLUMNS = "files without the required columns"
UNREADABLE = "files that could not be read"
ZERO_OUTPUT = "requests with no output tokens (counted as 1 token)"
UNKNOWN_VALUE = "rows with an unknown boundary, rework or estimated value (read as empty)"
SENT_LATE = "requests sent after their last token (client_s longer than the request; clock skew)"


@dataclass
class LoadReport:
    """What a loader skipped (``skipped``, by kind), kept after a correction (``adjusted``) and
    ignored as irrelevant (``ignored``); ``files`` read and ``notes`` (one line each: what the logs
    are, e.g. which formats, and what they cannot say)."""

    skipped: Counter[str] = field(default_factory=Counter)
    adjusted: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)
    files: int = 0
    notes: list[str] = field(default_factory=list)

    def skip(self, kind: str, n: int = 1) -> None:
        if n:
            self.skipped[kind] += n

    def adjust(self, kind: str, n: int = 1) -> None:
        if n:
            self.adjusted[kind] += n

    def ignore(self, kind: str, n: int = 1) -> None:
        if n:
            self.ignored[kind] += n

    def note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def lines(self) -> list[str]:
        """One line per kind: files read, what was skipped, corrected, ignored, then the notes."""
        out = [f"read {self.files} file" + ("" if self.files == 1 else "s")]
        out += [f"skipped {n} {kind}" for kind, n in sorted(self.skipped.items())]
        out += [f"kept {n} {kind}" for kind, n in sorted(self.adjusted.items())]
        out += [f"ignored {n} {kind}" for kind, n in sorted(self.ignored.items())]
        return out + list(self.notes)

    def merge(self, other: LoadReport) -> None:
        """Add ``other``'s counts and notes to this report."""
        self.skipped.update(other.skipped)
        self.adjusted.update(other.adjusted)
        self.ignored.update(other.ignored)
        self.files += other.files
        for line in other.notes:
            self.note(line)


class NoRequestsError(ValueError):
    """The logs gave no request: the message says so in one line with every count of the load
    report (``report``), so that any caller that prints the error prints why."""

    def __init__(self, report: LoadReport, what: str = "no usable request in the session logs") -> None:
        self.report = report
        super().__init__(f"{what}: " + "; ".join(report.lines()))


def _read_table(path: Path, report: LoadReport) -> pd.DataFrame:
    if path.suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    lines = text.splitlines()
    if lines and not text.endswith("\n") and len(lines) > 1:
        header = lines[0].count(",")
        if lines[-1].count(",") < header:  # written while the writer was stopped
            report.skip(TRUNCATED_ROW)
            text = "\n".join(lines[:-1]) + "\n"
    return pd.read_csv(io.StringIO(text), dtype={c: str for c in TEXT_COLUMNS}, keep_default_na=False)


def load_trace_file(path: Path, report: LoadReport) -> pd.DataFrame:
    """A CSV or Parquet trace file, normalized (:func:`normalize_trace`); an unusable file is
    counted in ``report`` and gives an empty frame."""
    try:
        raw = _read_table(path, report)
    except (OSError, ValueError, ImportError, UnicodeError, RecursionError, MemoryError):
        report.skip(UNREADABLE)  # pandas' and pyarrow's parser errors are ValueErrors or OSErrors
        return empty_trace()
    report.files += 1
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        report.skip(MISSING_COLUMNS)
        report.note(
            f"{path.name}: no column {', '.join(missing)} (a trace needs {', '.join(REQUIRED_COLUMNS)})"
        )
        return empty_trace()
    return normalize_trace(raw, report)


def trace_from_rows(
    rows: list[dict[str, object]], report: LoadReport, *, developer: str = DEFAULT_DEVELOPER
) -> pd.DataFrame:
    """A log loader's request rows (every trace column but ``developer`` and ``backend``) as one
    developer's normalized trace."""
    if not rows:
        return empty_trace()
    raw = pd.DataFrame(rows)
    raw["developer"] = developer
    raw["backend"] = ""
    return normalize_trace(raw[list(TRACE_COLUMNS)], report, developer=developer)


def empty_trace() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in TRACE_COLUMNS.items()})


def _iso_seconds(value: object) -> float:
    """Unix seconds of an ISO 8601 timestamp (no time zone: UTC); ``inf`` past 2099, NaN if
    unreadable."""
    if not isinstance(value, str):
        return math.nan
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return math.nan
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        seconds = when.timestamp()
    except (OverflowError, OSError, ValueError):
        return math.inf
    return seconds if seconds < MAX_EPOCH_S else math.inf


def _seconds(column: pd.Series) -> pd.Series:
    """Seconds on any clock (numbers) or ISO 8601 timestamps (Unix seconds; ``inf`` past 2099);
    unreadable: NaN."""
    numbers = pd.to_numeric(column.replace("", np.nan), errors="coerce")
    if not pd.api.types.is_numeric_dtype(column) and numbers.isna().all() and column.notna().any():
        return column.map(_iso_seconds).astype("float64")
    return numbers.astype("float64")


def _text(column: pd.Series) -> pd.Series:
    return column.astype("object").where(column.notna(), "").astype(str).str.strip()


def normalize_trace(
    raw: pd.DataFrame, report: LoadReport, *, developer: str = DEFAULT_DEVELOPER
) -> pd.DataFrame:
    """Validate and clean a trace table: fill optional columns, skip (and count) unusable rows,
    order by developer, session and start; keep only the trace columns (and those of
    :data:`EXTRA_COLUMNS` that ``raw`` has)."""
    df = raw.copy()
    for column, default in OPTIONAL_COLUMNS.items():
        if column not in df.columns:
            df[column] = developer if column == "developer" else default
    extra = [c for c in EXTRA_COLUMNS if c in df.columns]
    client = "client_s" in extra
    if client:  # empty: sent at start_s
        df["client_s"] = pd.to_numeric(df["client_s"].replace("", np.nan), errors="coerce").fillna(0.0)
    for column in TEXT_COLUMNS:
        df[column] = _text(df[column])
    df.loc[df["developer"] == "", "developer"] = developer
    df.loc[df["session"] == "", "session"] = np.nan
    for column in ("start_s", "end_s"):
        df[column] = _seconds(df[column])
    numeric = ["input_tokens", "cached_tokens", "output_tokens", "tool_s", "human_gap_s"]
    for column in numeric:
        df[column] = pd.to_numeric(df[column].replace("", np.nan), errors="coerce").astype("float64")
    df["cached_tokens"] = df["cached_tokens"].fillna(0)
    df["tool_s"] = df["tool_s"].fillna(0.0)
    bad = df[list(REQUIRED_COLUMNS)].isna().any(axis=1)
    report.skip(MISSING_FIELD, int(bad.sum()))
    df = df[~bad]
    values = df[["start_s", "end_s", "input_tokens", "cached_tokens", "output_tokens", "tool_s"]]
    infinite = ~np.isfinite(values.to_numpy()).all(axis=1) | np.isinf(df["human_gap_s"].to_numpy())
    if client:
        infinite |= np.isinf(df["client_s"].to_numpy(float))
    late = ((df["start_s"] == math.inf) | (df["end_s"] == math.inf)).to_numpy()
    report.skip(HUGE, int((infinite & late).sum()))
    report.skip(NOT_FINITE, int((infinite & ~late).sum()))
    df = df[~infinite]
    negative = (
        (df[["input_tokens", "cached_tokens", "output_tokens", "tool_s"]] < 0).any(axis=1)
        | (df["human_gap_s"] < 0)
        | (df["cached_tokens"] > df["input_tokens"])
    )
    if client:
        negative |= df["client_s"] < 0
    report.skip(NEGATIVE, int(negative.sum()))
    df = df[~negative]
    huge = (
        (df[["input_tokens", "output_tokens"]] > MAX_TOKENS).any(axis=1)
        | (df["end_s"] - df["start_s"] > MAX_REQUEST_S)
        | (df[["start_s", "end_s"]].abs() > MAX_EPOCH_S).any(axis=1)
    )
    report.skip(HUGE, int(huge.sum()))
    df = df[~huge]
    backwards = df["end_s"] < df["start_s"]
    report.skip(SKEW_ORDER, int(backwards.sum()))
    df = df[~backwards]
    if client:
        sent_late = df["client_s"] > df["end_s"] - df["start_s"]
        report.skip(SENT_LATE, int(sent_late.sum()))
        df = df[~sent_late]
    dup = df.duplicated(["developer", "session", "start_s", "end_s", "input_tokens", "output_tokens"])
    report.skip(DUPLICATE, int(dup.sum()))
    df = df[~dup]
    allowed = {"boundary": BOUNDARIES, "rework": REWORK_SIGNALS, "estimated": ESTIMATES}
    unknown = np.zeros(len(df), dtype=bool)
    for column, values in allowed.items():
        bad_value = ~df[column].isin(("", *values))
        unknown |= bad_value.to_numpy()
        df.loc[bad_value, column] = ""
    report.adjust(UNKNOWN_VALUE, int(unknown.sum()))
    df = df.sort_values(["developer", "session", "start_s"], kind="stable")
    # A request that starts before the previous one of its session ended: the clocks disagree.
    overlap = _overlaps(df)
    report.skip(SKEW_OVERLAP, int(overlap.sum()))
    df = df[~overlap]
    zero = df["output_tokens"] < 1
    report.adjust(ZERO_OUTPUT, int(zero.sum()))
    df.loc[zero, "output_tokens"] = 1
    for column in ("input_tokens", "cached_tokens", "output_tokens"):
        df[column] = np.floor(df[column])
    columns = {**TRACE_COLUMNS, **{c: EXTRA_COLUMNS[c] for c in extra}}
    return pd.DataFrame({c: df[c].astype(t) for c, t in columns.items()}).reset_index(drop=True)


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


def estimated_outputs(trace: pd.DataFrame) -> int:
    """How many requests of ``trace`` have estimated output tokens (``estimated`` not empty)."""
    if "estimated" not in trace.columns:
        return 0
    return int((trace["estimated"].astype(str) != "").sum())


def estimate_note(trace: pd.DataFrame, what: str = "figures built on output tokens") -> str:
    """One line saying how many requests' output tokens are estimates, for ``what``; empty if none."""
    n = estimated_outputs(trace)
    if not n:
        return ""
    return (
        f"{what}: {n} of {len(trace)} requests have estimated output tokens (the log gave no final "
        "count: 1 token per 4 visible characters, a lower bound)"
    )


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
