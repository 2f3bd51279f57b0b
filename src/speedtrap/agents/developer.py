"""The Developer agent: a small state machine that is always in exactly one activity.

Every transition charges the time since the last one to the current activity (the ledger), so
a developer's charges tile ``[0, now]``. The rules (docs/running.md, "The workflow rules"; sources in
docs/calibration.md):

* A task starts with the developer writing its prompt (prompting); the agent then runs. With the
  ``expected_wait`` attention rule the developer estimates, at the hand-off and at every turn end,
  how long until the agent next needs them (turns left to the next check-in × the turn time they
  have seen on that backend, queue included) and stays, watching, while that is within their
  patience for the episode; otherwise they leave — to the oldest item needing them, else a new
  task (below their number of parallel sessions), else other work (or, with probability
  1 − ``other_work_prob``, a break). Going into other work and coming back to a session both cost
  a resumption overhead that grows with the time away from it; time on a break does not count
  as time away. With the ``threshold`` rule every developer waits ``flow_threshold_s`` and then
  leaves, and only coming back costs.
* A hybrid developer (``delegated_fraction`` < 1) works by hand on the part of the task they kept
  while the agent runs (manual), and finishes it after accepting the agent's result if needed.
  Under policy ``manual`` the whole task is done by hand.
* A session that needs its developer (check-in or finished result) gets them at once if they
  are waiting, working by hand on its task, doing other work or idle; otherwise it queues until
  their current step ends. During an away episode it waits for their next look, unless they
  notice it (``notice_prob``), which ends the episode at once; the noticed session's resumption is
  then the short lag alone (``cued_resumption``).
* Review (time proportional to the session's output) catches a wrong result with probability
  ``detect_prob``: the developer then fixes it by hand or diagnoses it and starts a repair
  session (up to ``max_repair_sessions``). Every human step on a repair — diagnosis, check-ins,
  review — is fixing; waiting on the repair's turns is waiting. A missed wrong result escapes: the
  task is accepted defective, not done; the defect surfaces after a delay and its rework (fixing,
  charged to the task, ahead of new work) makes the task done (``reworked``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import mesa
import numpy as np

from speedtrap.agents.activity import Activity, ActivityRecorder
from speedtrap.agents.attention import AttentionRule
from speedtrap.agents.parallel_session import ParallelSession
from speedtrap.agents.session import CHECKIN, REVIEW, Session
from speedtrap.agents.task import REDO_STREAM, Task

if TYPE_CHECKING:
    from mesa.time import Event

    from speedtrap.agents.backend import Backend
    from speedtrap.config.developer import Developer as DeveloperSpec
    from speedtrap.config.work import TaskMix
    from speedtrap.policies.base import RoutingPolicy

PROMPTING = Activity.PROMPTING
WAITING = Activity.WAITING
REVIEWING = Activity.REVIEWING
FIXING = Activity.FIXING
SWITCHING = Activity.SWITCHING
OTHER_WORK = Activity.OTHER_WORK
IDLE = Activity.IDLE
MANUAL = Activity.MANUAL
_INTERRUPTIBLE = (WAITING, OTHER_WORK, IDLE)
_UNVALUED = (IDLE, SWITCHING)  # activities with no task label that no output values
INF = float("inf")


class TaskFeed(Protocol):
    """A developer's backlog: hands out the next task."""

    def next(self) -> Task: ...


