"""Which build of the serving pool runs (speedtrap.build): compiled, pure, or the sources of a stale build;
and whether the typed core is in use."""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import speedtrap.serving.pool as pool_module
from speedtrap import build

SERVING = Path(build.__file__).resolve().parent / "serving"


def test_the_reported_build_is_the_one_imported() -> None:
    compiled = not (pool_module.__file__ or "").endswith(".py")
    assert build.pool_build() == ("compiled pool (mypyc)" if compiled else "pure Python")
    if build.pure_requested():
        assert not compiled


def test_the_pure_build_is_asked_for_by_the_environment() -> None:
    assert build.pure_requested({"SPEEDTRAP_PURE": "1"})
    assert build.pure_requested({"SPEEDTRAP_PURE": "yes"})
    assert not build.pure_requested({"SPEEDTRAP_PURE": "0"})
    assert not build.pure_requested({"SPEEDTRAP_PURE": ""})
    assert not build.pure_requested({})


def fake_build(directory: Path, *, digest: str | None) -> None:
    """Copies of the pool's sources, empty 'compiled modules' beside them and a recorded digest."""
    directory.mkdir(exist_ok=True)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in build.COMPILED_MODULES:
        shutil.copy(SERVING / f"{name}.py", directory / f"{name}.py")
        (directory / f"{name}{suffix}").write_bytes(b"")
    if digest is not None:
        (directory / build.SOURCES_DIGEST_FILE).write_text(digest + "\n")


def test_a_build_is_fresh_only_for_the_sources_it_was_built_from(tmp_path: Path) -> None:
    assert build._compiled_state(tmp_path) == "absent"
    fake_build(tmp_path, digest=build.sources_digest(SERVING))
    assert build._compiled_state(tmp_path) == "fresh"
    with (tmp_path / "pool.py").open("a") as source:
        source.write("\n# changed since the build\n")
    assert build._compiled_state(tmp_path) == "stale"
    (tmp_path / build.SOURCES_DIGEST_FILE).unlink()
    assert build._compiled_state(tmp_path) == "stale"
    for path in tmp_path.glob(f"admission{importlib.machinery.EXTENSION_SUFFIXES[0]}"):
        path.unlink()
    assert build._compiled_state(tmp_path) == "absent"


@pytest.mark.parametrize("state", ["fresh", "stale", "pure"])
def test_the_sources_are_imported_for_a_stale_or_unwanted_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    fake_build(tmp_path, digest=build.sources_digest(SERVING) if state != "stale" else "0" * 64)
    monkeypatch.setenv(build.PURE_ENV, "1" if state == "pure" else "")
    before = list(sys.meta_path)
    monkeypatch.setattr(sys, "meta_path", [f for f in before if not isinstance(f, build._SourceFinder)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build.use_sources_where_needed(tmp_path)
    finders = [f for f in sys.meta_path if isinstance(f, build._SourceFinder)]
    assert [w.category for w in caught] == ([build.StaleBuildWarning] if state == "stale" else [])
    if state == "fresh":
        assert finders == []
        return
    (finder,) = finders
    spec = finder.find_spec("speedtrap.serving.pool")
    assert spec is not None and spec.origin == str(tmp_path / "pool.py")
    assert finder.find_spec("speedtrap.serving.replica") is None  # never compiled: found as usual


def test_speedtrap_version_names_the_build() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "speedtrap", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().endswith(f"({build.pool_build()}, {build.core_build()})")


def test_the_typed_core_is_fresh_only_for_the_source_it_was_built_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert build.core_state(tmp_path) == "absent"
    source = tmp_path / f"{build.CORE_MODULE}.pyx"
    shutil.copy(build.MODELS / source.name, source)
    (tmp_path / f"{build.CORE_MODULE}{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    assert build.core_state(tmp_path) == "stale"  # no digest recorded
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    (tmp_path / build.CORE_DIGEST_FILE).write_text(digest + "\n")
    assert build.core_state(tmp_path) == "fresh"
    with source.open("a") as changed:
        changed.write("\n# changed since the build\n")
    assert build.core_state(tmp_path) == "stale"
    # the parts it includes count too: a part added (or changed) since the build makes it stale
    (tmp_path / build.CORE_DIGEST_FILE).write_text(build.core_digest(tmp_path) + "\n")
    assert build.core_state(tmp_path) == "fresh"
    (tmp_path / "_core_part.pxi").write_text("# a part\n")
    assert build.core_sources(tmp_path)[1:] == [tmp_path / "_core_part.pxi"]
    assert build.core_state(tmp_path) == "stale"
    monkeypatch.setenv(build.PURE_ENV, "1")
    assert build.core_build() == "no typed core"


def test_the_reported_typed_core_is_the_one_the_models_use(monkeypatch: pytest.MonkeyPatch) -> None:
    from speedtrap.models import typed_core

    in_use = typed_core.core_module() is not None
    assert build.core_build() == ("typed core (Cython)" if in_use else "no typed core")
    monkeypatch.setenv(build.PURE_ENV, "1")
    assert typed_core.core_module() is None


def _hatch_build():
    spec = importlib.util.spec_from_file_location(
        "hatch_build_for_tests", Path(__file__).resolve().parents[1] / "hatch_build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_editable_install_replaces_a_compiled_module_in_one_step(tmp_path: Path) -> None:
    """The editable install puts each compiled module in place by a rename (hatch_build.place): a
    process that has the old file mapped keeps reading its bytes (a copy onto the loaded file ended
    running commands by SIGBUS, found by the slow fuzz while the package was reinstalled), and no
    temporary file is left."""
    import mmap

    hatch_build = _hatch_build()
    target, built = tmp_path / "pool.cpython-312-x86_64-linux-gnu.so", tmp_path / "built" / "pool.so"
    built.parent.mkdir()
    target.write_bytes(b"old" * 4096)
    built.write_bytes(b"new")
    with target.open("rb") as loaded, mmap.mmap(loaded.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        hatch_build.place(built, target)
        assert mapped[:6] == b"oldold" and len(mapped) == 3 * 4096  # the loaded file is untouched
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["built", target.name])


def test_a_background_compile_reports_its_output_on_failure_and_can_be_stopped(tmp_path: Path) -> None:
    """The typed core compiles in the background while mypyc compiles the pool (hatch_build._BuildExt):
    a failed build raises with what it printed (read from its log file), and one whose result is not
    wanted (the pool failed to compile) is stopped, not left running."""
    import time

    hatch_build = _hatch_build()
    failing = tmp_path / "failing"
    failing.mkdir()
    (failing / "setup.py").write_text("import sys\nprint('the compiler said no ' * 2000)\nsys.exit(3)\n")
    job = hatch_build._BuildExt(failing, "ignored")
    with pytest.raises(subprocess.CalledProcessError) as raised:
        job.result()
    assert raised.value.returncode == 3 and raised.value.output.count("the compiler said no") == 2000
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "setup.py").write_text("import time\ntime.sleep(60)\n")
    start = time.monotonic()
    job = hatch_build._BuildExt(slow, "ignored")
    job.cancel()
    assert time.monotonic() - start < 10 and job._process.returncode is not None
