"""The sensitivity table (README.md or docs/validation.md: the one file that marks it) is what
``speedtrap validate workflow --sensitivity --markdown`` prints from the stored calibration
(``experiments/calibration/``); until that calibration exists, the block says so and names the
commands that make it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.experiments.share_sensitivity import CALIBRATE_COMMAND

ROOT = Path(__file__).resolve().parents[2]
STORED = ROOT / "experiments" / "calibration" / "wave1.csv"
START, END = "<!-- sensitivity-table:start -->\n", "<!-- sensitivity-table:end -->"
COMMAND = ["validate", "workflow", "--sensitivity", "--markdown"]


PLACES = ("README.md", "docs/validation.md")
"""Where the table may live (the README is being restructured; the block may move between them)."""


def readme_block() -> str:
    texts = [(ROOT / place).read_text(encoding="utf-8") for place in PLACES]
    marked = [text for text in texts if START in text]
    assert len(marked) == 1, f"exactly one of {', '.join(PLACES)} marks the sensitivity table"
    text = marked[0]
    assert text.count(START) == 1 and text.count(END) == 1, "the table is marked once"
    return text.split(START, 1)[1].split(END, 1)[0]


def test_the_readme_says_how_the_table_is_made_until_the_runs_exist() -> None:
    if STORED.exists():
        pytest.skip("the calibration's runs are stored: the slow test compares the table itself")
    block = readme_block()
    assert block.startswith("Not yet generated")
    assert CALIBRATE_COMMAND in block and "speedtrap " + " ".join(COMMAND) in " ".join(block.split())


@pytest.mark.slow
def test_the_readme_table_is_what_the_command_prints_from_the_stored_runs() -> None:
    if not STORED.exists():
        pytest.skip(f"no stored calibration ({STORED} is made by {CALIBRATE_COMMAND})")
    result = CliRunner().invoke(app, COMMAND)
    assert result.exit_code == 0, result.output
    assert readme_block() == result.output
