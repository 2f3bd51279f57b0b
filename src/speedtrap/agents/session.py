"""The coding-agent Session: one attempt at a task, run as agent turns on one backend.

A turn is a request through the backend's pool (queue → time to first token → decode at the
live rate) followed by tool execution; then the next turn, a check-in with the developer every
``checkin_every_turns`` turns (times the backend quality's ``autonomy``), or — after the planned
turns — the result for review. A malformed tool call (the backend quality's ``tool_error_prob``)
returns an error at once and costs an extra turn.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Protocol

import mesa

from speedtrap.agents.task import Task, TurnDraws
from speedtrap.policies.base import RoutingPolicy
from speedtrap.serving.request import Request

if TYPE_CHECKING:
    from speedtrap.agents.backend import Backend
    from speedtrap.config.developer import Developer as DeveloperSpec
    from speedtrap.config.tier import Quality
    from speedtrap.config.work import TaskMix
    from speedtrap.policies.base import Route

INF = math.inf

CHECKIN = 1
"""``Session.need``: the agent stopped for a check-in."""
REVIEW = 2
"""``Session.need``: the agent finished; the result awaits review."""


def _reached(t: float) -> float:
    """A request timestamp, or ``inf`` when not reached yet (NaN)."""
    return t if t == t else INF


class SessionOwner(Protocol):
    """What a session needs of the developer it works for (:class:`~speedtrap.agents.Developer` is
    one): their specs and routing policy, which session they attend, and three calls — a turn
    ended (``now``: the model's time, read once by the session's event), the session needs them, a
    new turn started."""

    spec: DeveloperSpec
    task_mix: TaskMix
    policy: RoutingPolicy
    focus: Session | None
    prompt_cache: dict[object, float]
    """When the developer's conversations last used each prompt-cache key (s): the shared prefix
    (``TaskMix.shared_prefix_tokens``) of a new conversation on that key is warm within the TTL."""

    def note_turn_end(self, session: Session, turn_s: float, now: float) -> None: ...
    def take_session(self, session: Session) -> None: ...
    def reconsider(self, session: Session) -> None: ...


class Session(mesa.Agent):
    """Attempt ``attempt`` (0: first session, k: k-th repair) of ``task`` on ``backend``.

    ``wrong`` (drawn once, from the task's pre-drawn uniform and the backend's failure
    probability at the task's length, :meth:`failure_prob`) decides whether the result will be
    wrong; a wrong session runs
    ``failed_turns_multiplier`` times the turns ("agents succeed fast but fail slowly").
    """

    def __init__(
        self,
        model: mesa.Model,
        developer: SessionOwner,
        task: Task,
        attempt: int,
        route: Route,
        backend: Backend,
    ) -> None:
        super().__init__(model)
        mix = developer.task_mix
        self.developer = developer
        self.task = task
        self.attempt = attempt
        self.route = route
        self.backend = backend
        quality = backend.spec.quality
        self.wrong = task.u_fail[attempt] < self.failure_prob(quality, task)
        self.tool_error_prob = quality.tool_error_prob
        base = task.base_turns if attempt == 0 else max(1, round(mix.repair_turns_fraction * task.base_turns))
        self.planned_turns = max(1, round(base * mix.failed_turns_multiplier)) if self.wrong else base
        self.turns_done = 0
        self.checkins_done = 0
        self.output_tokens = 0
        self.need = 0
        self.left_at: float | None = None
        self.stretches: list[list[float]] = []
        """[hand-off, agent's next need, next hand-off, transcript] of every agent stretch, seconds
        (inf: not yet); transcript: 0, 1, … within the session."""
        self.idle_at_leave_s = 0.0
        self.turn_start_s = model.time
        self.request: Request | None = None
        self.tool_end_s = INF
        self._draws = TurnDraws(task, attempt, mix, developer.spec)
        spec = developer.spec
        every: float = spec.checkin_every_turns
        autonomy = quality.autonomy
        if autonomy != 1.0:  # the backend's agent runs longer or shorter stretches (Quality.autonomy)
            every = max(1.0, every * autonomy) if spec.checkin_random else max(1, round(every * autonomy))
        self._checkin_every = every
        self._random_stretches = spec.checkin_random
        self._stretch_sigma = spec.stretch_sigma
        self._reject_prob = spec.reject_prob
        self._per_transcript = spec.stretches_per_transcript
        self._stretches = 0
        self._stretch_start = 0
        self.next_checkin = self._stretch_end(0)
        self.transcript = 0
        """The agent transcript the session is in (0, 1, …; a new one after a fresh prompt)."""
        self._transcript_left = self._transcript_length()
        self.new_transcript = False
        """The pending check-in starts a fresh transcript (the developer writes a new prompt)."""

        self._compact_at = mix.compact_at_fraction * backend.context_window_tokens
        self._compact_to = mix.compact_to_tokens
        self._cache_ttl_s = mix.cache_ttl_s
        self._shared_prefix = mix.shared_prefix_tokens
        self._cache_per_tier = mix.cache_per_tier
        self._tier = route.tier
        self._cache_key: object = None
        self._backend_name = backend.name
        self.estimate_key: tuple[str, str] = (backend.name, route.tier)
        """What the developer's expectation of a turn's length is kept by: backend and tier (the
        tier of the current turn)."""
        self._submit = backend.pool.submit
        # Policies that keep the default ``for_turn`` route every turn as the session: skip the call.
        self._route_per_turn = type(developer.policy).for_turn is not RoutingPolicy.for_turn
        task.attempts = attempt + 1
        task.wrong_attempts += self.wrong
        if backend.name not in task.backends:
            task.backends.append(backend.name)

    def failure_prob(self, quality: Quality, task: Task) -> float:
        """Probability that this session's result is wrong: 1 − the backend's success curve at the
        task's delegated human minutes (``TaskMix.agent_minutes``; a subclass may change it:
        :class:`~speedtrap.agents.parallel_session.ParallelSession`)."""
        developer = self.developer
        t_min = developer.task_mix.agent_minutes(
            task.effort_s, task.difficulty, developer.spec.delegated_fraction
        )
        return quality.failure_prob_at(t_min)

    # ------------------------------------------------------------------ the turn loop

    def advance(self) -> None:
        """Run the next turn (the developer has handed the session to the agent)."""
        now = self.model.time
        log = self.stretches
        if log:
            log[-1][2] = now  # the developer handed the session back
        log.append([now, INF, INF, self.transcript])
        self.need = 0
        self._start_turn(now)

    def _start_turn(self, now: float) -> None:
        """Submit the next turn's request now (``now``: the model's time)."""
        k = self.turns_done
        draws = self._draws
        if k >= len(draws.out):
            draws.ensure(k)
        out = draws.out[k]
        if self._route_per_turn:
            dev = self.developer
            route = dev.policy.for_turn(self.route, dev.focus is self)
            if route.backend != self.route.backend:
                raise ValueError(
                    f"policy moved a turn from backend {self.route.backend!r} to {route.backend!r}; "
                    "a session keeps its backend (only the tier may change per turn)"
                )
            tier = route.tier
        else:
            tier = self.route.tier
        task = self.task
        context = task.context_tokens
        if context + out > self._compact_at:
            context = task.context_tokens = self._compact_to
            task.cache_key = None
        if tier != self._tier:
            self._tier = tier
            self.estimate_key = (self._backend_name, tier)
        key = self.estimate_key if self._cache_per_tier else self._backend_name  # prompt-cache key
        cached = 0
        if (
            task.cache_key == key
            and now - task.cache_time_s <= self._cache_ttl_s
            and task.cache_prefix_tokens <= context
        ):
            cached = task.cache_prefix_tokens
        elif self._shared_prefix:  # a cold conversation: its head may be warm from the developer's others
            last = self.developer.prompt_cache.get(key)
            if last is not None and now - last <= self._cache_ttl_s:
                cached = min(self._shared_prefix, context)
        self._cache_key = key
        self.turn_start_s = now
        self.tool_end_s = INF
        try:
            self.request = self._submit(  # the backend's pool (Backend.submit, without the extra call)
                tier=tier,
                input_tokens=context,
                cached_tokens=cached,
                output_tokens=out,
                on_done=self._on_request_done,
                tag=(task.developer, task.index, self.attempt, k),
            )
        except ValueError as exc:  # a request no replica could ever hold
            raise ValueError(
                f"backends.{self._backend_name}: {exc} (requests are sized by "
                "task_mix.initial_context_tokens, task_mix.output_tokens and task_mix.tool_result_tokens)"
            ) from None

    def _on_request_done(self, request: Request) -> None:
        k = self.turns_done
        draws = self._draws
        task = self.task
        now = request.done_s  # the time now: the request's last token
        task.cache_key = key = self._cache_key
        task.cache_prefix_tokens = request.input_tokens
        task.cache_time_s = now
        if self._shared_prefix:
            self.developer.prompt_cache[key] = now
        task.context_tokens = request.input_tokens + request.output_tokens + draws.result[k]
        task.requests += 1
        task.turns += 1
        task.input_tokens += request.input_tokens
        task.cached_tokens += request.cached_tokens
        task.output_tokens += request.output_tokens
        task.cost_usd += request.cost_usd
        if self._tier not in task.tiers:
            task.tiers.append(self._tier)
        self.output_tokens += request.output_tokens
        if draws.u_tool[k] < self.tool_error_prob:
            self.planned_turns += 1  # malformed tool call: rejected at once, the agent tries again
            tool_s = 0.0
        else:
            tool_s = draws.tool_s[k]
        task.tool_s += tool_s
        self.tool_end_s = end = now + tool_s
        self.model.schedule_event(self._on_tool_done, at=end)

    def _on_tool_done(self) -> None:
        dev = self.developer
        now = self.tool_end_s  # the time of this event (scheduled at it)
        dev.note_turn_end(self, now - self.turn_start_s, now)
        self.turns_done = done = self.turns_done + 1
        self.request = None
        if done >= self.planned_turns:
            self.need = REVIEW
            self.stretches[-1][1] = now
            dev.take_session(self)
        elif done >= self.next_checkin:
            self.need = CHECKIN
            self.stretches[-1][1] = now
            self._judge_checkin(done)
            self.next_checkin = self._stretch_end(done)
            dev.take_session(self)
        else:
            self._start_turn(now)
            dev.reconsider(self)

    def _stretch_end(self, start: int) -> int:
        """The turn count at which the agent stretch starting after turn ``start`` stops for a
        check-in: every ``checkin_every_turns`` turns, or after a random number of turns with that
        mean (``checkin_random``: geometric, or log-normal with ``stretch_sigma``), drawn from the
        attempt's own stream."""
        self._stretch_start = start
        if not self._random_stretches:
            return start + int(self._checkin_every)
        j = self._stretches
        self._stretches += 1
        return start + self._draws.stretch_turns(j, self._checkin_every, self._stretch_sigma)

    def _transcript_length(self) -> int:
        """Stretches in the next transcript: geometric with mean ``stretches_per_transcript``
        (a very large number when transcripts are not split)."""
        mean = self._per_transcript
        if mean is None:
            return 1 << 62
        if mean <= 1.0:
            return 1
        u = self._draws.review_uniform()
        return 1 + int(math.log1p(-u) / math.log1p(-1.0 / mean))

    def _judge_checkin(self, done: int) -> None:
        """The agent stopped for a check-in after turn ``done``: the developer's verdict on the
        stretch's output (rejected with ``reject_prob``: its turns are redone) and whether the reply
        starts a fresh transcript."""
        task = self.task
        task.outputs += 1
        if self._reject_prob > 0.0 and self._draws.review_uniform() < self._reject_prob:
            task.outputs_rejected += 1
            self.planned_turns += done - self._stretch_start
        self._transcript_left -= 1
        if self._transcript_left <= 0:
            self.new_transcript = True
            self._transcript_left = self._transcript_length()
        else:
            self.new_transcript = False

    def turns_left_expected(self) -> float:
        """Turns the developer expects before the agent next needs them: the rest of a fixed
        stretch, or the mean of a geometric one (memoryless)."""
        if self._random_stretches:
            return float(self._checkin_every)
        return float(self._checkin_every - self.turns_done % self._checkin_every)

    # ------------------------------------------------------------------ what the developer reads

    def phases(self) -> tuple[float, float, float, float]:
        """Admission, first token, last token and tool end of the current turn (``inf`` if not yet)."""
        req = self.request
        if req is None:
            return (INF, INF, INF, INF)
        return (_reached(req.admitted_s), _reached(req.first_token_s), _reached(req.done_s), self.tool_end_s)

    def next_checkin_s(self) -> float:
        """Seconds the developer needs for this check-in: a reply, or a fresh prompt when it starts a
        new transcript (then the conversation restarts from the task's opening context, with a cold
        prompt cache)."""
        if self.new_transcript:
            self.new_transcript = False
            self.transcript += 1
            task = self.task
            task.context_tokens = task.initial_context_tokens
            task.cache_key = None
            return self.developer.spec.prompt_s.draw(self._draws.review_rng())
        s = self._draws.checkin_s(self.checkins_done)
        self.checkins_done += 1
        return s