class Developer(mesa.Agent):
    """One developer working through an endless backlog of tasks with coding agents."""

    def __init__(
        self,
        model: mesa.Model,
        index: int,
        *,
        spec: DeveloperSpec,
        task_mix: TaskMix,
        tasks: TaskFeed,
        policy: RoutingPolicy,
        backends: Mapping[str, Backend],
        ledger: ActivityRecorder,
        rng: np.random.Generator,
        on_task_started: Callable[[Task], None] | None = None,
        keep_stretches: bool = True,
    ) -> None:
        super().__init__(model)
        self.index = index
        self.spec = spec
        self.task_mix = task_mix
        self.policy = policy
        self.backends = backends
        self._tasks = tasks
        self._ledger = ledger
        self._on_task_started = on_task_started
        self.attention = AttentionRule(spec.attention, rng)
        """The attention rule (traits drawn first in the developer's attention stream, the same under
        every backend and policy: patience and the number of agent sessions they keep open)."""
        self._expected = self.attention.expected
        self._review = spec.review
        self._fixing = spec.fixing
        self._manual_escape_prob = spec.manual.escape_prob
        self._manual_only = bool(getattr(policy, "manual", False))
        self._max_sessions = self.attention.max_sessions
        self._idle_total_s = 0.0
        self._other_left_s: float | None = (
            None  # when the developer last left other work (None: not yet today)
        )
        self._hybrid_event: Event | None = None
        self._hybrid_task: Task | None = None
        self._keep_stretches = keep_stretches
        self.closed_stretches: list[tuple[float, ...]] = []  # (task, attempt, *stretch), Session.stretches
        """(task, attempt, hand-off, need, back, transcript) of the agent stretches of closed sessions
        (kept only with ``keep_stretches``, the default: a run that wants no tables keeps none)."""
        self.activity = IDLE
        self.since = model.time
        self.focus: Session | None = None
        self.prompt_cache: dict[object, float] = {}
        """When this developer's conversations last used each prompt-cache key (Session's shared prefix)."""
        self.sessions: list[Session] = []
        self.pending: deque[Session | Task] = deque()
        self._task_in_hand: Task | None = None
        self._then: Callable[[], None] | None = None
        self._outcome_in_hand = ""
        self._label = -1  # index of the task the current activity serves (-1: none)
        self._label_task: Task | None = None  # the task itself (its human_s is charged)
        self._away_event: Event | None = None  # an away episode in progress (other work or a break)
        self._flow_event: Event | None = None

    # ------------------------------------------------------------------ the ledger

    def charge(self) -> None:
        """Charge the time since the last transition to the current activity."""
        self._charge(self.model.time)

    def _charge(self, now: float) -> None:
        """:meth:`charge` with the model's time ``now`` already read."""
        since = self.since
        if now > since:
            focus = self.focus
            if self.activity == WAITING and focus is not None:
                req = focus.request  # the awaited turn's phases (Session.phases, inlined)
                if req is None:
                    phases = (INF, INF, INF, INF)
                else:
                    admitted, first, done = req.admitted_s, req.first_token_s, req.done_s
                    phases = (
                        admitted if admitted == admitted else INF,  # NaN: not reached yet
                        first if first == first else INF,
                        done if done == done else INF,
                        focus.tool_end_s,
                    )
                self._ledger.record_wait(self.index, since, now, phases, self._label)
            else:
                self._ledger.record(self.index, self.activity, since, now, self._label)
                if self.activity == IDLE:
                    self._idle_total_s += now - since
            task = self._label_task
            if task is not None:
                task.human_s += now - since
            elif self.activity in _UNVALUED and self.sessions:
                # Idle, or switching into other work, while sessions are open: time that neither serves
                # a task nor is valued as other work, charged in equal parts to the open sessions' tasks
                # as a time-tracking study charges it (docs/validation.md, "One productivity accounting").
                part = (now - since) / len(self.sessions)
                for open_session in self.sessions:
                    open_session.task.human_s += part
        self.since = now

    def note_turn_end(self, session: Session, turn_s: float, now: float) -> None:
        """A turn of ``session`` ended after ``turn_s`` seconds (request, queue included, and tool
        call) at ``now``: learn its length, and split the wait here if the developer is waiting on it."""
        self.attention.learn_turn(session.estimate_key, turn_s)
        if self.focus is session and self.activity == WAITING:
            self._charge(now)

    def expected_wait_s(self, session: Session) -> float:
        """Seconds the developer expects until ``session`` next needs them: the turns they expect
        before its next check-in times the turn time they have seen on its backend and tier."""
        return self.attention.expected_wait_s(session.turns_left_expected(), session.estimate_key)

    def reconsider(self, session: Session) -> None:
        """A new turn of ``session`` started: a developer waiting on it leaves if the expected
        rest of the wait now exceeds their patience for this episode."""
        if self._expected and self.focus is session and self.activity == WAITING:
            # expected_wait_s and _maybe_leave's first test, inlined (this runs at every turn waited on)
            attention = self.attention
            expected_s = attention.expected_wait_s(session.turns_left_expected(), session.estimate_key)
            if expected_s > attention.episode_patience_s:
                self._maybe_leave(expected_s)

    def _maybe_leave(self, expected_s: float) -> None:
        """Leave the session being waited on if the attention rule says so
        (:meth:`AttentionRule.leaves`): to something that needs the developer, a new session (below
        their number of parallel sessions), or other work worth its round trip."""
        if expected_s <= self.attention.episode_patience_s:
            return  # within this episode's patience: stays (the rule's first test, without the call)
        if self.attention.leaves(
            expected_s,
            only_other_work=not self.pending and len(self.sessions) >= self._max_sessions,
            since_other_work_s=None if self._other_left_s is None else self.model.time - self._other_left_s,
        ):
            self._fill_gap()

    def _set(self, activity: Activity, focus: Session | None, task: Task | None = None) -> None:
        """Switch to ``activity`` on ``focus`` (or on ``task`` without a session) now, charging
        the previous activity."""
        now = self.model.time
        self._charge(now)
        if self.activity == OTHER_WORK and activity != OTHER_WORK:
            self._other_left_s = now
        old = self.focus
        if old is not focus:
            if old is not None:
                old.left_at = now
                old.idle_at_leave_s = self._idle_total_s
            if focus is not None:
                focus.left_at = None
            self.focus = focus
        self.activity = activity
        if focus is not None:
            task = focus.task
        self._label_task = task
        self._label = task.index if task is not None else -1
        if self._flow_event is not None:
            self._flow_event.cancel()
            self._flow_event = None
        if self._away_event is not None:
            self._away_event.cancel()
            self._away_event = None

    def _begin(
        self,
        activity: Activity,
        duration_s: float,
        focus: Session | None,
        then: Callable[[], None],
        task: Task | None = None,
    ) -> None:
        """Start a human step of ``duration_s`` seconds; ``then`` runs when it ends."""
        self._set(activity, focus, task)
        self._then = then
        self.model.schedule_event(self._on_step_done, after=duration_s)

    def _on_step_done(self) -> None:
        then, self._then = self._then, None
        if then is not None:
            then()

    # ------------------------------------------------------------------ starting and handing off

    def start(self) -> None:
        """Begin the working day: write the first task's prompt."""
        self._start_new_task()

    def _start_new_task(self) -> None:
        task = self._tasks.next()
        task.owner = self
        task.start_s = self.model.time
        if self._on_task_started is not None:
            self._on_task_started(task)
        if self._manual_only:
            task.manual_left_s = 0.0
            task.manual_done_s = task.effort_s
            self._task_in_hand = task
            self._begin(MANUAL, task.effort_s, None, self._after_manual_task, task)
            return
        session = self._open_session(task, 0)
        self._begin(PROMPTING, task.prompt_s, session, self._hand_off)

    def _open_session(self, task: Task, attempt: int) -> Session:
        route = self.policy.for_session(task.difficulty, attempt)
        session_class = getattr(task, "session_class", None)  # a recorded task replays its session
        if session_class is None:
            session_class = Session if self.policy.fan_out is None else ParallelSession
        session = session_class(self.model, self, task, attempt, route, self.backends[route.backend])
        self.sessions.append(session)
        return session

    def _hand_off(self) -> None:
        """The focus session goes back to the agent; wait on it unless something needs the developer."""
        session = self.focus
        assert session is not None
        if self.pending:
            self._serve(self.pending.popleft())
            session.advance()
        elif not self._expected:
            self._set(WAITING, session)
            threshold = self.attention.flow_threshold_s
            if threshold < float("inf"):
                self._flow_event = self.model.schedule_event(self._on_flow_break, after=threshold)
            session.advance()
        elif session.task.manual_left_s > 0.0:
            session.advance()
            self._work_by_hand(session)
        else:
            self._set(WAITING, session)
            session.advance()
            self._watch_or_leave(session)

    def _watch_or_leave(self, session: Session) -> None:
        """Waiting on ``session``: draw this episode's patience and leave if the expected wait
        exceeds it (the developer re-checks at every turn end, :meth:`reconsider`)."""
        self.attention.new_episode()
        self._maybe_leave(self.expected_wait_s(session))

    def _work_by_hand(self, session: Session) -> None:
        """Hybrid: work by hand on the part of ``session``'s task the developer kept, while its agent
        runs; interrupted by anything that needs the developer."""
        task = session.task
        self._set(MANUAL, session)
        self._hybrid_task = task
        self._hybrid_event = self.model.schedule_event(self._on_hand_work_done, after=task.manual_left_s)

    def _pause_hand_work(self) -> None:
        """Stop hybrid hand work now, keeping what is left of it."""
        event, task = self._hybrid_event, self._hybrid_task
        if event is None or task is None:
            return
        done = self.model.time - self.since
        task.manual_left_s = max(0.0, task.manual_left_s - done)
        task.manual_done_s += done
        event.cancel()
        self._hybrid_event = self._hybrid_task = None

    def _on_hand_work_done(self) -> None:
        task = self._hybrid_task
        assert task is not None
        task.manual_done_s += task.manual_left_s
        task.manual_left_s = 0.0
        self._hybrid_event = self._hybrid_task = None
        session = self.focus
        assert session is not None
        if self.pending:
            self._serve(self.pending.popleft())
        elif session.need:  # pragma: no cover - a needing session interrupts hand work at once
            self._do_step(session)
        else:
            self._set(WAITING, session)
            self._watch_or_leave(session)

    def _on_flow_break(self) -> None:
        self._flow_event = None
        self._fill_gap()

    def _fill_gap(self) -> None:
        """Nothing to attend: the oldest pending item, a new task, or other work / idleness."""
        if self.pending:
            self._serve(self.pending.popleft())
        elif len(self.sessions) < self._max_sessions:
            self._start_new_task()
        else:
            if not self.attention.chooses_other_work():
                self._go_away(IDLE)
            elif self._expected:
                # Going back into other work is a resumption of it too (free before any, that day).
                left = self._other_left_s
                overhead_s = self.attention.other_work_resumption_s(
                    None if left is None else self.model.time - left
                )
                if overhead_s > 0.0:
                    self._begin(SWITCHING, overhead_s, None, self._enter_other_work)
                else:
                    self._go_away(OTHER_WORK)
            else:
                self._set(OTHER_WORK, None)

    def _enter_other_work(self) -> None:
        if self.pending:
            self._serve(self.pending.popleft())
        else:
            self._go_away(OTHER_WORK)

    def _go_away(self, activity: Activity) -> None:
        """Start other work or a break, and an away episode (``Attention.away_s``) before the
        developer next looks at their sessions."""
        self._set(activity, None)
        away_s = self.attention.away_episode_s()
        if away_s < INF:
            self._away_event = self.model.schedule_event(self._on_away_end, after=away_s)

    def _on_away_end(self, cued: bool = False) -> None:
        """The developer looks at their sessions: the oldest item that needs them, else another away
        episode on the same activity (``cued``: a noticed notification ended the episode)."""
        self._away_event = None
        if self.pending:
            self._serve(self.pending.popleft(), cued=cued)
        else:
            away_s = self.attention.away_episode_s()
            self._away_event = self.model.schedule_event(self._on_away_end, after=away_s)

    # ------------------------------------------------------------------ things that need the developer

    def take_session(self, session: Session) -> None:
        """``session`` needs its developer (a check-in or a result to review)."""
        if self._away_event is not None:
            self.pending.append(session)  # away: they see it when they next look, or notice it now
            if self.attention.notices():
                self._away_event.cancel()
                self._on_away_end(cued=True)
        elif self.activity == WAITING and self.focus is session:
            self._do_step(session)  # still in flow: no resumption cost
        elif self._hybrid_event is not None:
            self._pause_hand_work()
            if self.focus is session:
                self._do_step(session)  # working on the same task: no resumption cost
            else:
                self._serve(session)
        elif self.activity in _INTERRUPTIBLE:
            self._serve(session)
        else:
            self.pending.append(session)

    def take_rework(self, task: Task) -> None:
        """An escaped defect of ``task`` surfaced and must be reworked (ahead of new work)."""
        if self._away_event is not None:
            self.pending.append(task)
        elif self._hybrid_event is not None:
            self._pause_hand_work()
            self._serve(task)
        elif self.activity in _INTERRUPTIBLE:
            self._serve(task)
        else:
            self.pending.append(task)

    def _serve(self, item: Session | Task, *, cued: bool = False) -> None:
        """Take up ``item``: a rework, or a session after a resumption grown with the time away (the
        short lag alone when a noticed notification ``cued`` the return, ``Attention.cued_resumption``)."""
        if isinstance(item, Task):
            self._task_in_hand = item
            self._begin(FIXING, item.rework_s, None, self._after_rework, item)
            return
        away_s = self.model.time - item.left_at if item.left_at is not None else 0.0
        overhead_s = self.attention.resumption_s(
            self.attention.time_away_s(away_s, self._idle_total_s - item.idle_at_leave_s), cued=cued
        )
        if overhead_s > 0.0:
            self._begin(SWITCHING, overhead_s, item, self._do_focus_step)
        else:
            self._do_step(item)

    def _do_focus_step(self) -> None:
        assert self.focus is not None
        self._do_step(self.focus)

    def _do_step(self, session: Session) -> None:
        repair = session.attempt > 0
        if session.need == CHECKIN:
            self._begin(FIXING if repair else PROMPTING, session.next_checkin_s(), session, self._hand_off)
        elif session.need == REVIEW:
            task = session.task
            review_s = self._review.mean_s(session.output_tokens) * task.review_factor[session.attempt]
            self._begin(FIXING if repair else REVIEWING, review_s, session, self._after_review)
        else:  # pragma: no cover - a session only asks for its developer with a need
            raise RuntimeError(f"session of task {session.task.index} needs nothing")

    # ------------------------------------------------------------------ outcomes

    def _close(self, session: Session) -> None:
        self.sessions.remove(session)
        if self._keep_stretches:
            self.closed_stretches.extend(
                (session.task.index, session.attempt, *row) for row in session.stretches
            )
        session.remove()

    def _after_review(self) -> None:
        session = self.focus
        assert session is not None
        task, attempt = session.task, session.attempt
        self._close(session)
        task.outputs += 1
        if not session.wrong:
            if attempt > 0:
                task.fixed_by = "repair"
            self._accept(task, "ok" if attempt == 0 else "fixed")
        elif task.u_detect[attempt] < self._review.detect_prob:
            task.outputs_rejected += 1
            if (
                attempt < self._fixing.max_repair_sessions
                and task.u_hand[attempt] >= self._fixing.hand_fix_prob
            ):
                repair = self._open_session(task, attempt + 1)
                self._begin(FIXING, task.diagnose_s[attempt], repair, self._hand_off)
            else:
                self._task_in_hand = task
                self._begin(FIXING, self._hand_fix_s(task, attempt), None, self._after_hand_fix, task)
        else:
            self._accept(task, "escaped")

    def _hand_fix_s(self, task: Task, attempt: int) -> float:
        """Seconds to fix ``task``'s caught mistake by hand: its hand fix, or — with ``redo_prob``
        (the agent's work is beyond repair) — a redo of the delegated part of its effort, if longer."""
        fix_s = task.hand_fix_s
        redo = self._fixing.redo_prob
        effort_s = task.effort_s
        if redo > 0.0 and effort_s == effort_s and task.rng(REDO_STREAM, attempt).random() < redo:
            fix_s = max(fix_s, effort_s * self.spec.delegated_fraction)
        return fix_s

    def _accept(self, task: Task, outcome: str) -> None:
        """The agent's part of ``task`` is accepted as ``outcome``; a hybrid developer first
        finishes the part they kept by hand."""
        if task.manual_left_s > 0.0:
            left = task.manual_left_s
            task.manual_left_s = 0.0
            task.manual_done_s += left
            self._task_in_hand = task
            self._outcome_in_hand = outcome
            self._begin(MANUAL, left, None, self._after_hand_part, task)
            return
        task.finish(self.model.time, outcome)
        if outcome == "escaped":
            self.model.schedule_event(task.on_defect_surfaced, after=task.escape_delay_s)
        self._fill_gap()

    def _after_hand_part(self) -> None:
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        self._accept(task, self._outcome_in_hand)

    def _after_manual_task(self) -> None:
        """Policy ``manual``: the task was done by hand; a defect escapes with ``escape_prob``
        (decided by the task's first failure uniform, the same one an agent session would use)."""
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        self._accept(task, "escaped" if task.u_fail[0] < self._manual_escape_prob else "ok")

    def _after_hand_fix(self) -> None:
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        task.fixed_by = "hand"
        self._accept(task, "fixed")

    def _after_rework(self) -> None:
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        now = self.model.time
        task.rework_done_s = now
        task.rework_spent_s += task.rework_s
        task.outcome = "reworked"
        self._fill_gap()
