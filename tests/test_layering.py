"""The layers stay apart: ``serving`` and ``analysis`` never import Mesa, the agents or the models;
``plots`` never imports the agents, the models, the experiments or the command line; and no module
of these three imports a private name from another module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import speedtrap

PACKAGE = Path(speedtrap.__file__).parent
FORBIDDEN = {
    "serving": ("mesa", "speedtrap.agents", "speedtrap.models"),
    "analysis": ("mesa", "speedtrap.agents", "speedtrap.models"),
    "plots": ("speedtrap.agents", "speedtrap.models", "speedtrap.experiments", "speedtrap.cli"),
}


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import in ``path`` (names empty for ``import module``)."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", [alias.name for alias in node.names]))
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_stay_inside_their_bounds(layer: str) -> None:
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        for module, names in imports(path):
            for forbidden in FORBIDDEN[layer]:
                assert module != forbidden and not module.startswith(forbidden + "."), (path, module)
            if module == "__future__":
                continue
            private = [n for n in names if n.startswith("_")]
            private += [p for p in module.split(".") if p.startswith("_")]
            assert not private, (path, module, private)
