"""How many hours of a team's logs narrow the AI-vs-by-hand behavioural interval?

Subsamples the vendored real logs (every ``.jsonl`` under ``tests/sessions/data/``: Claude Code and
Codex sessions of public repositories, tests/sessions/data/*/SOURCES.md) to increasing hours — the
first fraction f of every session's span, f = 1/8, 1/4, 1/2, 3/4, 1 — fits a scenario to each
subsample, history-matches the stored calibrated ensemble to it (:mod:`speedtrap.experiments.team`)
and records against the hours of logs:

* the members kept of the prior's;
* the behavioural 95% interval of AI (gpu-batched) against working by hand (``manual``) in tasks per
  developer-day, over the kept members (``speedtrap.analysis.intervals.two_interval_differences``,
  the interval ``compare`` prints), and its width; 0 h is the prior, every member.

The AI-vs-by-hand runs are made once per member, on the scenario fitted to all the logs (the fit's
measured values kept, as in the team fit) at 4 developers × the team fit's days, 2 seeds per
member; each subsample's interval is taken over its kept members' runs.

    python experiments/team_log_hours.py            # full: 4 seeds × 5 days per member and subsample
    python experiments/team_log_hours.py --quick    # 2 seeds × 2 days, fractions 1/4 and 1

Writes ``docs/team_log_hours.csv`` and ``docs/figures/team_log_hours.png`` (``--out`` to change
the folder; the figure goes to ``OUT/figures/``).
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import pandas as pd

from speedtrap.analysis.intervals import two_interval_differences
from speedtrap.experiments.ensemble import member_overrides
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.experiments.team import fit_team, load_prior
from speedtrap.models.workflow import simulate_summary
from speedtrap.sessions import fit_scenario, load_sessions

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "sessions" / "data"
FULL = {"fractions": [0.125, 0.25, 0.5, 0.75, 1.0], "replications": 4, "days": 5.0}
QUICK = {"fractions": [0.25, 1.0], "replications": 2, "days": 2.0}
AI, BY_HAND = "gpu-batched", "manual"
OUTCOME = "tasks_per_dev_day"
ARM_DEVELOPERS = 4
ARM_SEEDS = 2


def first_fraction(trace: pd.DataFrame, fraction: float) -> pd.DataFrame:
    """The requests that start in the first ``fraction`` of their session's span (subagents by their
    own session's span)."""
    g = trace.groupby(["developer", "session"])["start_s"]
    start, end = g.transform("min"), trace.groupby(["developer", "session"])["end_s"].transform("max")
    return trace[trace["start_s"] <= start + fraction * (end - start)].reset_index(drop=True)


def hours(trace: pd.DataFrame) -> float:
    """Hours of sessions: per session, its first request's start to its last request's end."""
    g = trace.groupby(["developer", "session"])
    return float((g["end_s"].max() - g["start_s"].min()).sum() / 3600.0)


def arm_runs(scenario, prior, fitted_paths, days: float) -> pd.DataFrame:
    """AI and by-hand runs of every member (the fit's measured paths kept at the team's values)."""
    base = scenario.with_overrides({"developers": ARM_DEVELOPERS, "horizon_s": days * scenario.workday_s})
    seeds = replication_seeds(0, ARM_SEEDS)
    rows = []
    for member_id, member in zip(prior.ids, prior.members, strict=True):
        for arm in (AI, BY_HAND):
            armed = base.with_backend(arm)
            overrides, _ = member_overrides(armed, member, keep=tuple(fitted_paths))
            run = armed.with_overrides(overrides)
            for j, seed in enumerate(seeds):
                rows.append(
                    {
                        "arm": arm,
                        "member": member_id,
                        "replication": j,
                        "seed": seed,
                        **simulate_summary(run, seed),
                    }
                )
    return pd.DataFrame(rows)


