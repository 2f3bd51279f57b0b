"""The team walk-through of docs/sessions.md ("A team's own ensemble") runs as written on the vendored
logs: every ``speedtrap`` command of its bash blocks, from a scratch directory that sees tests/."""

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app

ROOT = Path(__file__).resolve().parents[2]


def walkthrough() -> list[list[str]]:
    text = (ROOT / "docs" / "sessions.md").read_text()
    section = text[text.index("## A team's own ensemble") :]
    section = section[: section.index("\n## ", 1)]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    return [
        shlex.split(line)[1:]
        for block in blocks
        for line in block.splitlines()
        if line.startswith("speedtrap ")
    ]


def test_the_walkthrough_names_three_commands() -> None:
    commands = walkthrough()
    assert [c[0] for c in commands] == ["fit", "fit", "compare"]
    assert "--ensemble" in commands[1] and "--ensemble" in commands[2]


@pytest.mark.slow
def test_the_walkthrough_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args in walkthrough():
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
    assert (tmp_path / "team" / "team.csv").is_file() and (tmp_path / "team" / "team.fit.json").is_file()
    assert "before → after your logs" in " ".join(result.output.split())
