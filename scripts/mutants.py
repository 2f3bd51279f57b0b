"""Mutation check of the engines' differential test (issue 41; docs/performance.md, "Mutation check").

Each mutant changes one rule of the Mesa model only (the readable reference, ``speedtrap.agents``)
in a temporary copy of ``src/`` (the compiled typed core and serving pool copied with it, so the
copy's core is the installed one); the differential test (``tests/models/test_engine_differential.py``,
the normal run unless ``--slow``) then runs on the copy and must fail: the typed core still follows
the unchanged rule, so a test that cannot tell the engines apart lets the mutant live. An unchanged
copy runs first and must pass.

    .venv/bin/python scripts/mutants.py            # every mutant; exit status 1 if one survives
    .venv/bin/python scripts/mutants.py --list     # the mutants and what each changes
    .venv/bin/python scripts/mutants.py --only repairs-capped-at-1 --slow
    .venv/bin/python scripts/mutants.py --select mirrored_rule   # the scenarios aimed at rules only

Needs the typed core built (``speedtrap --version`` names it): without it the differential test
skips and the check says so. Wall time is printed per mutant (seconds, on this machine, for
information only).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/models/test_engine_differential.py"


@dataclass(frozen=True)
class Mutant:
    """One change to a Mesa-only rule: ``old`` (found exactly once in ``path``) becomes ``new``."""

    name: str
    path: str
    old: str
    new: str
    what: str


DEVELOPER = "src/speedtrap/agents/developer.py"
SESSION = "src/speedtrap/agents/session.py"

MUTANTS = (
    Mutant(
        "repairs-capped-at-1",
        DEVELOPER,
        "attempt < self._fixing.max_repair_sessions",
        "attempt < min(1, self._fixing.max_repair_sessions)",
        "at most one repair session per task, whatever max_repair_sessions says",
    ),
    Mutant(
        "repair-limit-off-by-one",
        DEVELOPER,
        "attempt < self._fixing.max_repair_sessions",
        "attempt <= self._fixing.max_repair_sessions",
        "one repair session more than max_repair_sessions (IndexError once repairs run out)",
    ),
    Mutant(
        "breaks-count-as-time-away",
        DEVELOPER,
        "self.attention.time_away_s(away_s, self._idle_total_s - item.idle_at_leave_s)",
        "self.attention.time_away_s(away_s, 0.0)",
        "resumption rule: time on a break counts as time away (expected_wait says it does not)",
    ),
    Mutant(
        "fixed-stretch-off-by-one",
        SESSION,
        "return start + int(self._checkin_every)",
        "return start + int(self._checkin_every) + 1",
        "fixed stretches (checkin_random false) one turn longer than checkin_every_turns",
    ),
    Mutant(
        "check-in-a-turn-late",
        SESSION,
        "elif done >= self.next_checkin:",
        "elif done > self.next_checkin:",
        "every check-in one turn after the stretch's planned end",
    ),
    Mutant(
        "paused-hand-work-starts-over",
        DEVELOPER,
        "task.manual_left_s = max(0.0, task.manual_left_s - done)",
        "task.manual_left_s = max(0.0, task.manual_left_s - 0.0 * done)",
        "hybrid hand work interrupted by a session starts over (what was done is not kept)",
    ),
    Mutant(
        "manual-escape-from-the-other-end",
        DEVELOPER,
        '"escaped" if task.u_fail[0] < self._manual_escape_prob',
        '"escaped" if 1.0 - task.u_fail[0] < self._manual_escape_prob',
        "manual policy: a task escapes on the other tail of its failure uniform",
    ),
    Mutant(
        "escape-surfaces-a-second-late",
        DEVELOPER,
        "after=task.escape_delay_s",
        "after=task.escape_delay_s + 1.0",
        "an escaped defect surfaces one second after escape_delay_s",
    ),
)


def _copy(destination: Path) -> Path:
    """A copy of ``src/`` (compiled modules and their digests included) under ``destination``."""
    src = destination / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return src


def _apply(src: Path, mutant: Mutant) -> None:
    target = src / Path(mutant.path).relative_to("src")
    text = target.read_text()
    if text.count(mutant.old) != 1:
        raise SystemExit(f"{mutant.name}: {mutant.old!r} is not found exactly once in {mutant.path}")
    target.write_text(text.replace(mutant.old, mutant.new))


def _run(src: Path, *, slow: bool, select: str | None = None) -> tuple[int, str]:
    """Run the differential test on the copy ``src``: (exit status, last line of its output)."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("SPEEDTRAP_PURE", None)
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import speedtrap.agents, speedtrap.models.typed_core as t; "
            "print(speedtrap.agents.__file__); print(t.core_module() is not None)",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if not where[0].startswith(str(src)):
        raise SystemExit(f"the copy is not the package imported ({where[0]})")
    if where[1] != "True":
        raise SystemExit("the typed core is not built or not in use: the differential test would skip")
    marks = ["-m", "slow or not slow"] if slow else []
    chosen = ["-k", select] if select else []
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *marks, *chosen, TEST]
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    failed = [line for line in lines if line.startswith("FAILED")]
    return out.returncode, (failed[0] if failed else lines[-1] if lines else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="run only this mutant (repeatable)")
    parser.add_argument("--slow", action="store_true", help="with the 600 slow random scenarios too")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--select", metavar="EXPR", help="only the tests pytest -k EXPR selects")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.list or not chosen:
        for m in MUTANTS:
            print(f"{m.name}: {m.what} ({m.path}: {m.old!r} -> {m.new!r})")
        return 0 if chosen else 2
    survivors = []
    with tempfile.TemporaryDirectory(prefix="speedtrap-mutants-") as tmp:
        control = _copy(Path(tmp) / "control")
        start = time.monotonic()
        status, line = _run(control, slow=args.slow, select=args.select)
        verdict = "passes" if status == 0 else "FAILS"
        print(f"unchanged copy: {verdict} ({time.monotonic() - start:.0f} s) {line}")
        if status != 0:
            return 1
        for mutant in chosen:
            src = _copy(Path(tmp) / mutant.name)
            _apply(src, mutant)
            start = time.monotonic()
            status, line = _run(src, slow=args.slow, select=args.select)
            verdict = "killed" if status == 1 else ("SURVIVED" if status == 0 else f"error (exit {status})")
            print(f"{mutant.name}: {verdict} ({time.monotonic() - start:.0f} s) {line}")
            if status != 1:
                survivors.append(mutant.name)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
