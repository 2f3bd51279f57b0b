"""The example logs are what scripts/make_session_fixtures.py writes, and no file of any kind
makes a loader fail."""

import importlib.util
from pathlib import Path

import pytest

from speedtrap.sessions import load_sessions

ROOT = Path(__file__).resolve().parents[2]


def test_the_script_writes_the_shipped_examples(tmp_path: Path, examples: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "make_session_fixtures", ROOT / "scripts" / "make_session_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    shipped = sorted(p.relative_to(examples) for p in examples.rglob("*") if p.is_file())
    assert written == shipped
    for path in written:
        if path.suffix != ".parquet":  # parquet metadata names the writer's version
            assert (tmp_path / path).read_bytes() == (examples / path).read_bytes(), path


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("garbage.csv", b"\x00\xff\xfe binary \x00\n\x01,\x02\n"),
        ("garbage.parquet", b"not a parquet file"),
        ("garbage.jsonl", b'\x00\xff{\n[]\n"text"\n{"type": "assistant", "message": 5}\n'),
        ("empty.jsonl", b""),
        ("empty.csv", b""),
        ("notes.txt", b"hello"),
    ],
)
def test_no_file_makes_the_loader_fail(tmp_path: Path, name: str, content: bytes) -> None:
    (tmp_path / name).write_bytes(content)
    loaded = load_sessions([tmp_path / name])
    assert len(loaded.trace) == 0
    assert loaded.report.skipped or name.startswith("empty") or loaded.report.ignored
