"""A Ctrl-C that the code it landed in swallowed or turned into another error is still honoured:
the executors stop before their next task and the command line ends in one line and status 130."""

from __future__ import annotations

import sys

import pytest
from typer.testing import CliRunner

from speedtrap import interrupts
from speedtrap.experiments.executors import ProcessExecutor, SerialExecutor


@pytest.fixture
def swallowed() -> None:
    """An interrupt was noted by the command line's handler, and its KeyboardInterrupt lost (each test
    starts with none noted: tests/conftest.py)."""
    interrupts.note()


def test_nothing_is_noted_in_a_library_process() -> None:
    assert not interrupts.interrupted()
    interrupts.check()  # does not raise


def test_a_noted_interrupt_is_raised_where_it_is_checked(swallowed: None) -> None:
    assert interrupts.interrupted()
    with pytest.raises(KeyboardInterrupt):
        interrupts.check()


def test_the_serial_executor_runs_no_task_after_a_swallowed_interrupt() -> None:
    ran: list[int] = []

    def task(i: int) -> int:
        ran.append(i)
        if i == 1:
            interrupts.note()  # the handler noted it; the code it landed in dropped the exception
        return i

    results: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        for result in SerialExecutor().map_unordered(task, [0, 1, 2, 3]):
            results.append(result)
    assert ran == [0, 1] and results == [0, 1]


def test_the_process_executor_starts_nothing_after_a_swallowed_interrupt(swallowed: None) -> None:
    with pytest.raises(KeyboardInterrupt):
        list(ProcessExecutor(workers=1).map_unordered(abs, [-1, -2]))


def test_a_command_error_after_a_swallowed_interrupt_is_the_interrupt(swallowed: None) -> None:
    """``fail`` (a command's one-line error, status 2) says "interrupted" and exits 130 instead."""
    from speedtrap.cli import app

    result = CliRunner().invoke(app, ["run", "--set", "horizon_s=-1"])
    assert result.exit_code == 130
    assert result.output.strip() == "interrupted"


def test_an_exception_after_a_swallowed_interrupt_is_one_line(
    swallowed: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic-core turns a KeyboardInterrupt that lands while it builds a validator into a
    ``SchemaError``: the entry point reports the interrupt, not a traceback."""
    import pydantic_core

    import speedtrap.models.workflow
    from speedtrap.cli import main

    def schema_error(*args: object, **kwargs: object) -> None:
        raise pydantic_core.SchemaError("Error building validator: KeyboardInterrupt")

    monkeypatch.setattr(speedtrap.models.workflow, "simulate", schema_error)
    monkeypatch.setattr(sys, "argv", ["speedtrap", "run", "--set", "horizon_s=60"])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 130 and capsys.readouterr().err == "interrupted\n"


def test_an_exception_without_an_interrupt_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import speedtrap.models.workflow
    from speedtrap.cli import main

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(speedtrap.models.workflow, "simulate", broken)
    monkeypatch.setattr(sys, "argv", ["speedtrap", "run", "--set", "horizon_s=60"])
    with pytest.raises(RuntimeError, match="a bug"):
        main()


def test_an_interrupt_python_could_not_raise_is_not_printed_once_noted(
    monkeypatch: pytest.MonkeyPatch, swallowed: None
) -> None:
    """CPython prints an exception raised in a finalizer or weak-reference callback as "Exception
    ignored in" and drops it; once noted, a KeyboardInterrupt there is honoured later, not printed."""
    from speedtrap.__main__ import drop_noted_interrupt

    printed: list[object] = []
    monkeypatch.setattr(sys, "__unraisablehook__", printed.append)

    class Unraisable:
        def __init__(self, exc: BaseException) -> None:
            self.exc_value = exc

    drop_noted_interrupt(Unraisable(KeyboardInterrupt()))  # type: ignore[arg-type]
    assert printed == []
    other = Unraisable(ValueError("a finalizer's bug"))
    drop_noted_interrupt(other)  # type: ignore[arg-type]
    assert printed == [other]
    monkeypatch.setattr(interrupts, "_noted", [0])
    not_noted = Unraisable(KeyboardInterrupt())
    drop_noted_interrupt(not_noted)  # type: ignore[arg-type]
    assert printed == [other, not_noted]


def test_a_command_that_ends_after_a_swallowed_interrupt_exits_130(
    swallowed: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command whose work ran to its end because the code the Ctrl-C landed in swallowed it still
    ends with status 130 and one line saying so (a shell loop around it stops, as on a Ctrl-C)."""
    from speedtrap.cli import main

    monkeypatch.setattr(sys, "argv", ["speedtrap", "backends", "--json"])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 130
    assert capsys.readouterr().err == "interrupted after the command had finished\n"


def test_a_command_without_an_interrupt_ends_as_it_would(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from speedtrap.cli import main

    monkeypatch.setattr(sys, "argv", ["speedtrap", "backends", "--json"])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code in (0, None) and capsys.readouterr().err == ""
