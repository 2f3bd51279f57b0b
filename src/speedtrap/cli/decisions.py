"""``compare --decisions DIR``: each decision of a comparison over the calibrated ensemble — the share
of members for which the arm pays, the boundary where they disagree and the EVPPI of each behaviour
parameter (:mod:`speedtrap.analysis.decisions`; docs/decisions.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from speedtrap.cli.common import fail, print_table

if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.analysis.decisions import DecisionResult
    from speedtrap.analysis.measurements import MeasurementResult, TeamDecision
    from speedtrap.config.scenario import Scenario


def check_measured(texts: Sequence[str], decisions: Path | None) -> dict[str, tuple[float, float]]:
    """``--measured NAME=VALUE:SE`` options as ``{NAME: (VALUE, SE)}``, checked before any run: a known
    measurement (:data:`speedtrap.analysis.measurements.MEASUREMENTS`), finite numbers, a positive
    standard error, a share within 0–1, each name once, and ``--decisions`` given."""
    from speedtrap.analysis.measurements import BY_COLUMN

    if not texts:
        return {}
    if decisions is None:
        fail(
            "--measured needs --decisions DIR: it reads the decisions over the members it is consistent with"
        )
    out: dict[str, tuple[float, float]] = {}
    for text in texts:
        name, _, rest = text.partition("=")
        value_text, _, error_text = rest.partition(":")
        name = name.strip()
        if name not in BY_COLUMN:
            fail(f"--measured {text!r}: unknown measurement {name!r} (known: {', '.join(BY_COLUMN)})")
        try:
            value, error = float(value_text), float(error_text)
        except ValueError:
            fail(f"--measured {text!r}: expected NAME=VALUE:SE, e.g. share_idle=0.12:0.03")
        if not (math.isfinite(value) and math.isfinite(error) and error > 0):
            fail(f"--measured {text!r}: the value must be finite and its standard error positive")
        if BY_COLUMN[name].is_share and not 0.0 <= value <= 1.0:
            fail(f"--measured {text!r}: {name} is a fraction of developer time, between 0 and 1")
        if name in out:
            fail(f"--measured {name} given twice")
        out[name] = (value, error)
    return out


def decisions_of_runs(
    runs: pd.DataFrame,
    built: Mapping[str, Scenario],
    ensemble: Path | None,
    directory: Path,
    *,
    quiet: bool,
    observed: Mapping[str, tuple[float, float]] | None = None,
) -> list[dict[str, Any]]:
    """``compare --decisions``: :func:`report_decisions` over the ensemble's members."""
    from speedtrap.experiments.ensemble import resolve_ensemble

    members = resolve_ensemble(ensemble, single=False).members
    if not members or "member" not in runs or not (runs["member"] >= 0).any():
        fail("--decisions needs runs over a calibrated ensemble (not --single)")
    return report_decisions(runs, built, members, directory, quiet=quiet, observed=observed)


def applying(scenario: Scenario) -> set[str]:
    """The ensemble's parameter paths that apply to scenarios of ``scenario``'s kind (the parameters
    table's ``scenarios`` column): the only ones a decision on it can turn on."""
    from speedtrap.experiments.ensemble import scenario_kind
    from speedtrap.validation.parameters import applies_to, load_parameters

    kind = scenario_kind(scenario)
    table = load_parameters()
    return {str(r.path) for r in table.itertuples(index=False) if kind in applies_to(str(r.scenarios))}


