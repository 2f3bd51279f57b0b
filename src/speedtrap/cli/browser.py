"""``speedtrap app``: the interactive browser app (:mod:`speedtrap.app`; needs the app extra).

Named ``browser`` rather than ``app`` so that ``speedtrap.cli.app`` stays the typer application.
"""

from __future__ import annotations

from typing import Annotated

import typer

from speedtrap.cli.common import fail

APP_PORT = 8765
"""Solara's usual port; ``--port 0`` picks a free one."""


def app_command(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port to serve on (0: any free port).")
    ] = APP_PORT,
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on (0.0.0.0: every one).")
    ] = "localhost",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Do not open a browser (for servers).")
    ] = False,
) -> None:
    """Explore a scenario in the browser: controls for the scenario, backends and the fields people
    vary most; the ledger, a timeline per developer, the serving pool, tasks and dollars, two
    backends side by side with one seed, and the analytic break-even map. Needs the app extra
    (pip install 'speedtrap[app]'); stop it with Ctrl-C."""
    from speedtrap.app import serve

    typer.echo(f"speedtrap app on http://{host}:{port} (Ctrl-C stops it)", err=True)
    try:
        serve(port=port, host=host, open_browser=not no_browser)
    except ImportError as exc:
        fail(str(exc))
