"""The workflow model against published measurements of developers and coding agents.

The targets live in ``data/workflow_targets.csv`` (published value, the source, how the source
computed it, how speedtrap computes it, a tolerance fixed before any run, and the observation and
model-discrepancy standard deviations that history matching uses, ``obs_sd`` and
``discrepancy_sd``, with an ``error_note`` on how each was set): one row per target,
each on one of two scenarios — ``headline`` (experiments/scenarios/headline.toml: today's agentic
developer, compared with Claude Code and Codex traces) and ``metr`` (experiments/scenarios/metr.toml:
METR's 2025 trial, run with AI and by hand on the same seeds). :func:`validate_workflow` runs both
over seeded replications and returns one row per target with the simulated mean, its 95% t
interval over replications, the relative error and pass/fail.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from speedtrap.analysis.intervals import two_intervals
from speedtrap.config.scenario import Scenario
from speedtrap.models.results import ACCEPTED_OUTCOMES, RunResult
from speedtrap.models.workflow import simulate
from speedtrap.validation.signatures import signature_statistics
from speedtrap.validation.trace_statistics import structure_statistics

__all__ = [
    "CALIBRATION_SCENARIOS",
    "ERAS",
    "FITTED_ROLES",
    "HEADLINE_SHARES",
    "HELD_OUT",
    "ROLES",
    "TARGETS_FILE",
    "WorkflowCheck",
    "accepted_range",
    "era_table",
    "load_targets",
    "output_per_dev_day",
    "run_plan",
    "run_statistics",
    "swe_bench_resolved",
    "task_time_share",
    "validate_workflow",
]

TARGETS_FILE = "workflow_targets.csv"
HEADLINE_SHARES = {"headline_waiting_share": "waiting_share", "headline_fixing_share": "fixing_share"}
"""Outputs recorded beside the ``headline`` targets' statistics, and the run summary's key each
copies: the headline's waiting and fixing shares of the whole day (all developer-seconds, as
``speedtrap run`` and the headline experiment report them; :func:`speedtrap.models.results.summarize`).
They are no targets; the sensitivity report (``validate workflow --sensitivity``) apportions them."""


SWE_BENCH = "swe_bench_resolved"
"""The ``headline`` rows' statistic of :func:`swe_bench_resolved`; the era scenarios' rows record it as
:data:`ERA_SWE_BENCH` (one name per scenario: a calibration merges both scenarios' statistics)."""
ERA_SWE_BENCH = "era_model_swe_bench_resolved"


def load_targets() -> pd.DataFrame:
    """The calibration targets table (``data/workflow_targets.csv``)."""
    with resources.files("speedtrap.validation.data").joinpath(TARGETS_FILE).open("rb") as f:
        return pd.read_csv(f)


def task_time_share(result: RunResult, category: str) -> float:
    """``category``'s share of the time charged to tasks: every second but other work, which no task
    is charged with (idle time and switching into other work are charged to the sessions open at the
    time, as a time-tracking study like METR's counts them: docs/validation.md, "One productivity
    accounting")."""
    wide = result.ledger_wide().sum()
    on_tasks = float(wide.sum() - wide["other_work"])
    if category == "waiting":
        part = float(sum(wide[c] for c in wide.index if str(c).startswith("waiting_")))
    else:
        part = float(wide[category])
    return part / on_tasks if on_tasks > 0 else math.nan


CONCURRENCY_LEVELS = ("concurrent_sessions_1", "concurrent_sessions_2", "concurrent_sessions_3plus")


def concurrency_shares(stretches: pd.DataFrame) -> dict[str, float]:
    """Share of the time with at least one agent session open that each developer had 1, 2, or 3 and
    more open at once, over all developers: a session is open from its first hand-off to its last
    hand-back (or its last need, if never handed back) — the measure the trace targets take from
    session logs (``speedtrap.sessions.targets``)."""
    spans = stretches.assign(end_s=stretches["back_s"].fillna(stretches["need_s"]))
    spans = spans.groupby(["developer", "task", "attempt"]).agg(
        start_s=("handoff_s", "min"), end_s=("end_s", "max")
    )
    seconds = np.zeros(3)
    for _, dev in spans.dropna().groupby(level="developer"):
        edges = sorted(
            [(a, 1) for a in dev["start_s"]] + [(b, -1) for b in dev["end_s"]], key=lambda e: (e[0], e[1])
        )
        level, last = 0, 0.0
        for t, step in edges:
            if level > 0 and t > last:
                seconds[min(level, 3) - 1] += t - last
            level, last = level + step, t
    total = float(seconds.sum())
    return {
        name: float(seconds[k] / total) if total > 0 else math.nan
        for k, name in enumerate(CONCURRENCY_LEVELS)
    }


def headline_statistics(result: RunResult) -> dict[str, float]:
    """The ``headline`` targets' statistics of one run, and the :data:`HEADLINE_SHARES` it records."""
    st = result.stretches
    assert st is not None
    agent = (st["need_s"] - st["handoff_s"]).dropna()
    human = (st["back_s"] - st["need_s"]).dropna()
    req = result.requests
    llm = float((req["done_s"] - req["arrival_s"]).sum())
    tool = float(result.tasks["tool_s"].sum())
    tasks = result.tasks
    out = {
        "agent_stretch_median": float(agent.median()),
        "agent_stretch_p90": float(agent.quantile(0.9)),
        # the tail Anthropic's agent-autonomy study reports (its 99.9th-percentile turn; a held-out row)
        "agent_stretch_p999": float(agent.quantile(0.999)),
        "human_response_median": float(human.median()),
        "human_response_p90": float(human.quantile(0.9)),
        "llm_share_of_agent_time": llm / (llm + tool) if llm + tool > 0 else math.nan,
        "request_median": float((req["done_s"] - req["arrival_s"]).median()),
        "cached_share_of_input_tokens": float(tasks["cached_tokens"].sum() / tasks["input_tokens"].sum()),
        "human_turns_per_session": float(
            st.groupby(["developer", "task", "attempt", "transcript"]).size().mean()
        ),
        **concurrency_shares(st),
        **signature_statistics(result),
        **structure_statistics(result),
    }
    summary = result.summary()
    return out | {name: float(summary[key]) for name, key in HEADLINE_SHARES.items()}


def effort_ratio(with_ai: RunResult, by_hand: RunResult, half: str | None = None) -> float:
    """METR's statistic: the geometric mean, over tasks accepted in both arms, of the developer's
    effort on a task with AI over its effort by hand — effort as a time-tracking study logs it
    (``human_s``: every second the developer spends on the task, review, fixes and the rework of
    escaped defects that surfaced included; under parallel sessions each second goes to the one
    task attended; idle time and switching into other work while sessions are open go in equal
    parts to their tasks), not wall-clock lead time. ``half`` (``"short"`` or ``"long"``) keeps the
    tasks whose size (``effort_s``, the time by hand they were drawn with, known before the work as
    METR's forecasts are) is at most, or above, the median size of the tasks paired: METR's
    statistic on each half of its issues split at the median forecast (:data:`HALVES`)."""
    done = ["developer", "task", "effort_s", "human_s"]
    a = with_ai.tasks[with_ai.tasks["outcome"].isin(ACCEPTED_OUTCOMES)][done]
    m = by_hand.tasks[by_hand.tasks["outcome"].isin(ACCEPTED_OUTCOMES)][done].drop(columns="effort_s")
    both = a.merge(m, on=["developer", "task"], suffixes=("_ai", "_manual"))
    both = both[(both["human_s_ai"] > 0) & (both["human_s_manual"] > 0)]
    if half is not None:
        if half not in HALVES:
            raise ValueError(f"half must be one of {', '.join(HALVES)}, got {half!r}")
        median = both["effort_s"].median()
        both = both[both["effort_s"] <= median] if half == "short" else both[both["effort_s"] > median]
    log_ratio = np.log(both["human_s_ai"].to_numpy()) - np.log(both["human_s_manual"].to_numpy())
    return float(np.exp(log_ratio.mean())) if len(both) else math.nan


HALVES = ("short", "long")
"""The halves of METR's issues split at the median forecast time without AI (90 min): the time
ratio of each is a calibration target (``metr_time_ratio_short_half``, ``…_long_half``: METR's
regression on each half of its released data, ``scripts/metr_halves.py``), which says how the
effect of AI changes with the task's size — what the era model's success curve sets."""


def metr_statistics(with_ai: RunResult, by_hand: RunResult) -> dict[str, float]:
    """The ``metr`` targets' statistics of one seed run with AI and by hand, and the throughput
    ratio reported beside METR's statistic."""
    m = by_hand.tasks[by_hand.tasks["outcome"].isin(ACCEPTED_OUTCOMES)]
    tasks = with_ai.tasks
    outputs = float(tasks["outputs"].sum())
    ai, manual = with_ai.summary(), by_hand.summary()
    ai_rate, manual_rate = ai["tasks_per_dev_day"], manual["tasks_per_dev_day"]
    ai_output, manual_output = output_per_dev_day(ai), output_per_dev_day(manual)
    return {
        "ai_vs_manual_time_ratio": effort_ratio(with_ai, by_hand),
        **{f"ai_vs_manual_time_ratio_{half}_half": effort_ratio(with_ai, by_hand, half) for half in HALVES},
        "waiting_share_of_task_time": task_time_share(with_ai, "waiting"),
        "reviewing_share_of_task_time": task_time_share(with_ai, "reviewing"),
        "fixing_share_of_task_time": task_time_share(with_ai, "fixing"),
        "manual_task_time_median": float(m["human_s"].median() / 60.0),
        "acceptance_rate": 1.0 - float(tasks["outputs_rejected"].sum()) / outputs if outputs else math.nan,
        "ai_vs_manual_throughput_ratio": ai_rate / manual_rate if manual_rate > 0 else math.nan,
        "ai_vs_manual_output_ratio": ai_output / manual_output if manual_output > 0 else math.nan,
    }


def output_per_dev_day(summary: dict[str, float]) -> float:
    """A run's output per developer-day in task-equivalents: tasks completed plus the other work done
    while agents run (``other_work_task_equiv_per_dev_day``, its seconds over a task's mean human
    effort) — the output the economics value (:mod:`speedtrap.analysis.value`), so that the output
    ratio, the effort ratio and the net value count other work the same way (docs/validation.md,
    "One productivity accounting")."""
    return float(summary["tasks_per_dev_day"]) + float(summary.get("other_work_task_equiv_per_dev_day", 0.0))


def swe_bench_resolved(scenario: Scenario) -> float:
    """Share of SWE-bench Verified's task lengths that the success curve of the backend the
    scenario's policy routes to resolves: ``1 − Quality.reference_failure`` (the mean over
    SWE-bench Verified's difficulty buckets, :data:`speedtrap.config.tier.REFERENCE_LENGTHS_MIN`).
    A function of the curve's parameters alone, no simulation; NaN where the policy routes to more
    than one backend (or none)."""
    routes = scenario.policy.references(scenario.backends) if scenario.backends else {}
    names = {backend for backend, _ in routes.values()}
    if len(names) != 1:
        return math.nan
    return 1.0 - float(scenario.backends[names.pop()].quality.reference_failure)


ERAS = ("metr", "agentic-2026")
"""The era scenarios, each run with AI and by hand: METR's 2025 trial (``metr``, with targets) and
today's agentic developers in the same design (``agentic-2026``, with no target)."""
HELD_OUT = ("metr-2026", "metr-transcripts-2026")
"""The held-out studies' era scenarios, run with AI and by hand like :data:`ERAS`: METR's late-2025
experiment (its 2026-02-24 update) and METR's transcript analysis of January 2026. Their targets
(``role = validation`` in the targets table, declared 2026-12-06) are never used by the calibration
(docs/heldout_studies.md)."""
ROLES = ("calibration", "consistency", "validation")
"""A target's role (the ``role`` column, declared with its date and reason before any run):
``calibration`` — fitted by history matching; ``consistency`` — an input or a closed form of the
model (it passes almost by construction: evidence of nothing but consistency), also used by the
calibration; ``validation`` — a held-out study the calibration never sees."""
FITTED_ROLES = ("calibration", "consistency")
"""The roles history matching uses."""


def run_statistics(
    scenarios: dict[str, Scenario],
    seeds: Sequence[int],
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """One row per (scenario, seed) with every target statistic of that scenario (``headline``: one
    run; ``metr`` and ``agentic-2026``: with AI and by hand on the same seed); ``progress``, if
    given, is called with (replications done, replications) after each seed."""
    rows = []
    for done, seed in enumerate(seeds, start=1):
        if "headline" in scenarios:
            result = simulate(scenarios["headline"], seed)
            resolved = swe_bench_resolved(scenarios["headline"])
            rows.append(
                {"scenario": "headline", "seed": seed, **headline_statistics(result), SWE_BENCH: resolved}
            )
        for era in (*ERAS, *HELD_OUT):
            if era in scenarios:
                trial = scenarios[era]
                stats_ = metr_statistics(simulate(trial, seed), simulate(trial.with_backend("manual"), seed))
                resolved = swe_bench_resolved(trial)
                rows.append({"scenario": era, "seed": seed, **stats_, ERA_SWE_BENCH: resolved})
        if progress is not None:
            progress(done, len(seeds))
    return pd.DataFrame(rows)


def era_table(runs: pd.DataFrame) -> pd.DataFrame:
    """METR's statistic (developer effort with AI / by hand) and the throughput ratio (tasks per
    developer-day with AI / by hand) of each era scenario in ``runs``: the mean with its two 95%
    intervals (:func:`speedtrap.analysis.intervals.two_intervals`): ``<name>_low``/``_high`` over
    seeds, ``<name>_behaviour_low``/``_high`` over the ensemble's members (NaN with one parameter
    set), and which dominates."""
    rows = []
    for era in (*ERAS, *HELD_OUT):
        sub = runs[runs["scenario"] == era]
        if sub.empty:
            continue
        row: dict[str, object] = {"era": era, "n": len(sub)}
        members = sub["member"].to_numpy() if "member" in sub else None
        for name in ("ai_vs_manual_time_ratio", "ai_vs_manual_throughput_ratio", "ai_vs_manual_output_ratio"):
            ti = two_intervals(sub[name].to_numpy(float), members)
            row.update(
                {
                    name: ti.mean,
                    f"{name}_low": ti.seed_low,
                    f"{name}_high": ti.seed_high,
                    f"{name}_behaviour_low": ti.behaviour_low,
                    f"{name}_behaviour_high": ti.behaviour_high,
                    f"{name}_dominant": ti.dominant,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class WorkflowCheck:
    """The outcome of :func:`validate_workflow`: one row per target (``table``) and the per-seed runs."""

    table: pd.DataFrame
    runs: pd.DataFrame

    @property
    def eras(self) -> pd.DataFrame:
        """:func:`era_table` of the runs."""
        return era_table(self.runs)

    @property
    def passed(self) -> int:
        """Targets whose mean over the runs lies within tolerance (a count the draw can move)."""
        return int(self.table["passed"].sum())

    def verdicts_by_role(self) -> dict[str, dict[str, int]]:
        """{role: {verdict: targets}} for every role present, in :data:`ROLES` order, with every
        verdict of :data:`VERDICTS` (a count of 0 included): the counts a draw cannot move except
        through a target whose interval moves across a bound."""
        out = {}
        for role in ROLES:
            rows = self.table[self.table["role"] == role]
            if len(rows):
                counts = rows["verdict"].value_counts()
                out[role] = {v: int(counts.get(v, 0)) for v in VERDICTS}
        return out

    def passed_by_role(self) -> dict[str, tuple[int, int]]:
        """{role: (passed, targets)} for every role present, in :data:`ROLES` order."""
        out = {}
        for role in ROLES:
            rows = self.table[self.table["role"] == role]
            if len(rows):
                out[role] = (int(rows["passed"].sum()), len(rows))
        return out

    def held_out_studies(self) -> pd.DataFrame:
        """One row per held-out study (``role = validation``), in the targets table's order:
        ``study``, ``passed`` and ``targets`` (its rows within tolerance, and all), and ``predicted``:
        every row of it within tolerance (the rule docs/heldout_studies.md fixes before each run)."""
        rows = self.table[self.table["role"] == "validation"]
        grouped = rows.groupby("study", sort=False)["passed"].agg(["sum", "size"]).reset_index()
        grouped.columns = ["study", "passed", "targets"]
        return grouped.assign(predicted=grouped["passed"] == grouped["targets"])


def _on_edge(low: float, high: float, ci_low: float, ci_high: float) -> bool:
    """Whether the 95% interval over the runs crosses a bound of the accepted range [low, high]: the
    verdict rests on the draw (another set of seeds may flip it), however it falls this time."""
    if not (math.isfinite(ci_low) and math.isfinite(ci_high)):
        return False
    return bool(ci_low < low <= ci_high or ci_low <= high < ci_high)


VERDICTS = ("pass", "undecided", "miss")
"""A target's verdict at 95%: its interval over the runs inside the accepted range (``pass``), across a
bound of it (``undecided``: the draw decides the mean's side), or wholly outside it (``miss``)."""


def verdict(passed: bool, edge: bool) -> str:
    """The :data:`VERDICTS` word for a target whose mean ``passed`` and whose interval is on the ``edge``."""
    if edge:
        return "undecided"
    return "pass" if passed else "miss"


def _passes(low: float, high: float, value: float) -> bool:
    return bool(math.isfinite(value) and low <= value <= high)


MemberPlan = Sequence[tuple[int, dict[str, Scenario], int]]
"""Runs over an ensemble: (member, the scenarios with that member's values applied, seed), one per run."""


def run_plan(plan: MemberPlan, progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """:func:`run_statistics` of every (member, scenarios, seed) of ``plan``, with a ``member`` column."""
    frames = []
    for done, (member, scenarios, seed) in enumerate(plan, start=1):
        frames.append(run_statistics(scenarios, [seed]).assign(member=member))
        if progress is not None:
            progress(done, len(plan))
    return pd.concat(frames, ignore_index=True)


def validate_workflow(
    scenarios: dict[str, Scenario],
    seeds: Sequence[int],
    targets: pd.DataFrame | None = None,
    progress: Callable[[int, int], None] | None = None,
    plan: MemberPlan | None = None,
) -> WorkflowCheck:
    """Run the calibration scenarios over ``seeds`` and compare each target's simulated mean (with
    a 95% t interval over the replications) with its published value and pre-declared tolerance
    (``progress``: as in :func:`run_statistics`). With ``plan`` (runs over a calibrated ensemble,
    :data:`MemberPlan`) its runs replace ``scenarios`` × ``seeds``: the mean is over every member's
    runs, and the interval spans both seed noise and the members' spread."""
    targets = load_targets() if targets is None else targets
    targets = targets[targets["scenario"].isin(scenarios)]
    runs = run_plan(plan, progress) if plan else run_statistics(scenarios, seeds, progress)
    rows = []
    for _, row in targets.iterrows():
        values = runs.loc[runs["scenario"] == row["scenario"], row["statistic"]].dropna().to_numpy(float)
        n = len(values)
        mean = float(values.mean()) if n else math.nan
        half = float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n)) if n >= 2 else math.nan
        low, high = accepted_range(row)
        passed, edge = _passes(low, high, mean), _on_edge(low, high, mean - half, mean + half)
        rows.append(
            {
                "id": row["id"],
                "scenario": row["scenario"],
                "unit": row["unit"],
                "published": row["published"],
                "simulated": mean,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "n": n,
                "relative_error": mean / row["published"] - 1.0 if row["published"] else math.nan,
                "tolerance": _tolerance_text(row),
                "accept_low": low,
                "accept_high": high,
                "passed": passed,
                "edge": edge,
                "verdict": verdict(passed, edge),
                "role": row.get("role", "calibration"),
                "study": row.get("study", ""),
                "source": row["source"],
            }
        )
    return WorkflowCheck(pd.DataFrame(rows), runs)


def accepted_range(row: pd.Series) -> tuple[float, float]:
    """The simulated values that pass, in the target's unit (the tolerance as an interval)."""
    kind, published = row["tolerance_kind"], float(row["published"])
    if kind == "inside_interval":
        return float(row["low"]), float(row["high"])
    if kind == "absolute":
        return published - float(row["tolerance"]), published + float(row["tolerance"])
    if kind == "relative":
        return published * (1.0 - float(row["tolerance"])), published * (1.0 + float(row["tolerance"]))
    raise ValueError(f"unknown tolerance kind {kind!r}")


def _tolerance_text(row: pd.Series) -> str:
    kind = row["tolerance_kind"]
    if kind == "inside_interval":
        return f"in [{row['low']:g}, {row['high']:g}]"
    if kind == "absolute":
        return f"±{row['tolerance']:g} {row['unit']}"
    return f"±{100 * row['tolerance']:g}%"


CALIBRATION_SCENARIOS = ("headline", "metr")
"""The scenarios the calibration targets are on (``agentic-2026`` has none)."""


def default_scenarios(
    root: Path, *, quick: bool = False, names: Sequence[str] = CALIBRATION_SCENARIOS
) -> dict[str, Scenario]:
    """The scenarios ``names`` (default: the calibration's, headline and metr; ``agentic-2026`` is
    today's era) from ``root/experiments/scenarios`` (quick: 4 developers × 5 days)."""
    found = {}
    for name in names:
        scenario = Scenario.from_toml(root / "experiments" / "scenarios" / f"{name}.toml")
        if quick:
            scenario = scenario.with_overrides({"developers": 4, "horizon_s": 5 * scenario.workday_s})
        found[name] = scenario
    return found
