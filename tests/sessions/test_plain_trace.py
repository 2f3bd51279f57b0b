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


def _client_trace(client: list[object]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "session": ["s", "s", "s"],
            "start_s": [0.0, 10.0, 20.0],
            "end_s": [4.0, 12.0, 25.0],
            "input_tokens": [1000, 1300, 1600],
            "output_tokens": [100, 50, 80],
            "client_s": client,
        }
    )


def test_client_seconds_are_read_where_the_trace_has_them(tmp_path: Path) -> None:
    """``client_s``: of a request's seconds, those before it was sent; an empty cell is 0 (sent at
    ``start_s``); a trace without the column has none, and a load that mixes the two fills 0."""
    path = tmp_path / "with.csv"
    _client_trace(["1.5", "", "0.25"]).to_csv(path, index=False)
    loaded = load_sessions([path])
    assert not loaded.report.skipped
    assert list(loaded.trace.columns) == [*TRACE_COLUMNS, *tr.EXTRA_COLUMNS]
    assert list(loaded.trace["client_s"]) == [1.5, 0.0, 0.25]
    without = tmp_path / "without.csv"
    _client_trace([0.0, 0.0, 0.0]).drop(columns="client_s").assign(session="t").to_csv(without, index=False)
    assert "client_s" not in load_sessions([without]).trace.columns
    both = load_sessions([path, without]).trace
    assert list(both.loc[both["session"] == "t", "client_s"]) == [0.0, 0.0, 0.0]
    assert list(both.loc[both["session"] == "s", "client_s"]) == [1.5, 0.0, 0.25]


def test_impossible_client_seconds_are_skipped_and_counted() -> None:
    """Negative client seconds, or more than the request's (sent after its last token), are damage."""
    report = LoadReport()
    trace = normalize_trace(_client_trace([-0.5, 2.5, 5.0]), report)
    assert report.skipped[tr.NEGATIVE] == 1 and report.skipped[tr.SENT_LATE] == 1
    assert list(trace["start_s"]) == [20.0] and list(trace["client_s"]) == [5.0]  # all 5 s: allowed
