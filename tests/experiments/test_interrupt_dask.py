"""Ctrl-C (SIGINT) during a sweep on a local Dask cluster, as ``test_interrupt.py`` checks it for local
processes: once the cluster runs, the sweep ends within 3 s with the same one final line and status
130, no worker's traceback, every finished run stored; a Ctrl-C while the sweep starts (imports,
cluster start) also ends in one line and status 130, once the cluster is up. Slow: each case starts
a cluster (seconds, more under load)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_executors import slow_square
from test_interrupt import BOUND_S, CLI_SWEEP, SWEEP, _env, _interrupt, _stored

from speedtrap.experiments import DaskExecutor, ResultStore

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
STARTUP_BOUND_S = 120.0
"""Seconds from a SIGINT during the start to the exit: the cluster finishes starting first."""


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler, whatever the test process inherited (see test_executors)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("python_sigint")
def test_sigint_stops_a_dask_cluster_at_once_delivering_what_had_finished() -> None:
    got: list[int] = []
    with pytest.raises(KeyboardInterrupt):  # raised once the workers have stopped
        for value in DaskExecutor(workers=2).map_unordered(slow_square, range(40)):
            got.append(value)
            if len(got) == 2:
                start = time.monotonic()
                os.kill(os.getpid(), signal.SIGINT)  # noted here, acted on by the executor
    assert time.monotonic() - start < BOUND_S  # the 30-s tasks were ended, not waited for
    assert len(got) == len(set(got)) and set(got) <= {0, 1, 4, 9}  # what had finished, once each


@pytest.mark.parametrize(("moment", "target"), [("runs-stored", "group"), ("runs-stored", "parent")])
def test_sigint_during_a_dask_sweep_from_the_command_line(tmp_path: Path, moment: str, target: str) -> None:
    path = tmp_path / "sigint-cli.toml"
    path.write_text(CLI_SWEEP, encoding="utf-8")
    results, done_log = tmp_path / "r", tmp_path / "done.log"
    command = [sys.executable, "-m", "speedtrap", "sweep", str(path), "--results-dir", str(results)]
    sweep = subprocess.Popen(
        [*command, "--executor", "dask", "--workers", "2", "--json"],
        env=_env(0.0, done_log),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    store = ResultStore(results / "sigint-cli")
    deadline = time.monotonic() + 180
    while not store.completed_keys():
        assert sweep.poll() is None, "the sweep ended before the interrupt"
        assert time.monotonic() < deadline, f"not at {moment} within 3 minutes"
        time.sleep(0.02)
    before = _stored(results, "sigint-cli")
    elapsed, lines = _interrupt(sweep, target)
    assert sweep.returncode == 130, lines
    stored = _stored(results, "sigint-cli")
    assert stored >= before and stored < 1000
    finished = len(done_log.read_text().splitlines()) if done_log.exists() else 0
    assert finished - stored <= 2, f"{finished} runs finished, {stored} stored"  # 2: one in transit a worker
    assert lines == [  # the same final line as the processes executor's, and nothing else
        f"interrupted: {stored} runs stored in {results / 'sigint-cli'}; rerun the same command to resume"
    ]
    assert elapsed < BOUND_S, f"{elapsed:.1f} s from SIGINT to exit"


@pytest.mark.parametrize(("delay_s", "target"), [(0.2, "group"), (2.0, "group"), (4.0, "parent")])
def test_sigint_while_a_dask_sweep_starts_ends_in_one_line(
    tmp_path: Path, delay_s: float, target: str
) -> None:
    spec_file, results, done_log = tmp_path / "sigint.toml", tmp_path / "r", tmp_path / "done.log"
    spec_file.write_text(SWEEP, encoding="utf-8")
    sweep = subprocess.Popen(
        [sys.executable, str(HERE / "sweep_driver.py"), str(spec_file), str(results), "dask"],
        env=_env(0.1, done_log),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(delay_s)
    if sweep.poll() is not None:
        pytest.skip("the sweep ended before the interrupt")
    elapsed, lines = _interrupt(sweep, target)
    assert sweep.returncode == 130, lines
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), lines  # no traceback, anywhere
    stored = _stored(results, "sigint") if (results / "sigint").exists() else 0
    finished = len(done_log.read_text().splitlines()) if done_log.exists() else 0
    assert finished - stored <= 2, f"{finished} runs finished, {stored} stored"
    assert elapsed < STARTUP_BOUND_S, f"{elapsed:.1f} s from SIGINT to exit"
