"""The calibrated ensemble's prediction of the idle share of task time in METR's 2025 trial, declared
before any published figure of it is read (docs/heldout_studies.md, "A declared prediction: idle
time").

``python scripts/idle_prediction.py [--seeds 2] [--seed 0] [--decisions results/decisions]``

Runs the ``metr`` scenario (experiments/scenarios/metr.toml: METR's developers, issues and era model)
with AI for every member of the stored calibrated ensemble on ``--seeds`` seeds each and prints the
idle share of task time — idle seconds (away from a running agent doing nothing else) over every
second charged to tasks, the day less other work, as `validate workflow` computes METR's waiting,
reviewing and fixing shares — and of the whole day: the members' mean, central 95% (2.5th–97.5th
percentiles of the members' means over their seeds) and quartiles. With ``--decisions DIR`` (a
``compare --decisions`` directory over the same ensemble, whose ``members.csv`` has each member's net
value and measurements on the headline), it also says how far the prediction would inform the
headline's AI-against-by-hand decision: Spearman's rank correlation of each member's METR idle share
with its headline idle share and with its net value, and the share of members for which AI pays on
either side of the members' median METR idle share.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from speedtrap.experiments.ensemble import default_ensemble, member_overrides
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models.workflow import simulate
from speedtrap.validation.workflow import default_scenarios, task_time_share

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2, help="seeds per member (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    parser.add_argument("--members", type=int, default=0, help="the first N members only (0: all)")
    parser.add_argument("--decisions", type=Path, help="a compare --decisions directory (members.csv)")
    args = parser.parse_args(argv)
    members = default_ensemble()
    if not members:
        raise SystemExit("no stored calibrated ensemble")
    if args.members:
        members = members[: args.members]
    scenario = default_scenarios(ROOT, names=("metr",))["metr"]
    seeds = replication_seeds(args.seed, args.seeds * len(members))
    rows = []
    for k, values in enumerate(members):
        overrides, _ = member_overrides(scenario, values)
        member = scenario.with_overrides(overrides)
        for seed in seeds[k * args.seeds : (k + 1) * args.seeds]:
            result = simulate(member, seed)
            rows.append(
                {
                    "member": k,
                    "seed": seed,
                    "of_task_time": task_time_share(result, "idle"),
                    "of_the_day": result.summary()["share_idle"],
                }
            )
    per_member = pd.DataFrame(rows).groupby("member")[["of_task_time", "of_the_day"]].mean()
    print(
        f"Idle share on METR's AI-allowed issues (scenario metr, sonnet-2025), {len(per_member)} members × "
        f"{args.seeds} seeds (fractions; members' mean, central 95% and quartiles of their means):"
    )
    for column, words in (
        ("of_task_time", "of task time (the day less other work)"),
        ("of_the_day", "of the day"),
    ):
        x = per_member[column].to_numpy(float)
        low, q1, median, q3, high = np.percentile(x, [2.5, 25, 50, 75, 97.5])
        print(
            f"  {words}: mean {x.mean():.3f}, central 95% {low:.3f}–{high:.3f}, "
            f"quartiles {q1:.3f} / {median:.3f} / {q3:.3f}"
        )
    if args.decisions is not None:
        _against_the_headline(per_member, args.decisions / "members.csv")
    return per_member


AI_NET = "net_usd_per_dev_day: AI (gpu-batched) vs by hand"
HEADLINE_IDLE = "measured on gpu-batched: share_idle"


def _against_the_headline(per_member: pd.DataFrame, path: Path) -> None:
    """How the METR prediction lines up with the headline decision, member by member."""
    from scipy.stats import spearmanr

    if not path.is_file():
        raise SystemExit(f"{path}: no such file (run compare --decisions first)")
    headline = pd.read_csv(path, index_col=0)
    if AI_NET not in headline or HEADLINE_IDLE not in headline:
        raise SystemExit(f"{path}: needs the columns {AI_NET!r} and {HEADLINE_IDLE!r}")
    both = per_member.join(headline[[HEADLINE_IDLE, AI_NET]], how="inner")
    x = both["of_task_time"]
    rho_idle = spearmanr(x, both[HEADLINE_IDLE]).statistic
    rho_net = spearmanr(x, both[AI_NET]).statistic
    cut = float(x.median())
    low, high = both[x <= cut], both[x > cut]
    print(
        f"Against the headline ({len(both)} members of {path}): Spearman's rho of the METR idle share of "
        f"task time with the headline idle share {rho_idle:.2f}, with AI's net value against by hand "
        f"{rho_net:.2f}; "
        f"AI pays for {(low[AI_NET] > 0).mean():.0%} of the {len(low)} members predicting at most {cut:.3f} "
        f"and for {(high[AI_NET] > 0).mean():.0%} of the {len(high)} predicting more."
    )


if __name__ == "__main__":
    main()
