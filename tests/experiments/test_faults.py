"""Faults a sweep survives: a killed worker, a corrupt part file, a SIGKILLed sweep, a busy port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import tomli_w

from speedtrap.config.experiment import Experiment
from speedtrap.config.scenario import Scenario
from speedtrap.experiments import DaskExecutor, ProcessExecutor, ResultStore, run_experiment
from speedtrap.experiments.store import CorruptPartWarning
from speedtrap.models.workflow import simulate_summary

DIE_MARKER = "SPEEDTRAP_TEST_DIE_MARKER"


def dies_once(scenario: Scenario, seed: int) -> dict[str, float]:
    """A model whose first call anywhere kills its own process (SIGKILL), as the OOM killer would."""
    try:
        os.close(os.open(os.environ[DIE_MARKER], os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return simulate_summary(scenario, seed)
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


def test_a_killed_processes_worker_is_retried_with_identical_results(
    tiny: Experiment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DIE_MARKER, str(tmp_path / "died"))
    serial = run_experiment(tiny, results_dir=None, progress=False)
    with ProcessExecutor(workers=2) as processes:
        table = run_experiment(
            tiny, executor=processes, results_dir=tmp_path / "r", progress=False, model=dies_once
        )
    assert (tmp_path / "died").exists()  # a worker really died
    pd.testing.assert_frame_equal(table, serial)
    err = capfd.readouterr().err
    assert "a worker process died; restarting the pool" in err
    assert len([line for line in err.splitlines() if "worker" in line]) == 1


def test_a_corrupt_part_file_is_quarantined_and_its_runs_recomputed(tiny: Experiment, tmp_path: Path) -> None:
    first = run_experiment(tiny, results_dir=tmp_path, progress=False)
    store = ResultStore(tmp_path / tiny.name)
    (part,) = store.part_paths()
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])  # truncated, as by a full disk
    with pytest.warns(CorruptPartWarning, match="could not be read"):
        again = run_experiment(tiny, results_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(again, first)
    assert (store.runs_dir / "quarantine" / part.name).exists()
    assert len(store.part_paths()) == 1  # the recomputed runs, in a new part file


def test_a_journal_line_cut_short_is_ignored(tiny: Experiment, tmp_path: Path) -> None:
    store = ResultStore(tmp_path / tiny.name)
    first = run_experiment(tiny, results_dir=tmp_path, progress=False, max_runs=1)
    assert len(first) == 1
    (store.runs_dir / "journal-1.jsonl").write_text('{"point": 1, "replica', encoding="utf-8")
    table = run_experiment(tiny, results_dir=tmp_path, progress=False)
    pd.testing.assert_frame_equal(table, run_experiment(tiny, results_dir=None, progress=False))
    assert not list(store.runs_dir.glob("journal-*"))


def _session_processes(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == sid:
                    pids.append(int(entry.name))
            except (ProcessLookupError, PermissionError):
                continue
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to find the sweep's processes")
def test_a_sigkilled_processes_sweep_leaves_no_process_and_resumes_identically(tmp_path: Path) -> None:
    scenario = {"name": "tiny", "developers": 1, "horizon_s": 1800.0}
    spec = {"name": "killed", "scenario": scenario, "replications": 40, "seed": 5,
            "outcomes": ["tasks_completed", "waiting_share", "usd_total"]}  # fmt: skip
    path = tmp_path / "killed.toml"
    path.write_text(tomli_w.dumps(spec), encoding="utf-8")
    results = tmp_path / "results"
    command = [sys.executable, "-c", "from speedtrap.cli import main; main()", "sweep", str(path)]
    options = ["--results-dir", str(results), "--json"]
    sweep = subprocess.Popen(
        [*command, "--executor", "processes", "--workers", "2", *options],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    runs = results / "killed" / "runs"
    deadline = time.monotonic() + 120
    while not any(p.stat().st_size > 0 for p in runs.glob("journal-*.jsonl")) if runs.exists() else True:
        assert sweep.poll() is None, "the sweep ended before it could be killed"
        assert time.monotonic() < deadline, "no run finished within two minutes"
        time.sleep(0.05)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    journalled = len(ResultStore(results / "killed").completed_keys())
    assert journalled >= 1  # runs finished before the kill are kept
    left: list[int] = []
    for _ in range(100):  # the workers notice that their parent is gone and end
        left = _session_processes(sweep.pid)
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"processes left behind: {left}"
    subprocess.run([*command, *options], check=True, capture_output=True)  # resume, serially
    stored = ResultStore(results / "killed").read()
    assert {"engine", "engine_reason"} <= set(stored.columns)  # the store names each run's engine
    stored = stored.drop(columns=["engine", "engine_reason"])  # the results table leaves them out
    expected = run_experiment(Experiment.model_validate(spec), results_dir=None, progress=False)
    pd.testing.assert_frame_equal(stored, expected[stored.columns])


@pytest.fixture
def port_8787_busy() -> Iterator[None]:
    """Port 8787 (Dask's default dashboard port) taken, as by a dashboard the user has open."""
    with socket.socket() as sock:
        try:
            sock.bind(("", 8787))
            sock.listen()
        except OSError:
            pass  # already taken by someone else: just as good
        yield


def test_the_dask_executor_does_not_need_port_8787(port_8787_busy: None) -> None:
    with DaskExecutor(workers=1) as dask:
        assert sorted(dask.map_unordered(abs, [-2, 1])) == [1, 2]


def test_closed_dask_connections_are_reported_in_one_line() -> None:
    import logging

    from distributed.comm.core import CommClosedError

    from speedtrap.experiments.executors import OneLineClosedComms

    quiet = OneLineClosedComms()
    records = []
    for _ in range(3):
        try:
            raise CommClosedError("in <TCP (closed)>: Stream is closed")
        except CommClosedError:
            exc_info = sys.exc_info()
        record = logging.LogRecord("distributed.core", logging.ERROR, __file__, 1, "boom", (), exc_info)
        records.append(record)
    other = logging.LogRecord("distributed.core", logging.ERROR, __file__, 1, "other %s", ("trouble",), None)
    kept = [r for r in [*records, other] if quiet.filter(r)]
    assert len(kept) == 2 and kept[1] is other
    assert kept[0].exc_info is None and "worker died" in kept[0].getMessage()
