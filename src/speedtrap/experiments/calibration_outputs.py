"""What a history-matching calibration leaves behind: CSV tables, figures and a finding in words.

:func:`write_calibration` writes, into one directory (``experiments/calibration/`` for a full run):

* ``waves.csv``: one row per wave (:class:`~speedtrap.experiments.calibration.HistoryMatchingResult`
  ``summary``: design points, runs fitted, candidates, share of the space ruled out ± its standard
  error, targets used, smallest Q²);
* ``emulators.csv``: one row per wave × target: Q², coverage, false exclusions, noise share, used,
  the share of the space that target alone rules out, with the target's value and errors;
* ``wave<k>.csv``: wave k's design points, their simulated outputs and emulated implausibility;
* ``emulator_check.csv``: each wave's emulators at runs they were not fitted to;
* ``check.csv``: the final check (simulated means, their standard errors, implausibility, kept);
* ``parameters.csv``: the parameters as this calibration varied them (``path``, ``low``, ``high``,
  ``scale``, ``integer``, ``source``), so the runs can be read back on their own ranges;
* ``ensemble.csv``: the kept parameter sets (:mod:`speedtrap.experiments.ensemble`);
* ``leave_one_study_out.csv``: each fitted study's targets as predicted by the checked points that
  every other study keeps (:func:`study_holdout`);
* ``least_implausible.csv``: the :data:`ENSEMBLE_AIM` checked sets of least maximum implausibility,
  least first (:func:`least_implausible`: ``member``, ``point``, ``max_implausibility``, the
  parameters), the stand-in ``experiments/calibrate.py --store`` keeps when no set passed;
* ``ruled_out.png``, ``emulator_check.png``, ``non_implausible_pairs.png``
  (:mod:`speedtrap.plots.history_matching`).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from speedtrap.analysis.history_matching import CUTOFF
from speedtrap.analysis.study_holdout import StudyTarget, leave_one_study_out, predicted
from speedtrap.experiments.calibration import ENSEMBLE_AIM, HistoryMatchingResult
from speedtrap.experiments.ensemble import ENSEMBLE_FILE, write_ensemble
from speedtrap.plots.history_matching import (
    plot_emulator_predictions,
    plot_non_implausible_pairs,
    plot_ruled_out,
)

__all__ = ["ENSEMBLE_AIM", "calibration_finding", "least_implausible", "stored_members", "write_calibration"]


def least_implausible(result: HistoryMatchingResult, count: int = ENSEMBLE_AIM) -> pd.DataFrame:
    """The ``count`` parameter sets of the final check with the smallest maximum implausibility over
    the targets, least first: ``member`` (0, 1, …), ``point`` (its row of the check),
    ``max_implausibility`` and one column per parameter path (empty without a final check)."""
    names = [p.name for p in result.setup.parameters]
    if result.check.empty:
        return pd.DataFrame(columns=["member", "point", "max_implausibility", *names])
    check = result.check.reset_index(drop=True)
    order = check["max_implausibility"].sort_values(kind="stable").index[:count]
    rows = check.loc[order, ["max_implausibility", *names]].reset_index(names="point")
    rows.insert(0, "member", range(len(rows)))
    return rows


def stored_members(result: HistoryMatchingResult) -> tuple[pd.DataFrame, str]:
    """What ``experiments/calibrate.py --store`` keeps as the calibrated ensemble, and why: the
    ensemble (the sets every target accepts) when it has :data:`ENSEMBLE_AIM` members or more, or at
    least :data:`~speedtrap.analysis.intervals.MIN_MEMBERS` (said to be fewer than aimed at: a stand-in
    would put rejected sets, outside some hard interval, into every answer); else the
    :func:`least_implausible` :data:`ENSEMBLE_AIM` (``member`` and the parameters) — the accepted
    sets first, topped up with the next least implausible — said as such (fewer members would leave
    the behavioural interval to one or a few parameter sets)."""
    from speedtrap.analysis.intervals import MIN_MEMBERS

    kept = len(result.ensemble)
    if kept >= ENSEMBLE_AIM:
        return result.ensemble, f"the {kept} parameter sets every target accepts"
    if kept >= MIN_MEMBERS:
        return result.ensemble, (
            f"the {kept} parameter sets every target accepts (fewer than the {ENSEMBLE_AIM} the method aims "
            "at; no rejected set is added)"
        )
    least = least_implausible(result)
    if least.empty:
        raise ValueError("the calibration has no final check: nothing to store")
    worst = least["max_implausibility"]
    accepted = (
        f"{kept} parameter set{'' if kept == 1 else 's'} accepted by every target, topped up with the next "
        if kept
        else "no parameter set is accepted by every target: the "
    )
    return least.drop(columns=["point", "max_implausibility"]), (
        f"{accepted}{len(least) - kept} least implausible checked sets (maximum implausibility "
        f"{worst.min():.2f} to {worst.max():.2f}) as a stand-in for the {ENSEMBLE_AIM} the method aims at"
    )


HOLDOUT_FILE = "leave_one_study_out.csv"
"""The calibration's leave-one-study-out table (:func:`study_holdout`)."""


