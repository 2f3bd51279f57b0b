"""The claims study's outcomes as one model function: each backend against gpu-batched and against no AI.

The claims of the fast-inference debate (docs/claims.md) turn on a few gaps: what the fast tier and
the fast, less accurate model gain or lose against the standard backend, and what each backend gains
or loses against working by hand. :func:`claim_gaps` runs one scenario and seed on ``gpu-batched``,
``gpu-fast``, ``wafer-distilled`` and by hand (policy ``manual``) — the same task stream each time
(``Scenario.with_backend``) — and returns those gaps, so that a global sensitivity study
(``python experiments/emulated_sobol.py --claims``) can say which inputs decide them.

The scenario must hold every backend whose fields the study varies
(``experiments/scenarios/two_backends.toml`` holds gpu-batched and wafer-distilled); a backend it does
not hold runs as its preset.
"""

from __future__ import annotations

from speedtrap.config.scenario import NO_AI, Scenario
from speedtrap.models.workflow import simulate_summary

__all__ = ["BACKENDS", "CLAIM_OUTCOMES", "claim_gaps"]

BACKENDS: dict[str, str] = {"batched": "gpu-batched", "fast": "gpu-fast", "wafer": "wafer-distilled"}
"""The backends compared, by the short name their outcomes carry."""

CLAIM_OUTCOMES: dict[str, tuple[str, str, float]] = {
    "fast_gap_tasks_per_dev_day": (
        "tasks per developer-day, gpu-fast − gpu-batched",
        "tasks per developer-day",
        1.0,
    ),
    "wafer_gap_tasks_per_dev_day": (
        "tasks per developer-day, wafer-distilled − gpu-batched",
        "tasks per developer-day",
        1.0,
    ),
    "fast_gap_usd_per_task": ("US$ per task, gpu-fast − gpu-batched", "US$ per task", 1.0),
    "wafer_gap_usd_per_task": ("US$ per task, wafer-distilled − gpu-batched", "US$ per task", 1.0),
    "batched_ai_gap_tasks_per_dev_day": (
        "tasks per developer-day, gpu-batched − by hand",
        "tasks per developer-day",
        1.0,
    ),
    "fast_ai_gap_tasks_per_dev_day": (
        "tasks per developer-day, gpu-fast − by hand",
        "tasks per developer-day",
        1.0,
    ),
    "wafer_ai_gap_tasks_per_dev_day": (
        "tasks per developer-day, wafer-distilled − by hand",
        "tasks per developer-day",
        1.0,
    ),
}
"""Outcomes of :func:`claim_gaps` a study reports: title, unit and the scale from the run summary's unit
to it (the same layout as :data:`speedtrap.experiments.sensitivity.SCREENING_OUTCOMES`)."""


def claim_gaps(scenario: Scenario, seed: int) -> dict[str, float]:
    """Run ``scenario`` with ``seed`` on each of :data:`BACKENDS` and by hand; return, for each
    backend ``b`` (short name), ``b_tasks_per_dev_day`` and ``b_usd_per_task``, ``manual_tasks_per_dev_day``,
    the gaps against gpu-batched (``fast_gap_*``, ``wafer_gap_*``: backend − gpu-batched, in tasks per
    developer-day and US$ per task) and against no AI (``b_ai_gap_tasks_per_dev_day``: backend − by
    hand). A US$ per task without a completed task is NaN, and so is its gap.

    Module-level, so process and Dask executors can pickle it."""
    runs = {short: simulate_summary(scenario.with_backend(name), seed) for short, name in BACKENDS.items()}
    manual = simulate_summary(scenario.with_backend(NO_AI), seed)
    out: dict[str, float] = {"manual_tasks_per_dev_day": manual["tasks_per_dev_day"]}
    for short, summary in runs.items():
        out[f"{short}_tasks_per_dev_day"] = summary["tasks_per_dev_day"]
        out[f"{short}_usd_per_task"] = summary["usd_per_task"]
        out[f"{short}_ai_gap_tasks_per_dev_day"] = summary["tasks_per_dev_day"] - manual["tasks_per_dev_day"]
    base = runs["batched"]
    for short in ("fast", "wafer"):
        for key in ("tasks_per_dev_day", "usd_per_task"):
            out[f"{short}_gap_{key}"] = runs[short][key] - base[key]  # NaN in, NaN out
    return out
