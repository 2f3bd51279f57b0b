"""Does a fitted scenario reproduce its own logs? (``speedtrap fit --check``)

The fitted scenario is run as a simulation on the recorded backend at the speed that matches the
logs (:func:`~speedtrap.sessions.retime.fit_backend_speed`, where the logs allow a fit), and the
logs are replayed on it with the fitted scenario's developer (what logs cannot say: attention,
review, fixing), on the same seeds. :func:`fit_check` sets the simulation beside what the logs
themselves say, measure by measure (:data:`CHECKS`), and says whether it is within the stated
tolerance of the logs. Where the logs alone cannot give a measure (the share of time spent
waiting), the simulation is held to the replay instead, and the row says so (``against``). A
measure the logs cannot tell at all (which results were wrong, so the time spent fixing them) is
listed with the reason instead of a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from speedtrap.config.ledger import WAITING_CATEGORIES
from speedtrap.config.scenario import Scenario
from speedtrap.models.results import RunResult
from speedtrap.models.workflow import simulate
from speedtrap.sessions.fit import ScenarioFit
from speedtrap.sessions.load import Sessions
from speedtrap.sessions.replay import recorded_backend, replay
from speedtrap.sessions.retime import fit_backend_speed, logged_figures
from speedtrap.sessions.structure import fold_subagents, stretches, tasks

__all__ = ["CHECKS", "Check", "check_lines", "fit_check", "run_measures"]


@dataclass(frozen=True)
class Check:
    """One measure of :func:`fit_check`: its key, label, tolerance (``relative``: |sim / logged −
    1|; ``absolute``: |sim − logged|; against the replay where the logs alone cannot say) and,
    when the logs cannot tell it, why."""

    key: str
    label: str
    kind: str
    tolerance: float
    cannot_tell: str = ""


CHECKS: tuple[Check, ...] = (
    Check(
        "waiting_share", "waiting on the agent (share of agent-task time, fixing left out)", "absolute", 0.05
    ),
    Check("tool_share_of_agent_time", "tool calls' share of the agent's time", "absolute", 0.10),
    Check("request_median_s", "median seconds per request", "relative", 0.25),
    Check("turns_per_task", "requests per task (median)", "relative", 0.25),
    Check("human_turns_per_task", "human turns per task (mean)", "relative", 0.25),
    Check("agent_stretch_median_s", "median agent stretch, s", "relative", 0.30),
    Check("human_response_median_s", "median human response, s", "relative", 0.30),
    Check(
        "fixing_share",
        "fixing (share of time)",
        "absolute",
        0.05,
        "the logs do not record which results were wrong: a replay fixes nothing",
    ),
)
"""The measures, with tolerances fixed before any run. Waiting is a share of the time spent on agent
tasks (prompting, waiting, reviewing, switching: a replay has no fixing, a simulation does, and
other work and breaks depend on the same attention rule in both). ±5 percentage points for shares of time,
±10 for the tools' share of agent time, ±25% for request times and turns, ±30% for the human and
agent stretch medians (heavy-tailed, from a few hundred stretches)."""


def run_measures(result: RunResult) -> dict[str, float]:
    """The :data:`CHECKS` measures of one run (finished tasks only for the per-task means)."""
    summary = result.summary()
    ledger = result.ledger.groupby("category", observed=False)["seconds"].sum()
    on_tasks = float(
        ledger.sum() - sum(ledger.get(c, 0.0) for c in ("fixing", "manual", "other_work", "idle"))
    )
    waiting = float(sum(ledger.get(c, 0.0) for c in WAITING_CATEGORIES))
    req = result.requests
    request_s = (req["done_s"] - req["arrival_s"]).to_numpy(float)
    done = result.tasks[result.tasks["outcome"] != "open"]
    tool = float(result.tasks["tool_s"].sum())
    st = result.stretches
    assert st is not None
    per_task = st.merge(done[["developer", "task"]], on=["developer", "task"]).groupby(["developer", "task"])
    agent = (st["need_s"] - st["handoff_s"]).dropna()
    human = (st["back_s"] - st["need_s"]).dropna()
    return {
        "waiting_share": waiting / on_tasks if on_tasks > 0 else math.nan,
        "tool_share_of_agent_time": tool / (tool + request_s.sum())
        if tool + request_s.sum() > 0
        else math.nan,
        "request_median_s": float(np.median(request_s)) if len(request_s) else math.nan,
        "turns_per_task": float(done["turns"].median()) if len(done) else math.nan,
        "human_turns_per_task": float(per_task.size().mean()) if len(done) else math.nan,
        "agent_stretch_median_s": float(agent.median()) if len(agent) else math.nan,
        "human_response_median_s": float(human.median()) if len(human) else math.nan,
        "fixing_share": float(summary["fixing_share"]),
    }


def _logged(trace: pd.DataFrame) -> dict[str, float]:
    folded, _ = fold_subagents(trace)
    figures = logged_figures(trace)
    tk = tasks(folded)
    st = stretches(folded)
    return {
        "tool_share_of_agent_time": 1.0 - figures["llm_share_of_agent_time"],
        "request_median_s": figures["median_request_s"],
        "turns_per_task": float(tk["turns"].median()) if len(tk) else math.nan,
        "human_turns_per_task": float(tk["human_turns"].mean()) if len(tk) else math.nan,
        "agent_stretch_median_s": float(st["seconds"].median()) if len(st) else math.nan,
        "human_response_median_s": float(st["gap_after_s"].median()) if st["checkin"].any() else math.nan,
    }


def fit_check(
    sessions: Sessions,
    fitted: ScenarioFit,
    *,
    backend: str | None = None,
    seeds: Sequence[int] = (0, 1, 2),
) -> pd.DataFrame:
    """The fitted scenario's simulation against its own logs (module docstring): one row per
    :data:`CHECKS` measure with ``logged`` (NaN where the logs alone cannot say), ``replay`` and
    ``simulated`` (means over ``seeds``), what the simulation is held to (``against``: ``logs``,
    or ``replay`` where the logs cannot say), the tolerance and ``within`` (True / False; None
    where the logs cannot tell, with the reason in ``note``). ``backend``: the recorded backend
    (default: the trace's, else gpu-batched), at the speed fitted to the logs where they allow a
    fit (``attrs["speed"]``: the :class:`~speedtrap.sessions.retime.SpeedFit`)."""
    trace = sessions.require_requests().trace
    backend = backend or recorded_backend(trace)
    speed = fit_backend_speed(trace, fitted.scenario, backend, seeds[0] if seeds else 0)
    scenario: Scenario = speed.scenario.with_backend(backend)
    replayed = [run_measures(replay(trace, scenario, seed).result) for seed in seeds]
    simulated = [run_measures(simulate(scenario, seed)) for seed in seeds]
    logged = _logged(trace)
    rows = []
    for check in CHECKS:
        r = float(np.mean([m[check.key] for m in replayed]))
        s = float(np.mean([m[check.key] for m in simulated]))
        lg = logged.get(check.key, math.nan)
        ref, against = (lg, "logs") if math.isfinite(lg) else (r, "replay")
        if check.cannot_tell:
            within, note, against = None, check.cannot_tell, ""
        elif not (math.isfinite(ref) and math.isfinite(s)):
            within, note = None, "no value in one of the runs"
        else:
            error = abs(s - ref) if check.kind == "absolute" else abs(s / ref - 1.0) if ref else math.inf
            within = bool(error <= check.tolerance)
            note = "" if against == "logs" else "the logs alone cannot say: held to the replay"
        rows.append(
            {
                "measure": check.key,
                "label": check.label,
                "logged": lg,
                "replay": r,
                "simulated": s,
                "against": against,
                "tolerance": f"±{100 * check.tolerance:g}" + (" pp" if check.kind == "absolute" else "%"),
                "within": within,
                "note": note,
            }
        )
    table = pd.DataFrame(rows)
    table.attrs["speed"] = speed
    return table


def check_lines(table: pd.DataFrame) -> list[str]:
    """The check as text: the recorded backend's speed, one line per measure, then a verdict line."""

    def cell(key: str, value: float) -> str:
        if not math.isfinite(value):
            return "—"
        return f"{100 * value:.1f}%" if "share" in key else f"{value:.3g}"

    speed = table.attrs.get("speed")
    out = [] if speed is None else speed.lines()[1:]
    for r in table.itertuples():
        verdict = "cannot tell" if r.within is None else ("within" if r.within else "OUTSIDE")
        line = (
            f"{r.label}: logged {cell(r.measure, r.logged)}, replay {cell(r.measure, r.replay)}, "
            f"simulated {cell(r.measure, r.simulated)} ({r.tolerance}): {verdict}"
        )
        out.append(line + (f" — {r.note}" if r.note else ""))
    judged = table["within"].dropna()
    out.append(f"{int(judged.sum())} of {len(judged)} measures within tolerance")
    return out
