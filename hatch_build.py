"""Build hook: the serving pool compiled with mypyc and the typed core with Cython where they can be,
else a pure-Python wheel.

Hatchling runs this for every wheel, regular and editable (``pip install .``, ``pip install -e .``).
It compiles ``speedtrap.serving``'s modules listed in ``speedtrap.build.COMPILED_MODULES`` with
mypyc (a build requirement) when a C compiler is present and ``SPEEDTRAP_PURE`` is not set. A
regular wheel then carries the compiled modules beside their sources (a platform wheel); an
editable install gets them in the source tree (``src/``, ignored by git), where they are used until
their sources change (``speedtrap.build`` then falls back to the sources, with a warning). Where no
compiler or no mypyc is found, or compiling fails, the wheel is pure Python (said on the build's
output); ``SPEEDTRAP_PURE=1`` asks for that build, ``SPEEDTRAP_COMPILED=1`` makes a failure to
compile fail the build instead.

With the pool compiled, the typed core (``speedtrap/models/_typed_core.pyx``, Cython, a build
requirement: ``speedtrap.models.typed_core``) is compiled too, in the same way: beside its source in
the wheel, or into ``src/`` for an editable install, with the digest of its source beside it; where
Cython or the compile fails, the wheel has no typed core (said on the output) and every run takes the
Mesa model. The core draws through numpy's C interface to its random distributions (the static
``libnpyrandom`` that numpy ships, and its headers), so numpy is a build requirement too.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SETUP = """\
import sys
from setuptools import setup
from mypyc.build import mypycify

paths = sys.argv.pop(1).split(";")
setup(
    name="speedtrap_serving_compiled",
    ext_modules=mypycify(
        ["--config-file", "mypy.ini", *paths], opt_level="3", group_name="speedtrap_serving"
    ),
)
"""

CYTHON_SETUP = """\
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

