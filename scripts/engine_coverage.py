"""Line coverage of the Mesa rules the typed core mirrors, under the differential test's scenarios
(issue 41; docs/performance.md, "Two engines that cannot drift").

Runs the Mesa model (the reference) on the random scenarios of
``tests/models/test_engine_differential.py`` and its scenarios aimed at single rules, and counts
which lines of the agents' functions ran (``sys.monitoring``, Python 3.12): per module the lines
run of the lines in functions, and the functions with lines that never ran (each a rule no scenario
reached: a Mesa-only feature the core does not cover, or a gap in the test).

    .venv/bin/python scripts/engine_coverage.py            # the normal run's 100 random scenarios
    .venv/bin/python scripts/engine_coverage.py --random 700
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import sys
import types
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRRORED = ("agents/developer.py", "agents/session.py", "agents/task.py", "agents/attention.py")
"""The modules whose rules the typed core mirrors (the serving pool is held to it by its own tests)."""


def _function_lines(path: Path) -> dict[int, str]:
    """Every line of code in a function of ``path``, with the function's qualified name."""
    lines: dict[int, str] = {}

    def walk(code: types.CodeType, outer: bool) -> None:
        if not outer and code.co_flags & inspect.CO_OPTIMIZED:  # a function's body, not a class's
            for _, _, line in code.co_lines():
                if line is not None and line != code.co_firstlineno:
                    lines.setdefault(line, code.co_qualname)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const, False)

    walk(compile(path.read_text(), str(path), "exec"), True)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--random", type=int, default=100, help="random scenarios to run (default 100)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests" / "models"))
    diff = importlib.import_module("test_engine_differential")  # the scenarios themselves, not a copy

    import speedtrap
    import speedtrap.models.workflow as workflow

    package = Path(speedtrap.__file__).resolve().parent
    targets = {str(package / name): name for name in MIRRORED}
    seen: dict[str, set[int]] = defaultdict(set)
    monitoring = sys.monitoring
    tool = monitoring.COVERAGE_ID

    def on_line(code: types.CodeType, line: int) -> object:
        if code.co_filename not in targets:
            return monitoring.DISABLE
        seen[code.co_filename].add(line)
        return monitoring.DISABLE  # each line counted once

    workflow.core_module = lambda: None  # the Mesa model, the reference
    monitoring.use_tool_id(tool, "engine_coverage")
    monitoring.register_callback(tool, monitoring.events.LINE, on_line)
    monitoring.set_events(tool, monitoring.events.LINE)
    try:
        for index in range(args.random):
            scenario, _ = diff.random_scenario(index)
            with contextlib.suppress(ValueError, RuntimeError):  # one neither engine runs, refused alike
                workflow.simulate(scenario, index)
        for overrides, _ in diff.BRANCHES.values():
            workflow.simulate(diff.branch_scenario(overrides), 7)
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    total_run = total = 0
    for filename, name in targets.items():
        lines = _function_lines(Path(filename))
        ran = seen[filename] & set(lines)
        total_run += len(ran)
        total += len(lines)
        print(
            f"{name}: {len(ran)} of {len(lines)} lines in functions ran ({100 * len(ran) / len(lines):.1f}%)"
        )
        missed: dict[str, list[int]] = defaultdict(list)
        for line, function in sorted(lines.items()):
            if line not in ran:
                missed[function].append(line)
        for function, numbers in missed.items():
            print(f"    not reached: {function} (lines {', '.join(map(str, numbers))})")
    print(f"all: {total_run} of {total} lines ({100 * total_run / total:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
