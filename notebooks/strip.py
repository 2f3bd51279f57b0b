"""Strip notebooks for committing: outputs, execution counts and the metadata that running them writes.

    python notebooks/strip.py                  # every notebooks/*.ipynb, in place
    python notebooks/strip.py PATH.ipynb ...   # the named notebooks
    python notebooks/strip.py --check          # change nothing; exit 1 naming any unstripped notebook

Kept: the cells' sources, ids and tags, the kernelspec, and the language name.
"""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent

RUN_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")
"""Cell metadata written by running or viewing a notebook (nbclient timings, front-end state)."""

RUN_NOTEBOOK_METADATA = ("widgets",)
"""Notebook metadata written by running one (saved widget state)."""


def strip(nb: nbformat.NotebookNode) -> bool:
    """Strip ``nb`` in place; return whether anything changed."""
    changed = False
    for cell in nb.cells:
        for key in RUN_CELL_METADATA:
            if key in cell.metadata:
                del cell.metadata[key]
                changed = True
        if cell.cell_type == "code":
            if cell.get("outputs"):
                cell.outputs = []
                changed = True
            if cell.get("execution_count") is not None:
                cell.execution_count = None
                changed = True
    for key in RUN_NOTEBOOK_METADATA:
        if key in nb.metadata:
            del nb.metadata[key]
            changed = True
    info = nb.metadata.get("language_info")
    if info is not None and set(info) - {"name"}:  # the kernel's version, mimetype, lexer…
        nb.metadata["language_info"] = {"name": info.get("name", "python")}
        changed = True
    return changed


def is_stripped(nb: nbformat.NotebookNode) -> bool:
    """Whether ``nb`` is as :func:`strip` leaves it (``nb`` is not changed)."""
    return not strip(copy.deepcopy(nb))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: notebooks/*.ipynb)")
    parser.add_argument("--check", action="store_true", help="report unstripped notebooks, change nothing")
    args = parser.parse_args(argv)
    paths = args.paths or sorted(HERE.glob("*.ipynb"))
    unstripped = []
    for path in paths:
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        if not strip(nb):
            continue
        unstripped.append(path)
        if not args.check:
            nbformat.write(nb, path)
    verb = "has outputs or run metadata" if args.check else "stripped"
    for path in unstripped:
        print(f"{path}: {verb}")
    return 1 if args.check and unstripped else 0


if __name__ == "__main__":
    sys.exit(main())
