"""A Ctrl-C at any moment of a command, from startup on: one line, exit status 130, no traceback."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import sysconfig
import time
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from speedtrap.cli import app
from speedtrap.experiments import ResultStore

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


LONG_SWEEP = """
name = "early"
replications = 500
seed = 9
outcomes = ["tasks_completed"]
scenario = { developers = 1, horizon_s = 900.0 }
[[factors]]
path = "backend"
values = ["gpu-batched", "wafer-distilled"]
"""
"""1,000 runs: about 6 s on two cores with the typed core, so an interrupt in its first second cannot
come after its end."""


SCRIPT = Path(sys.executable).with_name("speedtrap")
SPEEDTRAP = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "speedtrap"]
"""The console script where it is installed beside this Python; else ``python -m speedtrap``."""
INTERRUPTED = (130,) if SCRIPT.exists() else (130, -signal.SIGINT)
"""Exit status of an interrupted command. Under ``python -m`` CPython 3.12 ends the process by SIGINT
(a shell's 130 too) instead of exit status 130 once a KeyboardInterrupt has ended code run by
``PyRun_String`` (as an extension module's start may), even a caught one; the console script exits
with 130."""


def before_speedtrap(frame_file: str) -> bool:
    """Whether a traceback's frame is code that runs before speedtrap's entry point can take SIGINT:
    the interpreter's (frozen modules, the standard library), the console script, or the entry
    module's own first imports."""
    stdlib = str(Path(sysconfig.get_paths()["stdlib"]))
    return (
        frame_file.startswith(("<frozen", stdlib))
        or frame_file == str(SCRIPT)
        or frame_file.endswith(str(Path("speedtrap", "__main__.py")))
    )


def test_a_ctrl_c_in_the_first_moments_of_a_sweep_is_never_lost(tmp_path: Path) -> None:
    """SIGINT 0.05 to 0.6 s after ``speedtrap sweep`` starts, while it loads its modules (where CPython
    drops an interrupt raised in its import machinery's weak-reference callbacks): every time the
    sweep ends with status 130 and one line, and never runs on (it was once lost and the sweep ran
    to its end). A signal during the interpreter's own start or while runpy finds the package (before
    any speedtrap code runs) is CPython's to report; such delays do not count."""
    spec = tmp_path / "early.toml"
    spec.write_text(LONG_SWEEP, encoding="utf-8")
    ours = 0
    for attempt, delay_s in enumerate((0.05, 0.1, 0.2, 0.3, 0.45, 0.6)):
        results = tmp_path / f"r{attempt}"
        command = [*SPEEDTRAP, "sweep", str(spec), "--results-dir", str(results), "--json"]
        sweep = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(delay_s)
        sweep.send_signal(signal.SIGINT)
        try:
            _, err = sweep.communicate(timeout=60)
        finally:
            if sweep.poll() is None:
                sweep.kill()
        frames = re.findall(r'File "([^"]+)"', err)
        if "Fatal Python error" in err or (frames and all(map(before_speedtrap, frames))):
            continue  # the interpreter's own start, or runpy finding the package: before speedtrap's code
        lines = err.splitlines()
        assert sweep.returncode in INTERRUPTED, (delay_s, err[-1500:])
        assert len(lines) == 1 and lines[0].startswith("interrupted"), (delay_s, err[-1500:])
        stored = len(ResultStore(results / "early").completed_keys()) if (results / "early").exists() else 0
        assert stored < 1000, (delay_s, stored)
        ours += 1
    assert ours >= 3, "too few interrupts reached speedtrap's own code"


def test_an_interrupt_during_an_import_is_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the command line is loaded, SIGINT raises KeyboardInterrupt at once, except while an
    import is under way (in the import machinery's code or in code it runs, where CPython or the
    imported library may drop or transform it): there it is sent again a moment later."""
    from speedtrap.__main__ import interrupt

    frame = sys._getframe()
    with pytest.raises(KeyboardInterrupt):
        interrupt(signal.SIGINT, frame)
    machinery = types.SimpleNamespace(
        f_code=types.SimpleNamespace(co_filename="<frozen importlib._bootstrap>"), f_back=None
    )
    module_code = types.SimpleNamespace(  # a module's own code, run by the import machinery
        f_code=types.SimpleNamespace(co_filename="/site-packages/some/module.py"), f_back=machinery
    )
    received: list[int] = []
    monkeypatch.setattr(
        signal, "SIGINT", signal.SIGUSR1
    )  # sent again as SIGUSR1: the suite is not interrupted
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    try:
        for sent, frame_then in enumerate((machinery, module_code), start=1):
            interrupt(signal.SIGINT, frame_then)  # type: ignore[arg-type]
            deadline = time.monotonic() + 10
            while len(received) < sent and time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert received == [signal.SIGUSR1, signal.SIGUSR1]


def test_a_ctrl_c_noted_while_the_command_line_loads_is_raised_once_it_is_loaded() -> None:
    code = """
import os, signal, sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == "speedtrap.cli":
            os.kill(os.getpid(), signal.SIGINT)  # noted, not raised, while the command line loads
sys.meta_path.insert(0, Interrupt())
sys.argv = ["speedtrap", "backends"]
from speedtrap.__main__ import main
main()
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "interrupted while starting\n" and done.stdout == ""
