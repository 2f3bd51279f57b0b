"""``python -m speedtrap`` and the ``speedtrap`` console script: the command line.

A Ctrl-C at any moment from startup on ends in one line and exit status 130, never lost. CPython
reports and drops a ``KeyboardInterrupt`` raised inside a callback that its import machinery runs (a
weak reference's), so a Ctrl-C that landed there was lost and the command ran to its end. Therefore:

* while the command line's modules load, an interrupt is only noted, and raised once they are
  loaded ("interrupted while starting");
* afterwards (the commands import what they need when they run), an interrupt that arrives while
  the import machinery's own code runs is delivered again a moment later, in the code that imports;
  anywhere else it raises ``KeyboardInterrupt`` at once, as Python's own handler does.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

INTERRUPTED_EXIT_CODE = 130
"""Exit status after a Ctrl-C (128 + SIGINT), as shells report it."""
REDELIVER_S = 0.02
"""Seconds after which an interrupt that arrived in the import machinery's own code is sent again."""

_noted: list[int] = []


def _note(signum: int, frame: FrameType | None) -> None:
    """SIGINT while the command line loads: noted, raised once it is loaded."""
    _noted.append(signum)


def in_import_machinery(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs code of the import machinery itself (where CPython drops an exception
    raised by a weak-reference callback), rather than the code of a module being imported."""
    return frame is not None and frame.f_code.co_filename.startswith("<frozen importlib")


def interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGINT once the command line is loaded: ``KeyboardInterrupt``, as with Python's own handler,
    except inside the import machinery's code, where the signal is sent again a moment later."""
    if in_import_machinery(frame):
        import os  # loaded by now: the command line's modules are
        import threading

        timer = threading.Timer(REDELIVER_S, os.kill, (os.getpid(), signal.SIGINT))
        timer.daemon = True
        timer.start()
        return
    raise KeyboardInterrupt


def main() -> None:
    """Load the command line and run it (:func:`speedtrap.cli.main`)."""
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not when SIGINT is ignored
    if ours:
        signal.signal(signal.SIGINT, _note)
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
