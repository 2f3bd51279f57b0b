"""``compare --decisions DIR``: each decision of a comparison over the calibrated ensemble — the share
of members for which the arm pays, the boundary where they disagree and the EVPPI of each behaviour
parameter (:mod:`speedtrap.analysis.decisions`; docs/decisions.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from speedtrap.cli.common import print_table

if TYPE_CHECKING:
    import pandas as pd

    from speedtrap.analysis.decisions import DecisionResult
    from speedtrap.config.scenario import Scenario


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
) -> tuple[list[DecisionResult], dict[str, pd.Series]]:
    """Every decision of ``runs`` (compare's runs, with a ``member`` column) over the members'
    parameter values, and each decision's net value per member (USD per developer-day)."""
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
    return results, inb


def decision_rows(results: list[DecisionResult]) -> list[dict[str, Any]]:
    """One plain row per decision (JSON and CSV): verdict, share paying, EVPI, the top parameters'
    EVPPI and the boundary in words."""
    rows = []
    for r in results:
        top = r.evppi.dropna().head(3)
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
) -> list[dict[str, Any]]:
    """Analyse, print (unless ``quiet``) and write ``decisions.csv``, ``evppi.csv`` and
    ``decisions.png``/``.svg`` into ``directory``; returns the rows."""
    import pandas as pd

    from speedtrap.plots.common import save_figure
    from speedtrap.plots.decisions import plot_decisions

    results, inb = analyse_decisions(runs, arms, members)
    rows = decision_rows(results)
    directory.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(directory / "decisions.csv", index=False)
    evppi = pd.concat({r.label: r.evppi for r in results}, names=["decision", "parameter"]).rename("evppi")
    evppi.reset_index().to_csv(directory / "evppi.csv", index=False)
    first = next(iter(arms.values()))
    fig = plot_decisions(results, inb, usd_per_dev_hour=first.value.usd_per_dev_hour)
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
        for r in rows:
            if r["notes"]:
                typer.echo(f"note ({r['decision']}): {r['notes']}")
        typer.echo(
            "Wrote "
            + ", ".join(str(p) for p in [directory / "decisions.csv", directory / "evppi.csv", *written])
        )
    return rows