def study_holdout(check: pd.DataFrame, targets: pd.DataFrame, cutoff: float = CUTOFF) -> pd.DataFrame:
    """:func:`speedtrap.analysis.study_holdout.leave_one_study_out` of a final check over the fitted
    targets of ``targets`` (the workflow targets table: ``study``, ``role``, tolerances) whose
    statistics the check recorded."""
    recorded = [t for t in _study_targets(targets) if f"I:{t.statistic}" in check.columns]
    return leave_one_study_out(check, recorded, cutoff=cutoff)


def _study_targets(targets: pd.DataFrame, study: str | None = None) -> list[StudyTarget]:
    """The fitted targets of the targets table (of ``study`` only, when given) with their accepted
    ranges."""
    from speedtrap.validation.workflow import FITTED_ROLES, accepted_range

    fitted = targets[targets["role"].isin(FITTED_ROLES)] if "role" in targets else targets
    return [
        StudyTarget(
            str(row["id"]),
            str(row["statistic"]),
            str(row.get("study", row["id"])),
            float(row["published"]),
            *accepted_range(row),
        )
        for _, row in fitted.iterrows()
        if study is None or row.get("study") == study
    ]


def rejudged_check(check: pd.DataFrame, targets: pd.DataFrame, cutoff: float = CUTOFF) -> pd.DataFrame:
    """A stored final check judged again by today's targets (roles, intervals read as intervals, hard
    intervals strict: :func:`speedtrap.validation.parameters.calibration_targets`) on the statistics it
    recorded: each target's ``I:<statistic>``, ``max_implausibility`` and ``kept`` recomputed from its
    simulated means and their standard errors. A fitted target the check did not record (one added
    since) judges nothing and is named in the ``attrs["unrecorded"]`` list."""
    import numpy as np

    from speedtrap.validation.parameters import calibration_targets

    fitted = calibration_targets(targets)
    recorded = [t for t in fitted if t.name in check.columns and f"se:{t.name}" in check.columns]
    out = check.copy()
    columns = []
    for t in recorded:
        se = out[f"se:{t.name}"].to_numpy(float)
        out[f"I:{t.name}"] = t.implausibility(out[t.name].to_numpy(float), np.nan_to_num(se) ** 2, final=True)
        columns.append(f"I:{t.name}")
    out["max_implausibility"] = out[columns].max(axis=1)
    out["kept"] = (out[columns] < cutoff).all(axis=1)
    out.attrs["unrecorded"] = [t.name for t in fitted if t not in recorded]
    return out


def rejudged_members(check: pd.DataFrame, parameters: list[str]) -> pd.DataFrame:
    """The kept points of a (re-judged) check as an ensemble: ``member`` and one column per path."""
    members = check.loc[check["kept"], parameters].reset_index(drop=True)
    members.insert(0, "member", range(len(members)))
    return members


