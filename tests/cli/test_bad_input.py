"""Bad input on the command line: one line on standard error naming the file or option, exit code 2,
never a traceback and never nonsense accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
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
