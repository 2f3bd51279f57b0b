"""Decision economics of one arm against a baseline: does the extra output pay for the extra spend?

Pure functions of paired run summaries (same seeds on both arms). Per developer-day:

* ``L`` = loaded developer cost of a day, USD (``usd_per_dev_hour × workday hours``);
* ``T``, ``S`` = tasks completed and inference spend (USD) per developer-day, baseline ``b`` and arm ``a``;
* a completed task is worth ``V`` = ``value.usd_per_task`` if set, else its full cost on the
  baseline, ``(L + S_b) / T_b`` (the arm pays exactly when its full cost per task is lower);
* **net value per developer-day** = ``(T_a − T_b) · V − (S_a − S_b)``, USD; per developer-month ×
  ``value.workdays_per_month``;
* **break-even price multiple**: the factor by which the arm's prices could be multiplied before
  its net value reaches zero, ``((T_a − T_b)·V + S_b) / S_a`` (above 1: it pays at today's price;
  0 or below: it would not pay even if its inference were free);
* **break-even developer cost** (with the default task value) = the ``usd_per_dev_hour`` at which the
  net value is zero, ``(S_a − S_b·T_a/T_b) / (h · (T_a/T_b − 1))`` with ``h`` the workday's hours:
  above it the arm pays when it completes more tasks (below it, when it completes fewer).

Net values are computed per seed and summarised as a mean with a paired Student-t interval; the
break-even numbers are computed from the mean outcomes (point estimates).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.statistics import caveat_suffix, mean_ci
from speedtrap.config.value import Value

SECONDS_PER_HOUR = 3600.0

VALUE_COLUMNS = (
    "arm",
    "n",
    "net_usd_per_dev_day",
    "net_ci_low",
    "net_ci_high",
    "net_usd_per_dev_month",
    "break_even_price_multiple",
    "break_even_usd_per_dev_hour",
    "pays",
)

PAYS = ("above", "below", "always", "never", "n/a")
"""Where an arm pays, against the developer cost: above or below the break-even cost, at every cost,
at none, or not defined (equal output, or a baseline without completed tasks)."""


@dataclass(frozen=True)
class ArmValue:
    """The economics of one arm against the baseline (USD; per developer-day unless named)."""

    arm: str
    n: int
    net_usd_per_dev_day: float
    net_ci_low: float
    net_ci_high: float
    net_usd_per_dev_month: float
    break_even_price_multiple: float
    break_even_usd_per_dev_hour: float
    """NaN when no developer cost breaks even (see ``pays``)."""
    pays: str
    """One of :data:`PAYS`: where the arm pays against the developer cost."""


def day_cost_usd(value: Value, workday_s: float) -> float:
    """Loaded developer cost of one developer-day, USD."""
    return value.usd_per_dev_hour * workday_s / SECONDS_PER_HOUR


def net_value_per_dev_day(
    tasks_base: np.ndarray,
    usd_base: np.ndarray,
    tasks_arm: np.ndarray,
    usd_arm: np.ndarray,
    *,
    value: Value,
    workday_s: float,
) -> np.ndarray:
    """Per seed: the arm's extra tasks valued, minus its extra inference spend, USD per developer-day.
    Arrays are per developer-day and aligned on seeds; a seed whose baseline completed no task (and
    no task value is set) gives NaN."""
    tasks_base, usd_base = np.asarray(tasks_base, float), np.asarray(usd_base, float)
    tasks_arm, usd_arm = np.asarray(tasks_arm, float), np.asarray(usd_arm, float)
    if value.usd_per_task is not None:
        task_value = np.full_like(tasks_base, value.usd_per_task)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            task_value = np.where(
                tasks_base > 0, (day_cost_usd(value, workday_s) + usd_base) / tasks_base, np.nan
            )
    return np.asarray((tasks_arm - tasks_base) * task_value - (usd_arm - usd_base), dtype=float)


def break_even_usd_per_dev_hour(
    tasks_base: float, usd_base: float, tasks_arm: float, usd_arm: float, *, workday_s: float
) -> tuple[float, str]:
    """(cost, pays): the loaded developer cost, USD/hour, at which the arm's full cost per task equals
    the baseline's, and where the arm pays (:data:`PAYS`): above that cost when it completes more
    tasks, below it when it completes fewer; "always"/"never" when no positive cost breaks even."""
    if not tasks_base > 0 or not math.isfinite(tasks_arm) or tasks_arm == tasks_base:
        return math.nan, "n/a"
    ratio = tasks_arm / tasks_base
    cost = (usd_arm - usd_base * ratio) / (workday_s / SECONDS_PER_HOUR * (ratio - 1))
    if cost <= 0:  # more output and no dearer per task: always; less output and dearer: never
        return math.nan, "always" if ratio > 1 else "never"
    return float(cost), "above" if ratio > 1 else "below"


def paired_runs(
    runs: pd.DataFrame, factor: str, baseline: object, level: object, *, arm_prefix: str = ""
) -> pd.DataFrame:
    """The ``pairs`` frame :func:`arm_value` takes: per seed, tasks and inference dollars per
    developer-day of the ``baseline`` run and the ``level`` run of ``factor`` (seeds missing on
    either side or with a missing value are dropped). The level's columns are
    ``<arm_prefix>tasks_per_dev_day`` and ``<arm_prefix>usd_per_dev_day``: a prefix such as
    ``"standard_"`` takes a group of developers within the level's runs."""
    base = runs[runs[factor] == baseline].set_index("seed")
    arm = runs[runs[factor] == level].set_index("seed")
    return pd.DataFrame(
        {
            "tasks_base": base["tasks_per_dev_day"],
            "usd_base": base["usd_per_dev_day"],
            "tasks_arm": arm[f"{arm_prefix}tasks_per_dev_day"],
            "usd_arm": arm[f"{arm_prefix}usd_per_dev_day"],
        }
    ).dropna()


