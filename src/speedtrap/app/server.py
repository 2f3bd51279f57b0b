"""Start the Solara server on the app's page (the process becomes the server)."""

from __future__ import annotations

import os
import sys

__all__ = ["PAGE_MODULE", "serve", "solara_argv"]

PAGE_MODULE = "speedtrap.app.page"
"""The module whose ``Page`` component Solara serves."""


def solara_argv(*, port: int, host: str, open_browser: bool) -> list[str]:
    """The command line that serves the app: ``solara run`` (production mode: no auto-reload) through
    :mod:`speedtrap.app.launch`, which answers only to the host and port it serves."""
    return [
        sys.executable, "-m", "speedtrap.app.launch", PAGE_MODULE,
        "--port", str(port), "--host", host, "--production",
        "--open" if open_browser else "--no-open",
        "--no-check-version",  # no call to PyPI at start (it blocks where there is no network)
        "--log-level", "warning",
    ]  # fmt: skip


def serve(*, port: int, host: str, open_browser: bool) -> None:
    """Replace this process by the Solara server (so that stopping it stops the server).

    Raises ``ImportError`` when Solara is not installed (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("solara") is None:
        raise ImportError("the app needs Solara: pip install 'speedtrap[app]'")
    argv = solara_argv(port=port, host=host, open_browser=open_browser)
    os.environ.setdefault("SOLARA_TELEMETRY_MIXPANEL_ENABLE", "False")  # no usage reports
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)
