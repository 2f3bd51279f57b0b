"""Leftovers (issue 44): a process sweep killed with SIGKILL takes its workers with it, and a failed
write (a full disk, simulated) leaves no empty or partial file behind."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from speedtrap.experiments import store as store_module
from speedtrap.experiments.store import ResultStore, StoreError

TESTS = Path(__file__).resolve().parent
START_LIMIT_S = 300
"""Seconds the workers may take to start (spawned interpreters importing speedtrap on a loaded
machine): a guard against a hang, not a timing assertion."""
EXIT_LIMIT_S = 60
"""Seconds the workers may take to go after their parent is killed (the kernel's signal is at once;
a generous guard against a loaded machine, not a timing assertion)."""


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_of_a_killed_process_sweep_die_with_it(tmp_path: Path) -> None:
    script = (
        f"import sys; sys.path.insert(0, {str(TESTS)!r})\n"
        "from fuzz_cases import hold_the_interpreter\n"
        "from speedtrap.experiments.executors import ProcessExecutor\n"
        f"list(ProcessExecutor(2).map_unordered(hold_the_interpreter, [{str(tmp_path)!r}] * 2))\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while len(pids := [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]) < 2:
            assert parent.poll() is None, "the sweep ended before its workers started"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.2)
        time.sleep(1.0)  # into the loop that holds the interpreter
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + EXIT_LIMIT_S
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [pid for pid in pids if _alive(pid)], "workers outlived the killed sweep"
    finally:
        for pid in [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)  # only the workers this test started
        if parent.poll() is None:
            parent.kill()


def _disk_full(*args: Any, **kwargs: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _runs(*replications: int) -> pd.DataFrame:
    return pd.DataFrame({"point": 0, "replication": list(replications), "seed": 7, "x": 1.0})


def test_a_full_disk_leaves_no_empty_part_or_spec_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    store.append(_runs(0))
    before = sorted(p.name for p in store.runs_dir.iterdir())

    def half_written(table: Any, where: Any, **kwargs: Any) -> None:
        Path(where).write_bytes(b"")  # created, then the disk is full
        _disk_full()

    monkeypatch.setattr(store_module.pq, "write_table", half_written)
    with pytest.raises(StoreError, match="No space left on device"):
        store.append(_runs(1))
    assert sorted(p.name for p in store.runs_dir.iterdir()) == before
    monkeypatch.undo()

    other = ResultStore(tmp_path / "other")
    real_fsync = os.fsync
    monkeypatch.setattr(store_module.os, "fsync", _disk_full)
    with pytest.raises(StoreError, match="No space left on device"):
        other.open({"a": 2})
    monkeypatch.setattr(store_module.os, "fsync", real_fsync)
    assert [p.name for p in (tmp_path / "other").iterdir()] == ["runs"]  # no spec.json, no temporary


def test_a_full_disk_leaves_the_journal_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ResultStore(tmp_path / "exp")
    store.open({"a": 1})
    real_open = Path.open

    def full_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        file = real_open(self, *args, **kwargs)
        if self.name.startswith("journal-"):
            file.write('{"point": 0, "replic')  # part of a line, then the disk is full
            file.flush()
            file.close()
            _disk_full()
        return file

    monkeypatch.setattr(Path, "open", full_open)
    with pytest.raises(StoreError, match="No space left on device"):
        store.record({"point": 0, "replication": 0, "seed": 1, "x": 1.0})
    assert not store.journal_path.exists()  # the journal it created: removed
    monkeypatch.undo()
    store.record({"point": 0, "replication": 0, "seed": 1, "x": 1.0})
    kept = store.journal_path.read_bytes()
    monkeypatch.setattr(Path, "open", full_open)
    with pytest.raises(StoreError, match="No space left on device"):
        store.record({"point": 0, "replication": 1, "seed": 2, "x": 1.0})
    monkeypatch.undo()
    assert store.journal_path.read_bytes() == kept  # no partial line
