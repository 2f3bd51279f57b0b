"""Decision economics of one arm against a baseline: does the extra output pay for the extra spend?

Pure functions of paired run summaries (same seeds, and the same ensemble member, on both arms). Per
developer-day:

* ``L`` = loaded developer cost of a day, USD (``usd_per_dev_hour × workday hours``);
* ``T`` = output in task-equivalents: tasks completed **plus the other work developers do while an
  agent runs**, valued in tasks (``other_work_task_equiv_per_dev_day``: its seconds over the mean
  human effort of a task, :mod:`speedtrap.models.results`; the sum is ``value_tasks_per_dev_day``);
  ``S`` = inference spend (USD); baseline ``b`` and arm ``a``;
* a task-equivalent is worth ``V`` = ``value.usd_per_task`` if set, else its full cost on the
  baseline, ``(L + S_b) / T_b`` (the arm pays exactly when its full cost per task-equivalent is lower);
* **net value per developer-day** = ``(T_a − T_b) · V − (S_a − S_b)``, USD; per developer-month ×
  ``value.workdays_per_month``;
* **break-even price multiple**: the factor m by which the arm's prices could be multiplied before
  its mean net value reaches zero (net per run ``(T_a − T_b)·V + S_b − m·S_a``; above 1: it pays at
  today's price; 0 or below: it would not pay even if its inference were free);
* **break-even developer cost** (with the default task value): the ``usd_per_dev_hour`` c at which
  the mean net value is zero (net per run ``c·h·(T_a − T_b)/T_b + (T_a − T_b)·S_b/T_b − (S_a − S_b)``,
  ``h`` the workday's hours): above it the arm pays when it produces more (below it, when less).

Every number is computed per run (per seed and ensemble member) and summarised on that one basis:
the net value's mean with its seed-noise and behavioural-uncertainty 95% intervals
(:func:`speedtrap.analysis.intervals.two_intervals`), and each break-even as the zero of the mean
net value with, as its intervals, the prices at which the net value's interval holds zero
(:func:`speedtrap.analysis.intervals.break_even`). So the break-evens' signs can never contradict the
net value's: at the price in force, the net value is positive exactly when the price lies on the
paying side of the break-even, and its interval holds zero exactly when the break-even's holds the
price. Runs without the other-work column count tasks alone (said in ``notes``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from speedtrap.analysis.intervals import BreakEven, behaviour_words, break_even, describe_set, two_intervals
from speedtrap.analysis.statistics import caveat_suffix
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
    "net_behaviour_low",
    "net_behaviour_high",
    "dominant",
    "members",
    "seeds_per_member",
    "price_multiple_seed",
    "price_multiple_behaviour",
    "usd_per_dev_hour_seed",
    "usd_per_dev_hour_behaviour",
    "other_work_share_base",
    "other_work_share_arm",
    "notes",
)

PAYS = ("above", "below", "always", "never", "n/a")
"""Where an arm pays, against the developer cost: above or below the break-even cost, at every cost,
at none, or not defined (equal output, or a baseline without completed tasks)."""

OTHER_WORK = "other_work_task_equiv_per_dev_day"
"""The run summary's other work while agents run, in task-equivalents per developer-day."""


