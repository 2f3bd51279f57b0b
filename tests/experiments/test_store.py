"""The result store: atomic part files, reading back, completed keys, refusing a changed spec."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.experiments import ResultStore, StoreMismatchError
from speedtrap.experiments.store import LOCK, StoreLockedError


def runs(point: int, replications: range, value: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "point": pd.Series([point] * len(replications), dtype="int64"),
            "replication": pd.Series(list(replications), dtype="int64"),
            "seed": pd.Series([100 + r for r in replications], dtype="int64"),
            "x": [value + r for r in replications],
        }
    )


def test_nothing_is_written_before_open(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    assert not (tmp_path / "exp").exists()
    assert store.identity() is None
    assert store.completed_keys() == set()
    assert store.read().empty
    with pytest.raises(FileNotFoundError, match="open the store"):
        store.append(runs(0, range(1)))


def test_parts_append_and_read_back(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    first = store.append(runs(1, range(2)))
    second = store.append(runs(0, range(3), value=5.0))
    assert store.append(runs(0, range(0))) is None
    assert [p.name for p in store.part_paths()] == ["part-00001.parquet", "part-00002.parquet"]
    assert [first, second] == store.part_paths()
    back = store.read()
    assert back[["point", "replication"]].values.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]]
    assert back["x"].tolist() == [5.0, 6.0, 7.0, 1.0, 2.0]
    assert back.dtypes.to_dict() == {
        "point": "int64",
        "replication": "int64",
        "seed": "int64",
        "x": "float64",
    }
    assert store.completed_keys() == {(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)}
    assert ResultStore(tmp_path / "exp").completed_keys() == store.completed_keys()  # reopened


def test_a_crash_mid_write_leaves_stored_runs_intact(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    store.append(runs(0, range(2)))
    (store.runs_dir / ".part-00002.parquet.123.tmp").write_bytes(b"PAR1 half a file")  # killed mid-write
    assert store.completed_keys() == {(0, 0), (0, 1)}
    assert len(store.read()) == 2
    store.append(runs(1, range(1)))
    assert store.completed_keys() == {(0, 0), (0, 1), (1, 0)}


def test_duplicate_runs_are_read_once(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    store.append(runs(0, range(2)))
    store.append(runs(0, range(2), value=9.0))
    assert store.read()["x"].tolist() == [1.0, 2.0]  # the first stored copy


def test_a_different_spec_is_refused_naming_what_changed(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"experiment": {"replications": 2, "seed": 1}, "model": "m"})
    store.open({"experiment": {"replications": 2, "seed": 1}, "model": "m"})  # the same: fine
    with pytest.raises(StoreMismatchError, match=r"changed: experiment\.replications\).*new name.*delete"):
        store.open({"experiment": {"replications": 3, "seed": 1}, "model": "m"})
    with pytest.raises(StoreMismatchError, match=r"changed: experiment\.seed, model, extra"):
        ResultStore(tmp_path / "exp").open(
            {"experiment": {"replications": 2, "seed": 2}, "model": "n", "extra": 1}
        )


def test_one_process_at_a_time_writes_a_store(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "exp")
    with store.writing() as unwritable:
        assert unwritable is None
        assert (store.directory / LOCK).read_text().strip() == str(os.getpid())
        again = ResultStore(tmp_path / "exp").writing()
        with pytest.raises(StoreLockedError, match=rf"exp is in use by another sweep \(pid {os.getpid()}\)"):
            again.__enter__()
    assert not (store.directory / LOCK).exists()  # removed on release
    with ResultStore(tmp_path / "exp").writing() as unwritable:
        assert unwritable is None


def test_a_lock_file_left_by_a_killed_process_does_not_block(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / LOCK).write_text(dead.stdout.decode())  # as a SIGKILLed sweep leaves it
    with ResultStore(tmp_path / "exp").writing() as unwritable:
        assert unwritable is None
