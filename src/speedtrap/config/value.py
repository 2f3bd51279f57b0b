"""What a developer's time and a completed task are worth: the ``value`` section of a scenario.

The value section does not enter the simulation; it prices its outputs (see
:mod:`speedtrap.analysis.value`). The default loaded cost of a developer-hour is derived here, once,
from two published figures:

* **Wage**: US Bureau of Labor Statistics, Occupational Employment and Wage Statistics, May 2023,
  occupation 15-1252 "Software Developers": median hourly wage $63.59 (annual $132,270).
  https://www.bls.gov/oes/2023/may/oes151252.htm
* **Loaded-cost factor**: BLS Employer Costs for Employee Compensation, private industry, March
  2024: wages and salaries are 70.2% of total compensation (the rest is benefits), so total
  compensation is 1 / 0.702 ≈ 1.42 × the wage. https://www.bls.gov/news.release/ecec.nr0.htm

The result, ≈$90.6 per hour, leaves out office, equipment and management overhead; the range
runs from the unloaded median wage to a loaded senior or large-company developer.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

BLS_MEDIAN_WAGE_USD_PER_HOUR = 63.59
"""BLS OEWS May 2023, Software Developers (15-1252), median hourly wage, USD."""
BLS_WAGE_SHARE_OF_COMPENSATION = 0.702
"""BLS ECEC March 2024, private industry: wages and salaries as a share of total compensation."""
LOADED_USD_PER_DEV_HOUR = round(BLS_MEDIAN_WAGE_USD_PER_HOUR / BLS_WAGE_SHARE_OF_COMPENSATION, 2)
"""Default loaded cost of a developer-hour, USD: median wage × the loaded-cost factor (≈$90.58)."""
LOADED_USD_PER_DEV_HOUR_SOURCE = (
    f"BLS median software-developer wage ${BLS_MEDIAN_WAGE_USD_PER_HOUR:.2f}/h (OEWS May 2023) ÷ "
    f"{BLS_WAGE_SHARE_OF_COMPENSATION:.3f}, the wage share of total compensation (ECEC March 2024)"
)
"""Where :data:`LOADED_USD_PER_DEV_HOUR` comes from, in words (for the app and reports)."""
USD_PER_DEV_HOUR_RANGE = (BLS_MEDIAN_WAGE_USD_PER_HOUR, 200.0)
"""Plausible range of the loaded cost of a developer-hour, USD: from the unloaded median wage to a
loaded senior developer at a large company (an assumption, for sensitivity)."""
WORKDAYS_PER_MONTH = 21.0
"""Working days in a month (≈ 252 working days a year / 12): developer-days per developer-month."""


class Value(Spec):
    """Prices of the simulation's outputs: a developer-hour's loaded cost and, optionally, the value
    of one completed task (default: a task is worth what it costs to produce on the baseline)."""

    usd_per_dev_hour: float = Field(
        default=LOADED_USD_PER_DEV_HOUR,
        gt=0,
        description="Loaded cost of one developer-hour, USD (default: BLS median wage × 1.42).",
    )
    usd_per_dev_hour_low: float = Field(
        default=USD_PER_DEV_HOUR_RANGE[0], gt=0, description="Low end of the plausible range, USD/hour."
    )
    usd_per_dev_hour_high: float = Field(
        default=USD_PER_DEV_HOUR_RANGE[1], gt=0, description="High end of the plausible range, USD/hour."
    )
    usd_per_task: float | None = Field(
        default=None,
        gt=0,
        description="Value of one completed task, USD (default: its full cost on the baseline arm).",
    )
    workdays_per_month: float = Field(
        default=WORKDAYS_PER_MONTH, gt=0, le=31, description="Developer-days in a developer-month."
    )

    @model_validator(mode="after")
    def _ordered_range(self) -> Value:
        if self.usd_per_dev_hour_low > self.usd_per_dev_hour_high:
            raise ValueError(
                f"usd_per_dev_hour_low ({self.usd_per_dev_hour_low:g}) must not exceed "
                f"usd_per_dev_hour_high ({self.usd_per_dev_hour_high:g})"
            )
        return self
