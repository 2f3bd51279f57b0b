"""Suite-wide set-up."""

from __future__ import annotations

import signal

import pytest

from speedtrap import interrupts

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background of a shell without job control (`cmd &` in a script, nohup)
    # inherits SIGINT ignored, and so would every command the interrupt tests start: they send
    # SIGINT on purpose and expect it handled as at a terminal. Python's own handler here makes a
    # child start with the default disposition.
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_interrupt_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no Ctrl-C noted (:mod:`speedtrap.interrupts`): a test that calls the
    command line's SIGINT handler directly notes one, which would stop every later executor."""
    monkeypatch.setattr(interrupts, "_noted", [0])
