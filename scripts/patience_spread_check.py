"""One at a time: what the spread of patience between developers does to the reply signatures.

``python scripts/patience_spread_check.py --ensemble FILE [--member K] [--sigma 0.7 1.5 ...]``

Runs the headline scenario (experiments/scenarios/headline.toml) at 10 developers × 10 working
days, seed 1, with member ``K`` of the ensemble ``FILE`` applied as the calibration applies it, at
each log-sd of patience between developers (``developer.attention.patience_s.sigma``), and prints
the human gap's median and the five reply signatures (speedtrap.analysis.signatures) with the logs'
values beside them. docs/validation.md ("Why the spread of patience joined the calibration") quotes
it on the ensemble before that change::

    git show 633956b:src/speedtrap/validation/data/calibrated_ensemble.csv > /tmp/ensemble-22.csv
    python scripts/patience_spread_check.py --ensemble /tmp/ensemble-22.csv --member 0
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from speedtrap.experiments.ensemble import load_ensemble, member_overrides
from speedtrap.models.workflow import simulate
from speedtrap.validation.workflow import default_scenarios, headline_statistics, load_targets

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = {
    "human_response_median": "gap median (s)",
    "fast_response_share_after_short": "fast after short",
    "fast_response_share_after_long": "fast after long",
    "response_median_after_short": "median after short (s)",
    "response_median_after_long": "median after long (s)",
    "response_stretch_rank_correlation": "rank correlation",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ensemble", type=Path, required=True, help="an ensemble CSV file")
    parser.add_argument("--member", type=int, default=0, help="the member's row (default 0)")
    parser.add_argument("--sigma", type=float, nargs="+", default=[0.7, 1.5], help="log-sds to run")
    args = parser.parse_args()
    headline = default_scenarios(ROOT, names=("headline",))["headline"]
    overrides, _ = member_overrides(headline, load_ensemble(args.ensemble)[args.member])
    scenario = headline.with_overrides(overrides).with_overrides(
        {"developers": 10, "horizon_s": 10 * headline.workday_s}
    )
    rows = []
    for sigma in args.sigma:
        stats = headline_statistics(
            simulate(scenario.with_overrides({"developer.attention.patience_s.sigma": sigma}), 1)
        )
        rows.append({"patience log-sd": sigma} | {label: stats[key] for key, label in COLUMNS.items()})
    targets = load_targets().set_index("statistic")
    logs = {"patience log-sd": "logs / TraceLab"} | {
        label: targets.loc[key, "published"] for key, label in COLUMNS.items()
    }
    print(pd.DataFrame([*rows, logs]).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


if __name__ == "__main__":
    main()
