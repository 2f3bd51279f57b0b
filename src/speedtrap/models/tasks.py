"""Task generation: each developer's backlog, pre-drawn from streams that no backend or policy
touches (common random numbers: one seed, one task stream, whatever serves it)."""

from __future__ import annotations

import numpy as np

from speedtrap.agents.task import Task, counts
from speedtrap.config.developer import Developer as DeveloperSpec
from speedtrap.config.work import TaskMix

TASK_STREAM = 0
"""Spawn-key tag of the per-developer task stream: difficulty, turns, initial context, prompt time,
human effort."""
QUALITY_STREAM = 1
"""Spawn-key tag of the per-developer quality stream: the uniforms for wrong results and detection."""
HUMAN_STREAM = 2
"""Spawn-key tag of the per-developer human stream for per-task human draws (review, fixing)."""
ATTENTION_STREAM = 5
"""Spawn-key tag of the per-developer attention stream (resumption lags, other work vs idle)."""
BLOCK = 16
"""Tasks drawn per block: every block consumes a fixed number of draws from each stream."""


def stream_rng(root: np.random.SeedSequence, stream: int, developer: int) -> np.random.Generator:
    """The generator of ``stream`` for ``developer``, keyed under ``root`` (independent streams)."""
    seq = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, stream, developer))
    return np.random.Generator(np.random.PCG64(seq))


class TaskSource:
    """Developer ``developer``'s endless backlog, drawn in blocks of :data:`BLOCK` tasks.

    Every task's intrinsic properties depend only on the root seed, the developer and the task's
    index (with effort sizing, its class, turns and fix times follow from its human-effort size);
    the draws per block are fixed in number, so the stream is aligned across backends,
    policies and anything else that changes timing.
    """

    def __init__(
        self, root: np.random.SeedSequence, developer: int, task_mix: TaskMix, spec: DeveloperSpec
    ) -> None:
        self.developer = developer
        self._root = root
        self._mix = task_mix
        self._spec = spec
        self._task_rng = stream_rng(root, TASK_STREAM, developer)
        self._quality_rng = stream_rng(root, QUALITY_STREAM, developer)
        self._human_rng = stream_rng(root, HUMAN_STREAM, developer)
        self._names = task_mix.difficulty_names
        self._cum_shares = np.cumsum(task_mix.shares())
        self._index = {name: i for i, name in enumerate(self._names)}
        self._turn_medians = np.array(
            [
                (d.turns_mean or 1.0) * np.exp(-0.5 * task_mix.turns_log_sd**2)
                for d in task_mix.difficulties.values()
            ]
        )
        self._attempts = spec.fixing.max_repair_sessions + 1
        self._queue: list[Task] = []
        self._issued = 0

    def next(self) -> Task:
        """The next task of the backlog."""
        if not self._queue:
            self._draw_block()
        self._issued += 1
        return self._queue.pop()

    def _draw_block(self) -> None:
        mix, spec, n, a = self._mix, self._spec, BLOCK, self._attempts
        rng = self._task_rng
        kind = np.searchsorted(self._cum_shares, rng.random(n), side="right")
        kind = np.minimum(kind, len(self._names) - 1)
        turn_z = rng.standard_normal(n)
        turns = counts(self._turn_medians[kind] * np.exp(mix.turns_log_sd * turn_z), low=1)
        context = counts(mix.initial_context_tokens.sample(rng, n), low=0)
        prompt_s = spec.prompt_s.sample(rng, n)
        effort_s = mix.effort_s.sample(rng, n)
        if mix.sizing == "effort":
            # A task's class is its effort bucket; turns scale with the effort handed to the agent.
            delegated = spec.delegated_fraction * effort_s
            kind = np.array([self._index[mix.difficulty_of(float(e))] for e in effort_s])
            medians = mix.turns_at_reference * (delegated / mix.reference_effort_s) ** mix.turns_exponent
            turns = counts(medians * np.exp(mix.turns_log_sd * turn_z), low=1)
            fix_scale = delegated / mix.mean_effort_s
        else:
            fix_scale = np.ones(n)
        q = self._quality_rng
        u_fail = q.random((n, a))
        u_detect = q.random((n, a))
        h = self._human_rng
        u_hand = h.random((n, a))
        sigma = spec.review.sigma
        review_factor = np.exp(sigma * h.standard_normal((n, a)) - 0.5 * sigma * sigma)  # mean 1
        diagnose_s = spec.fixing.diagnose_s.sample(h, n * a).reshape(n, a)
        hand_fix_s = spec.fixing.hand_fix_s.sample(h, n) * fix_scale
        rework_s = spec.fixing.rework_multiplier * spec.fixing.hand_fix_s.sample(h, n) * fix_scale
        escape_delay_s = h.exponential(spec.fixing.escape_delay_s, n)
        first = self._issued
        # Per-attempt draws as tuples of floats: the garbage collector stops tracking those.
        rows = {
            name: [tuple(row) for row in array.tolist()]
            for name, array in (
                ("u_fail", u_fail),
                ("u_detect", u_detect),
                ("u_hand", u_hand),
                ("review_factor", review_factor),
                ("diagnose_s", diagnose_s),
            )
        }
        block = [
            Task(
                developer=self.developer,
                index=first + i,
                difficulty=self._names[int(kind[i])],
                base_turns=int(turns[i]),
                initial_context_tokens=int(context[i]),
                prompt_s=float(prompt_s[i]),
                u_fail=rows["u_fail"][i],
                u_detect=rows["u_detect"][i],
                u_hand=rows["u_hand"][i],
                review_factor=rows["review_factor"][i],
                diagnose_s=rows["diagnose_s"][i],
                hand_fix_s=float(hand_fix_s[i]),
                rework_s=float(rework_s[i]),
                escape_delay_s=float(escape_delay_s[i]),
                effort_s=float(effort_s[i]),
                manual_s=float((1.0 - spec.delegated_fraction) * effort_s[i]),
                seed_entropy=self._root.entropy,  # type: ignore[arg-type]
                seed_key=(*self._root.spawn_key, self.developer, first + i),
            )
            for i in range(n)
        ]
        block.reverse()  # popped from the end: first task first
        self._queue = block
