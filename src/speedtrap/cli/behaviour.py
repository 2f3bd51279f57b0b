"""The behavioural parameter sets ``compare`` and ``demo`` run: the stored calibrated ensemble by
default, another with ``--ensemble FILE``, or the scenario's own with ``--single``
(:mod:`speedtrap.experiments.ensemble`; the two intervals: docs/intervals.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.config.scenario import Scenario

EnsembleOption = Annotated[
    Path | None,
    typer.Option(
        "--ensemble",
        help="Run under the members of this calibrated ensemble (CSV: member, then one column per "
        "scenario path) instead of the stored one.",
    ),
]
SingleOption = Annotated[
    bool,
    typer.Option(
        "--single",
        "--no-ensemble",
        help="Use the scenario's own single parameter set: no behavioural interval.",
    ),
]


@dataclass(frozen=True)
class BehaviourPlan:
    """Per arm, the (member, scenario) pairs to run; ``seeds_per_member`` seeds each (member −1: the
    scenario's own parameter set), and the lines that say what was chosen and applied."""

    arms: dict[str, list[tuple[int, Scenario]]]
    seeds_per_member: int
    lines: list[str]
    available: int = 0
    """Members in the ensemble chosen (0: the scenario's own parameter set)."""


def quick_replications(available: int, without_ensemble: int) -> int:
    """Runs per arm of a ``--quick`` smoke run: under an ensemble of ``available`` members, the
    fewest members that give a behavioural interval (:data:`speedtrap.analysis.intervals.MIN_MEMBERS`,
    or all there are) × 2 seeds, so that both intervals exist; ``without_ensemble`` otherwise."""
    from speedtrap.analysis.intervals import MIN_MEMBERS

    return 2 * min(available, MIN_MEMBERS) if available > 1 else without_ensemble


def plan_behaviour(
    arms: Mapping[str, Scenario],
    replications: int,
    *,
    ensemble: Path | None,
    single: bool,
    kept: Mapping[str, Sequence[str]] | None = None,
) -> BehaviourPlan:
    """Which members every arm runs under, for ``replications`` runs per arm (K members × r seeds,
    :func:`speedtrap.experiments.ensemble.choose_members`); ``kept``: per arm, the paths the user set
    (left at the user's values). Raises ``FileNotFoundError``/``ValueError`` naming a bad file."""
    from speedtrap.experiments.ensemble import choose_members, member_overrides, plan_lines, resolve_ensemble

    choice = resolve_ensemble(ensemble, single=single)
    if not choice.members:
        return BehaviourPlan({label: [(-1, s)] for label, s in arms.items()}, replications, [choice.note])
    index, r = choose_members(len(choice.members), replications)
    planned: dict[str, list[tuple[int, Scenario]]] = {}
    applied: set[str] = set()
    left: dict[str, str] = {}
    for label, scenario in arms.items():
        planned[label] = []
        for i in index:
            overrides, out = member_overrides(scenario, choice.members[i], keep=(kept or {}).get(label, ()))
            applied.update(overrides)
            left.update(out)
            planned[label].append((i, scenario.with_overrides(overrides)))
    first = (
        f"{choice.note}: {len(index)} of them × {r} seeds each "
        f"({len(index) * r} runs per arm, members paired across arms)"
    )
    lines = plan_lines(first, len(index), applied, left, fewer="give --replications 4 or more")
    return BehaviourPlan(planned, r, lines, len(choice.members))


def behaviour_runs(
    plan: BehaviourPlan,
    seeds: Sequence[int],
    simulate_summary: Callable[[Scenario, int], dict[str, float]],
    progress: bool = True,
) -> pd.DataFrame:
    """One run per arm × member × seed: member k takes ``seeds[k·r:(k+1)·r]`` (its own seeds, the same
    on every arm); a row per run with ``arm``, ``member``, ``replication``, ``seed`` and the summary."""
    import pandas as pd

    from speedtrap.cli.common import count_progress

    r = plan.seeds_per_member
    total = sum(len(members) * r for members in plan.arms.values())
    report = count_progress("runs done:", progress)
    rows, done = [], 0
    for label, members in plan.arms.items():
        for k, (member, scenario) in enumerate(members):
            for j, seed in enumerate(seeds[k * r : (k + 1) * r]):
                summary = simulate_summary(scenario, seed)
                rows.append(
                    {"arm": label, "member": member, "replication": k * r + j, "seed": seed, **summary}
                )
                done += 1
                if report is not None:
                    report(done, total, label)
    return pd.DataFrame(rows)
