"""Ctrl-C (SIGINT to the sweep's process group) during a sweep on local processes: it ends within
3 s at any moment from startup on, with one line saying how many runs are stored and status 130,
never a traceback (from the sweep or its workers); every run finished by then is stored, and the
same sweep resumes to the table of an uninterrupted one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from sweep_models import DONE_LOG, RUN_S, sleepy_summary

from speedtrap.config.experiment import Experiment
from speedtrap.experiments import ResultStore, run_experiment

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
BOUND_S = 3.0
"""Seconds from SIGINT to the sweep's exit."""

# 2 points × 50 replications of a 15-minute, one-developer scenario: 100 runs of ≈0.1 s each
# (runs wait RUN_S, so their wall time does not depend on the machine's load), ≈5 s on 2 workers
SWEEP = """
name = "sigint"
replications = 50
seed = 9
outcomes = ["tasks_completed", "waiting_share"]
scenario = { developers = 1, horizon_s = 900.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""


@pytest.fixture(scope="module")
def spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sigint") / "sigint.toml"
    path.write_text(SWEEP, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def uninterrupted(spec_file: Path) -> pd.DataFrame:
    spec = Experiment.from_toml(spec_file)
    return run_experiment(spec, results_dir=None, progress=False, model=sleepy_summary)


def _env(run_s: float, done_log: Path | None = None) -> dict[str, str]:
    path = os.pathsep.join([str(SRC), str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, RUN_S: str(run_s)}
    if done_log is not None:
        env[DONE_LOG] = str(done_log)
    return env


def _stored(results: Path, name: str) -> int:
    return len(ResultStore(results / name).completed_keys())


def _interrupt(sweep: subprocess.Popen[bytes], target: str) -> tuple[float, list[str]]:
    """SIGINT to the sweep's process group (``target`` "group"), as Ctrl-C in a terminal sends it,
    or to the sweep alone ("parent"), as ``kill -INT`` does: the seconds until the sweep exits, and
    its stderr lines."""
    start = time.monotonic()
    (os.killpg if target == "group" else os.kill)(sweep.pid, signal.SIGINT)
    try:
        _, err = sweep.communicate(timeout=60)
    finally:
        if sweep.poll() is None:
            os.killpg(sweep.pid, signal.SIGKILL)
    return time.monotonic() - start, err.decode(errors="replace").splitlines()


@pytest.mark.parametrize(
    ("delay_s", "target"),
    [(0.2, "group"), (1.0, "parent"), (2.0, "group"), (2.0, "parent"), (4.0, "group"), (4.0, "parent")],
)
def test_sigint_at_any_moment_ends_a_processes_sweep_quickly_keeping_every_finished_run(
    spec_file: Path, tmp_path: Path, uninterrupted: pd.DataFrame, delay_s: float, target: str
) -> None:
    results, done_log = tmp_path / "r", tmp_path / "done.log"
    sweep = subprocess.Popen(
        [sys.executable, str(HERE / "sweep_driver.py"), str(spec_file), str(results), "processes"],
        env=_env(0.1, done_log),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(delay_s)
    assert sweep.poll() is None, "the sweep ended before the interrupt: make it longer"
    before = _stored(results, "sigint")  # runs stored before the interrupt
    elapsed, lines = _interrupt(sweep, target)
    assert sweep.returncode == 130, lines
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), lines  # no traceback, anywhere
    stored = _stored(results, "sigint")
    finished = len(done_log.read_text().splitlines()) if done_log.exists() else 0
    assert stored >= before
    assert finished - stored <= 2, f"{finished} runs finished, {stored} stored"  # 2: one in transit a worker
    if "runs stored" in lines[0]:  # the sweep had started: it says how many runs it kept
        assert lines[0].startswith(f"interrupted: {stored} runs stored in {results / 'sigint'}"), lines
        assert "again to resume" in lines[0]
    assert elapsed < BOUND_S, f"{elapsed:.1f} s from SIGINT to exit"
    spec = Experiment.from_toml(spec_file)
    resumed = run_experiment(spec, results_dir=results, progress=False, model=sleepy_summary)
    pd.testing.assert_frame_equal(resumed, uninterrupted)


CLI_SWEEP = """
name = "sigint-cli"
replications = 500
seed = 9
outcomes = ["tasks_completed", "waiting_share"]
scenario = { developers = 1, horizon_s = 900.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""


@pytest.mark.parametrize(
    ("moment", "target"),
    [("workers-starting", "parent"), ("runs-stored", "parent"), ("runs-stored", "group")],
)
def test_sigint_during_a_processes_sweep_from_the_command_line(
    tmp_path: Path, moment: str, target: str
) -> None:
    path = tmp_path / "sigint-cli.toml"
    path.write_text(CLI_SWEEP, encoding="utf-8")
    results = tmp_path / "r"
    command = [sys.executable, "-m", "speedtrap", "sweep", str(path), "--results-dir", str(results)]
    sweep = subprocess.Popen(
        [*command, "--executor", "processes", "--workers", "2", "--json"],
        env=_env(0.0),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    store = ResultStore(results / "sigint-cli")
    deadline = time.monotonic() + 60
    while not (store.completed_keys() if moment == "runs-stored" else store.spec_path.exists()):
        assert sweep.poll() is None, "the sweep ended before the interrupt"
        assert time.monotonic() < deadline, f"not at {moment} within a minute"
        time.sleep(0.02)
    assert sweep.poll() is None, "the sweep ended before the interrupt: make it longer"
    before = _stored(results, "sigint-cli")
    elapsed, lines = _interrupt(sweep, target)
    assert sweep.returncode == 130, lines
    stored = _stored(results, "sigint-cli")
    assert stored >= before and stored < 1000
    assert lines == [
        f"interrupted: {stored} runs stored in {results / 'sigint-cli'}; rerun the same command to resume"
    ]
    assert elapsed < BOUND_S, f"{elapsed:.1f} s from SIGINT to exit"