def interval(runs: pd.DataFrame, members: list[int]) -> tuple[float, float, float]:
    """(mean, behavioural low, high) of by hand − AI in tasks per developer-day over ``members``."""
    table = two_interval_differences(runs[runs["member"].isin(members)], "arm", AI, [OUTCOME])
    row = table.iloc[0]
    return float(row["mean"]), float(row["behaviour_low"]), float(row["behaviour_high"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds × 2 days per member, fractions 1/4, 1")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "docs", help="folder for the CSV (figure: OUT/figures)"
    )
    parser.add_argument("--replot", action="store_true", help="redraw the figure from OUT/team_log_hours.csv")
    args = parser.parse_args()
    if args.replot:
        plot(pd.read_csv(args.out / "team_log_hours.csv"), args.out / "figures" / "team_log_hours.png")
        return
    size = QUICK if args.quick else FULL
    started = time.monotonic()
    everything = load_sessions([LOGS])
    prior = load_prior()
    whole = fit_scenario(everything)
    runs = arm_runs(whole.scenario, prior, list(whole.values), float(size["days"]))
    mean, low, high = interval(runs, prior.ids)
    rows = [
        {
            "fraction": 0.0,
            "hours": 0.0,
            "sessions": 0,
            "requests": 0,
            "statistics_used": 0,
            "kept": len(prior.ids),
            "of": len(prior.ids),
            "by_hand_minus_ai_mean": mean,
            "behaviour_low": low,
            "behaviour_high": high,
            "width": high - low,
        }
    ]
    print(
        f"prior: {len(prior.ids)} members, by hand − AI {mean:+.2f} tasks/dev-day [{low:+.2f}, {high:+.2f}]"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for fraction in size["fractions"]:
            part = first_fraction(everything.trace, float(fraction))
            path = Path(tmp) / f"logs_{fraction}.csv"
            part.to_csv(path, index=False)
            loaded = load_sessions([path])
            fitted = fit_scenario(loaded)
            fit = fit_team(
                loaded.trace,
                fitted.scenario,
                prior,
                replications=int(size["replications"]),
                days=float(size["days"]),
                fitted=list(fitted.values),
            )
            kept = fit.kept
            mean, low, high = interval(runs, kept) if kept else (math.nan, math.nan, math.nan)
            rows.append(
                {
                    "fraction": fraction,
                    "hours": hours(loaded.trace),
                    "sessions": loaded.n_sessions,
                    "requests": len(loaded.trace),
                    "statistics_used": len(fit.used),
                    "kept": len(kept),
                    "of": len(prior.ids),
                    "by_hand_minus_ai_mean": mean,
                    "behaviour_low": low,
                    "behaviour_high": high,
                    "width": high - low,
                }
            )
            print(
                f"{rows[-1]['hours']:.2f} h ({fraction:g} of each session): "
                f"kept {len(kept)} of {len(prior.ids)} "
                f"on {len(fit.used)} statistics; by hand − AI [{low:+.2f}, {high:+.2f}] tasks/dev-day "
                f"(width {high - low:.2f})"
            )
    table = pd.DataFrame(rows)
    table["width_ratio"] = table["width"] / table["width"].iloc[0]
    table["size"] = (
        f"{'quick' if args.quick else 'full'}: team fit {size['replications']} seeds × {size['days']:g} days "
        f"per member; AI vs by hand {ARM_DEVELOPERS} developers × {size['days']:g} days × {ARM_SEEDS} seeds"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    csv = args.out / "team_log_hours.csv"
    table.to_csv(csv, index=False)  # full precision: the width stays the ends' difference
    figure = args.out / "figures" / "team_log_hours.png"
    plot(table, figure)
    print(f"wrote {csv} and {figure} in {time.monotonic() - started:.0f} s")


def plot(table: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(table["hours"], table["width"], "o-", color="C0")
    ax.set_xlabel("hours of logs (sum of session spans, h)")
    ax.set_ylabel(
        "width of the behavioural 95% interval,\nby hand − AI (tasks per developer-day)", color="C0"
    )
    ax.set_ylim(0, float(table["width"].max()) * 1.15)
    twin = ax.twinx()
    twin.plot(table["hours"], table["kept"], "s--", color="C1")
    twin.set_ylabel(f"members kept (of {int(table['of'].iloc[0])})", color="C1")
    twin.set_ylim(0, float(table["of"].max()) * 1.05)
    ax.set_title("AI vs by hand: the vendored logs and the ensemble (0 h: the prior)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
