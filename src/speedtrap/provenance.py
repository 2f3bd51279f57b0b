"""Where a result came from: the package version, the git commit of a checkout, and the versions of
Python and the libraries that shape the numbers (recorded in every JSON output)."""

from __future__ import annotations

import platform
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

KEY_LIBRARIES = ("mesa", "numpy", "pandas", "scipy", "pydantic")
"""Libraries whose versions are recorded beside results."""


@cache
def git_commit() -> str | None:
    """The commit of the checkout the package runs from (with ``-dirty`` when changed), or ``None``
    when it is not a git checkout or git is missing."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=40"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance() -> dict[str, Any]:
    """``{"speedtrap": version, "git_commit": str | None, "python": version, "libraries": {name:
    version}}``."""
    from speedtrap import __version__

    return {
        "speedtrap": __version__,
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in KEY_LIBRARIES},
    }
