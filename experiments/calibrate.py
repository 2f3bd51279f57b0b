"""Joint calibration of the workflow model by history matching, in one command.

``python experiments/calibrate.py [--quick] [--executor serial|processes|dask] [--workers N]
[--results-dir DIR] [--waves N] [--points N] [--replications N] [--check-points N]
[--check-replications N] [--days D] [--out DIR] [--store]``

Varies every uncertain behavioural parameter of src/speedtrap/validation/data/behaviour_parameters.csv
over its range at once, runs the two calibration scenarios (experiments/scenarios/headline.toml and
metr.toml, METR's with AI and by hand) at each design point, and rules out wave by wave, with one
Gaussian-process emulator per target, the parameter sets whose implausibility exceeds 3 on some
workflow target (src/speedtrap/validation/data/workflow_targets.csv, with each target's observation
error and model discrepancy); then checks a space-filling subset of what is left with real runs and
keeps the sets below 3 on every target: the ensemble (speedtrap.experiments.calibration; the method
in docs/calibration.md, "History matching").

Runs are stored under ``<results-dir>/calibration/`` (``calibration-quick/`` with ``--quick``) as
they finish, with each wave's design; a rerun resumes and computes only what is missing, and a
rerun with more ``--waves`` goes on from the last. Writes waves.csv, emulators.csv, wave<k>.csv,
emulator_check.csv, check.csv, ensemble.csv and three figures to ``--out`` (default
experiments/calibration/; with ``--quick``, ``<results-dir>/calibration-quick/outputs/``), and
prints the share ruled out per wave, the final check and the wall time. ``--quick``: 2 waves of 8
points of 3 developers × 1 day, 4 checked points (seconds; a smoke run whose region means nothing).
``--store``: keep the result as the stored calibrated ensemble every command uses (the sets every
target accepts; when there are none, the 50 least implausible checked sets, ``least_implausible.csv``,
as a stand-in, and it says so). ``--days D``: every calibration scenario cut to D working days (its
developers kept), stored apart (``<results-dir>/calibration-<D>d/``): shorter runs, noisier
statistics (the final check's replications average them).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from speedtrap.analysis.emulator import CV_FOLDS
from speedtrap.analysis.history_matching import DEFAULT_CANDIDATES
from speedtrap.experiments.calibration import (
    CHECK_REPLICATIONS,
    DEFAULT_CHECK_POINTS,
    DEFAULT_POINTS,
    DEFAULT_WAVES,
    QUICK,
    run_history_matching,
)
from speedtrap.experiments.calibration_outputs import (
    ENSEMBLE_AIM,
    REFIT_FILE,
    calibration_finding,
    refit_prediction,
    stored_members,
    study_statistics,
    write_calibration,
)
from speedtrap.experiments.canonical import EXPERIMENTS_DIR
from speedtrap.experiments.ensemble import DEFAULT_ENSEMBLE, ENSEMBLE_FILE, write_ensemble
from speedtrap.experiments.executors import EXECUTOR_KINDS
from speedtrap.validation.workflow import default_scenarios, load_targets

OUT = Path(__file__).resolve().parent / "calibration"
STORED = Path(__file__).resolve().parents[1] / "src" / "speedtrap" / "validation" / "data" / DEFAULT_ENSEMBLE
"""Where ``--store`` keeps the calibrated ensemble: the package data every command reads."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run of seconds (tiny scenarios and waves)"
    )
    parser.add_argument(
        "--executor", choices=EXECUTOR_KINDS, default=None, help="default processes; serial with --quick"
    )
    parser.add_argument("--workers", type=int, default=None, help="worker processes (processes, dask)")
    parser.add_argument("--results-dir", type=Path, default=Path("results"), help="where runs are stored")
    parser.add_argument("--waves", type=int, default=None, help=f"waves (default {DEFAULT_WAVES})")
    parser.add_argument(
        "--points", type=int, default=None, help=f"design points per wave (default {DEFAULT_POINTS})"
    )
    parser.add_argument("--replications", type=int, default=1, help="runs per design point (default 1)")
    parser.add_argument(
        "--check-points",
        type=int,
        default=None,
        help=f"points of the final check (default {DEFAULT_CHECK_POINTS})",
    )
    parser.add_argument(
        "--check-replications",
        type=int,
        default=None,
        help=f"runs per point of the final check (default {CHECK_REPLICATIONS})",
    )
    parser.add_argument(
        "--grow-check-to",
        type=int,
        default=None,
        help=f"where the final check accepts fewer than {ENSEMBLE_AIM} sets, grow it once to this many",
    )
    parser.add_argument(
        "--days", type=float, default=None, help="cut each calibration scenario to this many working days"
    )
    parser.add_argument("--out", type=Path, default=None, help="where tables and figures go")
    parser.add_argument(
        "--store",
        action="store_true",
        help="keep the result as the stored calibrated ensemble that every command uses "
        f"(src/speedtrap/validation/data/{DEFAULT_ENSEMBLE}): the accepted sets (if at least 5), else the "
        f"{ENSEMBLE_AIM} least implausible as a stand-in, said so",
    )
    parser.add_argument(
        "--rejudge",
        action="store_true",
        help="judge the stored final check (check.csv in --out, default experiments/calibration/) again by "
        "today's targets table, without new runs; with --store keep the sets it accepts",
    )
    parser.add_argument(
        "--leave-out",
        metavar="STUDY",
        default=None,
        help="calibrate without one fitted study's targets (its name in workflow_targets.csv, e.g. "
        "'TraceLab 2026'), stored apart, and report whether the sets it keeps predict that study "
        f"({REFIT_FILE} in --out, default experiments/calibration/leave-out/<study>/)",
    )
    args = parser.parse_args(argv)
    if args.leave_out is not None and (args.store or args.rejudge):
        parser.error(
            "--leave-out makes a calibration to test, never the stored one: drop --store / --rejudge"
        )
    if args.rejudge:
        return rejudge(args.out or OUT, store=args.store)
    if args.store and args.quick:
        parser.error("--store keeps a full calibration, not a --quick smoke run")
    if args.days is not None and (args.quick or not args.days > 0 or args.days != args.days):
        parser.error("--days must be a positive number of working days, without --quick")
    quick = args.quick
    waves = args.waves if args.waves is not None else QUICK["waves"] if quick else DEFAULT_WAVES
    points = args.points if args.points is not None else QUICK["points"] if quick else DEFAULT_POINTS
    check_points = (
        args.check_points
        if args.check_points is not None
        else QUICK["check_points"]
        if quick
        else DEFAULT_CHECK_POINTS
    )
    check_replications = (
        args.check_replications
        if args.check_replications is not None
        else QUICK["check_replications"]
        if quick
        else CHECK_REPLICATIONS
    )
    for flag, value, least in (
        ("--check-replications", check_replications, 2),
        ("--waves", waves, 1),
        ("--points", points, 4),
        ("--replications", args.replications, 1),
        ("--check-points", check_points, 1),
    ):
        if value < least:
            parser.error(f"{flag} must be at least {least}, got {value}")
    if args.grow_check_to is not None and args.grow_check_to < check_points:
        parser.error(f"--grow-check-to must be at least --check-points ({check_points})")
    executor = args.executor or ("serial" if quick else "processes")
    if executor == "serial" and args.workers not in (None, 1):
        parser.error("--workers needs the processes or dask executor")
    name = (
        "calibration-quick"
        if quick
        else "calibration"
        if args.days is None
        else f"calibration-{args.days:g}d"
    )
    targets, recorded, slug = load_targets(), [], ""
    if args.leave_out is not None:
        try:
            recorded = study_statistics(targets, args.leave_out)
        except ValueError as exc:
            parser.error(str(exc))
        slug = re.sub(r"[^a-z0-9]+", "-", args.leave_out.lower()).strip("-")
        name = f"{name}-without-{slug}"
    out = args.out or (
        args.results_dir / name / "outputs" if quick else OUT / "leave-out" / slug if recorded else OUT
    )
    scenarios = default_scenarios(EXPERIMENTS_DIR.parent)
    if quick:
        scenarios = {
            key: s.with_overrides(
                {"developers": QUICK["developers"], "horizon_s": QUICK["days"] * s.workday_s}
            )
            for key, s in scenarios.items()
        }
    elif args.days is not None:
        scenarios = {
            key: s.with_overrides({"horizon_s": args.days * s.workday_s}) for key, s in scenarios.items()
        }
    calls = waves * points * args.replications
    grown = (
        f"(grown to {args.grow_check_to} if fewer than {ENSEMBLE_AIM} pass) " if args.grow_check_to else ""
    )
    print(
        f"History matching: up to {waves} waves × {points} points × {args.replications} run(s), then "
        f"{check_points} points × {check_replications} runs {grown}"
        f"(each run: headline + METR with AI and by hand); up to {calls} wave runs; executor {executor}",
        flush=True,
    )
    start = time.perf_counter()
    result = run_history_matching(
        scenarios,
        waves=waves,
        points=points,
        replications=args.replications,
        check_points=check_points,
        check_replications=check_replications,
        grow_check_to=args.grow_check_to,
        accepted_aim=ENSEMBLE_AIM,
        candidates=QUICK["candidates"] if quick else DEFAULT_CANDIDATES,
        restarts=QUICK["restarts"] if quick else 2,
        folds=QUICK["folds"] if quick else CV_FOLDS,
        executor=executor,
        workers=args.workers,
        results_dir=args.results_dir,
        name=name,
        targets=targets[targets["study"] != args.leave_out] if recorded else None,
        also_record=recorded,
    )
    wall_s = time.perf_counter() - start
    written = write_calibration(result, out)
    print(result.summary.round(5).to_string(index=False))
    print(calibration_finding(result))
    if quick:
        print("Quick variant: a smoke run; its region and ensemble mean nothing.")
    print(f"Waves, emulators and the final check in {wall_s / 60:.1f} min wall ({executor}).")
    print("Wrote " + ", ".join(str(p) for p in written))
    if recorded:
        prediction = refit_prediction(result.check, targets, args.leave_out)
        prediction.to_csv(out / REFIT_FILE, index=False)
        hits = int(prediction["predicted_within"].sum())
        print(
            f"Without {args.leave_out}: {len(result.ensemble)} sets kept; they predict {hits} of its "
            f"{len(prediction)} targets (the kept sets' mean inside each target's accepted range):"
        )
        print(prediction.round(4).to_string(index=False))
        print(f"Wrote {out / REFIT_FILE}")
    if args.store:
        members, why = stored_members(result)
        print(f"Stored {write_ensemble(members, STORED)}: {why}.")
    return 0


