"""A Ctrl-C at any moment of a command, from startup on: one line, exit status 130, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_a_ctrl_c_while_the_command_line_loads_is_one_line() -> None:
    code = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "speedtrap.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
from speedtrap.__main__ import main
main()
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130
    assert done.stderr == "interrupted while starting\n"


def test_a_ctrl_c_before_the_sweep_starts_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import speedtrap.experiments

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(speedtrap.experiments, "make_executor", interrupted)
    sweep_file = ROOT / "experiments" / "sweeps" / "patience.toml"
    result = CliRunner().invoke(app, ["sweep", str(sweep_file), "--quick", "--results-dir", str(tmp_path)])
    assert result.exit_code == 130
    assert result.output.strip() == "interrupted"


def test_a_ctrl_c_in_any_command_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import speedtrap.models.workflow

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(speedtrap.models.workflow, "simulate", interrupted)
    result = CliRunner().invoke(app, ["run", "--set", "horizon_s=60"])
    assert result.exit_code == 130
    assert result.output.strip() == "interrupted"
