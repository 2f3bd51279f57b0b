"""Bad input on the command line: one line on standard error naming the file or option, exit code 2,
never a traceback and never nonsense accepted."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from speedtrap.cli import app, common
from speedtrap.cli import serving as serving_cli
from speedtrap.config import backend as backend_spec

runner = CliRunner()


def fails_naming(args: list[str], *needles: str) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    for needle in needles:
        assert needle in result.output, result.output
    assert "Traceback" not in result.output
    return result.output


def test_files_that_are_not_utf8_or_toml_or_too_deep_are_named(tmp_path: Path) -> None:
    latin = tmp_path / "latin.toml"
    latin.write_bytes('name = "café"\n'.encode("latin-1"))
    fails_naming(["run", str(latin)], "latin.toml: not UTF-8 text (byte 0xe9 on line 1)")
    junk = tmp_path / "junk.toml"
    junk.write_text("junk\n", encoding="utf-8")
    fails_naming(["pareto", "--spec", str(junk)], "junk.toml: not valid TOML")
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    fails_naming(["run", str(deep)], "deep.toml: nested deeper than")
    fails_naming(["sweep", str(deep)], "deep.toml: nested deeper than")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--price-out", "inf"],
            "--price-out",
        ),
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--price-out", "1e300"],
            "--price-out",
        ),
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--chips", "1000000000000"],
            "--chips",
        ),
        (["backends", "--uncached-tokens", "99999999999999999999"], "--uncached-tokens"),
        (
            [
                "pareto",
                "--model",
                "llama-3.1-8b",
                "--hardware",
                "h100-sxm",
                "--isl",
                "10000000000",
                "--osl",
                "10",
            ],
            "--isl/--osl",
        ),
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--context", "10000000"],
            "--context",
        ),
        (["compare", "--backend", "gpu-batched", "--arm", "x:", "--quick"], "--arm 'x:'"),
        (["run", "--set", "developer.checkin_random=yes", "--set", "horizon_s=60"], "checkin_random"),
        (["sweep", "x.toml", "--executor", "processes", "--workers", "99999999999999999999"], "--workers"),
        (["claims", "--quick", "--workers", "99999999999999999999"], "--workers"),
        (["compare", "--backend", "gpu-batched", "--replications", "99999999999999999999"], "--replications"),
        (["sweep", "x.toml", "--replications", "99999999999999999999"], "--replications"),
        (["validate", "workflow", "--replications", "99999999999999999999"], "--replications"),
        (["validate", "workflow", "--seed", "-1"], "--seed"),
        (["fit", "x.csv", "--out", ""], "--out ."),  # typer reads an empty path as "."
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--price-out", "1e-300"],
            "--price-out",
        ),
        (["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--kv-bytes", "123"], "--kv-bytes"),
        (
            ["pareto", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--weight-bytes", "1e300"],
            "--weight-bytes",
        ),
    ],
)
def test_nonsense_is_refused_naming_the_option(args: list[str], option: str) -> None:
    fails_naming(args, option)


def test_absurd_hardware_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "hw.toml"
    spec.write_text(
        '[model]\npreset = "llama-3.1-8b"\n[hardware]\npreset = "h100-sxm"\nmemory_bandwidth_tb_s = 1e-300\n',
        encoding="utf-8",
    )
    fails_naming(["pareto", "--spec", str(spec)], "memory_bandwidth_tb_s")


def test_the_cli_bound_on_chips_is_the_specs() -> None:
    assert serving_cli.MAX_CHIPS_PER_REPLICA == backend_spec.MAX_CHIPS_PER_REPLICA


# --- issue 44: numbers, paths, --set and --arm, environment ---------------------------------------


def one_line_error(output: str) -> str:
    """The single ``error:`` line of a refused command's output."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), output
    return lines[0]


