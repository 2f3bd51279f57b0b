"""A task: its intrinsic, pre-drawn properties (the same whichever backend or policy serves it)
and the record of how it went."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import mesa
import numpy as np

if TYPE_CHECKING:
    from speedtrap.config.developer import Developer as DeveloperSpec
    from speedtrap.config.work import TaskMix

AGENT_STREAM = 3
"""Spawn-key tag of the per-attempt agent-behaviour streams (tokens, tool time, tool errors)."""
CHECKIN_STREAM = 4
"""Spawn-key tag of the per-attempt human check-in streams."""
STRETCH_STREAM = 6
"""Spawn-key tag of the per-attempt streams of agent stretch lengths (turns between check-ins)."""
REVIEW_STREAM = 7
"""Spawn-key tag of the per-attempt streams of check-in verdicts and transcript lengths (a stream of
its own, so that turning these rules on leaves every other draw as it was)."""
REDO_STREAM = 8
"""Spawn-key tag of the per-task stream that decides whether a hand fix is a redo."""
_CHUNK = 32

MAX_COUNT = 1e15
"""Largest whole count (turns, tokens) a draw is rounded to: far beyond any run, and below where
counts overflow 64-bit integers (reached only by absurd spec values such as a huge turns exponent)."""


def counts(draws: np.ndarray, *, low: int) -> np.ndarray:
    """Draws rounded to whole counts of at least ``low`` and at most :data:`MAX_COUNT`, as int64."""
    # Bounded above first, then below (the two commute, low <= MAX_COUNT): fmin takes NaN to MAX_COUNT
    # (it returns the number where one argument is NaN), in two passes where max, min and a NaN mask
    # took four.
    return np.fmax(np.fmin(np.rint(draws), MAX_COUNT), low).astype(np.int64)


class TaskOwner(Protocol):
    """Who works on a task (:class:`~speedtrap.agents.Developer` is one): the model it lives in, and
    the call that hands it an escaped defect to rework."""

    model: mesa.Model

    def take_rework(self, task: Task) -> None: ...


class Task:
    """One unit of developer work with a difficulty class.

    The pre-drawn fields come from the model's task, quality and human streams; per-turn agent
    behaviour is drawn on demand from a stream keyed by (developer, task, attempt), so a task's
    k-th turn has the same tokens and tool time under every backend and policy. ``u_fail[a]`` and
    ``u_detect[a]`` are the uniforms that decide whether attempt ``a``'s result is wrong and
    whether review catches it.
    """

    __slots__ = (
        "__weakref__",
        "attempts",
        "backends",
        "base_turns",
        "cache_key",
        "cache_prefix_tokens",
        "cache_time_s",
        "cached_tokens",
        "context_tokens",
        "cost_usd",
        "developer",
        "diagnose_s",
        "difficulty",
        "effort_s",
        "end_s",
        "escape_delay_s",
        "fixed_by",
        "hand_fix_s",
        "human_s",
        "index",
        "initial_context_tokens",
        "input_tokens",
        "manual_done_s",
        "manual_left_s",
        "outcome",
        "output_tokens",
        "outputs",
        "outputs_rejected",
        "owner",
        "prompt_s",
        "requests",
        "review_factor",
        "rework_done_s",
        "rework_s",
        "rework_spent_s",
        "seed_entropy",
        "seed_key",
        "start_s",
        "surfaced_s",
        "tiers",
        "tool_s",
        "turns",
        "u_detect",
        "u_fail",
        "u_hand",
        "wrong_attempts",
    )

    def __init__(
        self,
        *,
        developer: int,
        index: int,
        difficulty: str,
        base_turns: int,
        initial_context_tokens: int,
        prompt_s: float,
        u_fail: Sequence[float],
        u_detect: Sequence[float],
        u_hand: Sequence[float],
        review_factor: Sequence[float],
        diagnose_s: Sequence[float],
        hand_fix_s: float,
        rework_s: float,
        escape_delay_s: float,
        effort_s: float = float("nan"),
        manual_s: float = 0.0,
        seed_entropy: int | list[int],
        seed_key: tuple[int, ...],
    ) -> None:
        self.developer = developer
        self.index = index
        self.difficulty = difficulty
        self.base_turns = base_turns
        self.initial_context_tokens = initial_context_tokens
        self.prompt_s = prompt_s
        self.u_fail = u_fail
        self.u_detect = u_detect
        self.u_hand = u_hand
        self.review_factor = review_factor
        self.diagnose_s = diagnose_s
        self.hand_fix_s = hand_fix_s
        self.rework_s = rework_s
        self.escape_delay_s = escape_delay_s
        self.effort_s = effort_s
        self.manual_left_s = manual_s
        self.manual_done_s = 0.0
        self.rework_spent_s = 0.0
        self.outputs = 0
        """Agent outputs the developer judged (check-ins and results, every attempt)."""
        self.outputs_rejected = 0
        """Of those, rejected: check-ins whose turns were redone, and results review caught wrong."""
        self.human_s = 0.0
        """Developer seconds charged to this task (every ledger category but other work and idle):
        its effort as a time-tracking study would log it, rework included."""
        self.tool_s = 0.0
        self.seed_entropy = seed_entropy
        self.seed_key = seed_key
        self.owner: TaskOwner | None = None
        # the record
        self.start_s = float("nan")
        self.end_s = float("nan")
        self.outcome = "open"
        self.fixed_by = ""
        self.attempts = 0
        self.wrong_attempts = 0
        self.turns = 0
        self.requests = 0
        self.input_tokens = 0
        self.cached_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.backends: list[str] = []
        self.tiers: list[str] = []
        self.surfaced_s = float("nan")
        self.rework_done_s = float("nan")
        # the agent's conversation: context size and prompt-cache state
        self.context_tokens = initial_context_tokens
        self.cache_key: object = None
        self.cache_prefix_tokens = 0
        self.cache_time_s = float("-inf")

    def rng(self, stream: int, attempt: int) -> np.random.Generator:
        """The generator of ``stream`` for one attempt at this task (keyed, not consumption-ordered)."""
        seq = np.random.SeedSequence(self.seed_entropy, spawn_key=(stream, *self.seed_key, attempt))
        return np.random.Generator(np.random.PCG64(seq))

    def finish(self, now: float, outcome: str) -> None:
        """Record that the developer accepted the task at ``now``: ``ok`` (right first time),
        ``fixed`` (a caught mistake fixed), ``escaped`` (accepted with an undetected mistake, not
        done until its rework; then ``reworked``)."""
        self.end_s = now
        self.outcome = outcome

    def on_defect_surfaced(self) -> None:
        """An escaped defect shows up: the owner must rework it."""
        if self.owner is not None:
            self.surfaced_s = self.owner.model.time
            self.owner.take_rework(self)


class TurnDraws:
    """Per-turn agent behaviour of one attempt, drawn lazily in fixed-size chunks from the attempt's
    own stream: output tokens, tool seconds, tool-result tokens, and the uniform that decides a
    malformed tool call. Also the human's check-in durations for the attempt (its own stream)."""

    __slots__ = (
        "_attempt",
        "_checkin",
        "_checkin_rng",
        "_dev",
        "_mix",
        "_review_rng",
        "_rng",
        "_stretch",
        "_stretch_rng",
        "_task",
        "out",
        "result",
        "tool_s",
        "u_tool",
    )

    def __init__(self, task: Task, attempt: int, mix: TaskMix, developer: DeveloperSpec) -> None:
        self._rng = task.rng(AGENT_STREAM, attempt)
        self._task = task
        self._mix = mix
        self._dev = developer
        self._checkin_rng: np.random.Generator | None = None
        self._checkin: list[float] = []
        self._stretch_rng: np.random.Generator | None = None
        self._stretch: list[int] = []
        self._review_rng: np.random.Generator | None = None
        self.out: list[int] = []
        self.tool_s: list[float] = []
        self.result: list[int] = []
        self.u_tool: list[float] = []
        self._attempt = attempt

    def ensure(self, turn: int) -> None:
        """Make sure turn ``turn`` (0-based) has been drawn."""
        while turn >= len(self.out):
            rng, mix = self._rng, self._mix
            self.out.extend(counts(mix.output_tokens.sample(rng, _CHUNK), low=1).tolist())
            self.tool_s.extend(mix.tool_s.sample(rng, _CHUNK).tolist())
            self.result.extend(counts(mix.tool_result_tokens.sample(rng, _CHUNK), low=0).tolist())
            self.u_tool.extend(rng.random(_CHUNK).tolist())

    def stretch_turns(self, j: int, mean_turns: float, sigma: float = 0.0) -> int:
        """Turns of the attempt's ``j``-th agent stretch: geometric with mean ``mean_turns``, or, with
        ``sigma`` > 0, log-normal with that mean and log-sd, rounded to a whole number of at least one."""
        while j >= len(self._stretch):
            if self._stretch_rng is None:
                self._stretch_rng = self._task.rng(STRETCH_STREAM, self._attempt)
            if sigma > 0.0:
                mu = math.log(mean_turns) - 0.5 * sigma * sigma
                self._stretch.extend(counts(self._stretch_rng.lognormal(mu, sigma, 8), low=1).tolist())
            else:
                self._stretch.extend(self._stretch_rng.geometric(1.0 / mean_turns, 8).tolist())
        return int(self._stretch[j])

    def review_rng(self) -> np.random.Generator:
        """The attempt's stream of check-in verdicts, transcript lengths and fresh prompts."""
        if self._review_rng is None:
            self._review_rng = self._task.rng(REVIEW_STREAM, self._attempt)
        return self._review_rng

    def review_uniform(self) -> float:
        """The next uniform of :meth:`review_rng`."""
        return float(self.review_rng().random())

    def checkin_s(self, j: int) -> float:
        """Seconds the developer spends on the attempt's ``j``-th check-in (0-based)."""
        while j >= len(self._checkin):
            if self._checkin_rng is None:
                self._checkin_rng = self._task.rng(CHECKIN_STREAM, self._attempt)
            self._checkin.extend(self._dev.checkin_s.sample(self._checkin_rng, 8).tolist())
        return self._checkin[j]
