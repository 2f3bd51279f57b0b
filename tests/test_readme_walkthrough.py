"""A fresh-machine walkthrough of the README's "Your team" block: its commands run in order, as
written, in an empty working directory that holds only the files they name (copied from the
checkout, as a fresh clone has them), with the installed ``speedtrap``. Each step's output is what
the block says to read: the tables and columns it names, the figure it says is written, and the
change it suggests for another team changes the result as it says."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from speedtrap.cli.common import parse_set
from speedtrap.config import Scenario

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = README.split("\n## Your team", 1)[1].split("\n## ", 1)[0]
"""The "Your team" section, up to the next section."""
STEPS = [
    line.strip()
    for block in re.findall(r"```bash\n(.*?)```", BLOCK.split("\n### ", 1)[0], flags=re.DOTALL)
    for line in block.splitlines()
    if line.strip()
]
"""The block's commands, in order: the comparison, then the same for another team."""
BIN = Path(sys.executable).parent
Steps = list[subprocess.CompletedProcess[str]]
"""Each step's finished process, in order."""


def paragraph(start: str) -> str:
    """The block's paragraph that starts with ``start``, on one line."""
    text = BLOCK.split(start, 1)[1].split("\n\n", 1)[0]
    return " ".join(text.split())


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def sets_of(command: str) -> dict[str, Any]:
    argv = shlex.split(command)
    return dict(parse_set(argv[i + 1]) for i, arg in enumerate(argv) if arg == "--set")


def net_value(stdout: str, arm: str) -> str:
    """The arm's ``net $/dev-day [95% CI]`` cell of the economics table."""
    economics = stdout.split("Economics against", 1)[1]
    row = re.search(rf"│ {re.escape(arm)}\s+│ ([^│]+?)\s+│", economics)
    assert row is not None, economics
    return row.group(1)


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Steps:
    """Each step run in turn in a fresh directory holding only the checkout's files the steps name."""
    work = tmp_path_factory.mktemp("fresh")
    for command in STEPS:
        for arg in shlex.split(command):
            if (ROOT / arg).is_file() and not (work / arg).exists():
                (work / arg).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(ROOT / arg, work / arg)
    done = []
    for command in STEPS:
        argv = shlex.split(command)
        assert argv[0] == "speedtrap", command
        result = subprocess.run(
            [str(BIN / "speedtrap"), *argv[1:]],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=os.environ.copy(),
        )
        assert result.returncode == 0, f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        done.append(result)
    figure = shlex.split(STEPS[0])[shlex.split(STEPS[0]).index("--figure") + 1]
    assert (work / figure).is_file() and (work / figure).stat().st_size > 0, figure
    return done


def test_the_block_is_one_quick_comparison_then_another_team() -> None:
    assert len(STEPS) == 2 and all(step.startswith("speedtrap compare ") for step in STEPS)
    assert all("--quick" in shlex.split(step) for step in STEPS)
    assert "--figure" in shlex.split(STEPS[0])


def test_the_output_has_what_the_block_says_to_read(
    walkthrough: Steps,
) -> None:
    """Every name the "Reading it" paragraph puts in code (the tables' titles, their columns, the
    verdicts, the finding, the figure's path, the full run's options) is in the first step's output."""
    stdout = walkthrough[0].stdout
    spans = code_spans(paragraph("**Reading it.**"))
    assert len(spans) >= 15, spans
    missing = [span for span in spans if span not in stdout]
    assert not missing, f"the README says to read {missing}, which the output lacks:\n{stdout}"


def test_the_suggested_change_changes_the_result(walkthrough: Steps) -> None:
    """The second step is the first with the team's size and cost changed as the block says; its
    tables say so (the code spans after it) and its economics differ."""
    first, second = (sets_of(step) for step in STEPS)
    changed = {path for path in first.keys() | second.keys() if first.get(path) != second.get(path)}
    assert changed == {"developers", "value.usd_per_dev_hour"}, changed
    stdout = walkthrough[1].stdout
    said = code_spans(paragraph("The first table's title then reads"))
    assert said and all(span in stdout for span in said), (said, stdout)
    assert f"{second['developers']} developers" in stdout
    assert f"${second['value.usd_per_dev_hour']:g} per developer-hour" in stdout
    argv = shlex.split(STEPS[1])
    arm = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--backend"][1]  # the first is the baseline
    assert net_value(walkthrough[0].stdout, arm) != net_value(stdout, arm)


def test_every_field_and_backend_the_block_names_exists() -> None:
    """Each ``--set path=…`` the "For your own team" list names is a field of the headline scenario
    (set to its own value, it validates), and each backend named there serves it."""
    text = BLOCK.split("**For your own team**", 1)[1].split("\n\n", 2)[1]  # the list under it
    scenario = Scenario.from_toml(ROOT / "experiments" / "scenarios" / "headline.toml")
    dumped = scenario.model_dump()
    paths = re.findall(r"`--set ([\w.]+)=", text)
    assert {"developers", "value.usd_per_dev_hour"} <= set(paths), paths
    for path in paths:
        value: Any = dumped
        for key in path.split("."):
            assert isinstance(value, dict) and key in value, path
            value = value[key]
        scenario.with_overrides({path: value})
    backends = re.findall(r"`([\w-]+)`", text.split("`--backend NAME`", 1)[1].split("`--arm", 1)[0])
    assert {"gpu-batched", "gpu-fast", "manual"} <= set(backends), backends
    for name in backends:
        scenario.with_backend(name)
