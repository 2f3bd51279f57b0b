"""``python -m speedtrap`` and the ``speedtrap`` console script: the command line.

A Ctrl-C while the command line's modules load (before any command runs) ends in one line and exit
status 130, as a Ctrl-C in a command does, instead of a traceback.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Load the command line and run it (:func:`speedtrap.cli.main`)."""
    try:
        from speedtrap.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted while starting\n")
        raise SystemExit(130) from None
    cli_main()


if __name__ == "__main__":
    main()
