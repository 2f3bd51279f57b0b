"""Fuzzing every input family: numbers in every scenario field, field names, ``--set`` and ``--arm``
texts, scenario files, paths, the environment and signals. Every input must end in a result or in
one ``error:`` line on standard error with exit code 2 naming the field, file or option.

A *wrong* outcome is any other: a traceback (in the output or raised), a hang (no end within the
case's time limit), a process killed by a signal it was not sent, or a silent wrong result — exit 0
with a missing, non-finite or absurd number where a value belongs, nonsense accepted (a value that
must be refused ran), or an error line that names neither the field, the file nor the option.

The default suite draws a few cases of each family; ``make test-slow`` draws 1,860
(``SPEEDTRAP_FUZZ_SCALE`` scales them); with tests/test_fuzz.py (2,000) and
tests/test_fuzz_families.py (3,200) the slow form draws 7,060 inputs (docs/running.md)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz_cases import TINY_SCENARIO, Hang, invoke, named_error

SETTINGS: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
QUICK = settings(max_examples=4, derandomize=True, **SETTINGS)
SCALE = float(os.environ.get("SPEEDTRAP_FUZZ_SCALE", "1"))


def many(examples: int) -> Any:
    return settings(max_examples=max(1, round(examples * SCALE)), derandomize=False, **SETTINGS)


NASTY_NUMBERS = (
    "0", "-0", "-0.0", "5e-324", "-5e-324", "2.2e-308", "1e-300", "1e-7", "1e-6", "1e-3", "1", "-1",
    "0.5", "1e15", "1e16", "1e300", "inf", "-inf", "nan", "2147483648", "9223372036854775808",
    "1" * 5000, "1" * 4000, "1." + "1" * 5000, "1e999", "true", '"1"', "[1, 2]", "{a = 1}",
)  # fmt: skip
"""Values every numeric field must take or refuse in one line: zeros of both signs, subnormals, the
smallest normal, values around the duration floor, integers past C's and Python's limits."""


@cache
def numeric_paths() -> tuple[str, ...]:
    """Every numeric field of the tiny scenario, by its dotted path."""
    from speedtrap.config.scenario import Scenario

    paths: list[str] = []
    stack: list[tuple[str, Any]] = [("", Scenario(name="tiny", developers=1, horizon_s=600.0).model_dump())]
    while stack:
        prefix, node = stack.pop()
        for key, value in node.items():
            if isinstance(value, dict):
                stack.append((f"{prefix}{key}.", value))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                paths.append(f"{prefix}{key}")
    return tuple(sorted(paths))


@cache
def scenario_file() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="speedtrap-fuzz-"))
    path = folder / "tiny.toml"
    path.write_text(TINY_SCENARIO, encoding="utf-8")
    return path


def outcome(argv: list[str], names: list[str]) -> str:
    """Run ``speedtrap ARGV`` in this process: "ran" with a sane JSON result, or its one error line
    naming one of ``names`` (exit 2); anything else fails the test."""
    shown = " ".join(a if len(a) < 80 else a[:80] + "…" for a in argv)
    try:
        with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
            patch.chdir(scratch)
            result = invoke(argv)
    except Hang as exc:
        raise AssertionError(f"speedtrap {shown}: {exc}") from None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"speedtrap {shown}: traceback {result.exception!r}")
    assert "Traceback" not in result.output, f"speedtrap {shown}: traceback\n{result.output[-800:]}"
    if result.exit_code == 0:
        if "--json" in argv:
            payload = json.loads(result.stdout)
            days = payload.get("summary", payload).get("developer_days")
            assert days is None or (math.isfinite(days) and days > 0), f"speedtrap {shown}: {days!r} days"
        return "ran"
    assert result.exit_code == 2, f"speedtrap {shown}: exit {result.exit_code}\n{result.output[-800:]}"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if lines and lines[0].startswith("Usage:"):  # Click's usage error: its box names the argument
        message = named_error(result.stderr)
    else:
        assert len(lines) == 1 and lines[0].startswith("error: "), (
            f"speedtrap {shown}:\n{result.stderr[-800:]}"
        )
        message = lines[0]
    assert any(name in message for name in names), f"speedtrap {shown}: names none of {names}: {message}"
    return message


# --- numbers in every field; names; --set and --arm texts -----------------------------------------


def number_case(data: Any) -> None:
    path = data.draw(st.sampled_from(numeric_paths()), label="field")
    value = data.draw(st.sampled_from(NASTY_NUMBERS), label="value")
    argv = ["run", str(scenario_file()), "--set", f"{path}={value}", "--json"]
    outcome(argv, [*field_names(path), "--set"])


def field_names(path: str) -> list[str]:
    """What an error about the field ``path`` may name: the field, or its table (an error raised as a
    run starts names the table: ``task_mix.output_tokens``)."""
    parts = path.split(".")
    return [parts[-1], *(".".join(parts[:n]) for n in range(2, len(parts)))]


NAME_TEXT = st.one_of(
    st.text(min_size=0, max_size=40),
    st.text(alphabet="ab._-[]\"' =\n", min_size=0, max_size=200),
    st.integers(1, 5000).map(lambda n: "." * n),
    st.integers(30, 3000).map(lambda n: ".".join(["a"] * n)),
    st.sampled_from(numeric_paths()).map(lambda p: p + ".x"),
)


def name_case(data: Any) -> None:
    name = data.draw(NAME_TEXT, label="name")
    value = data.draw(st.sampled_from(["1", "0", "x", "[[[[", "null"]), label="value")
    outcome(["run", str(scenario_file()), "--set", f"{name}={value}", "--json"], ["--set"])


SET_TEXT = st.one_of(
    st.text(max_size=60),
    st.tuples(st.sampled_from(numeric_paths()), st.text(max_size=60)).map("=".join),
    st.integers(1, 4000).map(lambda n: "developers=" + "[" * n + "]" * n),
    st.integers(1, 4000).map(lambda n: "developers=" + "{a=" * n + "1" + "}" * n),
    st.sampled_from(["developers=1\nhorizon_s=1", "developers=1\r", "=1", "developers", "a==1"]),
)


def set_case(data: Any) -> None:
    text = data.draw(SET_TEXT, label="set")
    outcome(["run", str(scenario_file()), "--set", text, "--json"], ["--set"])


def arm_case(data: Any) -> None:
    text = data.draw(st.one_of(st.text(max_size=40), SET_TEXT.map(lambda s: "x:" + s)), label="arm")
    argv = ["compare", str(scenario_file()), "--backend", "gpu-batched", "--arm", text, "--replications", "2"]
    line = outcome(argv, ["--arm"])
    assert "--set" in text or "--set" not in line, line  # an arm's error names --arm, not --set


# --- files and paths ------------------------------------------------------------------------------

FILE_TEXT = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.integers(30, 200_000).map(lambda n: "a" * n + " = 1\n"),
    st.integers(30, 3000).map(lambda n: ".".join(["k"] * n) + " = 1\n"),
    st.integers(30, 3000).map(lambda n: "x = " + "[" * n + "]" * n + "\n"),
    st.sampled_from(numeric_paths()).flatmap(
        lambda p: st.sampled_from(NASTY_NUMBERS).map(lambda v: f"{p} = {v}\n")
    ),
)


def file_case(data: Any, tmp_path: Path) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "s.toml"
    text = data.draw(FILE_TEXT, label="file")
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    given = [p for p in numeric_paths() if re.match(rf"\s*{re.escape(p)}\s*=", text)]
    fields = [name for p in given for name in field_names(p)]
    outcome(["run", str(path), "--set", "horizon_s=600", "--json"], [path.name, "--set", *fields])


def path_case(data: Any, tmp_path: Path) -> None:
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    kind = data.draw(st.sampled_from(["dir", "fifo", "device", "long", "missing", "loop", "nested", "nul"]))
    if kind == "dir":
        path = folder
    elif kind == "fifo":
        path = folder / "p.toml"
        os.mkfifo(path)
    elif kind == "device":
        path = Path(data.draw(st.sampled_from(["/dev/null", "/dev/zero", "/dev/full"])))
    elif kind == "long":
        path = folder / ("x" * data.draw(st.integers(256, 20_000)))
    elif kind == "loop":
        path = folder / "l.toml"
        path.symlink_to(path)
    elif kind == "nested":
        path = folder / "a" / "b.toml"
    elif kind == "missing":
        path = folder / "missing.toml"
    else:
        path = folder / "a\x00b.toml"
    command = data.draw(st.sampled_from(["run", "sweep"]))
    name = path.name[:20] if path.name else str(path)
    outcome(
        [command, str(path)], [name, str(folder)[:20], "scenario", "experiment", "SCENARIO", "EXPERIMENT"]
    )


# --- environment and signals (fresh processes) ----------------------------------------------------

ENVIRONMENTS = st.fixed_dictionaries(
    {},
    optional={
        "PYTHONIOENCODING": st.sampled_from(["ascii", "latin-1", "ascii:strict", "cp1252"]),
        "MPLBACKEND": st.sampled_from(["nosuch", "", "tkagg", "module://nowhere"]),
        "LANG": st.sampled_from(["C", "POSIX", "xx_XX.nothing"]),
        "COLUMNS": st.sampled_from(["0", "-5", "1", "100000", "abc"]),
        "TERM": st.sampled_from(["dumb", "", "xterm-256color"]),
        "NO_COLOR": st.just("1"),
    },
)
COMMANDS = (["backends"], ["run", "{scenario}", "--json"], ["run", "{scenario}"], ["backends", "--json"])


def speedtrap(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from speedtrap.cli import main; main()", *argv],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )


def environment_case(data: Any) -> None:
    env = data.draw(ENVIRONMENTS, label="env")
    argv = [a.format(scenario=scenario_file()) for a in data.draw(st.sampled_from(COMMANDS))]
    process = speedtrap(argv, env)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0 and "Traceback" not in stderr, (env, argv, stderr[-1500:])
    assert stdout.strip(), (env, argv)


def signal_case(data: Any) -> None:
    sig = data.draw(st.sampled_from([signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE]))
    delay = data.draw(st.sampled_from([0.0, 0.5, 1.5, 3.0]))
    process = speedtrap(["run", str(scenario_file()), "--set", "horizon_s=28800", "--json"], {})
    time.sleep(delay)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    _, stderr = process.communicate(timeout=300)
    assert "Traceback" not in stderr, (sig, delay, stderr[-1500:])
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) <= 1 or "Fatal Python error" in stderr, (sig, delay, stderr[-1500:])


# --- the tests: a quick subset in the default suite, many cases under `make test-slow` ------------


@QUICK
@given(data=st.data())
def test_nasty_numbers_in_every_field(data: Any) -> None:
    number_case(data)


@QUICK
@given(data=st.data())
def test_field_names_and_set_texts(data: Any) -> None:
    name_case(data)
    set_case(data)


@settings(max_examples=2, derandomize=True, **SETTINGS)
@given(data=st.data())
def test_arm_texts(data: Any) -> None:
    arm_case(data)


@settings(max_examples=3, derandomize=True, **SETTINGS)
@given(data=st.data())
def test_scenario_files_and_paths(tmp_path: Path, data: Any) -> None:
    file_case(data, tmp_path)
    path_case(data, tmp_path)


@settings(max_examples=1, derandomize=True, **SETTINGS)
@given(data=st.data())
def test_environment_and_signals(data: Any) -> None:
    environment_case(data)
    signal_case(data)


@pytest.mark.slow
@many(900)
@given(data=st.data())
def test_many_nasty_numbers(data: Any) -> None:
    number_case(data)


@pytest.mark.slow
@many(400)
@given(data=st.data())
def test_many_names_and_set_texts(data: Any) -> None:
    name_case(data)
    set_case(data)


@pytest.mark.slow
@many(100)
@given(data=st.data())
def test_many_arm_texts(data: Any) -> None:
    arm_case(data)


@pytest.mark.slow
@many(400)
@given(data=st.data())
def test_many_files_and_paths(tmp_path: Path, data: Any) -> None:
    file_case(data, tmp_path)
    path_case(data, tmp_path)


@pytest.mark.slow
@many(60)
@given(data=st.data())
def test_many_environments_and_signals(data: Any) -> None:
    environment_case(data)
    signal_case(data)
