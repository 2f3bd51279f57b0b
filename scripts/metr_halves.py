"""METR's 2025 time ratio on each half of its issues, split at the median forecast time without AI:
the figures of the calibration targets ``metr_time_ratio_short_half`` and ``metr_time_ratio_long_half``
(src/speedtrap/validation/data/workflow_targets.csv).

METR's released data are not redistributed here (the repository states no licence). Check out
https://github.com/METR/Measuring-Early-2025-AI-on-Exp-OSS-Devs at commit
a7fd9c1207323df32ee0f2ab2e933bc71baf4a35 and run::

    python scripts/metr_halves.py --data PATH/TO/data_complete.csv

The method is METR's own (its ``regression.py``): a missing post-review time is imputed as the mean of
its treatment arm, the total is initial plus post-review time, and ``exp(β)`` of an OLS of
log(total time) on AI-allowed and log(forecast time without AI), with the homoskedastic 95% interval,
gives the time ratio; here once on all issues (METR's 1.188, 1.013–1.395) and once on each half.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats


def ols_time_ratio(df: pd.DataFrame) -> tuple[float, float, float, int]:
    """``exp(β)`` of METR's regression on ``df`` (columns ``total``, ``ai_treatment``,
    ``predicted_time_no_ai``) with its homoskedastic 95% interval, and the issues behind it."""
    y = np.log(df["total"].to_numpy(float))
    x = np.column_stack(
        [
            np.ones(len(df)),
            df["ai_treatment"].to_numpy(float),
            np.log(df["predicted_time_no_ai"].to_numpy(float)),
        ]
    )
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ beta
    dof = len(y) - x.shape[1]
    cov = (resid @ resid / dof) * np.linalg.inv(x.T @ x)
    half_width = stats.t.ppf(0.975, dof) * np.sqrt(cov[1, 1])
    return (
        float(np.exp(beta[1])),
        float(np.exp(beta[1] - half_width)),
        float(np.exp(beta[1] + half_width)),
        len(y),
    )


def prepared(raw: pd.DataFrame) -> pd.DataFrame:
    """METR's imputation and total time (``regression.py``); issues with no positive total dropped."""
    df = raw.copy()
    for arm in (0, 1):
        rows = df["ai_treatment"] == arm
        mean = df.loc[rows, "post_review_implementation_time"].mean()
        df.loc[rows & df["post_review_implementation_time"].isna(), "post_review_implementation_time"] = mean
    df["total"] = df["initial_implementation_time"] + df["post_review_implementation_time"]
    return df[df["total"] > 0]


def halves(df: pd.DataFrame) -> pd.DataFrame:
    """The time ratio on all issues and on each half split at the median forecast (short: at most
    the median, long: above it)."""
    median = df["predicted_time_no_ai"].median()
    parts = {
        "all": df,
        "short": df[df["predicted_time_no_ai"] <= median],
        "long": df[df["predicted_time_no_ai"] > median],
    }
    rows = [
        dict(zip(("ratio", "low", "high", "issues"), ols_time_ratio(p), strict=True)) for p in parts.values()
    ]
    return pd.DataFrame(rows, index=list(parts)).assign(median_forecast_min=median)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="METR's data_complete.csv")
    args = parser.parse_args()
    print(halves(prepared(pd.read_csv(args.data))).round(4).to_string())


if __name__ == "__main__":
    main()
