"""Replay recorded sessions on any backend: developers driven by a trace instead of synthetic tasks.

Each recorded session becomes a task whose agent session runs exactly the recorded requests — the
same number of turns, input and output tokens, and tool seconds after each — while the chosen
backend's serving pool times every request (queue, prefill of the uncached input, decode at the
live rate). The recorded human gaps are re-applied: a session's first gap is its prompt, every
later one a check-in after the same turn as recorded. The human time between two tasks is the
logged one: where the logs record the gap before a task (the previous task's review and this task's
prompt), the replay takes it as the prompt and the previous task gets no review of its own, so it
does not move with the backend's speed. The client's seconds before a request was sent, where the
log records them (a Codex trace's ``client_s``: from the trigger to the line Codex writes just
before sending), are taken from the log too: the request is sent that long after its trigger, and
only the rest of its logged time is the backend's to re-time (in the time ledger the developer
waiting on it waits before admission, as in a queue). What the trace cannot say comes from the
scenario's developer: the first task's prompt and review where the log does not record them, when
they switch away and come back, how many sessions they keep open. Recorded outcomes are kept (no
result is re-drawn as wrong: a replay measures what speed does to the same work, not what a weaker
model would have got wrong). Each developer works through their recorded sessions in order and,
when the horizon is longer than the logs, starts again from the first: :meth:`ReplayRun.coverage`
says how many times over, and per-day figures count the repeats (:func:`replay_pair` sets the logs'
own tasks per developer-day, from their timestamps, beside them). Cached input follows the
scenario's prompt-cache rules (5-min lifetime by default). On a backend whose context window is
smaller than the recorded inputs the agent compacts as in any simulation, and later inputs grow
from the compacted size as recorded. A subagent's requests run inside the parent session's tool
call that waited on them (:func:`~speedtrap.sessions.structure.fold_subagents`): they load the
fleet and are billed.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from speedtrap.agents.session import Session
from speedtrap.agents.task import Task
from speedtrap.config.scenario import Scenario
from speedtrap.models.results import RunResult
from speedtrap.models.workflow import WorkflowModel
from speedtrap.serving.request import Request
from speedtrap.sessions.codex import CLIENT_COLUMN, seconds_before_sending
from speedtrap.sessions.structure import LONG_GAP_S, fold_subagents, task_starts, tasks

if TYPE_CHECKING:
    from speedtrap.agents.backend import Backend
    from speedtrap.agents.developer import Developer
    from speedtrap.policies.base import Route

__all__ = [
    "RecordedSession",
    "ReplayRun",
    "logged_tasks_per_day",
    "recorded_backend",
    "recorded_sessions",
    "replay",
    "replay_pair",
    "request_timing_error",
]

_NEVER = 1 << 62


@dataclass(frozen=True)
class RecordedSession:
    """One recorded session: per request, its tokens and the tool seconds after it; the turn
    counts after which the human checked in (``checkin_after``) and for how long
    (``checkin_s``); the prompt seconds before it (NaN if not recorded); the recorded start
    and end of every request; which requests' output tokens are estimates (``estimated``); and
    the client's seconds between each request's start and its sending (``client_s``, from the log;
    empty: none recorded)."""

    name: str
    input_tokens: tuple[int, ...]
    cached_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    tool_s: tuple[float, ...]
    checkin_after: tuple[int, ...]
    checkin_s: tuple[float, ...]
    prompt_s: float
    start_s: tuple[float, ...]
    end_s: tuple[float, ...]
    estimated: tuple[bool, ...] = ()
    client_s: tuple[float, ...] = ()

    @property
    def turns(self) -> int:
        return len(self.output_tokens)

    def sent_after_s(self, turn: int) -> float:
        """The client's seconds before request ``turn`` was sent (0 where the log records none)."""
        return self.client_s[turn] if turn < len(self.client_s) else 0.0


