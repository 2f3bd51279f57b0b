"""The house rules that the layer contracts (pyproject.toml, `lint-imports`) do not state.

* No import circle anywhere in the package, at any depth: the import graph (grimp, the graph
  import-linter checks; imports for annotations included) has no cycle.
* No module over 600 lines: one idea per file.
* No private name (``_name``) imported from another module.
* Mesa's internals and the holding of event callbacks (weak references, compiled classes' built-in
  methods) are touched in one module, ``speedtrap.models.base``: everything else schedules through
  ``EventModel.schedule_event``.
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


MESA_INTERNALS_MODULE = PACKAGE / "models" / "base.py"
MESA_INTERNAL_ATTRIBUTES = {"_time", "_event_list", "_default_schedule", "_advance_time", "_ids"}
"""Private attributes of Mesa's ``Model`` and ``Event`` that ``models/base.py`` reads or writes
(tests/models/test_mesa_internals.py checks that Mesa still has them)."""
CALLBACK_HOLDING = {"weakref", "BuiltinMethodType", "MethodType", "__weakrefoffset__", "WeakMethod"}
"""How an event holds its callback: weak references, and the method types of Python and of compiled
(mypyc) classes, whose instances may take no weak reference."""


def mesa_internals_touched(path: Path) -> list[str]:
    """``line: name`` of every Mesa-internal attribute, callback-holding import or name in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in MESA_INTERNAL_ATTRIBUTES | CALLBACK_HOLDING:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in CALLBACK_HOLDING:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] in CALLBACK_HOLDING]
    return found


def test_mesa_internals_and_callback_holding_are_confined_to_models_base() -> None:
    assert mesa_internals_touched(MESA_INTERNALS_MODULE)  # the check sees what base.py does
    offenders = {
        str(p.relative_to(PACKAGE)): found
        for p in modules()
        if p != MESA_INTERNALS_MODULE and (found := mesa_internals_touched(p))
    }
    assert offenders == {}, f"only models/base.py may touch Mesa's internals or hold callbacks: {offenders}"


def test_a_weak_reference_elsewhere_would_be_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from weakref import ref\nimport types\n\ndef f(m):\n    m._time = types.BuiltinMethodType\n"
    )
    assert mesa_internals_touched(module) == ["1: import weakref", "5: ._time", "5: .BuiltinMethodType"]
