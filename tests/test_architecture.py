"""The house rules that the layer contracts (pyproject.toml, `lint-imports`) do not state.

* No import circle anywhere in the package, at any depth: the import graph (grimp, the graph
  import-linter checks; imports for annotations included) has no cycle.
* No module over 600 lines: one idea per file.
* No private name (``_name``) imported from another module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "speedtrap"
MAX_LINES = 600


def import_graph() -> nx.DiGraph:
    graph = grimp.build_graph("speedtrap", exclude_type_checking_imports=False)
    return nx.DiGraph([(m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)])


def test_the_import_graph_has_no_circle() -> None:
    graph = import_graph()
    assert graph.number_of_nodes() > 50  # the graph is the package's, not an empty one
    circles = list(nx.simple_cycles(graph))
    assert circles == [], f"import circles: {circles}"


def test_a_circle_would_be_found() -> None:
    """The check above sees circles at the depth they occur (here, two modules of one package)."""
    graph = import_graph()
    graph.add_edge("speedtrap.config.scenario", "speedtrap.config.experiment")
    assert ["speedtrap.config.experiment", "speedtrap.config.scenario"] in [
        sorted(c) for c in nx.simple_cycles(graph)
    ]


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)}: {lines} lines"


def private_imports(path: Path) -> list[str]:
    """``module.name`` of every private name that ``path`` imports from another speedtrap module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("speedtrap"):
            found += [
                f"{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    offenders = {str(p.relative_to(PACKAGE)): private_imports(p) for p in modules()}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_a_private_import_would_be_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from speedtrap.analysis.sensitivity import _helper, public\n", encoding="utf-8")
    assert private_imports(module) == ["speedtrap.analysis.sensitivity._helper"]
