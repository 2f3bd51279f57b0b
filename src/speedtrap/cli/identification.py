"""``speedtrap validate workflow --identification``: how far the calibrated ensemble pins each
behaviour parameter (:mod:`speedtrap.analysis.identification`); and ``--study-holdout``: whether the
calibration's other studies predict each one."""

from __future__ import annotations

from pathlib import Path

import typer

from speedtrap.cli.common import (
    JSON_SCHEMA_VERSION,
    bad_input_exits,
    fail,
    json_number,
    print_json,
    print_table,
)


def report_identification(ensemble: Path | None, as_json: bool) -> None:
    """Print each parameter's span over its sourced range across the ensemble's members (the stored
    one by default), widest first, and how many span at least 80% of it."""
    import pandas as pd

    from speedtrap.analysis.identification import CONCENTRATED_P, UNIDENTIFIED_SPAN, parameter_spans
    from speedtrap.experiments.ensemble import resolve_ensemble
    from speedtrap.validation.parameters import load_parameters

    with bad_input_exits():
        choice = resolve_ensemble(ensemble, single=False)
        members = pd.DataFrame(choice.members or [])
        table = parameter_spans(members, load_parameters())
    count, total = int(table["unidentified"].sum()), len(table)
    concentrated = int(table["concentrated"].sum())
    if as_json:
        rows = [
            {k: json_number(v) if isinstance(v, float) else v for k, v in r.items()}
            for r in table.to_dict("records")
        ]
        print_json(
            {
                "schema_version": JSON_SCHEMA_VERSION,
                "members": len(members),
                "threshold": UNIDENTIFIED_SPAN,
                "unidentified": count,
                "concentrated_p": CONCENTRATED_P,
                "concentrated": concentrated,
                "parameters": rows,
            }
        )
        return
    print_table(
        f"Identification over {len(members)} members: each parameter's span over its sourced range "
        "(on its own scale, log or linear; 1 = the members cover all of it)",
        ["parameter", "sourced range", "members' range", "span", "P(uniform ≤ span)"],
        [
            (
                r.path + (" (unidentified)" if r.unidentified else ""),
                f"{r.low:g}–{r.high:g} ({r.scale})",
                f"{r.member_min:.4g}–{r.member_max:.4g}",
                f"{r.span:.2f}",
                f"{r.p_uniform:.3f}" + (" concentrated" if r.concentrated else ""),
            )
            for r in table.itertuples()
        ],
    )
    typer.echo(
        f"{count} of the {total} behaviour parameters span at least {UNIDENTIFIED_SPAN:.0%} of their sourced "
        f"range over {len(members)} members: the published targets leave them open "
        '(docs/validation.md, "What the data leave open", says why). With few members the spans '
        "understate what a larger ensemble would show."
    )
    typer.echo(
        f"{concentrated} of the {total} are concentrated: their members span less than {len(members)} draws "
        f"uniform over the sourced range would with probability {CONCENTRATED_P:.0%} (a test that does not "
        f"depend on the member count); {total - concentrated} are not."
    )


def report_study_holdout(calibration: Path | None, as_json: bool) -> None:
    """``validate workflow --study-holdout``: each fitted study's targets as the checked sets every other
    study keeps predict them (the calibration's final check in ``calibration``, default
    ``experiments/calibration/``), and, for each study refitted without (``experiments/calibrate.py
    --leave-out STUDY``: ``leave-out/<study>/refit_prediction.csv`` there), what that refit predicts."""
    import pandas as pd

    from speedtrap.experiments.calibration_outputs import REFIT_FILE, study_holdout
    from speedtrap.experiments.files import experiments_dir
    from speedtrap.validation.workflow import load_targets

    folder = calibration if calibration is not None else experiments_dir() / "calibration"
    path = folder / "check.csv"
    if not path.is_file():
        fail(f"{path}: no final check (run python experiments/calibrate.py first)")
    with bad_input_exits():
        table = study_holdout(pd.read_csv(path), load_targets())
        refit_files = sorted((folder / "leave-out").glob(f"*/{REFIT_FILE}"))
        refits = pd.concat([pd.read_csv(f) for f in refit_files], ignore_index=True) if refit_files else None
    if as_json:
        rows = [{k: json_number(v) for k, v in row.items()} for row in table.to_dict("records")]
        refit_rows = (
            [{k: json_number(v) for k, v in row.items()} for row in refits.to_dict("records")]
            if refits is not None
            else []
        )
        print_json(
            {"schema_version": JSON_SCHEMA_VERSION, "check": str(path), "studies": rows, "refits": refit_rows}
        )
        return
    print_table(
        f"Leave one study out ({path}): each study's targets predicted by the checked sets every other "
        "study keeps; predicted = the members' mean [their central 95%]",
        ["study", "target", "sets without / with", "published", "predicted", "accepted", "result"],
        [
            (
                r.study,
                r.target,
                f"{r.members_without} / {r.members_with}",
                f"{r.published:.4g}",
                f"{r.predicted:.4g} [{r.member_low:.4g}, {r.member_high:.4g}]",
                f"[{r.accept_low:.4g}, {r.accept_high:.4g}]",
                "predicted" if r.predicted_within else "NOT predicted",
            )
            for r in table.itertuples()
        ],
    )
    typer.echo(
        "The waves' emulators saw every study, so the checked sets were drawn where each study is matched: "
        "a study called not predicted here is not predicted; one called predicted would need a whole "
        "calibration without it to be sure" + (": the refits below are that." if refits is not None else ".")
    )
    if refits is None:
        typer.echo(
            "No study has been refitted without: python experiments/calibrate.py --leave-out STUDY (with the "
            "stored calibration's other options) makes one."
        )
        return
    print_table(
        "Refitted without each study (experiments/calibrate.py --leave-out STUDY): its targets as the sets "
        "that calibration keeps predict them; predicted = their mean [their central 95%]",
        ["study", "target", "sets kept", "published", "predicted", "accepted", "result"],
        [
            (
                r.study,
                r.target,
                str(r.members),
                f"{r.published:.4g}",
                f"{r.predicted:.4g} [{r.member_low:.4g}, {r.member_high:.4g}]",
                f"[{r.accept_low:.4g}, {r.accept_high:.4g}]",
                "predicted" if r.predicted_within else "NOT predicted",
            )
            for r in refits.itertuples()
        ],
    )
    studies = refits.groupby("study", sort=False)["predicted_within"].all()
    typer.echo(
        f"Studies predicted by a calibration that never saw them: {int(studies.sum())} of {len(studies)}"
        + "".join(f"; {name}: {'predicted' if ok else 'not predicted'}" for name, ok in studies.items())
    )