def rejudge(out: Path, *, store: bool) -> int:
    """``--rejudge``: the final check of ``out`` judged again by today's targets (no runs)."""
    import pandas as pd

    from speedtrap.experiments.calibration_outputs import (
        HOLDOUT_FILE,
        rejudged_check,
        rejudged_members,
        study_holdout,
    )
    from speedtrap.validation.workflow import load_targets

    check_path = out / "check.csv"
    if not check_path.is_file():
        print(f"{check_path}: no final check to judge again", file=sys.stderr)
        return 2
    targets = load_targets()
    before = pd.read_csv(check_path)
    check = rejudged_check(before, targets)
    parameters = pd.read_csv(out / "parameters.csv")["path"].astype(str).tolist()
    members = rejudged_members(check, parameters)
    check.to_csv(check_path, index=False)
    members.to_csv(out / ENSEMBLE_FILE, index=False)
    study_holdout(check, targets).to_csv(out / HOLDOUT_FILE, index=False)
    unrecorded = check.attrs["unrecorded"]
    print(
        f"Judged {check_path} again by today's targets: {int(check['kept'].sum())} of {len(check)} checked "
        f"sets accepted (before: {int(before['kept'].sum())})"
        + (f"; not recorded by this check, so judging nothing: {', '.join(unrecorded)}" if unrecorded else "")
    )
    if store:
        why = f"{len(members)} sets of {check_path} judged again by today's targets"
        print(f"Stored {write_ensemble(members, STORED)}: {why}.")
    return 0


if __name__ == "__main__":  # the processes executor starts fresh interpreters that import this file
    sys.exit(main())
