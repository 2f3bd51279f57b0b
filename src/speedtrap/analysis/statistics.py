"""Statistics of replicated runs: means with Student-t confidence intervals, grouped summaries and
paired differences under common random numbers.

Pure functions of numbers and DataFrames. NaN values (e.g. ``usd_per_task`` of a run that completed
no task) are left out, and ``n`` counts the values used. Tables from
:func:`speedtrap.experiments.run_experiment` record their factor and outcome columns in
``table.attrs``; with other tables, name the outcomes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

RUN_COLUMNS = ("point", "replication", "seed")
"""Columns of a results table that identify a run rather than describe it."""

SUMMARY_COLUMNS = ("outcome", "n", "mean", "std", "ci_low", "ci_high")
PAIRED_COLUMNS = (
    "outcome",
    "n",
    "baseline_mean",
    "level_mean",
    "mean",
    "std",
    "ci_low",
    "ci_high",
    "ratio",
)


def mean_ci(
    values: Sequence[float] | np.ndarray | pd.Series, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(mean, low, high): the mean and its two-sided Student-t confidence interval.

    ``mean ± t_{(1+confidence)/2, n-1} · s/√n`` with ``s`` the sample standard deviation (ddof 1);
    NaNs are dropped. With one value the bounds are NaN; with none, everything is.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(x.mean())
    if n == 1:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def _describe(x: np.ndarray, confidence: float) -> dict[str, float]:
    x = x[~np.isnan(x)]
    mean, low, high = mean_ci(x, confidence)
    return {
        "n": int(x.size),
        "mean": mean,
        "std": float(x.std(ddof=1)) if x.size > 1 else math.nan,
        "ci_low": low,
        "ci_high": high,
    }


def outcome_columns(df: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The outcome columns of a results table: ``df.attrs["outcomes"]`` when recorded, otherwise every
    numeric column that is neither a run column nor in ``exclude``."""
    recorded = df.attrs.get("outcomes")
    if recorded is not None:
        return [c for c in recorded if c not in exclude]
    return [
        c
        for c in df.columns
        if c not in RUN_COLUMNS and c not in exclude and pd.api.types.is_numeric_dtype(df[c])
    ]