def arm_value(
    pairs: pd.DataFrame, arm: str, *, value: Value, workday_s: float, confidence: float = 0.95
) -> ArmValue:
    """The economics of ``arm`` from paired runs: ``pairs`` has one row per seed with columns
    ``tasks_base``, ``usd_base``, ``tasks_arm``, ``usd_arm`` (per developer-day)."""
    tb, sb = pairs["tasks_base"].to_numpy(float), pairs["usd_base"].to_numpy(float)
    ta, sa = pairs["tasks_arm"].to_numpy(float), pairs["usd_arm"].to_numpy(float)
    net = net_value_per_dev_day(tb, sb, ta, sa, value=value, workday_s=workday_s)
    mean, low, high = mean_ci(net, confidence)
    mtb, msb, mta, msa = (float(np.nanmean(x)) if x.size else math.nan for x in (tb, sb, ta, sa))
    if value.usd_per_task is not None:
        task_value = value.usd_per_task
    else:
        task_value = (day_cost_usd(value, workday_s) + msb) / mtb if mtb > 0 else math.nan
    multiple = ((mta - mtb) * task_value + msb) / msa if msa > 0 else math.nan
    cost, pays = break_even_usd_per_dev_hour(mtb, msb, mta, msa, workday_s=workday_s)
    return ArmValue(
        arm=arm,
        n=int(np.count_nonzero(~np.isnan(net))),
        net_usd_per_dev_day=mean,
        net_ci_low=low,
        net_ci_high=high,
        net_usd_per_dev_month=mean * value.workdays_per_month,
        break_even_price_multiple=float(multiple),
        break_even_usd_per_dev_hour=cost,
        pays=pays,
    )


def pays_phrase(pays: str, usd_per_dev_hour: float) -> str:
    """Where an arm pays against the developer cost, in words (``pays`` one of :data:`PAYS`,
    ``usd_per_dev_hour`` its break-even developer cost): "pays above $445 per developer-hour"."""
    return {
        "above": f"pays above ${usd_per_dev_hour:,.0f} per developer-hour",
        "below": f"pays below ${usd_per_dev_hour:,.0f} per developer-hour",
        "always": "pays at any developer cost",
        "never": "pays at no developer cost",
    }.get(pays, "has no break-even developer cost")


def net_phrase(value: Mapping[str, Any], *, against: str = "") -> str:
    """Net value per developer-day with its 95% CI (and its caveat) in words: "+12 USD per
    developer-day against gpu-batched (95% CI +3 to +21)", or "(no interval from 1 value)";
    ``value`` holds :data:`VALUE_COLUMNS`."""
    n, low, high = int(value["n"]), value["net_ci_low"], value["net_ci_high"]
    where = f" against {against}" if against else ""
    if math.isnan(low) or math.isnan(high):  # one value: no interval, only the caveat
        interval = caveat_suffix(n, low, high).removeprefix("; ")
    else:
        interval = f"95% CI {low:+,.0f} to {high:+,.0f}{caveat_suffix(n, low, high)}"
    return f"{value['net_usd_per_dev_day']:+,.0f} USD per developer-day{where} ({interval})"


def value_sentence(value: Mapping[str, Any], *, against: str, usd_per_dev_hour: float) -> str:
    """One arm's economics in words: ``value`` holds :data:`VALUE_COLUMNS` (a row of an economics
    table, or an :class:`ArmValue` as a dict); net value per developer-day with its 95% CI (and its
    caveat), where it pays against the developer cost and its break-even price multiple."""
    net = net_phrase(value, against=against)
    multiple = value["break_even_price_multiple"]
    if not math.isfinite(multiple):
        price = ""
    elif multiple <= 0:
        price = ", and would not pay even if its inference were free"
    else:
        price = f", and breaks even at {multiple:.2f}× its price"
    return (
        f"{value['arm']} at ${usd_per_dev_hour:g} per developer-hour: net {net}; on the mean outcomes it "
        f"{pays_phrase(value['pays'], value['break_even_usd_per_dev_hour'])}{price}."
    )
