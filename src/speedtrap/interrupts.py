"""Whether this process has been interrupted (Ctrl-C), remembered after the ``KeyboardInterrupt``.

The command line's SIGINT handler (:mod:`speedtrap.__main__`) notes every interrupt here before it
raises ``KeyboardInterrupt``. Code of other libraries that the interrupt lands in does not always let
it through: pydantic-core, building a validator, turns it into a ``SchemaError``; a bare ``except:``
drops it. The places that decide whether to go on ask :func:`interrupted` instead of trusting that
the exception arrived: the executors before each task or pool (:mod:`speedtrap.experiments.executors`)
and the command line's error exits (:mod:`speedtrap.cli`), so a Ctrl-C is never lost nor reported as
another error. Used as a library (a notebook, a script), nothing notes here and nothing changes.
"""

from __future__ import annotations

_noted = [0]


def note() -> None:
    """Remember that SIGINT arrived (called by the command line's handler)."""
    _noted[0] += 1


def interrupted() -> bool:
    """Whether an interrupt has been noted in this process."""
    return _noted[0] > 0


def check() -> None:
    """Raise ``KeyboardInterrupt`` if an interrupt has been noted (one that other code swallowed)."""
    if interrupted():
        raise KeyboardInterrupt
