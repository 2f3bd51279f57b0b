"""Every command and code block in README.md, and in the docs/ pages it links to, runs: shell
commands through the installed ``speedtrap`` and the venv's Python, Python blocks with ``exec``,
TOML blocks as scenarios (or, for a ``pareto --spec`` file, through the ``pareto`` command the page
gives for it); ``make`` targets exist and run the commands tested here; every relative link and
anchor resolves. Runs in a scratch directory that sees the repository's ``experiments/`` and
``examples/``, so results never land in the checkout."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from speedtrap.cli.serving import SPEC_TABLES
from speedtrap.config import Scenario

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent


def linked_pages() -> list[str]:
    """The docs/ pages the README links to, in the order it first links them."""
    pages = re.findall(r"\]\((docs/[^)#\s]+\.md)(?:#[^)]*)?\)", README)
    return list(dict.fromkeys(pages))


PAGES = ["README.md", *linked_pages()]
"""The README and the docs pages it links to: the documents whose commands are run."""
TEXTS = {page: (ROOT / page).read_text(encoding="utf-8") for page in PAGES}


def page_blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", TEXTS[page], flags=re.DOTALL)


def blocks(language: str) -> list[tuple[str, int]]:
    """(page, index) of every ``language`` block of the documents in :data:`PAGES`."""
    return [(page, i) for page in PAGES for i in range(len(page_blocks(page, language)))]


def shell_commands(page: str | None = None) -> list[str]:
    pages = PAGES if page is None else [page]
    lines = [
        line.split(" #")[0].strip()
        for p in pages
        for block in page_blocks(p, "bash")
        for line in block.splitlines()
    ]
    return [line for line in lines if line]


COMMANDS = list(dict.fromkeys(shell_commands()))


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "experiments").symlink_to(ROOT / "experiments")
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    yield tmp_path


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A local Dask scheduler standing in for the docs' ``tcp://SCHEDULER:8786``."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        yield cluster.scheduler_address


def run_command(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a documented ``speedtrap …`` or ``python …`` command in ``cwd`` with this venv's tools."""
    argv = shlex.split(command)
    if argv[0] == "speedtrap":
        argv[0] = str(BIN / "speedtrap")
    elif argv[0] == "python":
        argv[0] = sys.executable
    else:
        pytest.fail(f"documented command of an unknown kind: {command}")
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False, env=os.environ.copy()
    )


def test_readme_shows_the_two_fresh_machine_commands() -> None:
    assert "make demo" in shell_commands("README.md") and "make test" in shell_commands("README.md")
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "make demo" in quick_start and "make test" in quick_start


def test_the_readme_says_what_make_test_installs() -> None:
    """``make test`` sets up the browser its tests drive (scripts/browser_for_tests.sh, one line when
    it cannot), and the set-up page the README's quick start links to says so."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ntest: ", 1)[1].split("\n\n", 1)[0]
    assert "scripts/browser_for_tests.sh" in recipe
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "docs/install.md#setting-up-a-checkout" in quick_start
    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    setting_up = " ".join(install.split("## Setting up a checkout", 1)[1].split("\n## ", 1)[0].split())
    assert "`make test` also installs Debian's `chromium` for the browser tests" in setting_up
    assert "says why in one line" in setting_up


def test_make_targets_run_what_the_tests_cover() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for command in (c for c in COMMANDS if c.startswith("make ")):
        target = command.split()[1]
        assert re.search(rf"^{target}:", makefile, flags=re.MULTILINE), command
    assert re.search(r"^demo:.*\n\t\$\(BIN\)/speedtrap demo$", makefile, flags=re.MULTILINE)
    assert "speedtrap demo" in COMMANDS_RUN_HERE


COMMANDS_RUN_HERE = [c for c in COMMANDS if not c.startswith("make ")] + ["speedtrap demo"]

RUN_ELSEWHERE = {
    "speedtrap validate serving": (
        "tests/validation/test_serving_validation.py",
        "test_the_documented_command_prints_this_fit",
    ),
    "python experiments/calibrate.py --quick": (
        "tests/experiments/test_calibrate.py",
        "test_quick_script_runs_end_to_end_and_a_rerun_recomputes_nothing",
    ),
}
"""Documented commands that a test elsewhere runs as documented, on work it computes anyway (the
serving validation's held-out fit, the quick calibration): run here too, each would compute it twice."""


def test_the_commands_run_elsewhere_are_documented_and_run_there() -> None:
    for command, (path, name) in RUN_ELSEWHERE.items():
        assert command in COMMANDS_RUN_HERE, command
        source = (ROOT / path).read_text(encoding="utf-8")
        assert f"def {name}(" in source, (path, name)


@pytest.mark.parametrize("command", COMMANDS_RUN_HERE)
def test_readme_command_runs(command: str, scratch: Path, request: pytest.FixtureRequest) -> None:
    if "tests/sessions/data" in command or "team/" in command:
        pytest.skip("a team's walkthrough, run in order by tests/sessions/test_docs_team.py")
    if command in RUN_ELSEWHERE:
        pytest.skip(f"run as documented by {'::'.join(RUN_ELSEWHERE[command])}")
    if "SCHEDULER" in command:
        address = request.getfixturevalue("scheduler")
        command = command.replace("tcp://SCHEDULER:8786", address)
    done = run_command(command, scratch)
    assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize(("page", "index"), blocks("python"))
def test_readme_python_block_runs(
    page: str, index: int, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(scratch)
    code = page_blocks(page, "python")[index]
    exec(compile(code, f"{page} python block {index}", "exec"), {"__name__": "readme"})


@pytest.mark.parametrize(("page", "index"), blocks("toml"))
def test_readme_toml_block_is_valid(page: str, index: int, scratch: Path) -> None:
    """A scenario block validates as a :class:`Scenario`; a ``pareto --spec`` block (only the spec
    file's tables) is written to the file the page's ``speedtrap pareto --spec FILE …`` command names
    after it, and that command runs."""
    text = page_blocks(page, "toml")[index]
    data = tomllib.loads(text)
    if data and set(data) <= set(SPEC_TABLES):
        after = TEXTS[page].split(text, 1)[1]
        command = re.search(r"`(speedtrap pareto --spec (\S+)[^`]*)`", after)
        assert command is not None, f"{page}: a pareto spec with no `speedtrap pareto --spec FILE` after it"
        (scratch / command.group(2)).write_text(text, encoding="utf-8")
        done = run_command(command.group(1), scratch)
        assert done.returncode == 0, f"{command.group(1)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        return
    scenario = Scenario.model_validate(data)
    assert scenario.developers >= 1


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(document: Path) -> None:
    """Every relative link and image of the README and docs/ names a file that exists, and every
    ``#anchor`` a heading of that file (moving text between pages must not leave a dead link)."""
    text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.DOTALL)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        assert path.exists(), f"{document.name}: link to {target}: no such file"
        if anchor:
            assert anchor in anchors(path), f"{document.name}: link to {target}: no such heading"


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    """The README links every docs/ page, so every command on one is run by the tests above."""
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages <= set(PAGES), f"docs pages the README does not link: {sorted(pages - set(PAGES))}"