def write_calibration(result: HistoryMatchingResult, out: str | Path) -> list[Path]:
    """Write the calibration's tables and figures into ``out`` (see the module docstring); returns
    the paths written. When no point passed the final check, ``ensemble.csv`` holds its header
    alone (and :func:`speedtrap.experiments.ensemble.load_ensemble` refuses it: no members)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def csv(frame: pd.DataFrame, name: str) -> None:
        frame.to_csv(out / name, index=False)
        written.append(out / name)

    csv(result.summary, "waves.csv")
    csv(
        pd.DataFrame(
            [
                {
                    "path": p.name,
                    "low": p.low,
                    "high": p.high,
                    "scale": p.scale,
                    "integer": p.integer,
                    "source": p.source,
                }
                for p in result.setup.parameters
            ]
        ),
        "parameters.csv",
    )
    targets = pd.DataFrame(
        [
            {"target": t.name, "value": t.value, "obs_sd": t.obs_sd, "discrepancy_sd": t.discrepancy_sd}
            for t in result.setup.targets
        ]
    )
    csv(result.diagnostics.merge(targets, on="target", how="left"), "emulators.csv")
    for wave, rows in result.runs.groupby("wave"):
        csv(rows.drop(columns="wave"), f"wave{wave}.csv")
    csv(result.emulator_check, "emulator_check.csv")
    if not result.check.empty:
        csv(result.check, "check.csv")
    if not result.check.empty:
        csv(least_implausible(result), "least_implausible.csv")
        csv(study_holdout(result.check, result.setup.target_table), HOLDOUT_FILE)
    if result.ensemble.empty:  # the header alone: load_ensemble says that no member passed
        csv(result.ensemble, ENSEMBLE_FILE)
    else:
        written.append(write_ensemble(result.ensemble, out / ENSEMBLE_FILE))

    written.append(_save(plot_ruled_out(result.summary), out / "ruled_out.png"))
    if not result.emulator_check.empty:
        bands = {t.name: (t.value, math.sqrt(t.variance)) for t in result.setup.targets}
        fig = plot_emulator_predictions(
            result.emulator_check, [t.name for t in result.setup.targets], bands=bands
        )
        written.append(_save(fig, out / "emulator_check.png"))
    last = result.waves[-1]
    if len(last.non_implausible):
        ranges = {p.name: (p.low, p.high, p.scale) for p in result.setup.parameters}
        values = pd.DataFrame(
            {p.name: p.from_unit(last.non_implausible[:, j]) for j, p in enumerate(result.setup.parameters)}
        )
        fig = plot_non_implausible_pairs(
            values,
            ranges,
            title=f"Non-implausible after wave {last.number}: {len(values)} candidates, "
            "the 6 most constrained parameters",
        )
        written.append(_save(fig, out / "non_implausible_pairs.png"))
    return written


def _save(fig: object, path: Path) -> Path:
    fig.savefig(path, dpi=110)  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    return path


def calibration_finding(result: HistoryMatchingResult) -> str:
    """The calibration in words: the share ruled out after each wave, which targets' emulators were
    used and the weakest Q², and how many points passed the final check."""
    parts = []
    for row in result.summary.itertuples():
        parts.append(
            f"wave {row.wave}: {100 * row.ruled_out_share:.2f}% ± {200 * row.remaining_se:.2f}% of the space "
            f"ruled out ({row.non_implausible} candidates left; {row.targets_used} of "
            f"{len(result.setup.targets)} targets' emulators used, smallest Q² {row.min_q2:.2f})"
        )
    text = "History matching: " + "; ".join(parts) + "."
    if result.stopped:
        text += f" Stopped: {result.stopped}."
    if not result.check.empty:
        kept = int(result.check["kept"].sum())
        text += (
            f" Final check: {kept} of {len(result.check)} points within the cut-off on every target by "
            f"simulation"
        )
        text += "." if kept >= ENSEMBLE_AIM else f" (fewer than the {ENSEMBLE_AIM} aimed at)."
        if kept < len(result.check):
            worst = (
                result.check.filter(like="I:").gt(result.waves[-1].cutoff).sum().sort_values(ascending=False)
            )
            worst = worst[worst > 0]
            text += " Targets missed most often: " + ", ".join(
                f"{name.removeprefix('I:')} ({count})" for name, count in worst.head(4).items()
            )
            text += "."
    return text


REFIT_FILE = "refit_prediction.csv"
"""What a calibration without one study predicts for it (:func:`refit_prediction`), written beside
that calibration's outputs (``experiments/calibration/leave-out/<study>/``)."""


def study_statistics(targets: pd.DataFrame, study: str) -> list[str]:
    """The statistics of ``study``'s fitted targets (calibration and consistency roles) in the targets
    table; ``ValueError`` naming the fitted studies when it has none."""
    from speedtrap.validation.workflow import FITTED_ROLES

    fitted = targets[targets["role"].isin(FITTED_ROLES)]
    rows = fitted[fitted["study"] == study]
    if rows.empty:
        known = ", ".join(sorted(fitted["study"].astype(str).unique()))
        raise ValueError(f"no fitted study {study!r}: the fitted studies are {known}")
    return list(dict.fromkeys(rows["statistic"].astype(str)))


def refit_prediction(check: pd.DataFrame, targets: pd.DataFrame, study: str) -> pd.DataFrame:
    """``study``'s fitted targets as predicted by a calibration that never saw them: per target, the
    mean over the sets that calibration kept (``check``'s ``kept`` rows) of the statistic its final
    check recorded unjudged, the kept sets' central 95%, the target's accepted range and whether the
    mean lies inside it (``predicted_within``; :func:`speedtrap.analysis.study_holdout.predicted`);
    NaN and not predicted when nothing was kept or recorded."""
    import numpy as np

    study_statistics(targets, study)
    kept = check[check["kept"].astype(bool)] if "kept" in check else check.iloc[0:0]
    return pd.DataFrame(
        [
            predicted(t, kept[t.statistic].to_numpy(float) if t.statistic in kept else np.array([]))
            for t in _study_targets(targets, study)
        ]
    )
