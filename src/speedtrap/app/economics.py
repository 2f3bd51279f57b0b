"""The app's decision economics: is backend B worth it against A at this value of developer time?

Pure (no Solara): the runs' tasks and inference dollars per developer-day in, the economics of
:mod:`speedtrap.analysis.value` out, in words. The live run gives one seed, whose economics have no
interval; :func:`replicate` runs the arms over more seeds — the seeds ``speedtrap compare --seed S
--replications N`` uses — under the stored calibrated ensemble as ``compare`` does (K members × r
seeds: a seed interval and a behavioural interval over the members), or over seeds alone. The
value of developer time prices the outputs without changing any run, so the economics follow the
developer-cost field without running again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict

import pandas as pd

from speedtrap.analysis.value import ArmValue, arm_value, paired_runs, value_sentence
from speedtrap.config.scenario import Scenario
from speedtrap.config.value import LOADED_USD_PER_DEV_HOUR, LOADED_USD_PER_DEV_HOUR_SOURCE, Value
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models.results import RunResult
from speedtrap.models.workflow import simulate_summary

__all__ = ["RUN_COLUMNS", "arm_values", "economics_lines", "replicate", "runs_of", "value_source"]

RUN_COLUMNS = (
    "arm",
    "seed",
    "tasks_per_dev_day",
    "usd_per_dev_day",
    "other_work_task_equiv_per_dev_day",
)
"""What the economics read of each run (one row per arm × seed)."""


def value_source(value: Value) -> str:
    """Where a scenario's developer cost comes from, in words: its own ``value`` section, or the
    documented default with its source."""
    if "usd_per_dev_hour" in value.model_fields_set:
        return f"${value.usd_per_dev_hour:g} per developer-hour from the scenario (value.usd_per_dev_hour)"
    return f"default ${LOADED_USD_PER_DEV_HOUR:g} per developer-hour: {LOADED_USD_PER_DEV_HOUR_SOURCE}"


def runs_of(results: Mapping[str, RunResult], seed: int) -> pd.DataFrame:
    """The live run's arms as economics runs (:data:`RUN_COLUMNS`, one row per arm)."""
    rows = [
        {"arm": arm, "seed": seed} | {k: result.summary()[k] for k in RUN_COLUMNS[2:]}
        for arm, result in results.items()
    ]
    return pd.DataFrame(rows, columns=list(RUN_COLUMNS))


def replicate(
    scenarios: Mapping[str, Scenario],
    seed: int,
    replications: int,
    *,
    members: Sequence[Mapping[str, float]] | None = None,
    keep: Mapping[str, Sequence[str]] | None = None,
    on_run: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Every arm on the same seeds spawned from ``seed`` (common random numbers;
    :func:`speedtrap.experiments.seeds.replication_seeds`, as ``speedtrap compare``): one row per
    arm × seed with :data:`RUN_COLUMNS` and ``member``. Without ``members``, ``replications`` seeds
    under the scenarios as they are (member −1); with an ensemble's members, K of them × r seeds
    (:func:`speedtrap.experiments.ensemble.choose_members`; member k on seeds k·r … k·r + r − 1, as
    ``speedtrap compare``), each arm with the member's values except the paths ``keep[arm]`` (what the
    user set). ``on_run(runs done, runs)`` is called after each run."""
    from speedtrap.experiments.ensemble import choose_members, member_overrides

    seeds = replication_seeds(seed, replications)
    if members:
        index, r = choose_members(len(members), replications)
    else:
        index, r = [-1], replications
    rows: list[dict[str, object]] = []
    total = len(index) * r * len(scenarios)
    for k, member in enumerate(index):
        arms = dict(scenarios)
        if member >= 0:
            assert members is not None
            for arm, scenario in scenarios.items():
                overrides, _ = member_overrides(scenario, members[member], keep=(keep or {}).get(arm, ()))
                arms[arm] = scenario.with_overrides(overrides)
        for s in seeds[k * r : (k + 1) * r]:
            for arm, scenario in arms.items():
                summary = simulate_summary(scenario, s)
                rows.append(
                    {"arm": arm, "seed": s, "member": member} | {c: summary[c] for c in RUN_COLUMNS[2:]}
                )
                if on_run is not None:
                    on_run(len(rows), total)
    frame = pd.DataFrame(rows, columns=[*RUN_COLUMNS, "member"])
    return frame if members else frame.drop(columns="member")


def arm_values(runs: pd.DataFrame, value: Value, workday_s: float) -> list[ArmValue]:
    """Each arm after the first against the first, paired by seed
    (:func:`speedtrap.analysis.value.arm_value`): net US$ per developer-day with its 95% CI and the
    break-even numbers."""
    arms = list(dict.fromkeys(runs["arm"]))
    return [
        arm_value(paired_runs(runs, "arm", arms[0], arm), arm, value=value, workday_s=workday_s)
        for arm in arms[1:]
    ]


def economics_lines(values: Sequence[ArmValue], baseline: str, usd_per_dev_hour: float) -> list[str]:
    """The economics in words, one sentence per compared arm (with the caveat of an interval from
    fewer than 5 seeds, or of none from one)."""
    return [value_sentence(asdict(v), against=baseline, usd_per_dev_hour=usd_per_dev_hour) for v in values]
