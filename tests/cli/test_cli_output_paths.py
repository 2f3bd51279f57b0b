"""Output paths that cannot be written: a regular file where a directory is expected, a read-only
directory, a full device, a figure format matplotlib does not know. Each is one line on standard
error naming the path (or the option) and what is wrong, exit code 2, never a traceback; what can be
known before running is refused before any run is computed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import speedtrap.models.workflow as workflow
from read_only import ReadOnly
from speedtrap.cli import app
from speedtrap.cli import behaviour as behaviour_cli

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ROOT / "examples" / "sessions" / "claude"
SMALL = ["--set", "developers=1", "--set", "horizon_s=1800"]
COMPARE = ["compare", "--backend", "gpu-batched", "--backend", "gpu-fast", *SMALL, "--replications", "2"]
runner = CliRunner()


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReadOnly]:
    frozen = ReadOnly(monkeypatch)
    yield frozen
    frozen.thaw()


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seeds of every run simulated while the test runs."""
    seen: list[int] = []
    real = workflow.simulate

    def counted(scenario: Any, seed: int, *args: Any, **kwargs: Any) -> Any:
        seen.append(seed)
        return real(scenario, seed, *args, **kwargs)

    monkeypatch.setattr(workflow, "simulate", counted)
    return seen


def one_line_error(args: list[str], *fragments: str) -> str:
    """Run the command; assert it stopped with status 2 and one ``error:`` line holding each fragment."""
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    return result.stderr


# --- a regular file where a directory is expected ---------------------------------------------


def test_a_results_directory_that_is_a_regular_file_is_one_line(tmp_path: Path, runs: list[int]) -> None:
    file = tmp_path / "afile"
    file.write_text("not a directory")
    sweep = ROOT / "experiments" / "sweeps" / "patience.toml"
    one_line_error(["sweep", str(sweep), "--quick", "--results-dir", str(file)], str(file), "not a directory")
    one_line_error(["experiment", "headline", "--quick", "--results-dir", str(file)], str(file))
    one_line_error(["demo", "--quick", "--out", str(file)], "--out", str(file), "not a directory")
    one_line_error(["run", *SMALL, "--export", str(file)], "--export", str(file), "not a directory")
    below = file / "fig.png"
    one_line_error([*COMPARE, "--figure", str(below)], "--figure", str(file), "not a directory")
    one_line_error(["validate", "serving", "--figure", str(below)], "--figure", str(file), "not a directory")
    one_line_error(["fit", str(SESSIONS), "--out", str(file / "f.toml")], "--out", str(file))
    assert runs == []  # every one refused before running


# --- a read-only directory ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ([*COMPARE, "--figure", "{ro}/fig.png"], "--figure"),
        (["run", *SMALL, "--trace", "{ro}/trace.json"], "--trace"),
        (["run", *SMALL, "--export", "{ro}/export"], "--export"),
        (["demo", "--quick", "--out", "{ro}/demo"], "--out"),
        (["fit", str(SESSIONS), "--out", "{ro}/fitted.toml"], "--out"),
        (["fit", str(SESSIONS), "--out", "{tmp}/fitted.toml", "--figures", "{ro}/qq.png"], "--figures"),
        (["validate", "serving", "--figure", "{ro}/serving.png"], "--figure"),
    ],
    ids=[
        "compare-figure",
        "run-trace",
        "run-export",
        "demo-out",
        "fit-out",
        "fit-figures",
        "validate-figure",
    ],
)
def test_an_output_under_a_read_only_directory_is_refused_before_running(
    tmp_path: Path, read_only: ReadOnly, runs: list[int], args: list[str], option: str
) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    read_only(ro)
    filled = [a.format(ro=ro, tmp=tmp_path) for a in args]
    message = one_line_error(filled, option, str(ro), "Read-only file system")
    assert runs == [], message  # refused before any run was computed
    assert not (tmp_path / "fitted.toml").exists()  # fit wrote nothing either


def test_a_compare_figure_that_fails_at_write_time_is_one_line_after_the_results(
    tmp_path: Path, read_only: ReadOnly, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory turns read-only while the runs go on: the results are printed, then one line says
    the figure could not be written."""
    out = tmp_path / "figs"
    out.mkdir()
    real = behaviour_cli.behaviour_runs

    def runs_then_freeze(*args: Any, **kwargs: Any) -> Any:
        table = real(*args, **kwargs)
        read_only(out)
        return table

    monkeypatch.setattr(behaviour_cli, "behaviour_runs", runs_then_freeze)
    result = runner.invoke(app, [*COMPARE, "--figure", str(out / "fig.png")])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: --figure "), result.stderr
    assert str(out) in result.stderr and "Read-only file system" in result.stderr
    assert "Finding:" in result.stdout  # the comparison itself is not lost


def test_a_read_only_complete_experiment_store_is_one_line(tmp_path: Path, read_only: ReadOnly) -> None:
    """A finished experiment's store is read back; its tables and figures cannot be written beside
    it: one line naming the directory, not a traceback."""
    results = tmp_path / "r"
    first = runner.invoke(app, ["experiment", "headline", "--quick", "--results-dir", str(results)])
    assert first.exit_code == 0, first.output
    read_only(results)
    one_line_error(
        ["experiment", "headline", "--quick", "--results-dir", str(results)],
        str(results / "headline-quick"),
        "Read-only file system",
    )


# --- a full device, an unknown figure format ------------------------------------------------------


def test_a_trace_on_a_full_device_is_one_line() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    one_line_error(["run", *SMALL, "--trace", "/dev/full"], "--trace", "/dev/full", "No space left on device")


def test_an_unknown_figure_extension_is_refused_before_running(tmp_path: Path) -> None:
    out = tmp_path / "fitted.toml"
    message = one_line_error(
        ["fit", str(SESSIONS), "--out", str(out), "--figures", str(tmp_path / "fig.xyz")],
        "--figures",
        "fig.xyz",
        ".xyz",
        ".png",
        ".svg",
        ".pdf",
    )
    assert not out.exists(), message
    one_line_error(["validate", "serving", "--figure", str(tmp_path / "v.xyz")], "--figure", ".xyz", ".png")
