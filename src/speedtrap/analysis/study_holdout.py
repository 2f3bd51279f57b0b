"""Leave-one-study-out history matching on the final check's simulated points (pure functions).

A calibration that fits every study at once cannot say whether the model *predicts* any of them.
For each fitted study S, :func:`leave_one_study_out` keeps the checked points that no target of any
other study rules out (their simulated implausibility below the cut-off) — the ensemble a
calibration without S would accept among the same candidates — and asks whether that ensemble
predicts S's targets: the mean over its members of each statistic, the members' central 95%, and
whether the mean lies within the target's pre-declared tolerance.

What it does not refit: the waves' emulators were fitted with every study, so the candidates the
final check ran were already drawn where S is matched. A candidate region shaped by S can only make
S easier to predict, so a study this check calls unpredicted is unpredicted; one it calls predicted
would need a full calibration without S to be sure (one whole calibration per study; not run by
default). docs/validation.md says so beside the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["HOLDOUT_COLUMNS", "StudyTarget", "leave_one_study_out", "predicted"]

HOLDOUT_COLUMNS = (
    "study",
    "target",
    "statistic",
    "members_without",
    "members_with",
    "published",
    "predicted",
    "member_low",
    "member_high",
    "accept_low",
    "accept_high",
    "predicted_within",
)
"""Columns of :func:`leave_one_study_out`: the members kept without the study (and with every study),
the members' mean of the statistic with their central 95% (``member_low``/``member_high``), the
accepted range of the target's tolerance and whether the mean falls in it."""


@dataclass(frozen=True)
class StudyTarget:
    """A fitted target: its ``id``, its ``statistic`` (the check table's column), its ``study``, the
    ``published`` value and the simulated range its tolerance accepts."""

    id: str
    statistic: str
    study: str
    published: float
    accept_low: float
    accept_high: float


def leave_one_study_out(
    check: pd.DataFrame, targets: Sequence[StudyTarget], *, cutoff: float
) -> pd.DataFrame:
    """One row per target of every study (:data:`HOLDOUT_COLUMNS`). ``check``: the final check's
    table, with each statistic's simulated mean (``<statistic>``) and implausibility
    (``I:<statistic>``) per point. A study whose leave-out keeps no point predicts nothing (NaN)."""
    implausible = {t.statistic: check[f"I:{t.statistic}"].to_numpy(float) for t in targets}
    with_all = np.all([v < cutoff for v in implausible.values()], axis=0) if implausible else np.zeros(0)
    rows = []
    for study in dict.fromkeys(t.study for t in targets):
        others = [v < cutoff for s, v in implausible.items() if _study_of(targets, s) != study]
        kept = np.all(others, axis=0) if others else np.ones(len(check), dtype=bool)
        for t in (t for t in targets if t.study == study):
            found = predicted(t, check.loc[kept, t.statistic].to_numpy(float))
            found.pop("members")
            rows.append({"members_without": int(kept.sum()), "members_with": int(with_all.sum()), **found})
    return pd.DataFrame(rows, columns=list(HOLDOUT_COLUMNS))


def predicted(target: StudyTarget, values: np.ndarray) -> dict[str, object]:
    """Whether members' simulated ``values`` of ``target``'s statistic predict it: their mean, their
    central 95% (``member_low``/``member_high``), the target's accepted range and whether the mean lies
    in it (``predicted_within``; NaN values are left out, and none left predicts nothing)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    mean = float(values.mean()) if len(values) else math.nan
    low, high = np.quantile(values, [0.025, 0.975]) if len(values) else (math.nan, math.nan)
    return {
        "study": target.study,
        "target": target.id,
        "statistic": target.statistic,
        "members": len(values),
        "published": target.published,
        "predicted": mean,
        "member_low": float(low),
        "member_high": float(high),
        "accept_low": target.accept_low,
        "accept_high": target.accept_high,
        "predicted_within": bool(target.accept_low <= mean <= target.accept_high),
    }


def _study_of(targets: Sequence[StudyTarget], statistic: str) -> str:
    return next(t.study for t in targets if t.statistic == statistic)
