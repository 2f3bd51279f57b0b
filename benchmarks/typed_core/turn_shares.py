"""Where a headline agent turn's time goes, by part of the code: the bound on what a typed core of
the event loop and the pool alone could gain on the headline (docs/performance.md, "A typed core").

Profiles (cProfile), after a short warm-up run (lazy imports), one run of the headline scenario
(experiments/scenarios/headline.toml, 10 developers, ``--days`` days, results tables built) and
splits the self time of every function by the part of the code it belongs to; the self time of
built-in functions (heap pushes, ``min``, ``max``, numpy calls) goes to the part that called them,
in proportion to the time spent under each caller. cProfile adds a cost to every call, so these are
the shares of a profiled run, not of a plain one (docs/performance.md compares them with the
compiled pool's measured gain). Then, for a typed core that makes the event loop and
the pool ``s`` times faster and leaves the rest alone, the headline's gain is at most
``1 / ((1 - f) + f / s)`` (Amdahl), printed for the measured ``s`` of ``bench_typed_core.py`` and
for an unbounded ``s``.

Run: ``python benchmarks/typed_core/turn_shares.py [--days 2] [--speedup 50]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
from collections import defaultdict
from pathlib import Path

from speedtrap.build import pool_build
from speedtrap.config import Scenario
from speedtrap.models import simulate

HEADLINE = Path(__file__).resolve().parents[2] / "experiments" / "scenarios" / "headline.toml"
CORE = ("event loop (models/base.py)", "serving pool and its physics (serving/)")


def part(filename: str) -> str:
    """The part of the code a function's file belongs to."""
    name = filename.replace("\\", "/")
    if "/speedtrap/models/base.py" in name:
        return CORE[0]
    if "/speedtrap/serving/" in name or "speedtrap_serving__mypyc" in name:
        return CORE[1]
    for key, label in (
        ("/speedtrap/agents/", "agents (developer, session, backend)"),
        ("/speedtrap/models/", "models (workflow, ledger, results)"),
        ("/speedtrap/", "speedtrap, other"),
        ("/mesa/", "Mesa"),
        ("/numpy/", "numpy"),
        ("/pandas/", "pandas"),
    ):
        if key in name:
            return label
    return "other (standard library, builtins with no caller)"


def shares(stats: pstats.Stats) -> dict[str, float]:
    """Self time by part; a built-in's self time split over its callers' parts."""
    out: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if filename == "~" and callers:
            under = sum(c[2] for c in callers.values()) or 1.0
            for (caller_file, _, _), c in callers.items():
                out[part(caller_file)] += tottime * c[2] / under
        else:
            out[part(filename)] += tottime
    return dict(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--days", type=float, default=2.0)
    parser.add_argument("--speedup", type=float, default=50.0, help="the typed core's measured speed-up")
    args = parser.parse_args(argv)
    scenario = Scenario.from_toml(HEADLINE)
    scenario = scenario.with_overrides({"horizon_s": args.days * scenario.workday_s})
    print(f"serving pool build: {pool_build()}; headline, 10 developers x {args.days:g} days, profiled")
    simulate(scenario.with_overrides({"horizon_s": 600.0}), 1)  # warm-up: lazy imports, caches
    profile = cProfile.Profile()
    profile.enable()
    simulate(scenario, 0)
    profile.disable()
    by_part = shares(pstats.Stats(profile))
    total = sum(by_part.values())
    for name, seconds in sorted(by_part.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<52} {100 * seconds / total:5.1f}%")
    f = sum(by_part.get(name, 0.0) for name in CORE) / total
    print(f"event loop + serving pool: f = {100 * f:.1f}% of the profiled run")
    for s in (args.speedup, float("inf")):
        bound = 1.0 / ((1.0 - f) + (f / s if s != float("inf") else 0.0))
        print(f"  headline gain at most {bound:.2f}x with the core {s:g}x faster")


if __name__ == "__main__":
    main()