@dataclass(frozen=True)
class ArmValue:
    """The economics of one arm against the baseline (USD; per developer-day unless named). The
    ``*_seed`` and ``*_behaviour`` break-even fields are the prices at which the net value's
    seed-noise or behavioural 95% interval holds zero, in words ("n/a" without an ensemble)."""

    arm: str
    n: int
    net_usd_per_dev_day: float
    net_ci_low: float
    """Seed-noise 95% interval (the paired Student-t interval over seeds with one parameter set)."""
    net_ci_high: float
    net_usd_per_dev_month: float
    break_even_price_multiple: float
    break_even_usd_per_dev_hour: float
    """NaN when no developer cost breaks even (see ``pays``)."""
    pays: str
    """One of :data:`PAYS`: where the arm pays against the developer cost."""
    net_behaviour_low: float = math.nan
    """Behavioural-uncertainty 95% interval over the ensemble's members (NaN with one member)."""
    net_behaviour_high: float = math.nan
    dominant: str = "n/a"
    members: int = 1
    seeds_per_member: float = math.nan
    price_multiple_seed: str = "n/a"
    price_multiple_behaviour: str = "n/a"
    usd_per_dev_hour_seed: str = "n/a"
    usd_per_dev_hour_behaviour: str = "n/a"
    other_work_share_base: float = math.nan
    """Share of the baseline's output (task-equivalents) that is other work while agents run."""
    other_work_share_arm: float = math.nan
    notes: str = ""


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
    """The ``pairs`` frame :func:`arm_value` takes: per seed (and ensemble ``member`` when the runs
    have one), tasks and inference dollars per developer-day of the ``baseline`` run and the
    ``level`` run of ``factor``, and the other work of each in task-equivalents when the runs have
    it (``other_base``, ``other_arm``); seeds missing on either side or with a missing value are
    dropped. The level's columns are ``<arm_prefix>tasks_per_dev_day`` and so on: a prefix such as
    ``"standard_"`` takes a group of developers within the level's runs."""
    keys = ["member", "seed"] if "member" in runs.columns else ["seed"]
    base = runs[runs[factor] == baseline].set_index(keys)
    arm = runs[runs[factor] == level].set_index(keys)
    columns = {
        "tasks_base": base["tasks_per_dev_day"],
        "usd_base": base["usd_per_dev_day"],
        "tasks_arm": arm[f"{arm_prefix}tasks_per_dev_day"],
        "usd_arm": arm[f"{arm_prefix}usd_per_dev_day"],
    }
    if OTHER_WORK in base.columns and f"{arm_prefix}{OTHER_WORK}" in arm.columns:
        columns.update(other_base=base[OTHER_WORK], other_arm=arm[f"{arm_prefix}{OTHER_WORK}"])
    pairs = pd.DataFrame(columns).dropna()
    if "member" in keys:
        pairs = pairs.assign(member=pairs.index.get_level_values("member")).droplevel("member")
    return pairs


def _set_words(result: BreakEven, fmt: str) -> tuple[str, str]:
    return describe_set(result.seed, fmt), describe_set(result.behaviour, fmt)


@dataclass(frozen=True)
class NetLines:
    """Per run, the net value per developer-day as a line in each price: ``cost_a + cost_b · c``
    in the developer cost c (USD/hour) and ``price_a + price_b · m`` in the arm's price multiple m;
    at the prices in force both give ``net``. ``members``: each run's ensemble member (or None)."""

    net: np.ndarray
    cost_a: np.ndarray
    cost_b: np.ndarray
    price_a: np.ndarray
    price_b: np.ndarray
    members: np.ndarray | None
    counted: bool
    """Whether the runs carried other work (``other_base``, ``other_arm``)."""
    other: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    """Other work and total task-equivalents: baseline's, arm's (other_b, total_b, other_a, total_a)."""


def net_value_lines(pairs: pd.DataFrame, *, value: Value, workday_s: float) -> NetLines:
    """The net value per run and its lines in the developer cost and the price multiple (module
    docstring); ``pairs`` as :func:`arm_value` takes them."""
    counted = "other_base" in pairs.columns and "other_arm" in pairs.columns
    zeros = np.zeros(len(pairs))
    ob = pairs["other_base"].to_numpy(float) if counted else zeros
    oa = pairs["other_arm"].to_numpy(float) if counted else zeros
    tb = pairs["tasks_base"].to_numpy(float) + ob
    ta = pairs["tasks_arm"].to_numpy(float) + oa
    sb, sa = pairs["usd_base"].to_numpy(float), pairs["usd_arm"].to_numpy(float)
    hours = workday_s / SECONDS_PER_HOUR
    net = net_value_per_dev_day(tb, sb, ta, sa, value=value, workday_s=workday_s)
    if value.usd_per_task is not None:
        task_value = np.full_like(tb, value.usd_per_task)
        cost_a, cost_b = (ta - tb) * task_value - (sa - sb), zeros
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(tb > 0, (ta - tb) / tb, np.nan)  # relative extra output
            task_value = np.where(tb > 0, (day_cost_usd(value, workday_s) + sb) / tb, np.nan)
        cost_a, cost_b = gain * sb - (sa - sb), gain * hours
    return NetLines(
        net=net,
        cost_a=cost_a,
        cost_b=cost_b,
        price_a=(ta - tb) * task_value + sb,
        price_b=-sa,
        members=pairs["member"].to_numpy() if "member" in pairs.columns else None,
        counted=counted,
        other=(ob, tb, oa, ta),
    )


