"""Every command and code block in README.md runs: shell commands through the installed
``speedtrap`` and the venv's Python, Python blocks with ``exec``, TOML blocks as scenarios; ``make``
targets exist and run the commands tested here. Runs in a scratch directory that sees the
repository's ``experiments/`` and ``examples/``, so results never land in the checkout."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedtrap.config import Scenario

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def shell_commands() -> list[str]:
    lines = [line.split(" #")[0].strip() for block in blocks("bash") for line in block.splitlines()]
    return [line for line in lines if line]


COMMANDS = shell_commands()


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    yield tmp_path


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local Dask scheduler standing in for the README's ``tcp://SCHEDULER:8786``."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def test_readme_shows_the_two_fresh_machine_commands() -> None:
    assert "make demo" in COMMANDS and "make test" in COMMANDS


def test_make_targets_run_what_the_tests_cover() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for command in (c for c in COMMANDS if c.startswith("make ")):
        target = command.split()[1]
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), command
    assert re.search(r"^demo:.*\n\t\$\(BIN\)/speedtrap demo$", makefile, flags=re.MULTILINE)
    assert "speedtrap demo" in COMMANDS_RUN_HERE


COMMANDS_RUN_HERE = [c for c in COMMANDS if not c.startswith("make ")] + ["speedtrap demo"]


@pytest.mark.parametrize("command", COMMANDS_RUN_HERE)
def test_readme_command_runs(command: str, scratch: Path, request: pytest.FixtureRequest) -> None:
    if "SCHEDULER" in command:
        address = request.getfixturevalue("scheduler")
        command = command.replace("tcp://SCHEDULER:8786", address)
    argv = shlex.split(command)
    if argv[0] == "speedtrap":
        argv[0] = str(BIN / "speedtrap")
    elif argv[0] == "python":
        argv[0] = sys.executable
    else:
        pytest.fail(f"README command of an unknown kind: {command}")
    done = subprocess.run(
        argv, cwd=scratch, capture_output=True, text=True, timeout=600, check=False, env=os.environ.copy()
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block_runs(index: int, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(scratch)
    code = blocks("python")[index]
    exec(compile(code, f"README.md python block {index}", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize("index", range(len(blocks("toml"))))
def test_readme_toml_block_is_a_valid_scenario(index: int) -> None:
    import tomllib

    scenario = Scenario.model_validate(tomllib.loads(blocks("toml")[index]))
    assert scenario.developers >= 1
