"""The Python example of docs/sessions.md runs (from a scratch directory that sees examples/)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_docs_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    (code,) = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "sessions.md").read_text(), flags=re.DOTALL)
    exec(compile(code, "docs/sessions.md", "exec"), {"__name__": "docs"})
