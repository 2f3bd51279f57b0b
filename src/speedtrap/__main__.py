"""``python -m speedtrap`` and the ``speedtrap`` console script: the command line.

A Ctrl-C at any moment from startup on ends in one line and exit status 130, never lost. Code that
runs while modules are imported does not always let a ``KeyboardInterrupt`` through: CPython reports
and drops one raised in a callback its import machinery runs (a weak reference's); pydantic-core,
building a model's validator, turns it into a ``SchemaError``; scipy's function generator prints
its source before raising it again. A Ctrl-C that landed there was lost (the command ran to its end)
or came out as another error. Therefore:

* while the command line's modules load, an interrupt is only noted, and raised once they are
  loaded ("interrupted while starting");
* afterwards (the commands import what they need when they run), an interrupt that arrives while any
  import is under way is delivered again a moment later, until it lands outside every import;
  anywhere else it raises ``KeyboardInterrupt`` at once, as Python's own handler does;
* every interrupt is also noted (:mod:`speedtrap.interrupts`), so that one which other code still
  swallows is honoured: the executors and the command line's exits ask whether one arrived, and one
  that CPython could not raise at all (in a finalizer) is not printed as "Exception ignored".
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

from speedtrap import interrupts

INTERRUPTED_EXIT_CODE = 130
"""Exit status after a Ctrl-C (128 + SIGINT), as shells report it."""
REDELIVER_S = 0.02
"""Seconds after which an interrupt that arrived while an import was under way is sent again."""

_noted: list[int] = []


def _note(signum: int, frame: FrameType | None) -> None:
    """SIGINT while the command line loads: noted, raised once it is loaded."""
    _noted.append(signum)
    interrupts.note()


def in_import(frame: FrameType | None) -> bool:
    """Whether ``frame`` or a frame that called it runs the import machinery's code, i.e. whether an
    import is under way (module code being executed, a validator built at class creation)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = getattr(frame, "f_back", None)
    return False


def interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT once the command line is loaded: ``KeyboardInterrupt``, as with Python's own handler,
    except while an import is under way, when the signal is sent again a moment later. Either way
    it is noted (:mod:`speedtrap.interrupts`), in case the code it lands in swallows it."""
    interrupts.note()
    if in_import(frame):
        import os  # loaded by now: the command line's modules are
        import threading

        timer = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), signal.SIGINT))
        timer.daemon = True
        timer.start()
        return
    raise KeyboardInterrupt


def drop_noted_interrupt(unraisable: sys.UnraisableHookArgs) -> None:
    """``sys.unraisablehook``: a ``KeyboardInterrupt`` that CPython could not raise (it landed in a
    weak-reference callback or a finalizer) is not printed once it has been noted; the executors and
    the command line's exits honour it (:mod:`speedtrap.interrupts`). Anything else is printed by
    Python's own hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and interrupts.interrupted():
        return
    sys.__unraisablehook__(unraisable)


def main() -> None:
    """Load the command line and run it (:func:`speedtrap.cli.main`)."""
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when SIGINT is ignored
    if ours:
        signal.signal(signal.SIGINT, _note)
        sys.unraisablehook = drop_noted_interrupt
    try:
        from speedtrap.cli import main as cli_main

        if ours:
            signal.signal(signal.SIGINT, interrupt)
        if _noted:
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        sys.stderr.write("interrupted while starting\n")
        raise SystemExit(INTERRUPTED_EXIT_CODE) from None
    cli_main()


if __name__ == "__main__":
    main()
