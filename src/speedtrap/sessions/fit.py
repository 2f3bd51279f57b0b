"""Fit a scenario's task-mix and human-behaviour distributions to a trace (docs/sessions.md).

Every fit is a maximum-likelihood estimate with an interval (95%) and, for distributions, a
Kolmogorov–Smirnov statistic of the data against the fitted law. Tasks, check-ins, reviews and
time away come from the structure of the logs (:mod:`speedtrap.sessions.structure`); a subagent's
requests count in their parent's task (:func:`~speedtrap.sessions.structure.fold_subagents`).

=================================  =========================================  ======================
scenario field                     data                                       estimator
=================================  =========================================  ======================
task_mix.turns_*                   requests per task                          log-normal MLE
task_mix.initial_context_tokens    input of each session's first request      log-normal MLE
task_mix.output_tokens             output tokens per request                  log-normal MLE
task_mix.tool_result_tokens        input growth between a session's requests  log-normal MLE
                                   beyond the previous output (compactions
                                   left out)
task_mix.tool_s                    tool seconds after a request (> 0)         log-normal MLE
developer.prompt_s                 human gap before a session's first         log-normal MLE
                                   request (where the logs record it)
developer.checkin_s                human gaps inside tasks (not time away)    log-normal MLE
developer.checkin_every_turns      turns between human turns in a task       geometric MLE, the
                                                                              last stretch censored
developer.review.base_s            gaps before a task's first request after   mean, less the review
                                   another task (review + next prompt)        per output and prompt
developer.fixing.diagnose_s        gaps before the human's prompt after an    log-normal MLE
                                   interruption or a refused tool call
developer.attention.parallel_      share of open time with 1, 2, 3 … human    empirical shares
sessions_probs                     sessions open
=================================  =========================================  ======================

A field is fitted from at least :data:`MIN_SAMPLES` values (parallel sessions from at least
:data:`MIN_OPEN_S` of open sessions); otherwise, and where the logs cannot tell, the base value is
kept and ``ScenarioFit.kept`` says why. A log-normal's interval is the t interval of the mean log
(→ median) and the χ² interval of the log-sd; the geometric mean's is the Wald interval of its rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError
from scipy import stats

from speedtrap.config.scenario import Scenario
from speedtrap.sessions.load import Sessions
from speedtrap.sessions.plain_trace import estimated_outputs
from speedtrap.sessions.structure import (
    LONG_GAP_S,
    concurrency,
    fold_subagents,
    stretches,
    tasks,
    with_structure,
)

__all__ = [
    "MIN_OPEN_S",
    "MIN_SAMPLES",
    "Fit",
    "ScenarioFit",
    "fit_checkin_every",
    "fit_lognormal",
    "fit_scenario",
    "max_parallel",
    "qq_figure",
    "scenario_toml",
]

LEVEL = 0.95
MIN_SAMPLES = 5
"""Fewest values a distribution or parameter is fitted from; with fewer the base value is kept."""
MIN_OPEN_S = 28_800.0
"""Fewest seconds of open sessions (a working day) the share of parallel sessions is fitted from."""
NO_PROMPT_TIME = (
    "the logs do not record how long a task's first prompt took to write ({n} of {m} sessions "
    "do): default kept"
)


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
    """Log-normal MLE of positive finite data ``x`` (median, sigma) with ``level`` intervals and
    KS; None with fewer than 3 such points."""
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


def fit_checkin_every(trace: pd.DataFrame, level: float = LEVEL) -> Fit | None:
    """Geometric MLE of turns between check-ins: rate p = U / (U + Σ(k − 1)) over all stretches
    inside tasks (U stretches ended by a check-in; a task's last stretch is censored), mean 1/p."""
    st = stretches(trace)
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
    """Per developer, the most human sessions open at once (:func:`~speedtrap.sessions.structure.
    concurrency`)."""
    seconds = concurrency(trace).seconds
    return pd.Series(
        {dev: int(np.flatnonzero(s > 0).max() + 1) if (s > 0).any() else 1 for dev, s in seconds.items()},
        name="max_parallel_sessions",
    )


@dataclass(frozen=True)
class ScenarioFit:
    """The fits (``fits``, by scenario field path), the fitted scenario, every fitted value with
    what it was fitted from (``values``) and every field left at the base value with why
    (``kept``)."""

    scenario: Scenario
    fits: dict[str, Fit]
    values: dict[str, tuple[Any, str]]
    """Every fitted field path → (value, note saying what it was fitted from)."""
    n_sessions: int
    n_requests: int
    n_developers: int
    kept: dict[str, str] = field(default_factory=dict)
    """Every field the logs could not fit → why the base value was kept."""

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

    def kept_lines(self) -> list[str]:
        """One line per field kept at the base value: ``path: why``."""
        return [f"{path}: {why}" for path, why in self.kept.items()]


class _Fitter:
    """Collects fitted values, and kept fields with their reason, for one :func:`fit_scenario`."""

    def __init__(self, base: Scenario, n_sessions: int, level: float) -> None:
        self.base, self.n_sessions, self.level = base, n_sessions, level
        self.fits: dict[str, Fit] = {}
        self.values: dict[str, tuple[Any, str]] = {}
        self.kept: dict[str, str] = {}

    def note(self, fit: Fit, what: str) -> str:
        return f"fitted ({fit.law} MLE, {fit.n} {what}) from {self.n_sessions} sessions"

    def too_few(self, path: str, n: int, what: str) -> None:
        self.kept[path] = f"too little data: {n} {what} (need {MIN_SAMPLES}): default kept"

    def set(self, path: str, values: dict[str, tuple[Any, str]], fit: Fit | None = None) -> bool:
        """Take ``values`` if the scenario accepts them; else keep the base value and say why."""
        try:
            self.base.with_overrides(
                {**{p: v for p, (v, _) in self.values.items()}, **{p: v for p, (v, _) in values.items()}}
            )
        except (ValidationError, ValueError, KeyError) as exc:
            why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            self.kept[path] = f"the fitted value is outside the field's range ({why[:120]}): default kept"
            return False
        self.values.update(values)
        if fit is not None:
            self.fits[path] = fit
        return True

    def sample(self, path: str, data: np.ndarray, what: str, *, label: str) -> Fit | None:
        """The log-normal fit of ``data`` if it has :data:`MIN_SAMPLES` usable values; else None,
        and ``path`` is kept with the reason."""
        data = np.asarray(data, dtype=float)
        n = int((np.isfinite(data) & (data > 0)).sum())
        fit = fit_lognormal(label, data, self.level) if n >= MIN_SAMPLES else None
        if fit is None:
            self.too_few(path, n, what)
        return fit

    def lognormal(self, path: str, data: np.ndarray, what: str, *, label: str) -> Fit | None:
        """Fit the log-normal field ``path`` (its median and sigma) to ``data``."""
        fit = self.sample(path, data, what, label=label)
        if fit is None:
            return None
        text = self.note(fit, what)
        values = {
            f"{path}.median": (round(fit.params["median"], 6), text),
            f"{path}.sigma": (round(fit.params["sigma"], 6), text),
        }
        return fit if self.set(path, values, fit) else None


def _growth(trace: pd.DataFrame) -> np.ndarray:
    """Input growth between consecutive requests of a session beyond the previous output."""
    df = trace.sort_values(["developer", "session", "start_s"], kind="stable")
    same = df["session"].eq(df["session"].shift()) & df["developer"].eq(df["developer"].shift())
    return (df["input_tokens"] - df["input_tokens"].shift() - df["output_tokens"].shift())[same].to_numpy()


def _review(f: _Fitter, tk: pd.DataFrame) -> None:
    """``review.base_s`` from the gaps between a task's end and the next task's prompt."""
    path = "developer.review.base_s"
    tk = tk.copy()
    tk["previous_output"] = tk.groupby(["developer", "session"])["output_tokens"].shift()
    gaps = tk[(tk["task"] > 0) & (tk["gap_before_s"] > 0) & (tk["gap_before_s"] < LONG_GAP_S)]
    if len(gaps) < MIN_SAMPLES:
        f.too_few(path, len(gaps), "task boundaries with the human back within 30 min")
        return
    review = f.base.developer.review
    prompt_s = f.base.with_overrides({p: v for p, (v, _) in f.values.items()}).developer.prompt_s
    prompt_mean = prompt_s.mean
    per_output = review.s_per_kilotoken * gaps["previous_output"].to_numpy(float) / 1000.0
    base = float(np.mean(gaps["gap_before_s"].to_numpy(float) - per_output)) - prompt_mean
    text = (
        f"fitted (mean of {len(gaps)} gaps between a task's end and the next prompt, less "
        f"{review.s_per_kilotoken:g} s per 1000 output tokens and a {prompt_mean:.0f} s prompt) "
        f"from {f.n_sessions} sessions"
    )
    f.set(path, {path: (round(max(0.0, base), 3), text)})


def _diagnose(f: _Fitter, df: pd.DataFrame) -> None:
    """``fixing.diagnose_s`` from the human gaps after an interruption or a refused tool call."""
    after = df.groupby(["developer", "session"])["rework"].shift().fillna("") != ""
    gaps = df.loc[after & df["human"] & ~df["away"], "human_gap_s"].to_numpy(float)
    f.lognormal("developer.fixing.diagnose_s", gaps, "prompts after an interruption", label="diagnosis gap")


def _parallel(f: _Fitter, trace: pd.DataFrame) -> None:
    path = "developer.attention.parallel_sessions_probs"
    open_time = concurrency(trace)
    if open_time.open_s < MIN_OPEN_S:
        f.kept[path] = (
            f"too little data: {open_time.open_s / 3600:.1f} h of open sessions "
            f"(need {MIN_OPEN_S / 3600:g} h): default kept"
        )
        return
    shares = [round(float(s), 6) for s in open_time.shares()]
    shares[-1] = round(1.0 - sum(shares[:-1]), 6)
    text = (
        f"fitted (share of {open_time.open_s / 3600:.1f} h of open sessions with 1, 2, … open; "
        f"{len(open_time.seconds)} developers) from {f.n_sessions} sessions"
    )
    fit = Fit(
        "sessions open at once",
        "empirical",
        len(open_time.seconds),
        {f"p{k + 1}": p for k, p in enumerate(shares)},
        {},
    )
    f.set(path, {path: (shares, text)}, fit)


def fit_scenario(sessions: Sessions, base: Scenario | None = None, *, level: float = LEVEL) -> ScenarioFit:
    """Fit ``base`` (default: the built-in scenario) to ``sessions``; fields without enough data
    keep their values and ``kept`` says why; intervals at ``level``. Raises
    :class:`~speedtrap.sessions.plain_trace.NoRequestsError` (with the load report) when the logs
    hold no request."""
    trace = sessions.require_requests().trace
    base = base or Scenario(name="fitted")
    folded, _ = fold_subagents(trace)
    df = with_structure(folded)
    n_sessions = int(df.groupby(["developer", "session"]).ngroups) if len(df) else 0
    f = _Fitter(base, n_sessions, level)
    tk = tasks(folded)
    turns = f.sample("task_mix.turns", tk["turns"].to_numpy(), "tasks", label="requests per task")
    if turns is not None:
        text = f.note(turns, "tasks")
        f.set(
            "task_mix.turns",
            {
                "task_mix.turns_at_reference": (round(max(1.0, turns.params["median"]), 6), text),
                "task_mix.turns_log_sd": (round(turns.params["sigma"], 6), text),
                "task_mix.turns_exponent": (
                    0.0,
                    f"fitted: the logs give no task size, from {n_sessions} sessions",
                ),
                "task_mix.failed_turns_multiplier": (
                    1.0,
                    f"fitted: the logged tasks' turns include failed ones, from {n_sessions} sessions",
                ),
            },
            turns,
        )
    first = df[df["turn"] == 0]
    f.lognormal(
        "task_mix.initial_context_tokens", first["input_tokens"].to_numpy(), "sessions", label="first input"
    )
    estimated = estimated_outputs(folded)
    f.lognormal(
        "task_mix.output_tokens",
        folded["output_tokens"].to_numpy(),
        f"requests, {estimated} with estimated output" if estimated else "requests",
        label="output tokens",
    )
    f.lognormal("task_mix.tool_result_tokens", _growth(trace), "requests", label="context growth")
    f.lognormal("task_mix.tool_s", folded["tool_s"].to_numpy(), "tool calls", label="tool seconds")
    prompt_gaps = first["human_gap_s"].to_numpy(float)
    recorded = int((np.isfinite(prompt_gaps) & (prompt_gaps > 0)).sum())
    if recorded >= MIN_SAMPLES:
        f.lognormal("developer.prompt_s", prompt_gaps, "sessions", label="prompt gap")
    else:
        f.kept["developer.prompt_s"] = NO_PROMPT_TIME.format(n=recorded, m=len(first))
    inside = df.loc[(df["task_start"] == "") & df["human"] & ~df["away"], "human_gap_s"].to_numpy()
    f.lognormal("developer.checkin_s", inside, "human turns", label="human gap")
    every = fit_checkin_every(folded, level)
    n_stretches = len(stretches(folded))
    if every is None or n_stretches < MIN_SAMPLES:
        f.kept["developer.checkin_every_turns"] = (
            f"too little data: {0 if every is None else every.n} check-ins in {n_stretches} agent stretches "
            f"(need a check-in and {MIN_SAMPLES} stretches): default kept"
        )
    else:
        text = f"fitted (geometric MLE, {every.n} check-ins) from {n_sessions} sessions"
        values = {"developer.checkin_every_turns": (max(1, round(every.params["mean"])), text)}
        values["developer.checkin_random"] = (True, text)
        f.set("developer.checkin_every_turns", values, every)
    _review(f, tk)
    _diagnose(f, df)
    _parallel(f, trace)
    f.set(
        "developers",
        {
            "developers": (
                sessions.n_developers,
                f"fitted: developers in the logs, from {n_sessions} sessions",
            )
        },
    )
    for path in ("developer.fixing.hand_fix_prob", "developer.review.detect_prob"):
        f.kept[path] = "the logs do not say which results were wrong: default kept"
    scenario = base.with_overrides({path: value for path, (value, _) in f.values.items()})
    return ScenarioFit(scenario, f.fits, f.values, n_sessions, len(trace), sessions.n_developers, f.kept)


def scenario_toml(fitted: ScenarioFit, header: str = "") -> str:
    """The fitted scenario as TOML: each fitted value preceded by a comment saying it was fitted
    and from how many sessions; each field kept at the base value for want of data preceded by
    one saying why (or, where the file does not write the field, listed in the header)."""
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    body: list[str] = []
    placed: set[str] = set()
    table = ""
    for line in fitted.scenario.to_toml().splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            table = stripped.strip("[]").strip()
            if table in fitted.kept:
                body.append(f"# kept: {fitted.kept[table]}")
                placed.add(table)
        elif "=" in stripped and not stripped.startswith("#"):
            key = stripped.split("=", 1)[0].strip().strip('"')
            path = f"{table}.{key}" if table else key
            if path in fitted.values:
                body.append(f"# {fitted.values[path][1]}")
            elif path in fitted.kept:
                body.append(f"# kept: {fitted.kept[path]}")
                placed.add(path)
        body.append(line)
    rest = [f"# kept: {path}: {why}" for path, why in fitted.kept.items() if path not in placed]
    return "\n".join(lines + rest + body) + "\n"


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