def analyse_decisions(
    runs: pd.DataFrame, arms: Mapping[str, Scenario], members: Sequence[Mapping[str, float]]
) -> tuple[list[DecisionResult], dict[str, pd.Series], pd.DataFrame]:
    """Every decision of ``runs`` (compare's runs, with a ``member`` column) over the members'
    parameter values, each decision's net value per member (USD per developer-day) and the members'
    parameter values (one row per member)."""
    import numpy as np
    import pandas as pd

    from speedtrap.analysis.decisions import analyse_decision, decision_pairs, inb_by_member
    from speedtrap.analysis.value import net_value_lines, paired_runs

    used = sorted(int(m) for m in runs["member"].unique() if m >= 0)
    parameters = pd.DataFrame([dict(members[m]) for m in used], index=used)
    parameters = parameters[[c for c in parameters.columns if c in applying(next(iter(arms.values())))]]
    results, inb = [], {}
    for label, reference, arm in decision_pairs(list(arms)):
        pairs = paired_runs(runs, "arm", reference, arm)
        lines = net_value_lines(pairs, value=arms[arm].value, workday_s=arms[arm].workday_s)
        run_members = pairs["member"].to_numpy()
        inb[label] = inb_by_member(lines.net, run_members)
        runs_inb = (np.asarray(lines.net, dtype=float), run_members)
        results.append(analyse_decision(label, inb[label], parameters, runs=runs_inb, stability=True))
    return results, inb, parameters


def analyse_measured(
    runs: pd.DataFrame, arm: str, inb: Mapping[str, pd.Series]
) -> tuple[list[MeasurementResult], pd.DataFrame]:
    """Every decision read against what a team can measure on ``arm`` (the comparison's first arm,
    the tier it runs now; :mod:`speedtrap.analysis.measurements`), and the members' measurements."""
    from speedtrap.analysis.measurements import analyse_measurements, member_measurements

    measured = member_measurements(runs[runs["member"] >= 0], arm)
    return [analyse_measurements(label, values, measured) for label, values in inb.items()], measured


def decision_rows(
    results: list[DecisionResult],
    measured: Sequence[MeasurementResult] = (),
    team: Sequence[TeamDecision] = (),
) -> list[dict[str, Any]]:
    """One plain row per decision (JSON and CSV): verdict, share paying, EVPI, the top parameters'
    EVPPI and the boundary in words; with ``measured`` (the same decisions), the measurement worth
    most, its break-even and its boundary; with ``team``, the decision over the members consistent
    with a team's measurements (``team_*``)."""
    from speedtrap.analysis.intervals import MIN_MEMBERS

    rows = []
    by_label = {m.label: m for m in measured}
    by_team = {t.label: t for t in team}
    for r in results:
        top = r.evppi.dropna().head(3)
        m = by_label.get(r.label)
        t = by_team.get(r.label)
        rows.append(
            {
                "decision": r.label,
                "members": r.members,
                "mean_net_usd_per_dev_day": r.mean_inb,
                "net_member_low": r.inb_low,
                "net_member_high": r.inb_high,
                "share_paying": r.share_paying,
                "share_low": r.share_low,
                "share_high": r.share_high,
                "verdict": r.verdict(),
                "evpi_usd_per_dev_day": r.evpi,
                "evpi_seed_noise_usd_per_dev_day": r.evpi_noise,
                "top_evppi": "; ".join(f"{p} ${v:,.2f}" for p, v in top.items()),
                "top_two_together": " and ".join(r.pair) if len(r.pair) > 1 else "",
                "top_two_evppi": r.pair_evppi,
                "boundary_prim": r.boundary(),
                "boundary_side": r.seeks,
                "prim_box_unjudged": r.prim.describe(r.seeks) if r.prim is not None else "",
                "boundary_cart": r.cart.describe(r.seeks) if r.cart is not None else "",
                "measure_first": m.first if m is not None else "",
                "measure_first_evppi": float(m.evppi.get(m.first, math.nan)) if m and m.first else math.nan,
                "measure_break_even": m.break_even[0]
                if m is not None and len(m.break_even) == 1
                else math.nan,
                "measure_break_even_low": m.break_even_low if m is not None else math.nan,
                "measure_break_even_high": m.break_even_high if m is not None else math.nan,
                "measure_pays_side": m.side if m is not None else "",
                "measure_boundary": m.boundary() if m is not None else "",
                **(
                    {
                        "team_members": t.members,
                        "team_share_paying": t.share_paying,
                        # below the minimum no interval is given (docs/intervals.md)
                        "team_share_low": t.share_low if t.members >= MIN_MEMBERS else math.nan,
                        "team_share_high": t.share_high if t.members >= MIN_MEMBERS else math.nan,
                        "team_mean_net_usd_per_dev_day": t.mean_net,
                        "team_net_member_low": t.net_low if t.members >= MIN_MEMBERS else math.nan,
                        "team_net_member_high": t.net_high if t.members >= MIN_MEMBERS else math.nan,
                        "team_verdict": t.verdict(MIN_MEMBERS),
                    }
                    if t is not None
                    else {}
                ),
                "notes": "; ".join(r.notes),
            }
        )
    return rows


