"""Closed-form models and statistics (pure functions; never imports Mesa)."""

from speedtrap.analysis.queueing import (
    erlang_b,
    erlang_c,
    littles_law_number,
    mm1_ps_mean_sojourn_s,
    mmc_mean_sojourn_s,
    mmc_mean_wait_s,
    priority_mmc_mean_wait_s,
)
from speedtrap.analysis.statistics import mean_ci, paired_differences, summarize

__all__ = [
    "erlang_b",
    "erlang_c",
    "littles_law_number",
    "mean_ci",
    "mm1_ps_mean_sojourn_s",
    "mmc_mean_sojourn_s",
    "mmc_mean_wait_s",
    "paired_differences",
    "priority_mmc_mean_wait_s",
    "summarize",
]
