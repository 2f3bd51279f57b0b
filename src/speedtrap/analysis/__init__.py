"""Closed-form models, statistics and sensitivity analysis (pure functions; never imports Mesa)."""

from speedtrap.analysis.mean_value import (
    TaskTimeBreakdown,
    break_even_failure_multiplier,
    break_even_grid,
    expected_task_time,
)
from speedtrap.analysis.queueing import (
    erlang_b,
    erlang_c,
    littles_law_number,
    mm1_ps_mean_sojourn_s,
    mmc_mean_sojourn_s,
    mmc_mean_wait_s,
    priority_mmc_mean_wait_s,
)
from speedtrap.analysis.sensitivity import (
    morris_indices,
    morris_sample,
    salib_problem,
    sobol_indices,
    sobol_sample,
    sobol_second_order,
)
from speedtrap.analysis.statistics import (
    ci_caveat,
    difference_verdict,
    mean_ci,
    paired_differences,
    summarize,
)

__all__ = [
    "TaskTimeBreakdown",
    "break_even_failure_multiplier",
    "break_even_grid",
    "ci_caveat",
    "difference_verdict",
    "erlang_b",
    "erlang_c",
    "expected_task_time",
    "littles_law_number",
    "mean_ci",
    "mm1_ps_mean_sojourn_s",
    "mmc_mean_sojourn_s",
    "mmc_mean_wait_s",
    "morris_indices",
    "morris_sample",
    "paired_differences",
    "priority_mmc_mean_wait_s",
    "salib_problem",
    "sobol_indices",
    "sobol_sample",
    "sobol_second_order",
    "summarize",
]