def recorded_sessions(trace: pd.DataFrame) -> dict[str, list[RecordedSession]]:
    """The trace's tasks by developer, each developer's in order of their first request. A task is
    a session, or the part of one between task boundaries (:func:`~speedtrap.sessions.structure.
    task_starts`: ``<session>#<k>`` from the second on); the human gap before a task's first
    request is its prompt unless it was time away (then NaN: the scenario's prompt time)."""
    out: dict[str, list[RecordedSession]] = {}
    df = trace.sort_values(["developer", "session", "start_s"], kind="stable")
    for (developer, name), session in df.groupby(["developer", "session"], sort=False):
        starts = np.flatnonzero(task_starts(session) != "")
        estimated = (
            (session["estimated"].astype(str) != "").to_numpy()
            if "estimated" in session.columns
            else np.zeros(len(session), dtype=bool)
        )
        client = seconds_before_sending(session)
        for k, (a, b) in enumerate(zip(starts, [*starts[1:], len(session)], strict=True)):
            g = session.iloc[a:b]
            gaps = g["human_gap_s"].to_numpy(float)
            after = [j for j in range(1, len(g)) if gaps[j] > 0]
            prompt = float(gaps[0]) if gaps[0] < LONG_GAP_S else math.nan
            out.setdefault(str(developer), []).append(
                RecordedSession(
                    name=str(name) if k == 0 else f"{name}#{k}",
                    input_tokens=tuple(int(x) for x in g["input_tokens"]),
                    cached_tokens=tuple(int(x) for x in g["cached_tokens"]),
                    output_tokens=tuple(max(1, int(x)) for x in g["output_tokens"]),
                    tool_s=tuple(float(x) for x in g["tool_s"]),
                    checkin_after=tuple(after),
                    checkin_s=tuple(float(gaps[j]) for j in after),
                    prompt_s=prompt,
                    start_s=tuple(float(x) for x in g["start_s"]),
                    end_s=tuple(float(x) for x in g["end_s"]),
                    estimated=tuple(bool(x) for x in estimated[a:b]),
                    client_s=tuple(float(x) for x in client[a:b]) if client[a:b].any() else (),
                )
            )
    for sessions in out.values():
        sessions.sort(key=lambda s: s.start_s[0])
    return out


class _RecordedDraws:
    """What a :class:`~speedtrap.agents.task.TurnDraws` gives a session, from the recording: output
    tokens and tool seconds per turn, no tool-result growth (the next input is set from the
    recording) and no malformed tool calls."""

    __slots__ = ("out", "result", "tool_s", "u_tool")

    def __init__(self, rec: RecordedSession) -> None:
        self.out = list(rec.output_tokens)
        self.tool_s = list(rec.tool_s)
        self.result = [0] * rec.turns
        self.u_tool = [math.inf] * rec.turns

    def ensure(self, turn: int) -> None:
        if turn >= len(self.out):  # pragma: no cover - a replayed session plans its recorded turns
            raise IndexError(f"turn {turn} of a session recorded with {len(self.out)} turns")


class ReplaySession(Session):
    """A coding-agent session that replays a recorded one (see the module docstring)."""

    def __init__(
        self,
        model: WorkflowModel,
        developer: Developer,
        task: Task,
        attempt: int,
        route: Route,
        backend: Backend,
    ) -> None:
        super().__init__(model, developer, task, attempt, route, backend)
        assert isinstance(task, ReplayTask)
        self._draws = _RecordedDraws(task.recorded)  # type: ignore[assignment]
        self._began_s = math.nan  # when the turn whose request waits on the client began

    def _stretch_end(self, start: int) -> int:
        assert isinstance(self.task, ReplayTask)
        after = self.task.recorded.checkin_after
        i = bisect.bisect_right(after, start)
        return after[i] if i < len(after) else _NEVER

    def next_checkin_s(self) -> float:
        s = self.task.recorded.checkin_s[self.checkins_done]  # type: ignore[attr-defined]
        self.checkins_done += 1
        return s

    def _start_turn(self, now: float) -> None:
        """Send the next request after the client's logged seconds before sending, if any (the
        turn, as the developer sees it, starts now)."""
        wait = self.task.recorded.sent_after_s(self.turns_done)  # type: ignore[attr-defined]
        if wait <= 0.0:
            super()._start_turn(now)
            return
        self.turn_start_s = now
        self.tool_end_s = math.inf
        self._began_s = now
        self.model.schedule_event(self._send, at=now + wait)

    def _send(self) -> None:
        super()._start_turn(self.model.time)
        self.turn_start_s = self._began_s

    def _on_request_done(self, request: Request) -> None:
        super()._on_request_done(request)
        rec = self.task.recorded  # type: ignore[attr-defined]
        k = self.turns_done
        if k + 1 < rec.turns:
            # The recorded next input, less what compactions on this backend's window removed.
            removed = rec.input_tokens[k] - request.input_tokens
            self.task.context_tokens = max(1, rec.input_tokens[k + 1] - removed)


class ReplayTask(Task):
    """A task that is one recorded session (``recorded``), run by a :class:`ReplaySession`."""

    __slots__ = ("recorded",)
    recorded: RecordedSession
    session_class = ReplaySession


