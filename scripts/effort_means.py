"""METR's effort ratio (a geometric mean over paired tasks) beside the ratio of total effort over the
same tasks and the output ratio, member by member.

``python scripts/effort_means.py [--scenario agentic-2026] [--every 6] [--seed 1]``

Runs the scenario (experiments/scenarios/<name>.toml) with AI and by hand for every ``--every``-th
member of the stored calibrated ensemble, one seed each, and prints per member: METR's statistic
(``speedtrap.validation.workflow.effort_ratio``), the ratio of the summed effort over the same
paired accepted tasks, the tasks each arm accepted, and the output and tasks ratios
(``metr_statistics``). docs/validation.md ("One productivity accounting") quotes it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from speedtrap.experiments.ensemble import default_ensemble, member_overrides
from speedtrap.models.results import ACCEPTED_OUTCOMES
from speedtrap.models.workflow import simulate
from speedtrap.validation.workflow import default_scenarios, metr_statistics

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="agentic-2026", help="a scenario of experiments/scenarios")
    parser.add_argument("--every", type=int, default=6, help="run every k-th member (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    members = default_ensemble()
    if not members:
        raise SystemExit("no stored calibrated ensemble")
    scenario = default_scenarios(ROOT, names=(args.scenario,))[args.scenario]
    rows = []
    for k in range(0, len(members), args.every):
        overrides, _ = member_overrides(scenario, members[k])
        member = scenario.with_overrides(overrides)
        with_ai, by_hand = simulate(member, args.seed), simulate(member.with_backend("manual"), args.seed)
        stats = metr_statistics(with_ai, by_hand)
        ai = with_ai.tasks[with_ai.tasks["outcome"].isin(ACCEPTED_OUTCOMES)]
        manual = by_hand.tasks[by_hand.tasks["outcome"].isin(ACCEPTED_OUTCOMES)]
        both = ai.merge(manual, on=["developer", "task"], suffixes=("_ai", "_manual"))
        rows.append(
            {
                "member": k,
                "METR effort ratio (geometric)": stats["ai_vs_manual_time_ratio"],
                "total effort ratio (same tasks)": both["human_s_ai"].sum() / both["human_s_manual"].sum(),
                "paired tasks": len(both),
                "accepted with AI": len(ai),
                "accepted by hand": len(manual),
                "output ratio": stats["ai_vs_manual_output_ratio"],
                "tasks ratio": stats["ai_vs_manual_throughput_ratio"],
            }
        )
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
