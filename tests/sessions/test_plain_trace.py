"""The plain trace loader: every awkward row of examples/sessions/awkward/trace.csv is skipped and
counted (or, for no output tokens, kept and counted), and CSV and Parquet read the same."""

from pathlib import Path

import pandas as pd
import pytest

from speedtrap.sessions import TRACE_COLUMNS, LoadReport, load_sessions, normalize_trace
from speedtrap.sessions import plain_trace as tr


def test_csv_and_parquet_give_the_same_trace(examples: Path) -> None:
    csv = load_sessions([examples / "trace.csv"])
    parquet = load_sessions([examples / "trace.parquet"])
    assert not csv.report.skipped and not parquet.report.skipped
    pd.testing.assert_frame_equal(csv.trace, parquet.trace)
    assert list(csv.trace.columns) == list(TRACE_COLUMNS)
    raw = pd.read_csv(examples / "trace.csv")  # the fixture's own counts (scripts/make_session_fixtures.py)
    assert csv.n_sessions == raw.groupby(["developer", "session"]).ngroups and csv.n_developers == 2


@pytest.mark.parametrize(
    "kind",
    [tr.MISSING_FIELD, tr.NEGATIVE, tr.SKEW_ORDER, tr.SKEW_OVERLAP, tr.DUPLICATE, tr.TRUNCATED_ROW],
)
def test_each_awkward_row_is_skipped_and_counted_once(examples: Path, kind: str) -> None:
    loaded = load_sessions([examples / "awkward" / "trace.csv"])
    assert loaded.report.skipped[kind] == 1


def test_awkward_trace_keeps_only_the_usable_rows(examples: Path) -> None:
    loaded = load_sessions([examples / "awkward" / "trace.csv"])
    assert loaded.report.adjusted[tr.ZERO_OUTPUT] == 1
    assert len(loaded.trace) == 4  # 8 rows + a duplicate + a truncated line, 6 of them unusable
    assert (loaded.trace["output_tokens"] >= 1).all()
    assert all(line.startswith(("read", "skipped", "kept")) for line in loaded.report.lines())


def test_missing_required_column_skips_the_file(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("session,start_s,end_s\na,0,1\n")
    loaded = load_sessions([path])
    assert loaded.report.skipped[tr.MISSING_COLUMNS] == 1 and len(loaded.trace) == 0


def test_optional_columns_default_and_iso_times_are_read() -> None:
    raw = pd.DataFrame(
        {
            "session": ["s", "s"],
            "start_s": ["2026-03-02T09:00:00Z", "2026-03-02T09:00:10Z"],
            "end_s": ["2026-03-02T09:00:04Z", "2026-03-02T09:00:12Z"],
            "input_tokens": [1000, 1300],
            "output_tokens": [100, 50],
        }
    )
    trace = normalize_trace(raw, LoadReport())
    assert trace["end_s"].iloc[0] - trace["start_s"].iloc[0] == 4.0
    assert (trace["cached_tokens"] == 0).all() and (trace["tool_s"] == 0).all()
    assert (trace["developer"] == tr.DEFAULT_DEVELOPER).all()


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        load_sessions([tmp_path / "nope.csv"])