@pytest.mark.parametrize(
    ("assignment", "needles"),
    [
        # a subnormal horizon divided into a ZeroDivisionError; a subnormal workday wrote
        # "developer_days": null
        ("horizon_s=5e-324", ("horizon_s", "subnormal")),
        ("workday_s=5e-324", ("workday_s", "subnormal")),
        # beyond the typed core's C integers (OverflowError): refused by the spec
        ("backends.gpu-batched.background_streams_per_replica=100000000000000", ("background_streams",)),
        ("backends.gpu-batched.typical_batch=100000000000000", ("typical_batch",)),
        # a value nested deeper than files may be (RecursionError)
        ("developers=" + "[" * 3000 + "]" * 3000, ("developers", "nested deeper than 32")),
        ("developers=" + "[" * 3000, ("developers", "nested deeper than 32")),
        (".".join(["a"] * 3000) + "=1", ("more than 32 parts",)),
        # a number of more digits than Python converts named no field
        ("developers=" + "1" * 5000, ("developers", "too many digits")),
        ("developers=" + "1" * 4000, ("developers", "at most 1e+15")),
        # a line break made TOML read the first line and drop the rest
        ("developers=3\nhorizon_s=60", ("--set", "line break")),
        ("developers=3\rhorizon_s=60", ("--set", "line break")),
    ],
)
def test_set_values_that_broke_a_run_are_one_line_naming_the_field(
    assignment: str, needles: tuple[str, ...]
) -> None:
    line = one_line_error(fails_naming(["run", "--set", assignment], *needles))
    assert len(line) < 1000, line  # a huge value is shown cut short


@pytest.mark.parametrize(
    ("arm", "needles"),
    [
        ("fast:developers=abc", ("--arm fast developers=abc", "developers")),
        ("fast:developers=3\nhorizon_s=60", ("--arm fast", "line break", "per --arm")),
        ("fast:nosuch=1", ("--arm fast nosuch=1",)),
        ("fast:developers=" + "[" * 3000, ("--arm fast", "nested deeper")),
    ],
)
def test_arm_errors_name_the_arm_not_set(arm: str, needles: tuple[str, ...]) -> None:
    output = fails_naming(["compare", "--backend", "gpu-batched", "--arm", arm, "--quick"], *needles)
    assert "--set" not in output.replace("per --arm", ""), output


def test_scenario_paths_that_are_not_files_say_what_they_are(tmp_path: Path) -> None:
    fails_naming(["run", str(tmp_path)], "is a directory, not a scenario file")
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)  # reading one would wait for a writer for ever
    fails_naming(["run", str(fifo)], "pipe.toml: is a named pipe (FIFO), not a scenario file")
    fails_naming(["sweep", str(fifo)], "pipe.toml: is a named pipe (FIFO), not an experiment file")
    fails_naming(["run", "/dev/zero"], "/dev/zero: is a device, not a scenario file")
    long = tmp_path / ("x" * 5000 + ".toml")  # longer than the system allows (OSError)
    line = one_line_error(fails_naming(["run", str(long)], "cannot read it", "5,"))
    assert len(line) < 400, line
    fails_naming(["run", str(tmp_path / "missing.toml")], "missing.toml: no such scenario file")


def _speedtrap(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """``speedtrap ARGS`` through its console entry point, in a fresh process with ``env`` added."""
    return subprocess.run(
        [sys.executable, "-c", "from speedtrap.cli import main; main()", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_an_ascii_only_output_encoding_prints_the_table() -> None:
    done = _speedtrap(["backends"], PYTHONIOENCODING="ascii")  # '×' in a header was a traceback
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "gpu-batched" in done.stdout


def test_an_unknown_plotting_backend_still_writes_figures(tmp_path: Path) -> None:
    logs = Path(__file__).parents[1] / "sessions" / "data"
    out = tmp_path / "fit.toml"
    figure = tmp_path / "qq.png"
    done = _speedtrap(["fit", str(logs), "--out", str(out), "--figures", str(figure)], MPLBACKEND="nosuch")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and figure.stat().st_size > 0


def test_a_failed_write_leaves_no_file_behind(tmp_path: Path) -> None:
    target = tmp_path / "out.json"

    def disk_full() -> None:
        with target.open("w") as file:  # created, then the disk is full
            file.flush()
            raise OSError(errno.ENOSPC, "No space left on device", str(target))

    with pytest.raises(typer.Exit), common.writing(target, "--out"):
        disk_full()
    assert not target.exists()
    kept = tmp_path / "kept.json"
    kept.write_text("{}", encoding="utf-8")  # a file that was there before is left as it was
    with pytest.raises(typer.Exit), common.writing(kept, "--out"):
        raise OSError(errno.ENOSPC, "No space left on device", str(kept))
    assert kept.read_text(encoding="utf-8") == "{}"
