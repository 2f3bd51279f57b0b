"""The results of one run: tidy DataFrames and a flat summary.

Summary schema (``RunResult.summary()``, all floats; a **developer-day** is ``workday_s`` seconds
of horizon per developer, default 8 h, so ``developer_days = developers × horizon_s / workday_s``;
shares are of all developer-seconds, so the eleven ``share_*`` sum to 1). A task is **completed**
when it is done right: accepted right first time (ok), accepted after a caught mistake was
fixed (fixed), or accepted with an undetected mistake whose rework has since been done
(reworked). A task accepted with an undetected mistake whose rework has not been done by the
horizon is **accepted defective**, not completed:

=========================  ===================================================================
``developers``             developers simulated
``horizon_s``              simulated working seconds per developer
``developer_days``         developers × horizon_s / workday_s
``tasks_started``          tasks begun within the horizon
``tasks_completed``        tasks done right (ok, fixed, reworked)
``tasks_per_dev_day``      tasks_completed / developer_days (the productivity the experiments compare)
``tasks_accepted``         tasks accepted, done right or defective (completed + accepted_defective)
``accepted_per_dev_day``   tasks_accepted / developer_days
``tasks_accepted_defective`` tasks accepted with an undetected mistake not reworked by the horizon
``share_<category>``       share of developer time in each ledger category (11 keys: prompting,
                           waiting_queue, waiting_ttft, waiting_generation, waiting_tool,
                           reviewing, fixing, switching, manual, other_work, idle)
``waiting_share``          sum of the four ``share_waiting_*``
``fixing_share``           = ``share_fixing`` (repairs and rework of escaped defects)
``ok_share``               accepted right first time, share of tasks_accepted
``fixed_share``            accepted after a caught mistake was fixed, share of tasks_accepted
``escaped_share``          accepted with an undetected mistake (reworked or not), share of tasks_accepted
``defects_surfaced``       escaped defects that surfaced (and were reworked) within the horizon
``rework_cut_off_s``       seconds of rework of escaped defects not reworked by the horizon (the
                           rework the horizon cut off), summed over developers
``rework_cut_off_share``   rework_cut_off_s / (rework_cut_off_s + all fixing seconds)
``other_work_task_equiv_per_dev_day`` other work valued in tasks: its seconds / the mean human
                           effort of a task (task_mix.effort_s), per developer-day
``value_tasks_per_dev_day`` tasks_per_dev_day + other_work_task_equiv_per_dev_day
``usd_total``              US dollars billed for all finished requests
``usd_per_task``           usd_total / tasks_completed (NaN without completed tasks)
``mean_effort_s``          mean human-effort size of the tasks started, seconds
``usd_per_dev_day``        usd_total / developer_days
``lead_time_p50_s``        median seconds from starting a task to finishing it (completed tasks)
``lead_time_p95_s``        95th percentile of the same
``requests``               finished requests
``mean_queue_wait_s``      mean seconds a request waited for admission
``mean_ttft_s``            mean seconds from a request's arrival to its first token
``mean_decode_tok_s``      mean per-request decode speed, (output tokens − 1) / decode seconds
``backend_utilization``    busy own slots / own-slot capacity, time-averaged over all backends
=========================  ===================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.config.ledger import LEDGER_CATEGORIES, WAITING_CATEGORIES
from speedtrap.config.outcomes import SUMMARY_KEYS
from speedtrap.config.scenario import Scenario
from speedtrap.models.chrome_trace import run_trace
from speedtrap.models.tallies import ACCEPTED_OUTCOMES, COMPLETED_OUTCOMES, TaskCounts, task_counts
from speedtrap.models.typed_core import MESA, Engine
from speedtrap.serving.request import decode_rate_tok_s, request_sums

TASK_COLUMNS: dict[str, str] = {
    "developer": "int64",
    "task": "int64",
    "difficulty": "str",
    "effort_s": "float64",
    "base_turns": "int64",
    "start_s": "float64",
    "end_s": "float64",
    "lead_time_s": "float64",
    "outcome": "str",
    "fixed_by": "str",
    "attempts": "int64",
    "wrong_attempts": "int64",
    "turns": "int64",
    "input_tokens": "int64",
    "cached_tokens": "int64",
    "output_tokens": "int64",
    "cost_usd": "float64",
    "backend": "str",
    "tier": "str",
    "surfaced_s": "float64",
    "rework_done_s": "float64",
    "manual_s": "float64",
    "tool_s": "float64",
    "rework_s": "float64",
    "rework_spent_s": "float64",
    "human_s": "float64",
    "outputs": "int64",
    "outputs_rejected": "int64",
}
"""Columns of ``RunResult.tasks``: one row per task started. ``task`` is the index in its
developer's backlog; ``base_turns`` the pre-drawn turns of a successful first session;
``effort_s`` its human-effort size (drawn with either sizing; it sets class, turns and fix
times only with effort sizing); ``outcome`` one of ok / fixed /
escaped (accepted defective, rework not done) / reworked / open; ``fixed_by`` hand / repair / "";
``turns`` and the
token and cost columns sum over all attempts' finished requests; ``backend`` and ``tier`` list
those used, in order of first use, joined by "+"; ``surfaced_s`` / ``rework_done_s`` are when an
escaped defect surfaced and its rework ended (NaN if not within the horizon); ``manual_s`` the
seconds of hand work done on it; ``tool_s`` the seconds its agent turns spent in tool calls;
``rework_s`` the rework its escaped defect costs (drawn
whether or not it escapes) and ``rework_spent_s`` the rework charged to it by the horizon;
``human_s`` the developer seconds charged to it (every ledger category but other work and idle:
prompting, waiting on its sessions, review, fixing, rework, switching back to it, hand work), its
effort as a time-tracking study logs it — under parallel sessions each second goes to the one task the
developer attends; ``outputs`` the agent outputs the developer judged (check-ins and results) and
``outputs_rejected`` those rejected (a check-in's stretch redone, a result review caught wrong)."""

RUN_DIRECTLY = "the Mesa model was run directly (WorkflowModel)"
"""The engine reason of a result built by :meth:`WorkflowModel.result
<speedtrap.models.workflow.WorkflowModel.result>` itself, not through ``simulate``."""


class RunSummary(dict[str, float]):
    """A run's flat summary (keys :data:`SUMMARY_KEYS`, floats, as a plain dict) that also says which
    engine ran it: ``engine`` (:data:`~speedtrap.models.typed_core.TYPED_CORE` or
    :data:`~speedtrap.models.typed_core.MESA`) and ``engine_reason`` (why not the typed core; ``None``
    when it ran). The two are attributes, not keys, so every consumer of the float summary is unchanged;
    they survive pickling (the experiment runner's worker processes)."""

    engine: str
    engine_reason: str | None

    def __init__(self, values: dict[str, float], engine: Engine) -> None:
        super().__init__(values)
        self.engine = engine.name
        self.engine_reason = engine.reason


@dataclass(frozen=True)
class RunResult:
    """One run (scenario × seed) as tidy DataFrames.

    * ``ledger``: developer, category, seconds — one row per developer and ledger category;
      per developer the seconds sum to the horizon.
    * ``tasks``: one row per task started (schema :data:`TASK_COLUMNS`).
    * ``requests``: one row per finished request, the pool's columns (``serving.request.
      REQUEST_COLUMNS`` without ``tag``) plus backend, developer, task, attempt, turn.
    * ``backend_stats``: per backend, time-averaged own streams in service and utilization.
    * ``trace``: every charged ledger interval (developer, task, category, start_s, end_s), or
      ``None`` unless the run was traced.
    * ``stretches``: one row per agent stretch — developer, task, attempt, ``handoff_s`` (the
      developer hands the session to the agent), ``need_s`` (the agent stops for a check-in or
      review; NaN if not by the horizon), ``back_s`` (the developer hands it back; NaN if never) and
      ``transcript`` (0, 1, … within the session: a fresh prompt starts a new one).
    * ``engine``: which engine ran it, ``"typed core"`` or ``"mesa"``
      (:mod:`speedtrap.models.typed_core`), and ``engine_reason`` why not the typed core (``None``
      when it ran).
    """

    scenario: Scenario
    seed: int | None
    horizon_s: float
    ledger: pd.DataFrame
    tasks: pd.DataFrame
    requests: pd.DataFrame
    backend_stats: pd.DataFrame
    trace: pd.DataFrame | None = None
    stretches: pd.DataFrame | None = None
    engine: str = MESA
    engine_reason: str | None = RUN_DIRECTLY

    def ledger_wide(self) -> pd.DataFrame:
        """The ledger as a developer × category table of seconds."""
        return self.ledger.pivot(index="developer", columns="category", values="seconds")

    def to_trace(self, window: tuple[float, float] | None = None) -> dict[str, Any]:
        """The run as Chrome trace-event JSON for Perfetto UI or chrome://tracing (a dict ready for
        ``json.dump``); needs a traced run (``simulate(..., trace=True)``). ``window``: (start, end)
        in simulated seconds to keep. Tracks and units: :mod:`speedtrap.models.chrome_trace`."""
        return run_trace(self, window)

    def engine_record(self) -> dict[str, str | None]:
        """``{"engine": ..., "engine_reason": ...}``: which engine ran, as the JSON outputs record it."""
        return Engine(self.engine, self.engine_reason).as_dict()

    def summary(self) -> RunSummary:
        """The flat summary (keys :data:`SUMMARY_KEYS`, schema in the module docstring), naming the
        engine that ran (:class:`RunSummary`)."""
        values = summarize(
            self.scenario,
            self.horizon_s,
            self.ledger,
            task_counts(self.tasks),
            request_means(self.requests),
            self.backend_stats,
        )
        return RunSummary(values, Engine(self.engine, self.engine_reason))


def request_means(requests: pd.DataFrame) -> dict[str, float]:
    """The summary's request keys (``requests``, ``usd_total``, ``mean_queue_wait_s``,
    ``mean_ttft_s``, ``mean_decode_tok_s``) of a request table: exactly rounded sums over counts
    (:func:`speedtrap.serving.request.request_sums`; NaN means without requests)."""
    return request_sums(
        requests["queue_wait_s"].to_numpy(dtype=np.float64),
        requests["ttft_s"].to_numpy(dtype=np.float64),
        decode_rate_tok_s(requests["output_tokens"], requests["decode_s"]),
        requests["cost_usd"].to_numpy(dtype=np.float64),
    )


def summarize(
    scenario: Scenario,
    horizon_s: float,
    ledger: pd.DataFrame,
    tasks: TaskCounts,
    requests: dict[str, float],
    backend_stats: pd.DataFrame,
) -> dict[str, float]:
    """The flat summary of a run's ledger, tasks, request keys (:func:`request_means`) and backend
    statistics (keys :data:`SUMMARY_KEYS`, schema in the module docstring). ``tasks``: the task
    aggregates (:func:`speedtrap.models.tallies.task_counts` of the task table, or a summary-only
    run's :class:`~speedtrap.models.tallies.TaskTally`)."""
    developers = int(ledger["developer"].nunique())
    total_s = float(ledger["seconds"].sum())
    by_cat = ledger.groupby("category", observed=False)["seconds"].sum()
    dev_days = developers * horizon_s / scenario.workday_s
    n_done, n_acc = tasks.count(COMPLETED_OUTCOMES), tasks.count(ACCEPTED_OUTCOMES)
    out: dict[str, float] = {
        "developers": float(developers),
        "horizon_s": float(horizon_s),
        "developer_days": dev_days,
        "tasks_started": float(tasks.started),
        "tasks_completed": float(n_done),
        "tasks_per_dev_day": n_done / dev_days,
        "tasks_accepted": float(n_acc),
        "accepted_per_dev_day": n_acc / dev_days,
        "tasks_accepted_defective": float(tasks.count(["escaped"])),
    }
    for c in LEDGER_CATEGORIES:
        out[f"share_{c}"] = float(by_cat[c]) / total_s if total_s > 0 else math.nan
    out["waiting_share"] = sum(out[f"share_{c}"] for c in WAITING_CATEGORIES)
    out["fixing_share"] = out["share_fixing"]
    for outcome in ("ok", "fixed"):
        out[f"{outcome}_share"] = float(tasks.count([outcome])) / n_acc if n_acc else math.nan
    n_escaped = float(tasks.count(["escaped", "reworked"]))
    out["escaped_share"] = n_escaped / n_acc if n_acc else math.nan
    out["defects_surfaced"] = float(tasks.defects_surfaced)
    cut_off = tasks.rework_cut_off_s
    out["rework_cut_off_s"] = cut_off
    fixing_s = float(by_cat["fixing"])
    out["rework_cut_off_share"] = cut_off / (cut_off + fixing_s) if cut_off + fixing_s > 0 else 0.0
    mean_effort = scenario.task_mix.mean_effort_s
    other = float(by_cat["other_work"]) / mean_effort / dev_days if mean_effort > 0 else math.nan
    out["other_work_task_equiv_per_dev_day"] = other
    out["value_tasks_per_dev_day"] = out["tasks_per_dev_day"] + other
    out["mean_effort_s"] = tasks.mean_effort_s
    usd = requests["usd_total"]
    out["usd_total"] = usd
    out["usd_per_task"] = usd / n_done if n_done else math.nan
    out["usd_per_dev_day"] = usd / dev_days
    lead = tasks.lead_times_s
    out["lead_time_p50_s"] = float(np.quantile(lead, 0.5)) if n_done else math.nan
    out["lead_time_p95_s"] = float(np.quantile(lead, 0.95)) if n_done else math.nan
    for key in ("requests", "mean_queue_wait_s", "mean_ttft_s", "mean_decode_tok_s"):
        out[key] = requests[key]
    stats = backend_stats
    capacity = float(stats["capacity_streams"].sum())
    out["backend_utilization"] = float(stats["mean_in_service"].sum()) / capacity if capacity else math.nan
    return {key: out[key] for key in SUMMARY_KEYS}


def tasks_frame(tasks: list) -> pd.DataFrame:  # list[Task]
    """The ``tasks`` DataFrame (schema :data:`TASK_COLUMNS`)."""
    data = {
        "developer": [t.developer for t in tasks],
        "task": [t.index for t in tasks],
        "difficulty": [t.difficulty for t in tasks],
        "effort_s": [t.effort_s for t in tasks],
        "base_turns": [t.base_turns for t in tasks],
        "start_s": [t.start_s for t in tasks],
        "end_s": [t.end_s for t in tasks],
        "lead_time_s": [t.end_s - t.start_s for t in tasks],
        "outcome": [t.outcome for t in tasks],
        "fixed_by": [t.fixed_by for t in tasks],
        "attempts": [t.attempts for t in tasks],
        "wrong_attempts": [t.wrong_attempts for t in tasks],
        "turns": [t.turns for t in tasks],
        "input_tokens": [t.input_tokens for t in tasks],
        "cached_tokens": [t.cached_tokens for t in tasks],
        "output_tokens": [t.output_tokens for t in tasks],
        "cost_usd": [t.cost_usd for t in tasks],
        "backend": ["+".join(t.backends) for t in tasks],
        "tier": ["+".join(t.tiers) for t in tasks],
        "surfaced_s": [t.surfaced_s for t in tasks],
        "rework_done_s": [t.rework_done_s for t in tasks],
        "manual_s": [t.manual_done_s for t in tasks],
        "tool_s": [t.tool_s for t in tasks],
        "rework_s": [t.rework_s for t in tasks],
        "rework_spent_s": [t.rework_spent_s for t in tasks],
        "human_s": [t.human_s for t in tasks],
        "outputs": [t.outputs for t in tasks],
        "outputs_rejected": [t.outputs_rejected for t in tasks],
    }
    return pd.DataFrame({name: pd.Series(data[name], dtype=dtype) for name, dtype in TASK_COLUMNS.items()})