def arm_value(
    pairs: pd.DataFrame, arm: str, *, value: Value, workday_s: float, confidence: float = 0.95
) -> ArmValue:
    """The economics of ``arm`` from paired runs (module docstring): ``pairs`` has one row per run
    with columns ``tasks_base``, ``usd_base``, ``tasks_arm``, ``usd_arm`` (per developer-day),
    optionally ``other_base`` and ``other_arm`` (other work in task-equivalents per developer-day)
    and ``member`` (the ensemble member; without it, one parameter set). ``confidence`` must be
    0.95 (the intervals' level)."""
    if confidence != 0.95:
        raise ValueError(f"only 95% intervals are computed, got confidence {confidence}")
    lines = net_value_lines(pairs, value=value, workday_s=workday_s)
    members, counted = lines.members, lines.counted
    ob, tb, oa, ta = lines.other
    intervals = two_intervals(lines.net, members)
    by_cost = break_even(lines.cost_a, lines.cost_b, members)
    by_price = break_even(lines.price_a, lines.price_b, members)
    multiple = by_price.root if len(pairs) and np.nanmean(-lines.price_b) > 0 else math.nan
    cost = by_cost.point if by_cost.pays in ("above", "below") else math.nan
    notes = list(intervals.notes)
    if not counted:
        notes.append("other work while agents run not in these runs: tasks alone counted")

    def share(other: np.ndarray, total: np.ndarray) -> float:
        return float(np.nanmean(other) / np.nanmean(total)) if counted and np.nanmean(total) > 0 else math.nan

    def same_nan(x: float) -> float:  # one NaN object, so that equal results compare equal
        return math.nan if math.isnan(x) else float(x)

    cost_words = _set_words(by_cost, "${:,.0f}/h")
    price_words = _set_words(by_price, "{:.2f}×")
    return ArmValue(
        arm=arm,
        n=intervals.n,
        net_usd_per_dev_day=same_nan(intervals.mean),
        net_ci_low=same_nan(intervals.seed_low),
        net_ci_high=same_nan(intervals.seed_high),
        net_usd_per_dev_month=same_nan(intervals.mean * value.workdays_per_month),
        break_even_price_multiple=same_nan(float(multiple)),
        break_even_usd_per_dev_hour=same_nan(cost),
        pays=by_cost.pays,
        net_behaviour_low=same_nan(intervals.behaviour_low),
        net_behaviour_high=same_nan(intervals.behaviour_high),
        dominant=intervals.dominant,
        members=intervals.members,
        seeds_per_member=same_nan(intervals.seeds_per_member),
        price_multiple_seed=price_words[0],
        price_multiple_behaviour=price_words[1],
        usd_per_dev_hour_seed=cost_words[0],
        usd_per_dev_hour_behaviour=cost_words[1],
        other_work_share_base=same_nan(share(ob, tb)),
        other_work_share_arm=same_nan(share(oa, ta)),
        notes="; ".join(notes),
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
    developer-day against gpu-batched (95% CI +3 to +21)", or "(no interval from 1 value)"; under an
    ensemble (a finite behavioural interval) the seed interval and then the behavioural one, with which
    dominates, or why there is none ("too few members (4)": members whose runs give no net value, as a
    run with no task done on the baseline, do not count). ``value`` holds :data:`VALUE_COLUMNS`."""
    n, low, high = int(value["n"]), value["net_ci_low"], value["net_ci_high"]
    where = f" against {against}" if against else ""
    if math.isnan(low) or math.isnan(high):  # one value: no interval, only the caveat
        interval = caveat_suffix(n, low, high).removeprefix("; ")
    else:
        interval = f"95% CI {low:+,.0f} to {high:+,.0f}{caveat_suffix(n, low, high)}"
    b_low, b_high = value.get("net_behaviour_low", math.nan), value.get("net_behaviour_high", math.nan)
    if math.isfinite(b_low) and math.isfinite(b_high):  # under an ensemble: the seed interval, then this
        interval = (
            f"seed noise: {interval}; behavioural interval over the ensemble {b_low:+,.0f} to "
            f"{b_high:+,.0f}, {value.get('dominant', 'n/a')} dominates"
        )
    elif int(value.get("members", 1)) >= 2:  # an ensemble without one: say why, as every table does
        words = behaviour_words(b_low, b_high, int(value["members"]))
        interval += f"; no behavioural interval: {words}"
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
