"""A session run as N parallel trajectories, then distilled and refined (policy ``best_of_n``).

The plan (:class:`~speedtrap.policies.base.FanOut`, documented in :mod:`speedtrap.policies.best_of_n`):

* **Parallel phase.** Each agent turn sends ``trajectories`` requests of the turn's drawn size to the
  backend at once (one per trajectory; the same context, cached prefix and output tokens). The turn
  ends when the last of them is done, then the turn's tool call runs (in parallel sandboxes: once in
  time). The requests are admitted, queued and billed one by one, so the fleet carries N× the streams.
* **Distill.** After the planned turns, one request reads the context plus ``distill_tokens`` (the N
  trajectories' results) and answers with the turn's drawn output.
* **Refine.** ``refine_turns`` ordinary single-trajectory turns, then the result goes to review.

Malformed tool calls add turns to whichever phase they happen in. The result is wrong with the
backend's failure probability (its success curve at the task's length) times the fan-out's
``failure_multiplier`` (at most 1), drawn with the task's own uniform.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import mesa

from speedtrap.agents.session import Session, SessionOwner

if TYPE_CHECKING:
    from speedtrap.agents.backend import Backend
    from speedtrap.agents.task import Task
    from speedtrap.config.tier import Quality
    from speedtrap.policies.base import Route
    from speedtrap.serving.request import Request


class ParallelSession(Session):
    """A :class:`Session` whose developer's policy has a ``fan_out`` (module docstring)."""

    def __init__(
        self,
        model: mesa.Model,
        developer: SessionOwner,
        task: Task,
        attempt: int,
        route: Route,
        backend: Backend,
    ) -> None:
        fan_out = developer.policy.fan_out
        if fan_out is None:
            raise ValueError("a ParallelSession needs a policy with a fan_out (policy best_of_n)")
        self.fan_out = fan_out
        super().__init__(model, developer, task, attempt, route, backend)
        self.tail_turns = 1 + fan_out.refine_turns
        """Turns after the parallel phase: the distill request and the refine turns."""
        self.planned_turns += self.tail_turns
        self.in_tail = False
        self.distilled = False
        self._outstanding: list[Request] = []

    def failure_prob(self, quality: Quality, task: Task) -> float:
        # The fan-out's multiplier N^(−β) × refine is at most 1 (BestOfNSpec bounds both), so the
        # product stays a probability without clipping.
        return super().failure_prob(quality, task) * self.fan_out.failure_multiplier

    def _start_turn(self, now: float) -> None:
        if not self.in_tail and self.planned_turns - self.turns_done <= self.tail_turns:
            self.in_tail = True
        if self.in_tail and not self.distilled:  # the distill request reads the N results
            self.distilled = True
            self.task.context_tokens += self.fan_out.distill_tokens
        super()._start_turn(now)
        primary = self.request
        assert primary is not None
        if self.in_tail:
            self._outstanding = [primary]
            return
        submit = self.backend.pool.submit
        self._outstanding = [primary] + [
            submit(
                tier=primary.tier,
                input_tokens=primary.input_tokens,
                cached_tokens=primary.cached_tokens,
                output_tokens=primary.output_tokens,
                on_done=self._on_request_done,
                tag=primary.tag,
            )
            for _ in range(self.fan_out.trajectories - 1)
        ]

    def _on_request_done(self, request: Request) -> None:
        outstanding = self._outstanding
        del outstanding[next(i for i, r in enumerate(outstanding) if r is request)]
        if outstanding:  # other trajectories of this turn are still running
            if self.request is request:
                self.request = outstanding[0]  # what the developer watches: a running one
            return
        siblings = self.fan_out.trajectories - 1 if not self.in_tail else 0
        if siblings:  # the other trajectories' requests: billed and counted like the last one's
            task = self.task
            task.requests += siblings
            task.input_tokens += siblings * request.input_tokens
            task.cached_tokens += siblings * request.cached_tokens
            task.output_tokens += siblings * request.output_tokens
            task.cost_usd += siblings * request.cost_usd
            self.output_tokens += siblings * request.output_tokens
        self.request = request
        super()._on_request_done(request)
