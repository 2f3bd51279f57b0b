"""Faults of a results directory: read-only, the wrong kind of file, a damaged spec.json or
journal, a name too long for a directory, two sweeps at once. Each one is refused in one line that
names the path (before any run is computed) or survived with one warning."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from pydantic import ValidationError
from sweep_models import RUN_S, calls, counted_summary, sleepy_summary
from typer.testing import CliRunner

from read_only import ReadOnly
from speedtrap.cli import app
from speedtrap.config.experiment import Experiment
from speedtrap.experiments import ResultStore, run_experiment
from speedtrap.experiments.store import DamagedJournalWarning, StoreError, StoreLockedError

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
runner = CliRunner()

TINY = """
name = "tiny"
replications = 2
seed = 3
outcomes = ["tasks_completed", "waiting_share"]
scenario = { developers = 1, horizon_s = 900.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY, encoding="utf-8")
    return path


@pytest.fixture
def spec(spec_file: Path) -> Experiment:
    return Experiment.from_toml(spec_file)


def sweep_cli(spec_file: Path, results: Path) -> Any:
    return runner.invoke(app, ["sweep", str(spec_file), "--results-dir", str(results), "--json"])


def assert_one_line_error(result: Any, *fragments: str) -> None:
    """The CLI stopped with status 2 and one ``error:`` line holding each fragment."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


# --- a read-only results directory ------------------------------------------------------------


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReadOnly]:
    """Make a directory tree read-only, as a read-only mount would (:class:`read_only.ReadOnly`)."""
    frozen = ReadOnly(monkeypatch)
    yield frozen
    frozen.thaw()


@pytest.mark.parametrize("stored", ["empty", "partial"])
def test_a_read_only_results_directory_is_refused_in_one_line_before_any_run(
    spec: Experiment, spec_file: Path, tmp_path: Path, read_only: Callable[[Path], None], stored: str
) -> None:
    results = tmp_path / "r"
    results.mkdir()
    if stored == "partial":
        run_experiment(spec, results_dir=results, progress=False, model=counted_summary, max_runs=1)
    read_only(results)
    calls.clear()
    with pytest.raises(StoreError) as info:
        run_experiment(spec, results_dir=results, progress=False, model=counted_summary)
    assert calls == []  # refused before any run was computed
    message = str(info.value)
    assert "\n" not in message and str(results / "tiny") in message and "cannot write" in message
    if stored == "empty":
        assert_one_line_error(sweep_cli(spec_file, results), str(results / "tiny"), "cannot write")


def test_a_complete_read_only_store_is_still_read(spec: Experiment, tmp_path: Path, read_only: Any) -> None:
    first = run_experiment(spec, results_dir=tmp_path / "r", progress=False)
    read_only(tmp_path / "r")
    pd.testing.assert_frame_equal(run_experiment(spec, results_dir=tmp_path / "r", progress=False), first)


# --- the wrong kind of file ---------------------------------------------------------------------


def _results_is_a_file(results: Path) -> Path:
    results.write_text("not a directory")
    return results


def _store_is_a_file(results: Path) -> Path:
    results.mkdir()
    (results / "tiny").write_text("not a directory")
    return results / "tiny"


def _runs_is_a_file(results: Path) -> Path:
    (results / "tiny").mkdir(parents=True)
    (results / "tiny" / "runs").write_text("not a directory")
    return results / "tiny" / "runs"


def _spec_is_a_directory(results: Path) -> Path:
    (results / "tiny" / "spec.json").mkdir(parents=True)
    return results / "tiny" / "spec.json"


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_results_is_a_file, "not a directory"),
        (_store_is_a_file, "not a directory"),
        (_runs_is_a_file, "not a directory"),
        (_spec_is_a_directory, "is a directory"),
    ],
    ids=["results-is-a-file", "store-is-a-file", "runs-is-a-file", "spec-json-is-a-directory"],
)
def test_the_wrong_kind_of_file_in_the_results_path_is_one_line_naming_it(
    spec: Experiment,
    spec_file: Path,
    tmp_path: Path,
    damage: Callable[[Path], Path],
    says: str,
) -> None:
    results = tmp_path / "r"
    wrong = damage(results)
    calls.clear()
    with pytest.raises(StoreError, match=says) as info:
        run_experiment(spec, results_dir=results, progress=False, model=counted_summary)
    assert calls == [] and "\n" not in str(info.value) and str(wrong) in str(info.value)
    assert_one_line_error(sweep_cli(spec_file, results), str(wrong), says)


# --- a damaged spec.json ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[:300].encode(),
        lambda text: b"\xff\xfe{",
        lambda text: b"[1, 2]",
        lambda text: b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["truncated", "not-utf-8", "not-an-object", "nested-too-deep"],
)
def test_a_damaged_spec_json_names_the_file_and_what_to_do(
    spec: Experiment, spec_file: Path, tmp_path: Path, damage: Callable[[str], bytes]
) -> None:
    run_experiment(spec, results_dir=tmp_path, progress=False)
    path = tmp_path / "tiny" / "spec.json"
    path.write_bytes(damage(path.read_text(encoding="utf-8")))
    with pytest.raises(StoreError, match="damaged") as info:
        run_experiment(spec, results_dir=tmp_path, progress=False)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert "move" in message and "another results directory" in message
    assert_one_line_error(sweep_cli(spec_file, tmp_path), str(path), "damaged")


# --- a damaged journal --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_line",
    [
        b"\xff\xfe\x00 not text",
        b'{"point": 0, "replication": 1}',
        b"[1, 2]",
        b'{"point": "x"}',
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["not-utf-8", "no-seed", "not-an-object", "not-a-number", "nested-too-deep"],
)
def test_a_damaged_journal_is_quarantined_with_one_warning_and_the_sweep_resumes(
    spec: Experiment, spec_file: Path, tmp_path: Path, bad_line: bytes
) -> None:
    fresh = run_experiment(spec, results_dir=None, progress=False, model=counted_summary)
    run_experiment(spec, results_dir=tmp_path, progress=False, model=counted_summary, max_runs=1)
    store = ResultStore(tmp_path / "tiny")
    kept = fresh.iloc[[1, 2]].drop(columns="backend")  # two runs a killed sweep had journalled
    good = [json.dumps(row).encode() for row in kept.to_dict(orient="records")]
    journal = store.runs_dir / "journal-1.jsonl"
    journal.write_bytes(b"\n".join([good[0], bad_line, good[1]]) + b"\n")
    calls.clear()
    with pytest.warns(DamagedJournalWarning) as warned:
        table = run_experiment(spec, results_dir=tmp_path, progress=False, model=counted_summary)
    assert len(warned) == 1
    message = str(warned[0].message)
    assert str(journal) in message and "quarantine" in message and "1 damaged line" in message
    pd.testing.assert_frame_equal(table, fresh)
    assert len(calls) == 1  # the two journalled runs were kept; only the fourth was computed
    assert (store.runs_dir / "quarantine" / journal.name).read_bytes().count(b"\n") == 3  # all of it
    assert not list(store.runs_dir.glob("journal-*"))
    again = run_experiment(spec, results_dir=tmp_path, progress=False, model=counted_summary)
    pd.testing.assert_frame_equal(again, fresh)  # no second warning (warnings are errors here)


def test_a_damaged_journal_gives_one_warning_through_the_command_line(
    spec_file: Path, tmp_path: Path
) -> None:
    assert sweep_cli(spec_file, tmp_path).exit_code == 0
    store = ResultStore(tmp_path / "tiny")
    (store.runs_dir / "journal-7.jsonl").write_bytes(b"\xff\xfe\x00 not text\n")
    with pytest.warns(DamagedJournalWarning) as warned:
        result = sweep_cli(spec_file, tmp_path)
    assert result.exit_code == 0, result.output
    assert len(warned) == 1


# --- a name too long for a directory ------------------------------------------------------------


def test_an_experiment_name_too_long_for_a_directory_is_refused_naming_the_field(
    make_tiny: Callable[..., Experiment], spec_file: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError) as info:
        make_tiny(name="a" * 300)
    (error,) = info.value.errors()
    assert error["loc"] == ("name",) and "255" in error["msg"]
    assert make_tiny(name="a" * 255).name == "a" * 255
    spec_file.write_text(TINY.replace('name = "tiny"', f'name = "{"a" * 300}"'), encoding="utf-8")
    result = sweep_cli(spec_file, tmp_path / "r")
    assert_one_line_error(result, "name: ", "255")
    assert not (tmp_path / "r").exists()


def test_a_store_name_the_file_system_refuses_is_one_line(spec: Experiment, tmp_path: Path) -> None:
    unchecked = spec.model_copy(update={"name": "a" * 300})  # as if validation had let it through
    with pytest.raises(StoreError, match="name too long") as info:
        run_experiment(unchecked, results_dir=tmp_path, progress=False)
    assert "\n" not in str(info.value) and str(tmp_path) in str(info.value)


# --- two sweeps at once -------------------------------------------------------------------------


def _driver_env(run_s: float) -> dict[str, str]:
    path = os.pathsep.join([str(SRC), str(HERE), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, RUN_S: str(run_s)}


def test_a_second_sweep_of_a_directory_in_use_is_refused_naming_the_holder(
    spec_file: Path, tmp_path: Path
) -> None:
    spec_file.write_text(TINY.replace("replications = 2", "replications = 20"), encoding="utf-8")
    spec = Experiment.from_toml(spec_file)
    results = tmp_path / "r"
    first = subprocess.Popen(
        [sys.executable, str(HERE / "sweep_driver.py"), str(spec_file), str(results), "serial"],
        env=_driver_env(0.2),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        store = ResultStore(results / "tiny")
        deadline = time.monotonic() + 60
        while not store.completed_keys():  # the first sweep is computing
            assert first.poll() is None, first.communicate()[1].decode()
            assert time.monotonic() < deadline, "the first sweep stored no run within a minute"
            time.sleep(0.05)
        with pytest.raises(StoreLockedError) as info:
            run_experiment(spec, results_dir=results, progress=False, model=sleepy_summary)
        message = str(info.value)
        assert "\n" not in message and str(results / "tiny") in message and f"pid {first.pid}" in message
        assert_one_line_error(sweep_cli(spec_file, results), str(results / "tiny"), f"pid {first.pid}")
        assert first.poll() is None  # the first sweep went on
    finally:
        first.kill()  # SIGKILL: what it held is released with it
        first.communicate()
    stored = len(store.completed_keys())
    table = run_experiment(spec, results_dir=results, progress=False, model=sleepy_summary)
    assert len(table) == 40 and stored < 40
    pd.testing.assert_frame_equal(
        table, run_experiment(spec, results_dir=None, progress=False, model=sleepy_summary)
    )
