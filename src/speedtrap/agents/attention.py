"""The attention rule: what a developer does while an agent runs, and what coming back costs.

A developer's attention is theirs alone, so the rule holds their traits and their random stream
(drawn in a fixed order, the same under every backend and policy), but knows nothing of Mesa,
sessions or the ledger: the :class:`~speedtrap.agents.developer.Developer` asks it questions with
numbers and acts on the answers. The rules (docs/running.md, "The workflow rules"; sources in
docs/calibration.md):

* With the ``expected_wait`` rule the developer estimates how long until the agent next needs them
  (turns left to the next check-in × the turn time they have seen on that backend and tier, an
  exponentially weighted mean with weight ``turn_memory``, ``turn_prior_s`` before any) and stays
  while that is within their patience for the episode (their patience times a log-normal draw per
  episode). Leaving only for other work must also pay its round trip: going into it (a resumption
  after the time away from it) and coming back (a resumption after the expected wait).
* With the ``threshold`` rule every developer waits ``flow_threshold_s`` and then leaves.
* A resumption costs ``Attention.resumption_mean_s(away)`` seconds (exponential around it with
  ``resumption_random``); under ``expected_wait`` time on a break is not time away. Getting back into
  other work costs ``Attention.other_work_resumption_mean_s`` after the time since it was left, and
  nothing before the developer has done any that day.
* Under ``expected_wait`` a developer who leaves for other work or a break is away for an episode
  (``away_s``) before they look at their sessions again: what needs them meanwhile waits, unless they
  notice it (probability ``notice_prob`` per session that needs them), which ends the episode at once;
  with ``cued_resumption`` that return pays only the short lag of the resumption (the notification
  cues the task's goal).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from speedtrap.config.developer import Attention

__all__ = ["AttentionRule"]


class AttentionRule:
    """One developer's attention: traits drawn once from ``rng`` (patience, then the number of
    agent sessions they keep open), the turn times they have learnt, and the decisions made with
    the same stream (episode patience, other work or a break, resumption times)."""

    __slots__ = (
        "_rng",
        "_turn_estimate",
        "episode_patience_s",
        "expected",
        "flow_threshold_s",
        "max_sessions",
        "other_work_prob",
        "patience_s",
        "spec",
    )

    def __init__(self, spec: Attention, rng: np.random.Generator) -> None:
        self.spec = spec
        self._rng = rng
        self.expected = spec.rule == "expected_wait"
        """The ``expected_wait`` rule (else ``threshold``)."""
        self.flow_threshold_s = spec.flow_threshold_s
        self.other_work_prob = spec.other_work_prob
        self.patience_s = spec.patience_s.draw(rng)
        """This developer's patience, seconds (drawn once)."""
        probs = spec.parallel_sessions_probs
        if probs is None:
            self.max_sessions = spec.max_parallel_sessions
        else:
            u = float(rng.random())
            cum = np.cumsum(probs)
            self.max_sessions = min(int(np.searchsorted(cum, u, side="right")), len(probs) - 1) + 1
        self.episode_patience_s = self.patience_s
        """Patience for the current waiting episode, seconds (:meth:`new_episode`)."""
        self._turn_estimate: dict[Hashable, float] = {}

    # ------------------------------------------------------------------ expectations

    def learn_turn(self, key: Hashable, turn_s: float) -> None:
        """A turn on ``key`` (backend and tier) took ``turn_s`` seconds, queue and tool call included."""
        old = self._turn_estimate.get(key)
        self._turn_estimate[key] = turn_s if old is None else old + self.spec.turn_memory * (turn_s - old)

    def expected_wait_s(self, turns_left: float, key: Hashable) -> float:
        """Seconds expected until an agent on ``key`` with ``turns_left`` turns to its next need
        needs the developer."""
        return turns_left * self._turn_estimate.get(key, self.spec.turn_prior_s)

    # ------------------------------------------------------------------ decisions

    def new_episode(self) -> None:
        """The developer starts waiting on a session: draw this episode's patience."""
        sigma = self.spec.patience_episode_sigma
        self.episode_patience_s = self.patience_s * (
            math.exp(sigma * float(self._rng.standard_normal())) if sigma > 0.0 else 1.0
        )

    def leaves(self, expected_s: float, *, only_other_work: bool, since_other_work_s: float | None) -> bool:
        """Whether a developer waiting ``expected_s`` more seconds leaves the session. Beyond their
        episode patience they leave, unless the only place to go is other work
        (``only_other_work``: nothing needs them and no new session may open) and its round trip —
        going back into it after ``since_other_work_s`` away from it (None: not yet today, free),
        coming back to the session after the wait — costs at least the wait."""
        if expected_s <= self.episode_patience_s:
            return False
        if only_other_work and self.other_work_prob > 0.0:
            spec = self.spec
            if (
                spec.other_work_resumption_mean_s(since_other_work_s) + spec.resumption_mean_s(expected_s)
                >= expected_s
            ):
                return False
        return True

    def other_work_resumption_s(self, since_s: float | None) -> float:
        """Seconds to get back into other work left ``since_s`` seconds ago (None: not yet today),
        drawn when ``resumption_random``."""
        return self.drawn_s(self.spec.other_work_resumption_mean_s(since_s))

    def away_episode_s(self) -> float:
        """Seconds of one away episode (other work or a break) before the developer looks at their
        sessions again; ``inf`` when there are no away episodes (``away_s`` None, or the threshold rule)."""
        away = self.spec.away_s
        if away is None or not self.expected:
            return float("inf")
        return away.draw(self._rng)

    def notices(self) -> bool:
        """A session needs the developer during an away episode: whether they notice it at once
        (probability ``notice_prob``, one uniform of their stream when it is strictly between 0 and 1)."""
        p = self.spec.notice_prob
        return p >= 1.0 or (p > 0.0 and self._rng.random() < p)

    def chooses_other_work(self) -> bool:
        """With nothing to attend: other work (probability ``other_work_prob``) rather than a break."""
        p = self.other_work_prob
        return p >= 1.0 or (p > 0.0 and self._rng.random() < p)

    def time_away_s(self, away_s: float, idle_while_away_s: float) -> float:
        """Seconds away that count towards a resumption: under ``expected_wait`` a break is not
        time spent on something else."""
        if self.expected and away_s > 0.0:
            return max(0.0, away_s - idle_while_away_s)
        return away_s

    def resumption_s(self, away_s: float, *, cued: bool = False) -> float:
        """Seconds to resume after ``away_s`` seconds away (drawn when ``resumption_random``);
        ``cued``: a noticed notification prompted the return (``Attention.cued_resumption_mean_s``)."""
        spec = self.spec
        return self.drawn_s(spec.cued_resumption_mean_s(away_s) if cued else spec.resumption_mean_s(away_s))

    def drawn_s(self, mean_s: float) -> float:
        """A resumption of ``mean_s`` seconds on average: exponential around it from the developer's
        stream with ``resumption_random`` (and a positive mean), else the mean itself."""
        if mean_s > 0.0 and self.spec.resumption_random:
            return float(self._rng.exponential(mean_s))
        return mean_s