def _check_columns(df: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise KeyError(f"{what}: no column {missing[0]!r} (columns: {', '.join(map(str, df.columns))})")


def summarize(
    df: pd.DataFrame,
    by: Sequence[str] = (),
    outcomes: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per group of ``by`` and per outcome: n, mean, std and the confidence interval of the mean.

    Long format, one row per group × outcome: ``*by, outcome, n, mean, std, ci_low, ci_high``
    (outcome units are those of the input columns). Groups are sorted; ``by=()`` summarises all rows.
    """
    by = list(by)
    outcomes = list(outcomes) if outcomes is not None else outcome_columns(df, exclude=by)
    _check_columns(df, [*by, *outcomes], "summarize")
    rows = []
    groups = df.groupby(by, sort=True, dropna=False) if by else [((), df)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        for outcome in outcomes:
            row = dict(zip(by, key, strict=True))
            row["outcome"] = outcome
            row.update(_describe(group[outcome].to_numpy(dtype=float), confidence))
            rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *SUMMARY_COLUMNS])


def paired_differences(
    df: pd.DataFrame,
    factor: str,
    baseline: object,
    outcomes: Sequence[str] | None = None,
    confidence: float = 0.95,
    by: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Differences ``level − baseline`` of each outcome, paired on ``seed`` (common random numbers).

    For each level of ``factor`` other than ``baseline`` (and each group of ``by``), runs are paired
    with the baseline run that has the same seed and the same ``by`` values; the result has one row
    per ``*by, factor`` (the level) × outcome: ``n`` pairs, ``baseline_mean``, ``level_mean``, the
    mean difference ``mean`` with its ``std`` and confidence interval, and ``ratio`` =
    level_mean / baseline_mean (the relative change of the mean, unitless). ``by`` defaults to the
    other factor columns (``df.attrs["factors"]``; otherwise every column that is neither a run
    column nor an outcome). Pairs with a NaN on either side are dropped for that outcome.
    """
    outcomes = list(outcomes) if outcomes is not None else outcome_columns(df)
    if by is None:
        factors = df.attrs.get("factors")
        all_outcomes = set(df.attrs.get("outcomes") or outcomes)
        if factors is None:
            factors = [c for c in df.columns if c not in RUN_COLUMNS and c not in all_outcomes]
        by = [f for f in factors if f != factor]
    by = list(by)
    _check_columns(df, ["seed", factor, *by, *outcomes], "paired_differences")
    keys = [*by, "seed"]
    if df.duplicated(subset=[*keys, factor]).any():
        others = ", ".join(by) or "no other factors"
        raise ValueError(
            f"paired_differences: several runs share seed, {factor} and ({others}); "
            "add the factor columns that tell them apart to `by`"
        )
    levels = df[factor].drop_duplicates().tolist()
    if baseline not in levels:
        raise ValueError(f"paired_differences: {factor} has no level {baseline!r} (levels: {levels})")
    base = df[df[factor] == baseline][[*keys, *outcomes]]
    rows = []
    for level in levels:
        if level == baseline:
            continue
        other = df[df[factor] == level][[*keys, *outcomes]]
        pairs = base.merge(other, on=keys, suffixes=("_base", "_level"))
        groups = pairs.groupby(by, sort=True, dropna=False) if by else [((), pairs)]
        for key, group in groups:
            key = key if isinstance(key, tuple) else (key,)
            for outcome in outcomes:
                b = group[f"{outcome}_base"].to_numpy(dtype=float)
                v = group[f"{outcome}_level"].to_numpy(dtype=float)
                ok = ~(np.isnan(b) | np.isnan(v))
                b, v = b[ok], v[ok]
                row: dict[str, object] = dict(zip(by, key, strict=True))
                row[factor] = level
                row["outcome"] = outcome
                described = _describe(v - b, confidence)
                base_mean = float(b.mean()) if b.size else math.nan
                level_mean = float(v.mean()) if v.size else math.nan
                row.update(
                    n=described["n"],
                    baseline_mean=base_mean,
                    level_mean=level_mean,
                    mean=described["mean"],
                    std=described["std"],
                    ci_low=described["ci_low"],
                    ci_high=described["ci_high"],
                    ratio=level_mean / base_mean if base_mean else math.nan,
                )
                rows.append(row)
    return pd.DataFrame(rows, columns=[*by, factor, *PAIRED_COLUMNS])


MIN_REPLICATIONS_FOR_CI = 5
"""Fewest values whose Student-t interval is shown without a caveat: with fewer, the standard
deviation is too poorly estimated for the interval's coverage to be trusted."""


def ci_caveat(n: int, low: float, high: float) -> str | None:
    """Why a confidence interval should not be read as one, or ``None`` when it can be: fewer than
    :data:`MIN_REPLICATIONS_FOR_CI` values, no interval at all (one value), or zero width (every
    value equal, e.g. a quantity fixed by construction)."""
    if n < 2 or math.isnan(low) or math.isnan(high):
        return f"no interval from {n} value{'s' if n != 1 else ''}"
    if high - low == 0:
        return f"zero-width interval from {n} identical values: not a measure of uncertainty"
    return few_replications_caveat(n)


def few_replications_caveat(n: int) -> str | None:
    """The caveat :func:`ci_caveat` gives an interval from ``n`` values when they are too few
    (``None`` from :data:`MIN_REPLICATIONS_FOR_CI` on)."""
    if n < MIN_REPLICATIONS_FOR_CI:
        return f"only {n} replications: the interval is unreliable (use at least {MIN_REPLICATIONS_FOR_CI})"
    return None


def caveat_once(text: str, n: int) -> str:
    """A finding ``text`` whose intervals from ``n`` replications each carry the same caveat
    (:func:`few_replications_caveat`, after "; " as :func:`caveat_suffix` puts it), with the caveat
    said once, first, instead; other caveats (zero width, fewer values) stay where they are."""
    caveat = few_replications_caveat(n)
    if caveat is None or f"; {caveat}" not in text:
        return text
    first = (
        f"Every 95% CI below is from only {n} replications and is unreliable "
        f"(use at least {MIN_REPLICATIONS_FOR_CI})."
    )
    return first + "\n" + text.replace(f"; {caveat}", "")


def difference_verdict(low: float, high: float) -> str:
    """ "higher", "lower" or "no detectable difference": where a difference's interval lies against 0."""
    if math.isnan(low) or math.isnan(high) or low <= 0 <= high:
        return "no detectable difference"
    return "higher" if low > 0 else "lower"


def ci_flag(n: int | None, low: float, high: float) -> str:
    """A short mark for a table cell whose interval :func:`ci_caveat` would flag: ``" (n=3)"``,
    ``" (zero width)"``, or ``""``; ``n=None`` checks the width only."""
    if math.isnan(low) or math.isnan(high):
        return ""
    if high - low == 0:
        return " (zero width)"
    if n is not None and n < MIN_REPLICATIONS_FOR_CI:
        return f" (n={n})"
    return ""


def caveat_suffix(n: int, low: float, high: float) -> str:
    """``"; <caveat>"`` for a finding's parenthesis when :func:`ci_caveat` flags the interval, else
    ``""``."""
    caveat = ci_caveat(n, low, high)
    return f"; {caveat}" if caveat else ""
