"""A team's own ensemble on the command line: ``speedtrap fit LOGS --ensemble team.csv`` (history-match
the calibrated ensemble to the logs, :mod:`speedtrap.experiments.team`) and, in ``speedtrap compare
--ensemble team.csv``, each behavioural interval's width before (the prior the team ensemble
narrowed) and after (docs/sessions.md).

Called by :mod:`speedtrap.cli.sessions` and :mod:`speedtrap.cli.compare`; the output and error
helpers are :mod:`speedtrap.cli.common`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from speedtrap.cli.common import (
    check_output_path,
    count_of,
    count_progress,
    fail,
    json_number,
    one_line,
    print_table,
)

if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.config.scenario import Scenario
    from speedtrap.experiments.team import Prior, TeamFit
    from speedtrap.sessions import ScenarioFit

__all__ = ["check_team_options", "report_team_fit", "team_narrowing"]


def check_team_options(ensemble: Path, prior: Path | None) -> Prior:
    """Before any fitting: the output path can be written (a ``.csv``) and the prior is a readable,
    non-empty ensemble; :func:`~speedtrap.cli.common.fail` naming the problem otherwise."""
    from speedtrap.experiments.team import load_prior, sidecar_path

    if ensemble.suffix.lower() != ".csv":
        fail(f"--ensemble {ensemble}: a team ensemble is a CSV file (give a name ending in .csv)")
    check_output_path(ensemble, "--ensemble")
    check_output_path(sidecar_path(ensemble), "--ensemble (its sidecar)")
    try:
        return load_prior(prior)
    except (FileNotFoundError, ValueError) as exc:
        fail(f"--prior: {one_line(exc)}" if prior is not None else one_line(exc))


def _value(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "—"
    if unit == "fraction":
        return f"{100 * value:.1f}%"
    if unit == "s":
        return f"{value:.3g} s"
    if unit == "tokens":
        return f"{value:.3g} tokens"
    return f"{value:.3g}"


def _range(low: float, high: float) -> str:
    return f"{low:.3g} – {high:.3g}" if math.isfinite(low) else "—"


def report_team_fit(
    loaded: Any,
    fitted: ScenarioFit,
    prior: Prior,
    ensemble: Path,
    *,
    replications: int,
    days: float,
    seed: int,
    quiet: bool,
) -> dict[str, Any]:
    """Run the team fit, print it (unless ``quiet``) and write the team ensemble and its sidecar;
    :func:`~speedtrap.cli.common.fail` naming the least implausible members when none survives.
    Returns the sidecar's content with the paths written."""
    from speedtrap.experiments.team import NoSurvivorError, fit_team, write_team

    report = count_progress("members simulated:", not quiet)
    try:
        fit = fit_team(
            loaded.trace,
            fitted.scenario,
            prior,
            replications=replications,
            days=days,
            seed=seed,
            fitted=list(fitted.values),
            progress=None if report is None else (lambda done, total: report(done, total, "team fit")),
        )
    except ValueError as exc:
        fail(one_line(exc))
    if not quiet:
        _print_fit(fit)
    try:
        written = write_team(fit, ensemble)
    except NoSurvivorError as exc:
        fail(one_line(exc))
    if not quiet:
        typer.echo(
            f"wrote {written[0]} ({len(fit.kept)} members × {len(fit.ensemble().columns) - 1} parameters; "
            f"the {len(fit.measured)} the fit measured are the fitted scenario's) and {written[1]}"
        )
    return {**fit.sidecar(), "ensemble": str(written[0]), "sidecar": str(written[1])}


def _print_fit(fit: TeamFit) -> None:
    size = fit.size
    source = "the stored calibrated ensemble" if fit.prior.default else str(fit.prior.path)
    logs = fit.logs
    print_table(
        f"Team fit: the statistics of the logs ({logs['sessions']} sessions, {logs['hours']:.2g} h of "
        "sessions, subagents folded in) beside the simulated range over the prior's members; error: 1 sd",
        ["statistic", "logs", "± sd", "error from", "n", "members' range (simulated)", "used"],
        [
            [
                r.statistic,
                _value(r.value, r.unit),
                _value(r.sd, r.unit),
                r.error,
                int(r.n),
                _sim_range(fit, str(r.statistic), str(r.unit)),
                "yes" if r.used else f"no: {r.why}",
            ]
            for r in fit.observed.itertuples()
        ],
    )
    typer.echo(
        f"Each of the {len(fit.prior.frame)} members of {source} ran the fitted scenario: "
        f"{count_of(size['developers'], 'developer')} × {size['days']:g} working days × "
        f"{size['replications']} seeds "
        f"({size['developer_days_per_member']:g} developer-days per member; --days, --replications)."
    )
    kept = len(fit.kept)
    typer.echo(
        f"Kept {kept} of {len(fit.prior.frame)} members: implausibility |sim − obs| / √(obs var + sim var) "
        f"≤ 3 on all {len(fit.used)} used statistics. Least implausible: "
        + ", ".join(_member_words(r) for r in fit.ranking().head(3).to_dict("records"))
    )
    out = fit.ranking()[~fit.ranking()["kept"]]
    if len(out):
        typer.echo("Ruled out: " + ", ".join(_member_words(r) for r in out.to_dict("records")))
    print_table(
        "What the logs can say about each parameter (range over the members: prior → kept)",
        ["parameter", "prior range", "kept range", "verdict"],
        [
            [r.path, _range(r.prior_low, r.prior_high), _range(r.kept_low, r.kept_high), r.verdict]
            for r in fit.parameters.itertuples()
        ],
    )
    free = int((fit.parameters["applied"] & ~fit.parameters["constrained"]).sum())
    typer.echo(
        f"{int(fit.parameters['constrained'].sum())} parameters move a statistic of the logs; {free} do not, "
        "and the kept members keep their spread in them."
    )


