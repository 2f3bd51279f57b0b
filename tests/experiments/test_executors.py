"""Executors: serial, local processes and a Dask LocalCluster give identical result tables."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from speedtrap.config.experiment import Experiment
from speedtrap.experiments import (
    DaskExecutor,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
    run_experiment,
)


def square(x: int) -> int:
    return x * x


def slow_square(x: int) -> int:
    """Quick for the first four tasks, then 30 s: tasks that must be ended, not waited for."""
    time.sleep(0.05 if x < 4 else 30)
    return x * x


def interrupt_self(x: int) -> int:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)
    return x


def test_every_executor_gives_the_same_table(tiny: Experiment, tmp_path: Path) -> None:
    serial = run_experiment(tiny, executor="serial", results_dir=None, progress=False)
    processes = run_experiment(
        tiny, executor="processes", workers=2, results_dir=tmp_path / "p", progress=False
    )
    dask = run_experiment(tiny, executor="dask", workers=2, results_dir=tmp_path / "d", progress=False)
    assert len(serial) == 4
    pd.testing.assert_frame_equal(processes, serial)
    pd.testing.assert_frame_equal(dask, serial)


def test_dask_executor_uses_a_running_scheduler(tiny: Experiment) -> None:
    import logging

    from distributed import LocalCluster

    serial = run_experiment(tiny, results_dir=None, progress=False)
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        ) as cluster,
        DaskExecutor(cluster.scheduler_address) as dask,  # one client for both calls
    ):
        assert sorted(dask.map_unordered(square, [3, 1, 2])) == [1, 4, 9]
        table = run_experiment(tiny, executor=dask, results_dir=None, progress=False)
    pd.testing.assert_frame_equal(table, serial)


def test_executors_map_every_task_once() -> None:
    tasks = list(range(12))
    with ProcessExecutor(workers=2) as processes:  # one pool for both calls
        assert sorted(processes.map_unordered(square, tasks)) == [x * x for x in tasks]
        assert sorted(processes.map_unordered(square, tasks[:3])) == [0, 1, 4]
    assert list(SerialExecutor().map_unordered(square, tasks)) == [x * x for x in tasks]


def test_process_workers_ignore_sigint() -> None:
    with ProcessExecutor(workers=2) as processes:
        try:
            got = sorted(processes.map_unordered(interrupt_self, range(4)))
        except KeyboardInterrupt:
            pytest.fail("a worker process was interrupted by SIGINT")
    assert got == [0, 1, 2, 3]


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler (KeyboardInterrupt) for the test, whatever the process inherited: a
    suite started in the background of a shell without job control inherits SIGINT ignored, and an
    ignored SIGINT is left alone by the executor (as it should be), so nothing would stop the pool."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_sigint")
def test_sigint_stops_a_process_pool_at_once_delivering_what_had_finished() -> None:
    got: list[int] = []
    with pytest.raises(KeyboardInterrupt):  # raised once the pool has stopped
        for value in ProcessExecutor(workers=2).map_unordered(slow_square, range(40)):
            got.append(value)
            if len(got) == 2:
                start = time.monotonic()
                os.kill(os.getpid(), signal.SIGINT)  # noted here, acted on by the executor
    assert time.monotonic() - start < 3.0  # the 30-s tasks were ended, not waited for
    assert len(got) == len(set(got)) and set(got) <= {0, 1, 4, 9}  # what had finished, once each


def test_make_executor_by_name() -> None:
    assert isinstance(make_executor("serial"), SerialExecutor)
    processes = make_executor("processes", workers=3)
    assert isinstance(processes, ProcessExecutor) and processes.workers == 3
    dask = make_executor("dask", scheduler="tcp://127.0.0.1:8786")
    assert isinstance(dask, DaskExecutor) and dask.address == "tcp://127.0.0.1:8786"
    for executor in (SerialExecutor(), processes, dask):
        assert isinstance(executor, Executor)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "threads"}, r"unknown executor 'threads' \(known: serial, processes, dask\)"),
        ({"kind": "processes", "scheduler": "tcp://x:1"}, "a scheduler address needs the dask executor"),
        ({"kind": "serial", "workers": 4}, "the serial executor runs one task at a time"),
        ({"kind": "processes", "workers": 0}, "workers must be ≥ 1"),
        ({"kind": "dask", "workers": 2, "scheduler": "tcp://x:1"}, "workers applies to a local cluster"),
    ],
)
def test_bad_executor_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_executor(**kwargs)


def test_missing_dask_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install -e '\.\[dask\]'"):
        make_executor("dask")