class ReplaySource:
    """One developer's backlog: their recorded sessions in order, again from the first when done."""

    def __init__(self, developer: int, sessions: Sequence[RecordedSession], scenario: Scenario) -> None:
        if not sessions:
            raise ValueError(f"developer {developer} has no recorded session")
        self.developer = developer
        self.sessions = list(sessions)
        self._difficulty = scenario.task_mix.difficulty_names[0]
        self._prompt_s = scenario.developer.prompt_s.median
        self._attempts = scenario.developer.fixing.max_repair_sessions + 1
        self._issued = 0

    def next(self) -> Task:
        i = self._issued
        self._issued += 1
        rec = self.sessions[i % len(self.sessions)]
        following = self.sessions[(i + 1) % len(self.sessions)]
        # The logged gap before the next task holds this task's review: no review of its own then.
        review = 0.0 if math.isfinite(following.prompt_s) else 1.0
        a = self._attempts
        task = ReplayTask(
            developer=self.developer,
            index=i,
            difficulty=self._difficulty,
            base_turns=rec.turns,
            initial_context_tokens=rec.input_tokens[0],
            prompt_s=rec.prompt_s if math.isfinite(rec.prompt_s) else self._prompt_s,
            u_fail=(math.inf,) * a,  # never wrong: the recorded outcome stands
            u_detect=(math.inf,) * a,
            u_hand=(math.inf,) * a,
            review_factor=(review,) * a,
            diagnose_s=(0.0,) * a,
            hand_fix_s=0.0,
            rework_s=0.0,
            escape_delay_s=math.inf,
            seed_entropy=0,
            seed_key=(self.developer, i),
        )
        task.recorded = rec
        return task


@dataclass(frozen=True)
class ReplayRun:
    """A replay's results and the recorded sessions its tasks replayed (``sessions[developer]``;
    task ``i`` of a developer is their session ``i % len``)."""

    result: RunResult
    sessions: list[list[RecordedSession]]
    developers: list[str]

    def request_times(self) -> pd.DataFrame:
        """Every replayed request beside its recording: developer, session, turn, recorded and
        replayed seconds from sending to the last token (the recorded ones without the client's
        seconds before sending, ``client_s``, which the replay takes from the log), the replayed
        seconds to the first token (queue and prefill included) and of decoding, the output tokens,
        and the first pass (``cycle`` 0) or a repeat."""
        req = self.result.requests
        lengths = np.array([len(s) for s in self.sessions])
        n = lengths[req["developer"].to_numpy()]
        cycle, index = np.divmod(req["task"].to_numpy(), n)
        triples = list(zip(req["developer"], index, req["turn"], strict=True))
        client = [self.sessions[d][i].sent_after_s(k) for d, i, k in triples]
        recorded = [
            self.sessions[d][i].end_s[k] - self.sessions[d][i].start_s[k] - c
            for (d, i, k), c in zip(triples, client, strict=True)
        ]
        return pd.DataFrame(
            {
                "developer": [self.developers[d] for d in req["developer"]],
                "session": [self.sessions[d][i].name for d, i in zip(req["developer"], index, strict=True)],
                "turn": req["turn"].to_numpy(),
                "cycle": cycle,
                "recorded_s": recorded,
                "client_s": client,
                "replayed_s": (req["done_s"] - req["arrival_s"]).to_numpy(),
                "ttft_s": req["ttft_s"].to_numpy(),
                "decode_s": req["decode_s"].to_numpy(),
                "output_tokens": req["output_tokens"].to_numpy(),
                "estimated": [
                    bool(self.sessions[d][i].estimated[k]) if self.sessions[d][i].estimated else False
                    for d, i, k in zip(req["developer"], index, req["turn"], strict=True)
                ],
            }
        )

    def coverage(self) -> dict[str, float]:
        """How the replay filled its horizon: recorded tasks, tasks started, the most times a
        developer's recorded tasks were gone through (``passes``: above 1, the logs were looped and
        per-day figures count the repeats) and the hours the logs span (first request to last,
        summed over developers)."""
        started_tasks = self.result.tasks
        passes = 0.0
        for d, sessions in enumerate(self.sessions):
            started = int((started_tasks["developer"] == d).sum()) if len(started_tasks) else 0
            passes = max(passes, started / len(sessions))
        hours = sum(
            (max(s.end_s[-1] for s in sessions) - min(s.start_s[0] for s in sessions)) / 3600.0
            for sessions in self.sessions
        )
        return {
            "recorded_tasks": float(sum(len(s) for s in self.sessions)),
            "tasks_started": float(len(started_tasks)),
            "passes": passes,
            "logged_hours": hours,
        }


def replay(trace: pd.DataFrame, scenario: Scenario, seed: int | None = None) -> ReplayRun:
    """Run ``scenario`` with its developers replaying ``trace`` (one developer per developer of the
    trace; ``scenario.developers`` is overridden) up to the horizon; subagents' requests run in
    their parent's session."""
    trace, _ = fold_subagents(trace)
    by_developer = recorded_sessions(trace)
    if not by_developer:
        raise ValueError("no usable request in the session logs")
    names = sorted(by_developer)
    if scenario.policy.kind == "manual":
        raise ValueError("a replay needs an agent backend, not 'manual'")
    scenario = scenario.with_overrides({"developers": len(names)})
    sessions = [by_developer[name] for name in names]

    def source(i: int) -> ReplaySource:
        return ReplaySource(i, sessions[i], scenario)

    model = WorkflowModel(scenario, rng=seed, task_sources=source)
    model.run_until(scenario.horizon_s)
    return ReplayRun(model.result(), sessions, names)


