"""`make test` sets up the browser its browser tests drive: scripts/browser_for_tests.sh installs
Debian's chromium when it is missing and it may (root, or sudo without a password), and otherwise
says in one line why the browser tests will skip; `make test` passes that reason to pytest as
SPEEDTRAP_NO_BROWSER, and the browser tests then skip with it, even with CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "browser_for_tests.sh"
BASH = "/bin/bash"

pytestmark = pytest.mark.skipif(not Path(BASH).exists(), reason="needs /bin/bash")


def fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!{BASH}\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


def setup(tmp_path: Path, *, uid: int, apt: str | None, sudo: bool = False) -> tuple[Path, dict[str, str]]:
    """A PATH of fakes only: ``id -u`` prints ``uid``; ``apt-get`` runs ``apt`` (absent if None)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake(bin_dir, "id", f"echo {uid}")
    if apt is not None:
        fake(bin_dir, "apt-get", f'echo "$@" >> {tmp_path}/apt.log\n{apt}')
    if sudo:
        fake(bin_dir, "sudo", 'shift; "$@"')  # sudo -n CMD…: run it
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    return bin_dir, env


def browser_for_tests(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=True
    )


def test_a_browser_already_there_needs_nothing(tmp_path: Path) -> None:
    bin_dir, env = setup(tmp_path, uid=1000, apt=None)
    fake(bin_dir, "chromium", "exit 0")
    done = browser_for_tests(env)
    assert done.stdout == "" and done.stderr == ""


def test_without_root_or_sudo_it_says_why_the_browser_tests_will_skip(tmp_path: Path) -> None:
    _, env = setup(tmp_path, uid=1000, apt="exit 0")
    done = browser_for_tests(env)
    assert (
        done.stdout.strip()
        == "no chromium, and installing it needs root or sudo (run: sudo apt-get install chromium)"
    )
    assert done.stderr.count("\n") == 1 and "the browser tests will skip" in done.stderr
    assert not (tmp_path / "apt.log").exists()


def test_as_root_it_installs_debians_chromium(tmp_path: Path) -> None:
    cp = shutil.which("cp")
    assert cp is not None
    chromium = tmp_path / "bin" / "chromium"
    installs = f'[ "$1" = install ] && {cp} {tmp_path}/bin/id {chromium}; exit 0'  # a stand-in browser
    _, env = setup(tmp_path, uid=0, apt=installs)
    done = browser_for_tests(env)
    assert done.stdout == "", done.stderr
    assert chromium.exists()
    assert (tmp_path / "apt.log").read_text().splitlines() == ["update -qq", "install -y -qq chromium"]


def test_with_sudo_and_no_network_it_says_so(tmp_path: Path) -> None:
    _, env = setup(tmp_path, uid=1000, apt="exit 100", sudo=True)
    done = browser_for_tests(env)
    assert done.stdout.strip().startswith("no chromium, and apt-get could not install it")
    assert done.stderr.splitlines()[-1].endswith("the browser tests will skip")


def test_make_test_passes_the_reason_to_pytest() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    (suite,) = [line.strip() for line in recipe.splitlines() if "-m pytest" in line]
    # the whole suite gets the reason (the pure-Python rerun after it runs no browser test)
    assert suite.startswith('SPEEDTRAP_NO_BROWSER="$$(bash scripts/browser_for_tests.sh)"')
    # the whole suite: after `-m pytest` only options (e.g. --durations), never a path or a -k/-m filter
    options = suite.split("-m pytest", 1)[1].split()
    assert options[0] == "-q" and all(o.startswith("--") for o in options[1:]), options


def test_the_browser_tests_skip_with_the_reason_even_in_ci(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SPEEDTRAP_CHROMIUM"}
    env |= {
        "CI": "true",
        "SPEEDTRAP_NO_BROWSER": "no chromium, and no way to install it",
        "PATH": str(tmp_path),
    }
    module = ROOT / "tests" / "app" / "test_app_browser.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "failed" not in done.stdout and "error" not in done.stdout.lower(), done.stdout
    assert "no chromium, and no way to install it" in done.stdout, done.stdout