def _evpi(row: Mapping[str, Any]) -> str:
    """EVPI with its seed-noise floor beside it, when known."""
    text = f"${row['evpi_usd_per_dev_day']:,.2f}"
    noise = row.get("evpi_seed_noise_usd_per_dev_day")
    return text if noise is None or noise != noise else f"{text} (noise ${noise:,.2f})"


def _share(row: Mapping[str, Any]) -> str:
    return f"{100 * row['share_paying']:.0f}% [{100 * row['share_low']:.0f}, {100 * row['share_high']:.0f}]"


def report_decisions(
    runs: pd.DataFrame,
    arms: Mapping[str, Scenario],
    members: Sequence[Mapping[str, float]],
    directory: Path,
    *,
    quiet: bool = False,
    observed: Mapping[str, tuple[float, float]] | None = None,
) -> list[dict[str, Any]]:
    """Analyse, print (unless ``quiet``) and write ``decisions.csv``, ``evppi.csv``,
    ``measurements.csv`` (each decision × what a team can measure), ``members.csv`` (per member: its
    parameters, net value per decision and measurements) and ``decisions.png``/``.svg`` into
    ``directory``; returns the rows. ``observed``, a team's measurements on the first arm with their
    standard errors, adds each decision over the members consistent with them."""
    import pandas as pd

    from speedtrap.analysis.measurements import consistent_members, decide_for, measurement_rows
    from speedtrap.plots.common import save_figure
    from speedtrap.plots.decisions import plot_decisions

    results, inb, parameters = analyse_decisions(runs, arms, members)
    baseline = next(iter(arms))
    measured, measurements = analyse_measured(runs, baseline, inb)
    team, consistent = [], None
    if observed:
        consistent = consistent_members(measurements, observed)
        team = [decide_for(label, values, consistent["kept"]) for label, values in inb.items()]
    rows = decision_rows(results, measured, team)
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(directory / "decisions.csv", index=False)
    evppi = pd.concat({r.label: r.evppi for r in results}, names=["decision", "parameter"]).rename("evppi")
    evppi.reset_index().to_csv(directory / "evppi.csv", index=False)
    pd.DataFrame(measurement_rows(measured)).to_csv(directory / "measurements.csv", index=False)
    per_member = parameters.join(pd.DataFrame({f"net_usd_per_dev_day: {k}": v for k, v in inb.items()}))
    per_member = per_member.join(measurements.add_prefix(f"measured on {baseline}: "))
    if consistent is not None:  # each member's implausibility against the team's measurements
        per_member = per_member.join(consistent[["implausibility", "kept"]].add_prefix("team "))
    per_member.rename_axis("member").to_csv(directory / "members.csv")
    first = next(iter(arms.values()))
    fig = plot_decisions(
        results,
        inb,
        usd_per_dev_hour=first.value.usd_per_dev_hour,
        measured=measured,
        measurements=measurements,
    )
    written = save_figure(fig, directory, "decisions")
    if not quiet:
        print_table(
            f"Decisions over {results[0].members if results else 0} members of the ensemble at "
            f"${first.value.usd_per_dev_hour:g} per developer-hour (net value per developer-day, USD, mean "
            "[the members' central 95%]; share "
            "paying with its Wilson 95% interval over members; EVPI: what knowing every parameter is "
            "worth, with the EVPI seed noise alone would give; EVPPI: what knowing one parameter is worth)",
            [
                "decision",
                "mean net",
                "pays for",
                "verdict",
                "EVPI",
                "most worth measuring (EVPPI)",
                "boundary",
            ],
            [
                (
                    r["decision"],
                    f"${r['mean_net_usd_per_dev_day']:+,.0f} [{r['net_member_low']:+,.0f}, "
                    f"{r['net_member_high']:+,.0f}]",
                    _share(r),
                    r["verdict"],
                    _evpi(r),
                    r["top_evppi"]
                    + (
                        f"; the first two together ${r['top_two_evppi']:,.2f}"
                        if r["top_two_evppi"] == r["top_two_evppi"]
                        else ""
                    ),
                    r["boundary_prim"] or "—",
                )
                for r in rows
            ],
        )
        _print_measured(measured, baseline)
        if observed:
            _print_team(rows, observed, baseline)
        for r in rows:
            if r["notes"]:
                typer.echo(f"note ({r['decision']}): {r['notes']}")
        files = ["decisions.csv", "evppi.csv", "measurements.csv", "members.csv"]
        typer.echo("Wrote " + ", ".join(str(p) for p in [*(directory / f for f in files), *written]))
    return rows