def _member_words(row: Mapping[str, Any]) -> str:
    return f"member {int(row['member'])} ({row['max_implausibility']:.2f} on {row['worst_statistic']})"


def _sim_range(fit: TeamFit, name: str, unit: str) -> str:
    values = fit.simulated.loc[fit.simulated["statistic"] == name, "value"].dropna()
    if not len(values):
        return "—"
    return f"{_value(float(values.min()), unit)} – {_value(float(values.max()), unit)}"


def team_narrowing(
    ensemble: Path | None,
    arms: Mapping[str, Scenario],
    kept: Mapping[str, Sequence[str]],
    seeds: Sequence[int],
    differences: pd.DataFrame,
    outcomes: Sequence[tuple[str, str, float, str]],
    *,
    quiet: bool,
) -> list[dict[str, Any]]:
    """For a team ensemble (an ensemble file with a sidecar), run the prior it narrowed on the same
    arms, design and seeds, and give (and print, unless ``quiet``) each outcome's behavioural 95%
    interval width before (the prior) and after (``differences``, the team ensemble's). Nothing for
    any other ensemble."""
    from speedtrap.analysis.intervals import behaviour_words, two_interval_differences
    from speedtrap.cli.behaviour import behaviour_runs, plan_behaviour
    from speedtrap.cli.latency import summary_with_latency
    from speedtrap.experiments.team import prior_of, read_sidecar

    if ensemble is None:
        return []
    try:
        sidecar = read_sidecar(ensemble)
        if sidecar is None:
            return []
        prior = prior_of(sidecar)
        plan = plan_behaviour(arms, len(seeds), ensemble=prior, single=False, kept=kept)
    except (FileNotFoundError, ValueError, KeyError) as exc:
        fail(f"the prior of the team ensemble {ensemble}: {one_line(exc)}")
    if not quiet:
        typer.echo(f"before/after: the prior {prior} on the same arms and seeds")
    runs = behaviour_runs(plan, seeds, summary_with_latency(), progress=not quiet)
    baseline = next(iter(arms))
    before = two_interval_differences(runs, "arm", baseline, [key for key, *_ in outcomes])
    after = differences.set_index(["arm", "outcome"])
    labels = {key: (label, scale, suffix) for key, label, scale, suffix in outcomes}
    rows = []
    for b in before.to_dict("records"):
        a = after.loc[(b["arm"], b["outcome"])]
        width_before = float(b["behaviour_high"] - b["behaviour_low"])
        width_after = float(a["behaviour_high"] - a["behaviour_low"])
        rows.append(
            {
                "arm": b["arm"],
                "outcome": b["outcome"],
                "width_before": width_before,
                "width_after": width_after,
                "ratio": width_after / width_before if width_before > 0 else math.nan,
                "members_before": int(b["members"]),
                "members_after": int(a["members"]),
            }
        )
    if not quiet:
        _print_narrowing(rows, labels, sidecar, behaviour_words)
    return [{k: json_number(v) for k, v in row.items()} for row in rows]


def _print_narrowing(
    rows: list[dict[str, Any]],
    labels: Mapping[str, tuple[str, float, str]],
    sidecar: dict[str, Any],
    words: Any,
) -> None:
    def width(value: float, members: int, scale: float, suffix: str) -> str:
        if not math.isfinite(value):
            return words(math.nan, math.nan, members)
        return f"{scale * value:.3g}{suffix}"

    table = []
    for row in rows:
        label, scale, suffix = labels[row["outcome"]]
        ratio = row["ratio"]
        table.append(
            [
                label,
                row["arm"],
                width(row["width_before"], row["members_before"], scale, suffix),
                width(row["width_after"], row["members_after"], scale, suffix),
                f"{ratio:.2f}×" if math.isfinite(ratio) else "—",
            ]
        )
    print_table(
        f"Behavioural 95% interval width, before → after your logs: the prior's {sidecar['of']} members → "
        f"the team ensemble's {sidecar['kept']} (the width of each difference's behavioural interval, in "
        "the outcome's unit)",
        ["outcome", "arm", "width before", "width after", "after / before"],
        table,
    )
    measured = sidecar.get("measured_by_fit") or []
    if measured:
        typer.echo(
            f"Before runs the prior's members with their own values of the {len(measured)} parameters the "
            "fit measured from the logs; after, the scenario's values of them (fitted.toml holds the "
            "team's): the change counts what the logs measured as well as the members they ruled out."
        )
