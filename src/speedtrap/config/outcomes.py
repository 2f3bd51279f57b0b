"""The names of a run's outcomes: the keys of its flat summary.

Kept here, free of Mesa, so that an experiment spec (:mod:`speedtrap.config.experiment`) can check the
outcomes it names without loading the simulation; the schema (meaning and unit of each key) is in
:mod:`speedtrap.models.results`, which computes them.
"""

from __future__ import annotations

from speedtrap.config.ledger import LEDGER_CATEGORIES

__all__ = ["SUMMARY_KEYS"]

SUMMARY_KEYS: tuple[str, ...] = (
    "developers",
    "horizon_s",
    "developer_days",
    "tasks_started",
    "tasks_completed",
    "tasks_per_dev_day",
    "tasks_accepted",
    "accepted_per_dev_day",
    "tasks_accepted_defective",
    *(f"share_{c}" for c in LEDGER_CATEGORIES),
    "waiting_share",
    "fixing_share",
    "ok_share",
    "fixed_share",
    "escaped_share",
    "defects_surfaced",
    "rework_cut_off_s",
    "rework_cut_off_share",
    "other_work_task_equiv_per_dev_day",
    "value_tasks_per_dev_day",
    "usd_total",
    "usd_per_task",
    "usd_per_dev_day",
    "mean_effort_s",
    "lead_time_p50_s",
    "lead_time_p95_s",
    "requests",
    "mean_queue_wait_s",
    "mean_ttft_s",
    "mean_decode_tok_s",
    "backend_utilization",
)
"""Every key of ``RunResult.summary()``, in order (documented in :mod:`speedtrap.models.results`)."""
