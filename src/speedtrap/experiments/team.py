"""A team's ensemble: the calibrated ensemble's members history-matched to the team's own logs.

:func:`fit_team` runs every member of a prior ensemble (by default the stored calibrated ensemble,
:func:`speedtrap.experiments.ensemble.default_ensemble_path`) on the scenario fitted to the team's
logs (:func:`speedtrap.sessions.fit_scenario`), the member applied as ``compare`` applies it
(:func:`speedtrap.experiments.ensemble.member_overrides`), writes each run as logs
(:func:`speedtrap.sessions.trace_from_result`) and computes from them the same statistics as from
the real logs (:func:`speedtrap.sessions.team_statistics.team_statistics`). A member is kept when
its implausibility on every used statistic,

    I = |sim − obs| / sqrt(V_obs + V_sim)

(:func:`speedtrap.analysis.history_matching.implausibility`, no model-discrepancy term: the team's
logs are set against the model itself), is at most :data:`~speedtrap.analysis.history_matching.CUTOFF`
= 3 (Pukelsheim's 3-sigma rule). ``V_obs`` is the statistic's observation error from the logs' own
sample size (:mod:`speedtrap.sessions.team_statistics`). ``V_sim`` has two parts. The seed noise of
the member's statistic: the pooled runs' error by the same rule, or the variance of the runs' values
over the R seeds divided by R where larger (``s²/r``, as the calibration's final check). And that
variance itself: each run has the team's developers, whose traits are drawn per developer, so a
team's statistic varies with who the developers are as much as the runs do; a bootstrap over the
sessions of one team cannot see it (on a two-developer scenario the human response median varies
6× more from run to run than the bootstrap over its sessions says). It counts the sampling at the
runs' size a second time, which errs towards keeping a member.

**Size.** Each member runs the fitted scenario's developers for :data:`DEFAULT_DAYS` working days on
each of :data:`DEFAULT_REPLICATIONS` seeds (the same seeds for every member: common random numbers),
pooled into one simulated log. Simulated statistics take :data:`SIM_BOOTSTRAP` bootstrap draws.

**What the logs can speak to.** For each parameter, the rank correlation over the prior's members of
its value with each used statistic's simulated value: where none is significant (Spearman, 5% after
Bonferroni over the statistics), the statistics cannot constrain it and the kept members keep their
spread (:attr:`TeamFit.parameters`). A parameter the fitted scenario does not take is said so.

The result is written as an ensemble file (:func:`write_team`; the prior's format, so ``compare
--ensemble`` reads it) with a JSON sidecar (:func:`sidecar_path`) naming the prior it narrowed, the
statistics, their observed values and errors, the members kept of how many, and each parameter's
verdict. When no member survives nothing is written (:class:`NoSurvivorError` names the least
implausible members).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from speedtrap.analysis.history_matching import CUTOFF, implausibility
from speedtrap.config.scenario import Scenario
from speedtrap.experiments.ensemble import MEMBER, default_ensemble_path, load_ensemble, member_overrides
from speedtrap.experiments.ensemble import write_ensemble as write_ensemble_file
from speedtrap.experiments.seeds import replication_seeds
from speedtrap.models.workflow import simulate
from speedtrap.sessions import trace_from_result
from speedtrap.sessions.plain_trace import LoadReport, normalize_trace
from speedtrap.sessions.team_statistics import team_statistics

__all__ = [
    "DEFAULT_DAYS",
    "DEFAULT_REPLICATIONS",
    "SIDECAR_SCHEMA",
    "NoSurvivorError",
    "Prior",
    "TeamFit",
    "fit_team",
    "least_implausible_words",
    "load_prior",
    "prior_of",
    "read_sidecar",
    "sidecar_path",
    "simulated_trace",
    "simulated_traces",
    "write_team",
]

DEFAULT_DAYS = 5.0
"""Working days each member's run lasts (assumption: a working week, enough check-ins for the
conditional signatures at one developer; ``speedtrap fit --days``)."""
DEFAULT_REPLICATIONS = 4
"""Seeds per member, pooled (assumption: 4 developer-weeks per member at one developer keep a
member's 20 runs to seconds; ``speedtrap fit --replications``)."""
SIM_BOOTSTRAP = 200
"""Bootstrap draws for a simulated statistic's error (its sd, not a tail quantile, is needed)."""
RUN_BOOTSTRAP = 20
"""Bootstrap draws when only a single run's value is needed (the spread over runs)."""
OBS_BOOTSTRAP = 1_000
"""Bootstrap draws for an observed statistic's error."""
SIGNIFICANCE = 0.05
"""Family-wise level of the test that a parameter moves some statistic (Bonferroni over them)."""
SIDECAR_SCHEMA = 1
"""Version of the sidecar's JSON layout."""


class NoSurvivorError(ValueError):
    """No member of the prior is within the cut-off on every statistic: nothing is written."""


def sidecar_path(ensemble: str | Path) -> Path:
    """The sidecar of a team ensemble file: ``team.csv`` → ``team.fit.json``."""
    path = Path(ensemble)
    return path.with_name(path.stem + ".fit.json")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Prior:
    """The ensemble a team fit narrows: its rows (``member`` and one column per path), where it
    came from and whether it is the stored calibrated ensemble."""

    frame: pd.DataFrame
    path: Path
    default: bool

    @property
    def members(self) -> list[dict[str, float]]:
        return [{p: float(row[p]) for p in self.paths} for _, row in self.frame.iterrows()]

    @property
    def ids(self) -> list[int]:
        return [int(m) for m in self.frame[MEMBER]]

    @property
    def paths(self) -> list[str]:
        return [str(c) for c in self.frame.columns[1:]]


def load_prior(path: str | Path | None = None) -> Prior:
    """The prior ensemble: ``path``, or the stored calibrated ensemble; checked as any ensemble file
    (:func:`~speedtrap.experiments.ensemble.load_ensemble` against the parameter ranges table).
    Raises ``FileNotFoundError`` or ``ValueError`` naming the problem."""
    from speedtrap.validation.parameters import load_parameters

    default = path is None
    where = default_ensemble_path() if path is None else Path(path)
    load_ensemble(where, parameters=load_parameters())
    frame = pd.read_csv(where)
    frame = frame.assign(**{MEMBER: frame[MEMBER].astype(int)}).sort_values(MEMBER, ignore_index=True)
    return Prior(frame, where, default)


def simulated_traces(scenario: Scenario, seeds: Sequence[int]) -> list[pd.DataFrame]:
    """``scenario``'s run on each of ``seeds`` written as logs, developers and sessions of run ``j``
    prefixed ``r<j>/`` so that runs never share one."""
    parts = []
    for j, s in enumerate(seeds):
        trace = trace_from_result(simulate(scenario, s))
        trace = trace.assign(developer=f"r{j}/" + trace["developer"], session=f"r{j}/" + trace["session"])
        parts.append(normalize_trace(trace, LoadReport()))
    return parts


def simulated_trace(scenario: Scenario, seeds: Sequence[int]) -> pd.DataFrame:
    """``scenario``'s runs on ``seeds`` written as one log (:func:`simulated_traces`, pooled)."""
    return pd.concat(simulated_traces(scenario, seeds), ignore_index=True)


def _member_statistics(scenario: Scenario, seeds: Sequence[int], seed: int) -> pd.DataFrame:
    """The statistics of one member's pooled runs: ``value``, ``n`` and ``sd``, the error the
    implausibility gives the simulated side (module docstring): the pooled runs' own error, or the
    spread of the runs' values over √R where larger, plus that spread itself (the statistic of one
    team-sized run varies that much with the developers drawn); ``sd_runs`` is the spread."""
    parts = simulated_traces(scenario, seeds)
    pooled = team_statistics(pd.concat(parts, ignore_index=True), n_boot=SIM_BOOTSTRAP, seed=seed)
    if len(parts) > 1:
        each = [team_statistics(p, n_boot=RUN_BOOTSTRAP, seed=seed)["value"] for p in parts]
        runs_sd = pd.concat(each, axis=1).std(axis=1, ddof=1).to_numpy(float)  # NaN from < 2 values
    else:
        runs_sd = np.full(len(pooled), np.nan)
    runs_var = np.nan_to_num(runs_sd**2, nan=0.0)
    mean_var = np.maximum(np.nan_to_num(pooled["sd"].to_numpy(float) ** 2, nan=0.0), runs_var / len(parts))
    return pooled[["statistic", "value", "n"]].assign(sd=np.sqrt(mean_var + runs_var), sd_runs=runs_sd)


@dataclass(frozen=True)
class TeamFit:
    """A prior's members matched to a team's logs.

    ``observed``: :func:`~speedtrap.sessions.team_statistics.team_statistics` of the logs;
    ``simulated``: per member and statistic, the simulated ``value`` and ``sd``;
    ``implausibility``: members (index: their ids) × used statistics; ``parameters``: per parameter
    path, whether the fitted scenario takes it, the prior's and the kept members' range, the
    statistic that moves with it most and the verdict; ``size``: what each member ran."""

    observed: pd.DataFrame
    simulated: pd.DataFrame
    implausibility: pd.DataFrame
    prior: Prior
    parameters: pd.DataFrame
    size: dict[str, Any]
    logs: dict[str, Any] = field(default_factory=dict)
    measured: list[str] = field(default_factory=list)
    """Prior paths the fit measured from the logs: left out of the team ensemble (the fitted scenario
    holds the team's value)."""

    @property
    def used(self) -> list[str]:
        return list(self.implausibility.columns)

    @property
    def kept(self) -> list[int]:
        worst = self.implausibility.max(axis=1) if self.used else pd.Series(0.0, self.implausibility.index)
        return [int(m) for m in worst.index[worst.fillna(math.inf) <= CUTOFF]]

    def ranking(self) -> pd.DataFrame:
        """Members from the least implausible: member, its largest implausibility, on which statistic,
        and whether it is kept."""
        imp = self.implausibility.fillna(math.inf)
        worst = imp.max(axis=1) if self.used else pd.Series(0.0, imp.index)
        which = imp.idxmax(axis=1) if self.used else pd.Series("", imp.index)
        table = pd.DataFrame(
            {MEMBER: imp.index, "max_implausibility": worst.to_numpy(), "worst_statistic": which.to_numpy()}
        )
        table["kept"] = table["max_implausibility"] <= CUTOFF
        return table.sort_values(["max_implausibility", MEMBER], ignore_index=True)

    def ensemble(self) -> pd.DataFrame:
        """The kept members' rows of the prior (their member numbers kept), without the paths the fit
        measured (:attr:`measured`)."""
        frame = self.prior.frame.drop(columns=self.measured)
        return frame[frame[MEMBER].isin(self.kept)].reset_index(drop=True)

    def sidecar(self) -> dict[str, Any]:
        """What the sidecar JSON holds (module docstring)."""
        return {
            "schema_version": SIDECAR_SCHEMA,
            "kind": "team ensemble",
            "prior": {
                "path": str(self.prior.path.resolve()),
                "default": self.prior.default,
                "sha256": _sha256(self.prior.path),
                "members": len(self.prior.frame),
            },
            "kept": len(self.kept),
            "of": len(self.prior.frame),
            "kept_members": self.kept,
            "measured_by_fit": self.measured,
            "cutoff": CUTOFF,
            "implausibility": "|sim − obs| / sqrt(obs_sd² + sim_sd²), every used statistic, no discrepancy",
            "size": self.size,
            "logs": self.logs,
            "statistics": [_record(r) for r in self.observed.to_dict("records")],
            "parameters": [_record(r) for r in self.parameters.to_dict("records")],
            "members": [_record(r) for r in self.ranking().to_dict("records")],
        }


def _record(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, np.generic):
            v = v.item()
        out[str(k)] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


def _parameters(
    prior: Prior,
    scenario: Scenario,
    simulated: pd.DataFrame,
    used: list[str],
    kept: list[int],
    measured: Sequence[str] = (),
) -> pd.DataFrame:
    """Per parameter path: applied, prior and kept ranges, the statistic that moves with it most, its
    Spearman ρ and Bonferroni-adjusted p over the used statistics, and the verdict."""
    left = member_overrides(scenario, prior.members[0])[1] if prior.members else {}
    values = simulated.pivot(index=MEMBER, columns="statistic", values="value")
    frame = prior.frame.set_index(MEMBER)
    rows = []
    for path in prior.paths:
        x = frame[path]
        inside = frame.loc[frame.index.isin(kept), path]
        best, rho, p_adj = "", math.nan, math.nan
        for name in used:
            y = values[name].reindex(x.index)
            ok = np.isfinite(y.to_numpy(float))
            if ok.sum() < 4 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
                continue
            r = stats.spearmanr(x[ok], y[ok])
            p = min(1.0, float(r.pvalue) * len(used))
            if not math.isfinite(p_adj) or p < p_adj:
                best, rho, p_adj = name, float(r.statistic), p
        applied = path not in left and path not in measured
        if path in measured:
            verdict = "measured by the fit: every member ran with the team's value (fitted scenario)"
        elif not applied:
            verdict = f"not taken by the fitted scenario ({left[path]}): the logs cannot speak to it"
        elif math.isfinite(p_adj) and p_adj < SIGNIFICANCE:
            verdict = f"the logs speak to it (through {best})"
        else:
            verdict = "no statistic moves with it: the kept members keep their spread"
        rows.append(
            {
                "path": path,
                "applied": applied,
                "prior_low": float(x.min()),
                "prior_high": float(x.max()),
                "kept_low": float(inside.min()) if len(inside) else math.nan,
                "kept_high": float(inside.max()) if len(inside) else math.nan,
                "statistic": best,
                "rho": rho,
                "p_adjusted": p_adj,
                "constrained": bool(applied and math.isfinite(p_adj) and p_adj < SIGNIFICANCE),
                "verdict": verdict,
            }
        )
    return pd.DataFrame(rows)


def fit_team(
    trace: pd.DataFrame,
    scenario: Scenario,
    prior: Prior,
    *,
    replications: int = DEFAULT_REPLICATIONS,
    days: float = DEFAULT_DAYS,
    seed: int = 0,
    observed: pd.DataFrame | None = None,
    fitted: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> TeamFit:
    """Match ``prior``'s members to the logs ``trace`` on ``scenario`` (the scenario fitted to them):
    each member for ``days`` working days × ``replications`` seeds (module docstring). ``observed``:
    the logs' statistics, if already computed. ``fitted``: the scenario paths the fit measured from
    the logs (:attr:`speedtrap.sessions.ScenarioFit.values`): every member runs with the team's value
    of those, and the team ensemble leaves them out. ``progress(done, total)`` after each member."""
    if replications < 1 or not days > 0:
        raise ValueError(f"need replications ≥ 1 and days > 0, got {replications} and {days}")
    if observed is None:
        observed = team_statistics(trace, n_boot=OBS_BOOTSTRAP, seed=seed)
    used = [str(s) for s in observed.loc[observed["used"], "statistic"]]
    seeds = replication_seeds(seed, replications)
    base = scenario.with_overrides({"horizon_s": days * scenario.workday_s})
    rows = []
    for k, (member_id, member) in enumerate(zip(prior.ids, prior.members, strict=True)):
        overrides, _ = member_overrides(base, member, keep=tuple(fitted))
        rows.append(
            _member_statistics(base.with_overrides(overrides), seeds, seed).assign(**{MEMBER: member_id})
        )
        if progress is not None:
            progress(k + 1, len(prior.ids))
    columns_out = [MEMBER, "statistic", "value", "sd", "sd_runs", "n"]
    simulated = pd.concat(rows, ignore_index=True)[columns_out] if rows else pd.DataFrame(columns=columns_out)
    obs = observed.set_index("statistic")
    columns = {}
    for name in used:
        sim = simulated[simulated["statistic"] == name].set_index(MEMBER).reindex(prior.ids)
        columns[name] = implausibility(
            float(obs.loc[name, "value"]),
            sim["value"].to_numpy(float),
            float(obs.loc[name, "sd"]) ** 2,
            0.0,
            np.nan_to_num(sim["sd"].to_numpy(float) ** 2, nan=0.0),
        )
    imp = pd.DataFrame(columns, index=pd.Index(prior.ids, name=MEMBER))
    size = {
        "developers": scenario.developers,
        "days": days,
        "replications": replications,
        "seed": seed,
        "developer_days_per_member": scenario.developers * days * replications,
    }
    measured = [p for p in prior.paths if p in set(fitted)]
    first = TeamFit(observed, simulated, imp, prior, pd.DataFrame(), size)
    parameters = _parameters(prior, base, simulated, used, first.kept, measured)
    return TeamFit(observed, simulated, imp, prior, parameters, size, _logs(trace), measured)


def _logs(trace: pd.DataFrame) -> dict[str, Any]:
    """Human sessions, subagent sessions, requests, developers and hours of human sessions (each
    session's first request to its last end; a subagent runs inside its parent's) of the logs."""
    if not len(trace):
        return {"sessions": 0, "subagent_sessions": 0, "requests": 0, "developers": 0, "hours": 0.0}
    g = trace.groupby(["developer", "session"])
    parent = trace["parent_session"].fillna("").astype(str) if "parent_session" in trace else None
    human = trace if parent is None else trace[parent == ""]
    h = human.groupby(["developer", "session"])
    hours = float((h["end_s"].max() - h["start_s"].min()).sum() / 3600.0)
    return {
        "sessions": int(human.groupby(["developer", "session"]).ngroups),
        "subagent_sessions": int(g.ngroups - human.groupby(["developer", "session"]).ngroups),
        "requests": len(trace),
        "developers": int(trace["developer"].nunique()),
        "hours": hours,
    }


def least_implausible_words(fit: TeamFit, count: int = 3) -> str:
    """``member 3 (4.2 on human_response_median), …``: the least implausible members."""
    top = fit.ranking().head(count)
    return ", ".join(
        f"member {int(r[MEMBER])} ({r['max_implausibility']:.2f} on {r['worst_statistic']})"
        for _, r in top.iterrows()
    )


def write_team(fit: TeamFit, path: str | Path) -> tuple[Path, Path]:
    """Write the kept members (the prior's format) and the sidecar beside them; raise
    :class:`NoSurvivorError` (writing nothing) when no member is kept."""
    if not fit.kept:
        raise NoSurvivorError(
            f"no member of the prior ({len(fit.prior.frame)} members) is within implausibility "
            f"{CUTOFF:g} on all {len(fit.used)} statistics of the logs, so no team ensemble was written; "
            f"the least implausible: {least_implausible_words(fit)}"
        )
    path = Path(path)
    write_ensemble_file(fit.ensemble(), path)
    side = sidecar_path(path)
    side.write_text(json.dumps(fit.sidecar(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path, side


def read_sidecar(ensemble: str | Path) -> dict[str, Any] | None:
    """The sidecar of an ensemble file, or ``None`` when it has none (a plain ensemble). Raises
    ``ValueError`` when the sidecar is unreadable or not a team ensemble's."""
    side = sidecar_path(ensemble)
    if not side.is_file():
        return None
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{side}: not a readable team-ensemble sidecar ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "team ensemble" or "prior" not in data:
        raise ValueError(f"{side}: not a team-ensemble sidecar (no kind 'team ensemble' and prior)")
    if data.get("schema_version") != SIDECAR_SCHEMA:
        raise ValueError(
            f"{side}: sidecar schema_version {data.get('schema_version')!r}, expected {SIDECAR_SCHEMA}"
        )
    return data


def prior_of(sidecar: dict[str, Any]) -> Path:
    """Where the prior a sidecar names lives now: the stored calibrated ensemble, or its path."""
    prior = sidecar["prior"]
    return default_ensemble_path() if prior.get("default") else Path(str(prior["path"]))
