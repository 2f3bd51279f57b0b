"""The wheel works outside the checkout: built from the repository, installed into a fresh virtual
environment, it runs ``speedtrap backends``, ``demo`` and ``experiment headline --quick`` from a
directory that is not the checkout, reading the experiment files it ships as package data; and every
extra the READMEs tell a user to install is declared."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from speedtrap.build import COMPILED_MODULES

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [
    "speedtrap/py.typed",
    "speedtrap/validation/data/workflow_targets.csv",
    "speedtrap/validation/data/behaviour_parameters.csv",
    "speedtrap/_data/experiments/headline.toml",
    "speedtrap/_data/experiments/break_even.toml",
    "speedtrap/_data/experiments/fast_mode_externality.toml",
    "speedtrap/_data/experiments/scenarios/headline.toml",
    "speedtrap/_data/experiments/scenarios/metr.toml",
]


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="paths of a POSIX virtual environment")
def test_the_wheel_runs_outside_the_checkout(tmp_path: Path) -> None:
    python = sys.executable
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    dist = tmp_path / "dist"
    # no build isolation: hatchling is in the dev extra, so nothing is fetched
    build = ["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)]
    _run([python, "-m", "pip", *build], tmp_path, env)
    (wheel,) = dist.glob("speedtrap-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not [name for name in SHIPPED if name not in names]
    assert not [name for name in names if name.endswith(".py") and "/_data/" in name]  # data only
    # the serving pool compiled (mypyc) where a compiler is present, its sources beside it
    compiled = sorted(
        name for name in names if name.startswith("speedtrap/serving/") and name.endswith(".so")
    )
    assert [name.split("/")[-1].split(".")[0] for name in compiled] in ([], sorted(COMPILED_MODULES))
    assert all(f"speedtrap/serving/{name}.py" in names for name in COMPILED_MODULES)
    assert wheel.name.endswith("py3-none-any.whl") == (not compiled)
    # the typed core compiled (Cython) with the pool, its source and the digest of it beside it
    core = sorted(name for name in names if name.startswith("speedtrap/models/") and name.endswith(".so"))
    assert [name.split("/")[-1].split(".")[0] for name in core] == (["_typed_core"] if compiled else [])
    assert "speedtrap/models/_typed_core.pyx" in names
    assert ("speedtrap/models/typed_core_source.sha256" in names) == bool(core)

    # A fresh environment without pip; the dependencies come from this one's site-packages through a
    # .pth path entry (which does not run this environment's own .pth files, so the editable
    # checkout stays out of sight), and the wheel is installed by this environment's pip.
    venv = tmp_path / "venv"
    _run([python, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    target = Path(_run([str(venv / "bin" / "python"), "-c", purelib], tmp_path, env).strip())
    (target / "_speedtrap_test_deps.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    _run([python, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps",
          str(wheel)], tmp_path, env)  # fmt: skip

    work = tmp_path / "elsewhere"
    work.mkdir()
    bin_dir = venv / "bin"
    where = _run([str(bin_dir / "python"), "-c", "import speedtrap; print(speedtrap.__file__)"], work, env)
    assert Path(where.strip()).is_relative_to(venv), where
    build = "compiled pool (mypyc), typed core (Cython)" if compiled else "pure Python, no typed core"
    assert f"({build})" in _run([str(bin_dir / "speedtrap"), "--version"], work, env)
    assert "gpu-batched" in _run([str(bin_dir / "speedtrap"), "backends"], work, env)
    demo = _run([str(bin_dir / "speedtrap"), "demo", "--quick", "--out", "demo"], work, env)
    assert "headline: means over" in demo  # the shipped headline scenario, not the built-in defaults
    assert (work / "demo" / "summary.csv").is_file()
    headline = _run([str(bin_dir / "speedtrap"), "experiment", "headline", "--quick"], work, env)
    assert "Wrote" in headline and (work / "results" / "headline-quick" / "behaviour.csv").is_file()
    # under the stored ensemble, each member's runs are a store of their own
    assert list((work / "results" / "headline-quick-members").glob("member-*/spec.json"))


DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "notebooks" / "README.md")
"""The documents that tell a user what to install."""


@pytest.mark.skipif(sys.platform == "win32", reason="paths of a POSIX virtual environment")
def test_without_a_compiler_the_wheel_is_pure_python(tmp_path: Path) -> None:
    """The fallback: where no C compiler is found, the build says so and makes a pure-Python wheel
    (as SPEEDTRAP_PURE=1 asks for one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SPEEDTRAP_PURE")}
    env["CC"] = str(tmp_path / "no-such-compiler")
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", str(dist)]
    done = subprocess.run([*build, str(ROOT)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the serving pool stays pure Python (no C compiler" in done.stdout + done.stderr
    (wheel,) = dist.glob("speedtrap-*.whl")
    assert wheel.name.endswith("py3-none-any.whl")
    assert not [name for name in zipfile.ZipFile(wheel).namelist() if name.endswith(".so")]


def test_every_extra_the_docs_install_exists() -> None:
    """Each ``pip install … '.[extra]'`` in the README, its docs/ pages and the notebooks' README names
    an extra that pyproject.toml declares; the ``jupyter`` extra brings JupyterLab on top of the
    notebooks extra."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    named: set[str] = set()
    for doc in DOCS:
        for group in re.findall(r"pip install[^`\n]*?\.\[([a-z,]+)\]", doc.read_text(encoding="utf-8")):
            named.update(group.split(","))
    assert {"jupyter", "notebooks", "dask", "app"} <= named
    assert not named - set(extras), f"extras the docs install but pyproject.toml lacks: {named - set(extras)}"
    jupyter = extras["jupyter"]
    assert "speedtrap[notebooks]" in jupyter and any(req.startswith("jupyterlab") for req in jupyter)


JUPYTER_COMMANDS = {"execute": "nbclient", "nbconvert": "nbconvert", "lab": "jupyterlab"}
"""The package each ``jupyter <command>`` the docs give comes from."""


def test_every_jupyter_command_the_docs_give_is_installed_by_the_notebooks_extra() -> None:
    """``jupyter execute`` and ``jupyter nbconvert --execute`` (both documented for running a notebook
    headless) come with the ``notebooks`` extra and with ``dev``; ``jupyter lab`` with ``jupyter``."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    docs = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    commands = set(re.findall(r"jupyter (execute|nbconvert|lab)\b", docs))
    assert {"execute", "nbconvert"} <= commands
    for command in commands:
        package = JUPYTER_COMMANDS[command]
        extra = "jupyter" if command == "lab" else "notebooks"
        for name in (extra, "dev") if extra == "notebooks" else (extra,):
            assert any(re.match(rf"{package}\b", req) for req in extras[name]), (command, name, extras[name])


def test_the_wheel_section_says_which_python_it_needs() -> None:
    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    section = install.split("## Installing from a wheel", 1)[1].split("\n## ", 1)[0]
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    assert requires == ">=3.12" and "Python 3.12 or later" in section
