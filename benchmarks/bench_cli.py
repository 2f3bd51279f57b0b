"""Benchmark: how fast the ``speedtrap`` command starts.

Times ``speedtrap --help``, ``speedtrap backends`` and ``speedtrap pareto`` as fresh processes
(median of ``--repeat`` runs: wall and CPU seconds of the child), and counts the modules that
``import speedtrap.cli`` loads. The target is under 1 s of wall time on an idle machine; heavy
libraries (Mesa, scipy.stats, matplotlib, seaborn, pandas) are imported by the commands that use
them, not by the command line itself.

Run: ``python benchmarks/bench_cli.py [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "backends": ["backends"],
    "pareto": ["pareto", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--context", "8000"],
}
TARGET_WALL_S = 1.0
HEAVY_MODULES = ("mesa", "scipy.stats", "matplotlib.pyplot", "seaborn", "pandas")


def speedtrap_argv() -> list[str]:
    """The command line that runs ``speedtrap`` with this interpreter."""
    return [sys.executable, "-m", "speedtrap"]


def time_command(args: list[str], repeat: int) -> tuple[float, float]:
    """Median (wall, CPU) seconds of ``speedtrap ARGS`` over ``repeat`` fresh processes."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        start = time.perf_counter()
        subprocess.run([*speedtrap_argv(), *args], check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(
            (after.children_user - before.children_user) + (after.children_system - before.children_system)
        )
    return statistics.median(walls), statistics.median(cpus)


def imported_modules() -> tuple[int, list[str]]:
    """(modules loaded by ``import speedtrap.cli``, the heavy ones among them)."""
    code = (
        "import sys; import speedtrap.cli; "
        f"print(len(sys.modules)); print(','.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    count, heavy = out.strip().split("\n") if "\n" in out.strip() else (out.strip(), "")
    return int(count), [m for m in heavy.split(",") if m]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="Runs per command (median reported).")
    args = parser.parse_args(argv)
    count, heavy = imported_modules()
    print(f"import speedtrap.cli: {count} modules; heavy ones loaded: {', '.join(heavy) or 'none'}")
    for name, command in COMMANDS.items():
        wall, cpu = time_command(command, args.repeat)
        verdict = "ok" if wall < TARGET_WALL_S else f"above the {TARGET_WALL_S:g} s target"
        print(f"speedtrap {name:<9} {wall:6.2f} s wall  {cpu:6.2f} s CPU  ({verdict})")
    print(f"({Path(sys.executable).name}, {args.repeat} runs each; an idle machine gives comparable numbers)")


if __name__ == "__main__":
    main()
