"""The Developer agent: a small state machine that is always in exactly one activity.

Every transition charges the time since the last one to the current activity (the ledger), so
a developer's charges tile ``[0, now]``. The rules (DESIGN.md §2 "Work"):

* A task starts with the developer writing its prompt (prompting); the agent then runs and the
  developer waits on it, attending. If the wait passes the flow threshold the developer leaves:
  to the oldest item needing them, else a new task (below ``max_parallel_sessions``), else
  other work (probability ``other_work_prob``) or idleness.
* A session that needs its developer (check-in or finished result) gets them at once if they
  are waiting, doing other work or idle; otherwise it queues until their current step ends.
  Returning to a session left ``t`` seconds ago first costs a resumption overhead (switching).
* Review (time proportional to the session's output) catches a wrong result with probability
  ``detect_prob``: the developer then fixes it by hand or diagnoses it and starts a repair
  session (up to ``max_repair_sessions``). Every human step on a repair — diagnosis, check-ins,
  review — is fixing; waiting on the repair's turns is waiting. A missed wrong result escapes,
  surfaces after a delay and costs rework (fixing) ahead of new work.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import mesa
import numpy as np

from speedtrap.agents.activity import Activity, ActivityRecorder
from speedtrap.agents.session import CHECKIN, REVIEW, Session
from speedtrap.agents.task import Task

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
_INTERRUPTIBLE = (WAITING, OTHER_WORK, IDLE)


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
    ) -> None:
        super().__init__(model)
        self.index = index
        self.spec = spec
        self.task_mix = task_mix
        self.policy = policy
        self.backends = backends
        self._tasks = tasks
        self._ledger = ledger
        self._rng = rng
        self._on_task_started = on_task_started
        att = spec.attention
        self._flow_threshold_s = att.flow_threshold_s
        self._max_sessions = att.max_parallel_sessions
        self._other_work_prob = att.other_work_prob
        self._attention = att
        self._review = spec.review
        self._fixing = spec.fixing
        self.activity = IDLE
        self.since = model.time
        self.focus: Session | None = None
        self.sessions: list[Session] = []
        self.pending: deque[Session | Task] = deque()
        self._task_in_hand: Task | None = None
        self._then: Callable[[], None] | None = None
        self._label = -1  # index of the task the current activity serves (-1: none)
        self._flow_event: Event | None = None

    # ------------------------------------------------------------------ the ledger

    def charge(self) -> None:
        """Charge the time since the last transition to the current activity."""
        now = self.model.time
        since = self.since
        if now > since:
            focus = self.focus
            if self.activity == WAITING and focus is not None:
                self._ledger.record_wait(self.index, since, now, focus.phases(), self._label)
            else:
                self._ledger.record(self.index, self.activity, since, now, self._label)
        self.since = now

    def note_turn_end(self, session: Session) -> None:
        """A turn of ``session`` ended: split the wait here if the developer is waiting on it."""
        if self.focus is session and self.activity == WAITING:
            self.charge()

    def _set(self, activity: Activity, focus: Session | None, task: Task | None = None) -> None:
        """Switch to ``activity`` on ``focus`` (or on ``task`` without a session) now, charging
        the previous activity."""
        self.charge()
        old = self.focus
        if old is not focus:
            now = self.model.time
            if old is not None:
                old.left_at = now
            if focus is not None:
                focus.left_at = None
            self.focus = focus
        self.activity = activity
        if focus is not None:
            self._label = focus.task.index
        else:
            self._label = task.index if task is not None else -1
        if self._flow_event is not None:
            self._flow_event.cancel()
            self._flow_event = None

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
        session = self._open_session(task, 0)
        self._begin(PROMPTING, task.prompt_s, session, self._hand_off)

    def _open_session(self, task: Task, attempt: int) -> Session:
        route = self.policy.for_session(task.difficulty, attempt)
        session = Session(self.model, self, task, attempt, route, self.backends[route.backend])
        self.sessions.append(session)
        return session

    def _hand_off(self) -> None:
        """The focus session goes back to the agent; wait on it unless something needs the developer."""
        session = self.focus
        assert session is not None
        if self.pending:
            self._serve(self.pending.popleft())
        else:
            self._set(WAITING, session)
            threshold = self._flow_threshold_s
            if threshold < float("inf"):
                self._flow_event = self.model.schedule_event(self._on_flow_break, after=threshold)
        session.advance()

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
            p = self._other_work_prob
            other = p >= 1.0 or (p > 0.0 and self._rng.random() < p)
            self._set(OTHER_WORK if other else IDLE, None)

    # ------------------------------------------------------------------ things that need the developer

    def take_session(self, session: Session) -> None:
        """``session`` needs its developer (a check-in or a result to review)."""
        if self.activity == WAITING and self.focus is session:
            self._do_step(session)  # still in flow: no resumption cost
        elif self.activity in _INTERRUPTIBLE:
            self._serve(session)
        else:
            self.pending.append(session)

    def take_rework(self, task: Task) -> None:
        """An escaped defect of ``task`` surfaced and must be reworked (ahead of new work)."""
        if self.activity in _INTERRUPTIBLE:
            self._serve(task)
        else:
            self.pending.append(task)

    def _serve(self, item: Session | Task) -> None:
        if isinstance(item, Task):
            self._task_in_hand = item
            self._begin(FIXING, item.rework_s, None, self._after_rework, item)
            return
        away_s = self.model.time - item.left_at if item.left_at is not None else 0.0
        overhead_s = self._resumption_s(away_s)
        if overhead_s > 0.0:
            self._begin(SWITCHING, overhead_s, item, self._do_focus_step)
        else:
            self._do_step(item)

    def _resumption_s(self, away_s: float) -> float:
        mean_s = self._attention.resumption_mean_s(away_s)
        if mean_s > 0.0 and self._attention.resumption_random:
            return float(self._rng.exponential(mean_s))
        return mean_s

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
        session.remove()

    def _after_review(self) -> None:
        session = self.focus
        assert session is not None
        task, attempt = session.task, session.attempt
        self._close(session)
        now = self.model.time
        if not session.wrong:
            task.finish(now, "ok" if attempt == 0 else "fixed")
            if attempt > 0:
                task.fixed_by = "repair"
            self._fill_gap()
        elif task.u_detect[attempt] < self._review.detect_prob:
            if (
                attempt < self._fixing.max_repair_sessions
                and task.u_hand[attempt] >= self._fixing.hand_fix_prob
            ):
                repair = self._open_session(task, attempt + 1)
                self._begin(FIXING, task.diagnose_s[attempt], repair, self._hand_off)
            else:
                self._task_in_hand = task
                self._begin(FIXING, task.hand_fix_s, None, self._after_hand_fix, task)
        else:
            task.finish(now, "escaped")
            self.model.schedule_event(task.on_defect_surfaced, after=task.escape_delay_s)
            self._fill_gap()

    def _after_hand_fix(self) -> None:
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        task.finish(self.model.time, "fixed")
        task.fixed_by = "hand"
        self._fill_gap()

    def _after_rework(self) -> None:
        task = self._task_in_hand
        assert task is not None
        self._task_in_hand = None
        task.rework_done_s = self.model.time
        self._fill_gap()
