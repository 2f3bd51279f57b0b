"""``python -m speedtrap.app.launch SOLARA-RUN-ARGS…``: ``solara run`` with the Host check in front.

Solara serves its Starlette application ``solara.server.starlette:app``; this module loads it first,
puts :class:`~speedtrap.app.hosts.HostCheck` in front of it (Starlette builds its middleware stack
when the server starts, so middleware added now takes part), then hands the command line to Solara's
own ``solara run`` unchanged.
"""

from __future__ import annotations

import os
import sys

from speedtrap.app.hosts import HostCheck


def option(argv: list[str], name: str, default: str) -> str:
    """The value of ``name`` in ``argv`` (``--name value``), else ``default``."""
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else default


def main(argv: list[str]) -> None:
    """Run ``solara run`` with ``argv`` (after ``run``), answering only to the host it serves."""
    # what `solara run` sets before its server loads the application, set before we load it
    os.environ["SOLARA_APP"] = argv[0]
    host = option(argv, "--host", "localhost")
    import solara.__main__ as solara_cli
    from solara.server.starlette import app

    app.add_middleware(HostCheck, bind_host=host)
    solara_cli.cli(["run", *argv], prog_name="solara")


if __name__ == "__main__":
    main(sys.argv[1:])
