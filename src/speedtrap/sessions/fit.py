"""Fit a scenario's task-mix and human-behaviour distributions to a trace (docs/sessions.md).

Every fit is a maximum-likelihood estimate with an interval (95%) and, for distributions, a
Kolmogorov–Smirnov statistic of the data against the fitted law:

========================  ======================================  ====================================
scenario field            data                                    estimator
========================  ======================================  ====================================
task_mix.turns_*          requests per session                    log-normal MLE (turns_exponent = 0)
task_mix.initial_context  input tokens of each session's first    log-normal MLE
                          request
task_mix.output_tokens    output tokens per request               log-normal MLE
task_mix.tool_result_     growth of the input between requests    log-normal MLE (compactions, i.e.
tokens                    beyond the previous output              shrinking inputs, left out)
task_mix.tool_s           tool seconds after a request (> 0)      log-normal MLE
developer.prompt_s        human gap before a session's first      log-normal MLE (when the logs have
                          request                                 it)
developer.checkin_s       human gaps inside sessions              log-normal MLE
developer.checkin_every_  agent turns between human turns         geometric MLE, the last stretch of a
turns                                                             session censored (checkin_random)
developer.attention.      most sessions a developer had open at   empirical shares over developers
parallel_sessions_probs   once
========================  ======================================  ====================================

A log-normal's interval is the t interval of the mean log (→ median) and the χ² interval of the
log-sd; the geometric mean's is the Wald interval of its rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from speedtrap.config.scenario import Scenario
from speedtrap.sessions.load import Sessions

__all__ = ["Fit", "ScenarioFit", "fit_lognormal", "fit_scenario", "stretch_lengths"]

LEVEL = 0.95


@dataclass(frozen=True)
class Fit:
    """One fitted distribution or parameter: the estimates (``params``), their intervals
    (``ci``), the data size, the KS statistic and p-value (NaN where not a continuous law), and
    the data (for QQ plots)."""

    name: str
    law: str
    n: int
    params: dict[str, float]
    ci: dict[str, tuple[float, float]]
    ks_stat: float = math.nan
    ks_p: float = math.nan
    data: np.ndarray | None = None


def fit_lognormal(name: str, x: np.ndarray, level: float = LEVEL) -> Fit | None:
    """Log-normal MLE of positive data ``x`` (median, sigma) with ``level`` intervals and KS; None with
    fewer than 3 points."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    n = len(x)
    if n < 3:
        return None
    logs = np.log(x)
    mu, sd = float(logs.mean()), float(logs.std(ddof=1))
    sigma_mle = float(logs.std(ddof=0))
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * sd / math.sqrt(n)
    lo_chi, hi_chi = stats.chi2.ppf([0.5 + level / 2, 0.5 - level / 2], n - 1)
    sigma_ci = (sd * math.sqrt((n - 1) / lo_chi), sd * math.sqrt((n - 1) / hi_chi))
    ks = (
        stats.kstest(x, "lognorm", args=(max(sigma_mle, 1e-12), 0.0, math.exp(mu))) if sigma_mle > 0 else None
    )
    return Fit(
        name=name,
        law="lognormal",
        n=n,
        params={"median": math.exp(mu), "sigma": sigma_mle},
        ci={"median": (math.exp(mu - half), math.exp(mu + half)), "sigma": sigma_ci},
        ks_stat=float(ks.statistic) if ks is not None else math.nan,
        ks_p=float(ks.pvalue) if ks is not None else math.nan,
        data=x,
    )


def _with_turns(trace: pd.DataFrame) -> pd.DataFrame:
    df = trace.sort_values(["developer", "session", "start_s"], kind="stable").reset_index(drop=True)
    df["turn"] = df.groupby(["developer", "session"]).cumcount()
    df["human"] = (df["turn"] == 0) | (df["human_gap_s"] > 0)
    return df


def stretch_lengths(trace: pd.DataFrame) -> pd.DataFrame:
    """Agent stretches (turns between human turns): developer, session, turns, and whether a human
    turn ended it (``checkin``) or the session did (censored)."""
    df = _with_turns(trace)
    df["stretch"] = df.groupby(["developer", "session"])["human"].cumsum()
    st = df.groupby(["developer", "session", "stretch"]).size().rename("turns").reset_index()
    last = st.groupby(["developer", "session"])["stretch"].transform("max")
    st["checkin"] = st["stretch"] < last
    return st