source = sys.argv.pop(1)
core = Extension(
    "speedtrap.models._typed_core",
    [source],
    include_dirs=[numpy.get_include()],
    library_dirs=[os.path.join(os.path.dirname(numpy.__file__), "random", "lib")],
    libraries=["npyrandom"],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    extra_compile_args=["-O3"],
)
setup(name="speedtrap_typed_core", ext_modules=cythonize([core], language_level=3))
"""

MYPY_INI = """\
[mypy]
ignore_missing_imports = True
follow_imports = silent
"""


def _load_build_module(root: Path) -> ModuleType:
    """``speedtrap.build`` loaded by path (standard library only; the package need not import)."""
    spec = importlib.util.spec_from_file_location("_speedtrap_build", root / "src" / "speedtrap" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _why_not_compile() -> str | None:
    """Why the pool cannot be compiled here, or ``None`` if it can be tried."""
    for module in ("mypyc.build", "setuptools"):
        if importlib.util.find_spec(module.split(".")[0]) is None:
            return f"{module.split('.')[0]} is not installed"
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler}) was found"
    return None


class _BuildExt:
    """``work``'s ``setup.py`` (given ``argument``) building its extensions into ``work/lib``, started
    in the background: the typed core compiles while mypyc compiles the pool (each is one process,
    mostly one compiler run, so on two cores the two together take about as long as the longer one).
    Its output goes to a file, not a pipe, so that a verbose compiler never blocks on a full pipe."""

    def __init__(self, work: Path, argument: str) -> None:
        self.out = work / "lib"
        self._log_path = work / "build.log"
        self._log = self._log_path.open("w", encoding="utf-8")
        command = [sys.executable, "setup.py", argument, "build_ext", "--build-lib", str(self.out)]
        self._process = subprocess.Popen(
            [*command, "--build-temp", str(work / "tmp")],
            cwd=work,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def result(self) -> Path:
        """Wait for it; return ``work/lib`` (``CalledProcessError`` with the compiler's output on
        failure)."""
        code = self._process.wait()
        self._log.close()
        if code != 0:
            output = self._log_path.read_text(encoding="utf-8", errors="replace")
            raise subprocess.CalledProcessError(code, self._process.args, output=output)
        return self.out

    def cancel(self) -> None:
        """Stop it (its result is not wanted) and wait for it to end."""
        self._process.kill()
        self._process.wait()
        self._log.close()


def _build_ext(work: Path, argument: str) -> Path:
    """Run ``work``'s ``setup.py`` (given ``argument``) to build its extensions into ``work/lib``;
    return that directory (``CalledProcessError`` with the compiler's output on failure)."""
    return _BuildExt(work, argument).result()


def _core_module(out: Path) -> Path:
    """The typed core's extension module in a finished build's ``out`` directory."""
    found = list(out.rglob("_typed_core*.so"))
    if not found:
        raise subprocess.CalledProcessError(1, "cython", output="no compiled typed core was built")
    return found[0]


def place(built: Path, target: Path) -> None:
    """Put the compiled module ``built`` at ``target`` in one step: copied to a temporary name beside
    it, then renamed over it. A process that imports it meanwhile finds the old file or the whole new
    one, never a part, and one that has the old file loaded keeps it (a copy onto the loaded file
    itself ended such a process by SIGBUS)."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        shutil.copy2(built, temporary)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


class CompiledPoolHook(BuildHookInterface):
    """Compiles the serving pool (module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        build = _load_build_module(root)
        serving = root / "src" / "speedtrap" / "serving"
        if version == "editable":
            self._remove_in_tree(root, build)
        if build.pure_requested():
            self.app.display_info(f"speedtrap: {build.PURE_ENV} is set: the serving pool stays pure Python")
            return
        reason = _why_not_compile()
        core: _BuildExt | str = "the serving pool was not compiled"
        if reason is None:
            core = self._start_core(root, build)  # beside the pool's compile (_BuildExt)
            try:
                built = self._compile(root, build)
            except subprocess.CalledProcessError as exc:
                reason = f"compiling failed:\n{exc.stdout}"
        if reason is not None:
            if isinstance(core, _BuildExt):
                core.cancel()
            self._not_compiled("the serving pool", reason, "the serving pool stays pure Python")
            return
        digest = build.sources_digest(serving)
        if version == "editable":
            for target, path in built.items():
                place(path, root / "src" / target)
            (serving / build.SOURCES_DIGEST_FILE).write_text(digest + "\n", encoding="ascii")
        else:
            staging = Path(tempfile.mkdtemp(prefix="speedtrap-compiled-"))
            for target, path in built.items():
                build_data["force_include"][str(path)] = target
            digest_file = staging / build.SOURCES_DIGEST_FILE
            digest_file.write_text(digest + "\n", encoding="ascii")
            build_data["force_include"][str(digest_file)] = f"speedtrap/serving/{build.SOURCES_DIGEST_FILE}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"speedtrap: the serving pool is compiled with mypyc ({len(built)} modules)")
        self._typed_core(root, build, version, build_data, core)

    def _not_compiled(self, what: str, reason: str, fallback: str) -> None:
        """``what`` could not be compiled for ``reason``: fail under ``SPEEDTRAP_COMPILED``, else say
        what the build falls back to."""
        if os.environ.get("SPEEDTRAP_COMPILED", "") not in ("", "0"):
            raise RuntimeError(f"SPEEDTRAP_COMPILED is set, but {what} was not compiled: {reason}")
        self.app.display_warning(f"speedtrap: {fallback} ({reason})")

    def _start_core(self, root: Path, build: ModuleType) -> _BuildExt | str:
        """Start compiling the typed core (module docstring): the running build, or why it cannot be."""
        if importlib.util.find_spec("Cython") is None:
            return "Cython is not installed"
        return self._cythonize(build.core_sources(root / "src" / "speedtrap" / "models"))

    def _typed_core(
        self,
        root: Path,
        build: ModuleType,
        version: str,
        build_data: dict[str, Any],
        core: _BuildExt | str,
    ) -> None:
        """Finish compiling the typed core, started by :meth:`_start_core` (``core``); say so, or why
        not."""
        models = root / "src" / "speedtrap" / "models"
        reason: str | None = core if isinstance(core, str) else None
        if isinstance(core, _BuildExt):
            try:
                built = _core_module(core.result())
            except subprocess.CalledProcessError as exc:
                reason = f"compiling failed:\n{exc.stdout}"
        if reason is not None:
            self._not_compiled("the typed core", reason, "no typed core; every run takes the Mesa model")
            return
        digest = build.core_digest(models)
        if version == "editable":
            place(built, models / built.name)
            (models / build.CORE_DIGEST_FILE).write_text(digest + "\n", encoding="ascii")
        else:
            staging = Path(tempfile.mkdtemp(prefix="speedtrap-core-"))
            digest_file = staging / build.CORE_DIGEST_FILE
            digest_file.write_text(digest + "\n", encoding="ascii")
            build_data["force_include"][str(built)] = f"speedtrap/models/{built.name}"
            build_data["force_include"][str(digest_file)] = f"speedtrap/models/{build.CORE_DIGEST_FILE}"
        self.app.display_info("speedtrap: the typed core is compiled with Cython")

    def _cythonize(self, sources: list[Path]) -> _BuildExt:
        """Start compiling the typed core (``sources``: its ``.pyx``, then the parts it includes) in a
        temporary directory (:func:`_core_module` finds the module it built)."""
        work = Path(tempfile.mkdtemp(prefix="speedtrap-cython-"))
        (work / "setup.py").write_text(CYTHON_SETUP, encoding="utf-8")
        for path in sources:
            shutil.copy2(path, work / path.name)
        self.app.display_info("speedtrap: compiling the typed core with Cython (under a minute)")
        return _BuildExt(work, sources[0].name)

    def _remove_in_tree(self, root: Path, build: ModuleType) -> None:
        """Remove compiled modules an earlier editable install left in the source tree."""
        serving = root / "src" / "speedtrap" / "serving"
        for name in build.COMPILED_MODULES:
            for path in serving.glob(f"{name}.*.so"):
                path.unlink()
        for path in (root / "src").glob("speedtrap_serving__mypyc.*.so"):
            path.unlink()
        (serving / build.SOURCES_DIGEST_FILE).unlink(missing_ok=True)
        models = root / "src" / "speedtrap" / "models"
        for path in models.glob("_typed_core.*.so"):
            path.unlink()
        (models / build.CORE_DIGEST_FILE).unlink(missing_ok=True)

    def _compile(self, root: Path, build: ModuleType) -> dict[str, Path]:
        """Compile the pool's modules in a temporary directory; return ``{path in the wheel: file}``."""
        work = Path(tempfile.mkdtemp(prefix="speedtrap-mypyc-"))
        (work / "setup.py").write_text(SETUP, encoding="utf-8")
        (work / "mypy.ini").write_text(MYPY_INI, encoding="utf-8")
        sources = [
            str(root / "src" / "speedtrap" / "serving" / f"{name}.py") for name in build.COMPILED_MODULES
        ]
        self.app.display_info("speedtrap: compiling the serving pool with mypyc (a minute or two)")
        out = _build_ext(work, ";".join(sources))
        built = {str(path.relative_to(out)): path for path in out.rglob("*.so")}
        expected = {f"speedtrap/serving/{name}" for name in build.COMPILED_MODULES}
        got = {target.split(".")[0] for target in built}
        if not expected <= got:
            raise subprocess.CalledProcessError(
                1, "mypyc", output=f"missing compiled modules: {sorted(expected - got)}"
            )
        return built