def request_timing_error(run: ReplayRun) -> dict[str, float]:
    """How far the replayed request times are from the recorded ones, first pass only: the
    median and 90th percentile of |replayed / recorded − 1| per request, and the ratio of the
    totals."""
    times = run.request_times()
    first = times[(times["cycle"] == 0) & (times["recorded_s"] > 0)]
    rel = (first["replayed_s"] / first["recorded_s"] - 1.0).abs()
    return {
        "requests": float(len(first)),
        "median_abs_rel_error": float(rel.median()),
        "p90_abs_rel_error": float(rel.quantile(0.9)),
        "total_ratio": float(first["replayed_s"].sum() / first["recorded_s"].sum()),
    }


def recorded_backend(trace: pd.DataFrame, default: str = "gpu-batched") -> str:
    """The backend most of the trace's requests name, else ``default``."""
    named = trace["backend"][trace["backend"].astype(str).str.len() > 0]
    return str(named.mode().iloc[0]) if len(named) else default


REPLAY_MEASURES: tuple[tuple[str, str], ...] = (
    ("tasks_per_dev_day", "recorded sessions finished per developer-day"),
    ("waiting_share", "waiting on the agent (share of time)"),
    ("share_switching", "switching (share of time)"),
    ("share_other_work", "other work (share of time)"),
    ("usd_per_dev_day", "US dollars per developer-day"),
    ("mean_request_s", "mean seconds per request"),
    ("mean_ttft_s", "mean time to first token, s"),
    ("mean_client_s", "mean seconds before a request is sent (client, from the log)"),
)
"""What :func:`replay_pair` compares (summary key, label)."""


def replay_pair(
    trace: pd.DataFrame, scenario: Scenario, backend: str, *, recorded: str, seed: int | None = 0
) -> pd.DataFrame:
    """The trace replayed on its recorded backend and on ``backend`` with the same seed: one row
    per measure of :data:`REPLAY_MEASURES` with what the logs themselves say (``logged``: NaN
    where they cannot say; tasks per developer-day from their timestamps; seconds per request from
    sending, without the client's seconds before it, which have a row of their own), both replayed values
    (``recorded``: on the recorded backend as ``scenario`` has it, the fitted speed where
    :func:`~speedtrap.sessions.retime.fit_backend_speed` gave one; ``replayed``: on ``backend``)
    and the change from the recorded backend. ``attrs["coverage"]`` holds each run's
    :meth:`ReplayRun.coverage` by backend (how many times the logs were gone through)."""
    rows = {}
    coverage = {}
    for name in dict.fromkeys((recorded, backend)):
        run = replay(trace, scenario.with_backend(name), seed)
        coverage[name] = run.coverage()
        summary = run.result.summary()
        req = run.result.requests
        summary["mean_request_s"] = float((req["done_s"] - req["arrival_s"]).mean()) if len(req) else math.nan
        summary["mean_client_s"] = float(run.request_times()["client_s"].mean()) if len(req) else math.nan
        rows[name] = summary
    out = pd.DataFrame(
        {
            "measure": [key for key, _ in REPLAY_MEASURES],
            "label": [label for _, label in REPLAY_MEASURES],
            "recorded": [rows[recorded][key] for key, _ in REPLAY_MEASURES],
            "replayed": [rows[backend][key] for key, _ in REPLAY_MEASURES],
        }
    )
    client = seconds_before_sending(trace)
    logged = {
        "mean_request_s": float((trace["end_s"] - trace["start_s"] - client).mean()),
        "tasks_per_dev_day": logged_tasks_per_day(trace),
        "mean_client_s": float(client.mean()) if CLIENT_COLUMN in trace.columns else math.nan,
    }
    out.insert(2, "logged", [logged.get(key, math.nan) for key, _ in REPLAY_MEASURES])
    out["change"] = out["replayed"] - out["recorded"]
    out.attrs["coverage"] = coverage
    return out


def logged_tasks_per_day(trace: pd.DataFrame) -> float:
    """Tasks (:func:`~speedtrap.sessions.structure.tasks`, subagents folded in) per developer-day
    on which the logs hold a request (UTC calendar days, by the requests' start times); NaN for a
    trace whose clock is not a date (seconds from zero: one day)."""
    folded, _ = fold_subagents(trace)
    if not len(folded):
        return math.nan
    days = folded.assign(day=np.floor(folded["start_s"].to_numpy(float) / 86_400.0))
    developer_days = int(days.groupby(["developer", "day"]).ngroups)
    return float(len(tasks(folded))) / developer_days if developer_days else math.nan