def fit_checkin_every(trace: pd.DataFrame, level: float = LEVEL) -> Fit | None:
    """Geometric MLE of turns between check-ins: rate p = U / (U + Σ(k − 1)) over all stretches
    (U stretches ended by a check-in; a session's last stretch is censored), mean 1/p."""
    st = stretch_lengths(trace)
    u = int(st["checkin"].sum())
    if u < 1:
        return None
    extra = float((st["turns"] - 1).sum())
    p = u / (u + extra)
    se = math.sqrt(p * p * (1.0 - p) / u) if p < 1 else 0.0
    z = float(stats.norm.ppf(0.5 + level / 2))
    lo, hi = max(p - z * se, 1e-12), min(p + z * se, 1.0)
    return Fit("turns between check-ins", "geometric", u, {"mean": 1.0 / p}, {"mean": (1.0 / hi, 1.0 / lo)})


def max_parallel(trace: pd.DataFrame) -> pd.Series:
    """Per developer, the most sessions open at once (a session is open from its first request's
    start to its last request's end)."""
    spans = trace.groupby(["developer", "session"]).agg(start=("start_s", "min"), end=("end_s", "max"))
    out = {}
    for dev, g in spans.groupby(level="developer"):
        times = np.concatenate([g["start"].to_numpy(), g["end"].to_numpy()])
        steps = np.concatenate([np.ones(len(g)), -np.ones(len(g))])
        order = np.lexsort((steps, times))  # an end before a start at the same instant
        out[dev] = int(np.cumsum(steps[order]).max())
    return pd.Series(out, name="max_parallel_sessions")


@dataclass(frozen=True)
class ScenarioFit:
    """The fits (``fits``, by scenario field path) and the fitted scenario."""

    scenario: Scenario
    fits: dict[str, Fit]
    values: dict[str, tuple[Any, str]]
    """Every fitted field path → (value, note saying what it was fitted from)."""
    n_sessions: int
    n_requests: int
    n_developers: int

    def table(self) -> pd.DataFrame:
        """Fit quality: one row per fitted distribution or parameter."""
        rows = []
        for path, fit in self.fits.items():
            for param, value in fit.params.items():
                lo, hi = fit.ci.get(param, (math.nan, math.nan))
                rows.append(
                    {
                        "field": path,
                        "law": fit.law,
                        "parameter": param,
                        "estimate": value,
                        "ci_low": lo,
                        "ci_high": hi,
                        "n": fit.n,
                        "ks_stat": fit.ks_stat,
                        "ks_p": fit.ks_p,
                    }
                )
        return pd.DataFrame(rows)


