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


def test_a_ctrl_c_while_typer_builds_or_parses_the_command_line_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside a command, typer ends a Ctrl-C with status 130 and no word (or, while it builds the
    command tree, lets it through as a traceback): the entry point says it in one line."""
    import typer.main

    from speedtrap.cli import main
    from speedtrap.cli.help import HelpGroup

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(sys, "argv", ["speedtrap", "backends"])
    with monkeypatch.context() as patch:
        patch.setattr(HelpGroup, "parse_args", interrupted)
        with pytest.raises(SystemExit) as parsing:
            main()
    assert parsing.value.code == 130 and capsys.readouterr().err == "interrupted\n"
    with monkeypatch.context() as patch:
        patch.setattr(typer.main, "get_command", interrupted)
        with pytest.raises(SystemExit) as building:
            main()
    assert building.value.code == 130 and capsys.readouterr().err == "interrupted while starting\n"
    monkeypatch.setattr(sys, "argv", ["speedtrap", "run", "--set", "horizon_s=60"])
    import speedtrap.models.workflow

    monkeypatch.setattr(speedtrap.models.workflow, "simulate", interrupted)
    with pytest.raises(SystemExit) as running:
        main()
    assert running.value.code == 130 and capsys.readouterr().err == "interrupted\n"  # said once