def _print_measured(measured: Sequence[MeasurementResult], baseline: str) -> None:
    """The table of what a team can measure on ``baseline`` that decides (docs/decisions.md)."""
    from speedtrap.analysis.measurements import BY_COLUMN

    words = {c: m.label for c, m in BY_COLUMN.items()}

    def top(r: MeasurementResult) -> str:
        known = r.evppi.dropna().head(3)
        return "; ".join(f"{words.get(str(c), c)} ${v:,.2f}" for c, v in known.items()) or "—"

    print_table(
        f"What a team can measure on {baseline} (the tier it runs now) that decides: EVPPI of each "
        "measurement, USD per developer-day; the break-even of the first, where the regression of the "
        "members' net value on it crosses 0 (shares are fractions of developer time); its PRIM box "
        "where the decision depends",
        ["decision", "worth measuring (EVPPI)", "break-even", "boundary"],
        [(r.label, top(r), r.break_even_words() or "—", r.boundary() or "—") for r in measured],
    )


def _print_team(
    rows: Sequence[Mapping[str, Any]], observed: Mapping[str, tuple[float, float]], baseline: str
) -> None:
    """Each decision over the members consistent with a team's measurements (docs/decisions.md)."""
    given = "; ".join(f"{name} {value:g} ± {error:g}" for name, (value, error) in observed.items())
    kept = rows[0]["team_members"] if rows else 0
    print_table(
        f"Your team's answer: the decisions over the {kept} members whose measurements on {baseline} are "
        f"consistent with yours ({given}; kept when every |member's − yours| is at most 3 standard "
        "errors); net value per developer-day, USD, mean [the kept members' central 95%]; share paying "
        "with its Wilson 95% interval",
        ["decision", "members kept", "mean net", "pays for", "verdict"],
        [(r["decision"], str(r["team_members"]), *_team_cells(r), r["team_verdict"]) for r in rows],
    )


def _team_cells(r: Mapping[str, Any]) -> tuple[str, str]:
    """The mean net and share paying of a team's kept members, with their intervals; below the
    minimum member count, "too few members (n)" instead of intervals that cannot mean much."""
    from speedtrap.analysis.intervals import MIN_MEMBERS

    n = int(r["team_members"])
    if n < MIN_MEMBERS:
        return (f"too few members ({n})",) * 2
    net = (
        f"${r['team_mean_net_usd_per_dev_day']:+,.0f} [{r['team_net_member_low']:+,.0f}, "
        f"{r['team_net_member_high']:+,.0f}]"
    )
    share = (
        f"{100 * r['team_share_paying']:.0f}% [{100 * r['team_share_low']:.0f}, "
        f"{100 * r['team_share_high']:.0f}]"
    )
    return net, share
