"""The Jupyter analyses in notebooks/: each runs top to bottom on a fresh kernel at quick size, follows the
notebook conventions (a tagged parameter cell selecting the size and the results directory) and is committed
with its outputs stripped (``python notebooks/strip.py``)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest
from ipykernel.kernelspec import write_kernel_spec
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
KERNEL_NAME = "python3"
CELL_TIMEOUT_S = 600  # a guard against a hung kernel; a quick-size notebook takes seconds
SIZE_LINE = 'SIZE = os.environ.get("SPEEDTRAP_NOTEBOOK_SIZE", "quick")  # "quick" or "full"'
RESULTS_LINE = 'RESULTS = Path(os.environ.get("SPEEDTRAP_RESULTS", "../results"))'
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # colours in IPython tracebacks


def _strip_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_strip", NOTEBOOKS_DIR / "strip.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _code_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


@pytest.fixture(scope="module")
def jupyter_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Jupyter data directory whose ``python3`` kernel is this interpreter (ahead of any user kernel)."""
    root = tmp_path_factory.mktemp("jupyter")
    write_kernel_spec(root / "kernels" / KERNEL_NAME)
    return root


def test_the_analyses_are_there() -> None:
    names = {path.name for path in NOTEBOOKS}
    assert {"01_wait_vs_fix.ipynb", "03_fast_mode_externality.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_follows_the_conventions(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "starts with a title"
    parameters = [cell for cell in nb.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1, "exactly one cell tagged 'parameters'"
    assert parameters[0] is _code_cells(nb)[0], "the parameter cell is the first code cell"
    lines = parameters[0].source.splitlines()
    assert SIZE_LINE in lines and RESULTS_LINE in lines
    assert nb.metadata.kernelspec.name == KERNEL_NAME


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_stripped(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(_code_cells(nb)):
        assert cell.outputs == [], f"code cell {i} has outputs: run python notebooks/strip.py"
        assert cell.execution_count is None, (
            f"code cell {i} has an execution count: run python notebooks/strip.py"
        )
    assert _strip_module().is_stripped(nb)


def test_strip_removes_outputs_and_run_metadata(tmp_path: Path) -> None:
    strip = _strip_module()
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("1 + 1")],
        metadata={"language_info": {"name": "python", "version": "3.12.1"}, "widgets": {"state": {}}},
    )
    clean = nbformat.from_dict(nb)
    code = nb.cells[1]
    code.execution_count = 3
    code.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=3)]
    code.metadata["execution"] = {"iopub.execute_input": "2026-01-01T00:00:00Z"}
    code.metadata["tags"] = ["parameters"]
    clean.cells[1].metadata["tags"] = ["parameters"]
    clean.metadata["language_info"] = {"name": "python"}
    del clean.metadata["widgets"]
    path = tmp_path / "run.ipynb"
    nbformat.write(nb, path)
    assert not strip.is_stripped(nb)
    assert strip.main(["--check", str(path)]) == 1
    assert nbformat.read(path, as_version=4) == nb  # --check changes nothing
    assert strip.main([str(path)]) == 0
    assert nbformat.read(path, as_version=4) == clean
    assert strip.main(["--check", str(path)]) == 0


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_quick_size(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jupyter_path: Path
) -> None:
    results = tmp_path / "results"
    monkeypatch.setenv("SPEEDTRAP_NOTEBOOK_SIZE", "quick")
    monkeypatch.setenv("SPEEDTRAP_RESULTS", str(results))
    monkeypatch.setenv("JUPYTER_PATH", str(jupyter_path))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},  # the kernel's working directory
    )
    error = None
    try:
        client.execute()
    except CellExecutionError as exc:  # shows the failing cell's source, output and traceback
        error = ANSI_ESCAPE.sub("", str(exc))
    if error is not None:  # outside the handler: the report is the cell's error alone
        pytest.fail(f"{path.name} failed at quick size:\n{error}", pytrace=False)

    cells = _code_cells(nb)
    assert all(cell.execution_count is not None for cell in cells), "every code cell ran"
    stderr = [
        output.text
        for cell in cells
        for output in cell.outputs
        if output.output_type == "stream" and output.name == "stderr"
    ]
    assert not stderr, f"{path.name} wrote to stderr (a warning?):\n" + "\n".join(stderr)
    assert any(cell.outputs for cell in cells)
    stored = [f for f in results.glob("*-quick/**/*") if f.is_file()]  # runs (spec.json, parts) or tables
    assert stored, f"{path.name} stored no quick-size results under RESULTS"

    executed = tmp_path / path.name
    nbformat.write(nb, executed)
    subprocess.run([sys.executable, str(NOTEBOOKS_DIR / "strip.py"), str(executed)], check=True)
    assert nbformat.read(executed, as_version=4) == nbformat.read(path, as_version=4), "strip restores it"