def fit_scenario(sessions: Sessions, base: Scenario | None = None, *, level: float = LEVEL) -> ScenarioFit:
    """Fit ``base`` (default: the built-in scenario) to ``sessions``; fields without data keep
    their values; intervals at ``level``. Raises ``ValueError`` when the trace has no request."""
    trace = sessions.trace
    if not len(trace):
        raise ValueError("no usable request in the session logs")
    base = base or Scenario(name="fitted")
    n_sessions = sessions.n_sessions
    df = _with_turns(trace)
    fits: dict[str, Fit] = {}
    values: dict[str, tuple[Any, str]] = {}

    def note(fit: Fit, what: str) -> str:
        return f"fitted ({fit.law} MLE, {fit.n} {what}) from {n_sessions} sessions"

    def lognormal(path: str, data: np.ndarray, what: str, *, label: str) -> None:
        fit = fit_lognormal(label, data, level)
        if fit is None:
            return
        fits[path] = fit
        values[f"{path}.median"] = (round(fit.params["median"], 6), note(fit, what))
        values[f"{path}.sigma"] = (round(fit.params["sigma"], 6), note(fit, what))

    turns = df.groupby(["developer", "session"]).size().to_numpy()
    turns_fit = fit_lognormal("requests per session", turns, level)
    if turns_fit is not None:
        fits["task_mix.turns"] = turns_fit
        text = note(turns_fit, "sessions")
        values["task_mix.turns_at_reference"] = (round(max(1.0, turns_fit.params["median"]), 6), text)
        values["task_mix.turns_log_sd"] = (round(turns_fit.params["sigma"], 6), text)
        values["task_mix.turns_exponent"] = (
            0.0,
            f"fitted: the logs give no task size, from {n_sessions} sessions",
        )
        values["task_mix.failed_turns_multiplier"] = (
            1.0,
            f"fitted: the logged sessions' turns include failed ones, from {n_sessions} sessions",
        )
    first = df[df["turn"] == 0]
    lognormal(
        "task_mix.initial_context_tokens", first["input_tokens"].to_numpy(), "sessions", label="first input"
    )
    lognormal("task_mix.output_tokens", df["output_tokens"].to_numpy(), "requests", label="output tokens")
    same = df["session"].eq(df["session"].shift()) & df["developer"].eq(df["developer"].shift())
    growth = (df["input_tokens"] - df["input_tokens"].shift() - df["output_tokens"].shift())[same]
    lognormal("task_mix.tool_result_tokens", growth.to_numpy(), "requests", label="context growth")
    lognormal("task_mix.tool_s", df["tool_s"].to_numpy(), "tool calls", label="tool seconds")
    lognormal("developer.prompt_s", first["human_gap_s"].to_numpy(), "sessions", label="prompt gap")
    inside = df.loc[(df["turn"] > 0) & df["human"], "human_gap_s"].to_numpy()
    lognormal("developer.checkin_s", inside, "human turns", label="human gap")
    every = fit_checkin_every(trace, level)
    if every is not None:
        fits["developer.checkin_every_turns"] = every
        text = f"fitted (geometric MLE, {every.n} check-ins) from {n_sessions} sessions"
        values["developer.checkin_every_turns"] = (max(1, round(every.params["mean"])), text)
        values["developer.checkin_random"] = (True, text)
    parallel = max_parallel(trace)
    counts = np.bincount(parallel.to_numpy(), minlength=2)[1:]
    probs = [round(float(c) / len(parallel), 6) for c in counts]
    probs[-1] = round(1.0 - sum(probs[:-1]), 6)
    fits["developer.attention.parallel_sessions_probs"] = Fit(
        "most sessions open at once",
        "empirical",
        len(parallel),
        {f"p{k + 1}": p for k, p in enumerate(probs)},
        {},
    )
    values["developer.attention.parallel_sessions_probs"] = (
        probs,
        f"fitted (empirical, {len(parallel)} developers) from {n_sessions} sessions",
    )
    values["developers"] = (
        sessions.n_developers,
        f"fitted: developers in the logs, from {n_sessions} sessions",
    )
    scenario = base.with_overrides({path: value for path, (value, _) in values.items()})
    return ScenarioFit(scenario, fits, values, n_sessions, len(trace), sessions.n_developers)


def scenario_toml(fitted: ScenarioFit, header: str = "") -> str:
    """The fitted scenario as TOML, each fitted value preceded by a comment saying it was fitted
    and from how many sessions."""
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    table = ""
    for line in fitted.scenario.to_toml().splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            table = stripped.strip("[]").strip()
        elif "=" in stripped and not stripped.startswith("#"):
            key = stripped.split("=", 1)[0].strip().strip('"')
            path = f"{table}.{key}" if table else key
            if path in fitted.values:
                lines.append(f"# {fitted.values[path][1]}")
        lines.append(line)
    return "\n".join(lines) + "\n"


def qq_figure(fitted: ScenarioFit):  # -> matplotlib Figure
    """QQ plots (log scale) of every fitted log-normal: data quantiles against the fitted law's."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    laws = [
        (path, fit) for path, fit in fitted.fits.items() if fit.law == "lognormal" and fit.data is not None
    ]
    cols = 4
    rows = max(1, math.ceil(len(laws) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
    for ax, (path, fit) in zip(axes.flat, laws, strict=False):
        assert fit.data is not None
        x = np.sort(np.log(fit.data))
        q = (np.arange(1, len(x) + 1) - 0.5) / len(x)
        theory = math.log(fit.params["median"]) + fit.params["sigma"] * stats.norm.ppf(q)
        ax.plot(theory, x, ".", markersize=3)
        lims = [min(theory.min(), x.min()), max(theory.max(), x.max())]
        ax.plot(lims, lims, "k-", linewidth=0.8)
        ax.set_title(f"{path.split('.')[-1]} (KS {fit.ks_stat:.3f})", fontsize=9)
        ax.set_xlabel("fitted log-quantile", fontsize=8)
        ax.set_ylabel("data log-quantile", fontsize=8)
    for ax in list(axes.flat)[len(laws) :]:
        ax.axis("off")
    fig.tight_layout()
    return fig
