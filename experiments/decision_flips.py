"""Which behaviour parameters flip the headline decisions within their sourced ranges, one at a time
from the calibrated ensemble's centre: ``python experiments/decision_flips.py [--quick]``.

Arms: gpu-batched (the baseline), gpu-fast, wafer-distilled and by hand (manual) on the headline
scenario (experiments/scenarios/headline.toml) at its value of developer time, so the decisions are
fast mode vs standard, wafer vs standard and AI vs by hand. Writes ``docs/decisions/flips.csv`` (the
full size) or ``results/decision_flips/flips.csv`` (--quick) and prints the flipping parameters.
The method: :mod:`speedtrap.experiments.decision_flips`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from speedtrap.analysis.decisions import decision_pairs
from speedtrap.experiments.decision_flips import centre_member, decision_flips
from speedtrap.experiments.ensemble import default_ensemble
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models.workflow import simulate_summary
from speedtrap.validation.workflow import default_scenarios

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("gpu-batched", "gpu-fast", "wafer-distilled", "manual")
SIZE = {"full": (10, 10.0, 6), "quick": (1, 1.0, 2)}
"""(developers, working days, seeds) per run: the full size is the headline's team of 10 for two
working weeks on 6 paired seeds (every parameter end runs 4 arms × 6 seeds: 44 parameters and
constants × 2 ends × 24 runs, a few minutes), the quick one a smoke run."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (1 developer × 1 day × 2 seeds)")
    parser.add_argument("--out", type=Path, default=None, help="the CSV to write")
    args = parser.parse_args(argv)
    developers, days, n_seeds = SIZE["quick" if args.quick else "full"]
    headline = default_scenarios(ROOT, names=("headline",))["headline"]
    base = headline.with_overrides({"developers": developers, "horizon_s": days * headline.workday_s})
    arms = {name: base.with_backend(name) for name in ARMS}
    members = default_ensemble()
    if not members:
        print("no calibrated ensemble stored: nothing to centre on", file=sys.stderr)
        return 2
    centre = centre_member(members)
    seeds = replication_seeds(20261206, n_seeds)

    def progress(done: int, total: int) -> None:
        print(f"\rparameters done: {done}/{total}", end="", file=sys.stderr, flush=True)

    table = decision_flips(
        arms, decision_pairs(list(ARMS)), centre, seeds, simulate_summary, progress=progress
    )
    print(file=sys.stderr)
    out = args.out or (
        ROOT / "results" / "decision_flips" / "flips.csv"
        if args.quick
        else ROOT / "docs" / "decisions" / "flips.csv"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    flips = table[table["flips"]]
    print(
        f"{developers} developers × {days:g} days × {n_seeds} seeds per end, centre member of "
        f"{len(members)}: {len(flips)} flips"
    )
    for row in flips.itertuples():
        print(
            f"  {row.decision}: {row.parameter} ({row.kind}) flips it ({row.low:g} → net "
            f"${row.net_at_low:+,.0f} ± {row.se_at_low:,.0f}; {row.high:g} → ${row.net_at_high:+,.0f} ± "
            f"{row.se_at_high:,.0f} per developer-day, ± one standard error over the seeds)"
            + ("" if row.clear else ": not clear of the seeds' noise (a seed 95% interval includes 0)")
        )
    print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
