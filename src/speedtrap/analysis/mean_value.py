"""The analytic mean-value model: a developer's expected time and cost per task, and the
break-even failure multiplier of a faster backend (pure functions; no simulation, no Mesa).

Scope
-----
The rules the model follows are the workflow model's rules **before effort sizing and the
expected-wait attention rule**: a scenario is inside its scope when ``task_mix.sizing =
"difficulty"``, ``developer.attention.rule = "threshold"``, ``developer.checkin_random = false``,
``developer.delegated_fraction = 1``, no ``parallel_sessions_probs`` and a policy other than
``manual``; :func:`scope_problems` names what takes a scenario outside, :func:`expected_task_time`
refuses such a scenario, and :data:`ANALYTIC_RULES` are the overrides that put a scenario inside.
**Not covered** (the simulation covers them): tasks sized by human effort (turns, classes and
fix times that follow the size), attention by expected wait with patience drawn per developer and
episode, switching costs into other work and the short-suspension resumption curve, geometric
agent stretches, hybrid hand work and working without AI. The calibrated defaults are outside the
scope; the model describes the simpler rules exactly, and its break-even multipliers are those of
the simpler rules.

Within those rules: one developer working one agent session at a time
(``max_parallel_sessions = 1``), every session
on one backend and tier, **uncontended**: no queue, and each decode runs at batch
B = 1 + min(background streams, batch cap − 1) — what the serving pool does when each request
has a replica's own-stream slots to itself (as long as developers ≤ replicas). By
renewal-reward, a task costs the developer T = Σ_c E[seconds in ledger category c per task], a
developer completes ``workday_s / T`` tasks per developer-day, and E[$ per task] is billed per
task. The model follows the draws of ``speedtrap.models.tasks`` and the rules of
``speedtrap.agents`` step by step; the equations:

**Sessions.** A task of difficulty d (share s_d) has base turns N = max(1, rint(LogNormal(median
turns_mean·e^(−σ²/2), σ))), summed exactly over its distribution. Attempt a (0: first session,
a ≥ 1: repairs, a ≤ A = ``max_repair_sessions``) is reached with probability ρ_a = (p_d·δ·(1 − h))^a
(p_d: failure probability, δ: ``detect_prob``, h: ``hand_fix_prob``); its session plans N turns
(a = 0) or max(1, round(f·N)) (repairs, f = ``repair_turns_fraction``), times the failed-turns
multiplier when wrong (probability p_d). Malformed tool calls (probability q per turn) each cost a
turn: M = m + NegativeBinomial(m, 1 − q) turns for m planned, E[M] = m/(1 − q). Outcomes:
P(escape) = Σ_d s_d Σ_a ρ_a p_d (1 − δ); hand fixes Σ_d s_d Σ_a ρ_a p_d δ (h, or 1 at a = A).

**Agent turns.** Turn k of a task (counted over all its sessions: repairs continue the
conversation) takes ttft_k + out_k / r(I_k) + tool_k. Its input I_k follows a Markov chain on a
250-token grid (growth by output + tool result; compaction to ``compact_to_tokens`` when the
context would pass ``compact_at_fraction`` × the window); r(I) is the physics' per-stream decode
rate ``ReplicaPhysics.decode_rate_tok_s(B, I)`` (× ``decode_speedup``). TTFT is the overhead plus
the prefill of the uncached input: all of it on a task's first turn, after compaction and after a
prompt-cache miss (more than ``cache_ttl_s`` since the last request: after check-ins and before
repairs, computed from the law of the gap — last tool call, resumption overhead, check-in or
review + diagnosis — and on tool calls longer than the TTL); otherwise the growth since the last
turn. Totals are exact sums Σ_k P(K > k)·E[g(I_k)] over the turns K of a task. Cost: uncached
input at the cache-write price, cached input at the cache-read price, output at the output price,
times the tier's price multiplier (``speedtrap.serving.pricing``).

**Human steps.** Prompt; a check-in every c = ``checkin_every_turns`` turns except after the last
(prompting on first sessions, fixing on repairs); review of base_s + s_per_kilotoken × output
tokens (reviewing / fixing); diagnosis before each repair, hand fix, and rework =
``rework_multiplier`` × hand fix per escaped defect (fixing).

**Attention.** Between a hand-off and the agent's next need lies a segment of n turns lasting D.
The developer waits min(D, θ) (θ = ``flow_threshold_s``), is away (D − θ)⁺ (other work with
probability ``other_work_prob``, else idle) and then pays the resumption overhead
R((D − θ)⁺), R(x) = R_max·(1 − e^(−x/τ)). E[R((D − θ)⁺)] = R_max·(P(D > θ) − e^(θ/τ)·(E[e^(−D/τ)] −
E[e^(−D/τ); D ≤ θ])): E[e^(−D/τ)] factorizes over the independent turns (log-normal Laplace
transforms), and the laws below θ (waiting, split into TTFT, generation and tool time by the
phases of the turns inside the window) come from convolutions on a fine grid; a window longer
than 500 s uses the segment's duration law instead. Segments are classed by how they start (a
task's opening, after a check-in, a repair's opening) because their first turn differs (cold
prompt cache, context); a class's seconds per output token are a mixture over the contexts its
first turn meets (the window is concave in them), shifted for the turn at offset p by the mean
change of the context over p turns. Time away is the exact agent time minus the waiting.

**Escaped defects** surface at rate λ = P(escape)/T at moments spread uniformly over the
developer's time and are taken at once when the developer waits, works on other things or is
idle, otherwise after the current step (then at the next hand-off, where they pre-empt the wait).
A rework X during a segment of duration D replaces time away by fixing — the agent keeps working —
and, if longer than the rest of the segment, lengthens the absence the overhead is paid for
(R(max(X, D − w)) instead of R(D − θ)) and makes the session wait (a cold prompt cache). These
changes are integrated over the arrival instant and the laws of D and X; reworks that surface
while another rework holds the developer away from a session wait for that session's next
hand-off; the rate and T are solved together (a fixed point).

Where the model and the simulation differ, and why
--------------------------------------------------
* **Finite horizon.** A run starts with no escaped defects in flight and stops at its horizon H:
  reworks surface ``escape_delay_s`` (mean 8 h by default) after their task, so a run misses
  about escape_delay_s / H of them (fixing share lower, tasks per day higher, by about that
  fraction of the rework time), and each developer's task in progress at the horizon is not
  counted. The model is the steady state (H → ∞); compare over long horizons or short delays.
  In the headline scenario (five developer-days, 8 h delay) the simulated fixing share is about a
  tenth below the model's, its tasks per day about 1 % above, and the other shares scale up
  with them.
* **Shared batches.** The model decodes each request at batch 1 + background streams. With more
  developers than replicas, own streams sometimes share a replica and decode a little slower
  (headline: 20 developers on 4 replicas, about 2 % slower; no queue).
* **Rework timing.** Reworks are assumed to surface at uniformly random moments of the
  developer's time (delay ≫ task time). With delays of the order of a task they cluster early in
  the next task (during its prompt and first segment).
* **Higher-order interruptions.** Reworks are treated to first order plus the reworks held by
  reworks. When reworks fill a large part of the developer's time (a third and more) the chains
  they form are not all followed and switching is understated by a few percent.
* **Turn-level approximations.** The extra turns of malformed tool calls enter the context
  weights at their mean; a segment class's seconds per token follow its first turn's context
  mixture plus a mean drift; compaction is decided with an independent output draw; cache misses
  after check-ins use the resumption law after a full segment; the first turn's TTFT of a class is
  its mean. Each changes a category by well under 1 % in the validation settings.
* **Not modelled**: queueing and contention for slots (more streams than the fleet's slots),
  parallel sessions (``max_parallel_sessions > 1`` raises), routing policies other than one
  backend and tier (pass ``backend`` to model one of a scenario's backends). The simulation
  covers these.

``tests/validation/test_mean_value_agreement.py`` checks the model against seeded simulation
replications (|sim mean − model| ≤ 4 standard errors).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import optimize

from speedtrap.analysis import lognormal as ln
from speedtrap.analysis import segments as sg
from speedtrap.analysis import task_paths as tp
from speedtrap.config.backend import Backend
from speedtrap.config.dist import LogNormal
from speedtrap.config.ledger import LEDGER_CATEGORIES, WAITING_CATEGORIES
from speedtrap.config.presets import BACKEND_PRESETS, backend_preset
from speedtrap.config.scenario import Scenario
from speedtrap.config.tier import Tier
from speedtrap.serving.pricing import TOKENS_PER_MTOK
from speedtrap.serving.replica import ReplicaPhysics

__all__ = [
    "ANALYTIC_RULES",
    "Metric",
    "TaskTimeBreakdown",
    "break_even_failure_multiplier",
    "break_even_grid",
    "expected_task_time",
    "scope_problems",
]

ANALYTIC_RULES: dict[str, object] = {
    "task_mix.sizing": "difficulty",
    "developer.attention.rule": "threshold",
    "developer.attention.other_work_prob": 0.5,
    "developer.checkin_every_turns": 15,
    "developer.checkin_random": False,
    "developer.delegated_fraction": 1.0,
    "developer.attention.parallel_sessions_probs": None,
}
"""Overrides that put a scenario under the rules this model follows (those of the workflow model
before effort sizing and expected waits, with its defaults of the time: an even split of breaks
between other work and idleness, a check-in every 15 turns)."""


def scope_problems(scenario: Scenario) -> list[str]:
    """What takes ``scenario`` outside the analytic model's rules (empty: inside)."""
    dev, mix = scenario.developer, scenario.task_mix
    problems = []
    if mix.sizing != "difficulty":
        problems.append("task_mix.sizing must be 'difficulty' (tasks sized by effort are not covered)")
    if dev.attention.rule != "threshold":
        problems.append(
            "developer.attention.rule must be 'threshold' (attention by expected wait is not covered)"
        )
    if dev.checkin_random:
        problems.append("developer.checkin_random must be false (geometric agent stretches are not covered)")
    if dev.delegated_fraction != 1.0:
        problems.append("developer.delegated_fraction must be 1 (hybrid hand work is not covered)")
    if dev.attention.parallel_sessions_probs is not None:
        problems.append("developer.attention.parallel_sessions_probs must be unset (one session at a time)")
    if scenario.policy.kind == "manual":
        problems.append("policy 'manual' (no AI) is not covered")
    return problems


Metric = Literal["tasks_per_dev_day", "usd_per_task"]
"""What a break-even compares: completed tasks per developer-day (more is better) or US dollars
billed per task (less is better)."""

_CHECKIN_CLASSES = ("checkin0", "checkin_repair")
_PHASES = {"waiting_ttft": "ttft", "waiting_generation": "gen", "waiting_tool": "tool"}


@dataclass(frozen=True)
class TaskTimeBreakdown:
    """Expected developer time and cost per completed task: one developer, one backend and tier,
    uncontended (see the module docstring for the model).

    ``seconds`` maps each ledger category (:data:`LEDGER_CATEGORIES`) to expected developer seconds per
    completed task; their sum ``total_s`` is what a task costs the developer, so by renewal-reward
    a developer completes ``workday_s / total_s`` tasks per developer-day.
    """

    scenario: str
    backend: str
    tier: str
    seconds: dict[str, float]
    workday_s: float
    """Seconds in a developer-day."""
    turns: float
    """Expected agent turns (requests) per task, all sessions."""
    sessions: float
    """Expected agent sessions per task (first session + repairs)."""
    input_tokens: float
    """Expected input tokens per task (all requests)."""
    cached_tokens: float
    """Expected input tokens per task read from the prompt cache."""
    output_tokens: float
    """Expected output tokens per task."""
    usd_per_task: float
    """Expected US dollars billed per task."""
    ok_share: float
    """P(the first session's result is right)."""
    fixed_share: float
    """P(a caught mistake was fixed, by a repair or by hand)."""
    escaped_share: float
    """P(a wrong result escaped review)."""
    mean_ttft_s: float
    """Mean time to first token per request, s."""
    mean_decode_tok_s: float
    """Mean per-request decode speed (output tokens / decode seconds), tok/s."""

    @property
    def total_s(self) -> float:
        """Expected developer seconds per completed task (all categories)."""
        return float(sum(self.seconds.values()))

    @property
    def tasks_per_dev_day(self) -> float:
        """Completed tasks per developer-day: workday_s / total_s (renewal-reward)."""
        return self.workday_s / self.total_s

    @property
    def usd_per_dev_day(self) -> float:
        """US dollars billed per developer-day."""
        return self.usd_per_task * self.tasks_per_dev_day

    @property
    def waiting_s(self) -> float:
        """Expected seconds per task waiting on the agent (the four waiting categories)."""
        return sum(self.seconds[c] for c in WAITING_CATEGORIES)

    def shares(self) -> dict[str, float]:
        """Share of the developer's time in each category (they sum to 1)."""
        total = self.total_s
        return {c: self.seconds[c] / total for c in LEDGER_CATEGORIES}

    def summary(self) -> dict[str, float]:
        """The model's values of the ``RunResult.summary()`` keys it predicts (same names and units)."""
        shares = self.shares()
        out = {"tasks_per_dev_day": self.tasks_per_dev_day}
        out.update({f"share_{c}": shares[c] for c in LEDGER_CATEGORIES})
        out["waiting_share"] = sum(shares[c] for c in WAITING_CATEGORIES)
        out["fixing_share"] = shares["fixing"]
        out["ok_share"] = self.ok_share
        out["fixed_share"] = self.fixed_share
        out["escaped_share"] = self.escaped_share
        out["usd_per_task"] = self.usd_per_task
        out["usd_per_dev_day"] = self.usd_per_dev_day
        out["mean_queue_wait_s"] = 0.0
        out["mean_ttft_s"] = self.mean_ttft_s
        out["mean_decode_tok_s"] = self.mean_decode_tok_s
        return out


def expected_task_time(scenario: Scenario, backend: str | Backend | None = None) -> TaskTimeBreakdown:
    """The mean-value model of ``scenario``: one developer's expected seconds per completed task in
    each ledger category, turns, tokens and US dollars per task (see the module docstring).

    ``backend``: a backend of ``scenario``, a preset name or a :class:`Backend` spec; by default
    the backend of the scenario's ``always`` policy (or its only backend). Every session runs on
    it, uncontended, on the tier the ``always`` policy names for it, else its default tier.
    Raises ``ValueError`` for parallel sessions (``max_parallel_sessions > 1``), for a scenario
    routing between several backends when ``backend`` is not given, and when every tool call is
    malformed (no session would end).
    """
    problems = scope_problems(scenario)
    if problems:
        raise ValueError(
            "outside the analytic model's scope: "
            + "; ".join(problems)
            + " (scenario.with_overrides(ANALYTIC_RULES) puts it inside)"
        )
    name, spec, tier = _resolve(scenario, backend)
    return _TaskModel(scenario, name, spec, tier).breakdown()


def _resolve(scenario: Scenario, backend: str | Backend | None) -> tuple[str, Backend, Tier]:
    """The backend to model, its name and its tier."""
    policy = scenario.policy
    always = policy.kind == "always"
    policy_backend = getattr(policy, "backend", None) if always else None
    policy_tier = getattr(policy, "tier", None) if always else None
    if backend is None:
        if policy_backend is not None:
            name = policy_backend
        elif len(scenario.backends) == 1:
            name = next(iter(scenario.backends))
        else:
            raise ValueError(
                f"scenario {scenario.name!r} routes between several backends "
                f"({', '.join(scenario.backends)}); name the one to model"
            )
        spec = scenario.backends[name]
    elif isinstance(backend, Backend):
        name, spec = backend.name, backend
    elif backend in scenario.backends:
        name, spec = backend, scenario.backends[backend]
    elif backend in BACKEND_PRESETS:
        name, spec = backend, backend_preset(backend)
    else:
        raise ValueError(
            f"backend {backend!r} is neither a backend of this scenario ({', '.join(scenario.backends)}) "
            f"nor a preset ({', '.join(BACKEND_PRESETS)})"
        )
    missing = [d for d in scenario.task_mix.difficulty_names if d not in spec.quality.failure_prob]
    if missing:
        raise ValueError(f"backend {name!r} has no failure probability for difficulty {missing[0]!r}")
    tier_name = policy_tier if name == policy_backend else None
    return name, spec, spec.tier(tier_name)


class _TaskModel:
    """The stages of :func:`expected_task_time` (one instance per evaluation)."""

    def __init__(self, scenario: Scenario, name: str, spec: Backend, tier: Tier) -> None:
        dev = scenario.developer
        if dev.attention.max_parallel_sessions != 1:
            raise ValueError(
                "the mean-value model describes one agent session at a time "
                f"(developer.attention.max_parallel_sessions = 1, got {dev.attention.max_parallel_sessions})"
            )
        self.q = spec.quality.tool_error_prob
        if self.q >= 1.0:
            raise ValueError(
                "quality.tool_error_prob = 1: every tool call is malformed and no session ever ends"
            )
        self.scenario, self.name, self.spec, self.tier = scenario, name, spec, tier
        self.dev, self.att, self.mix = dev, dev.attention, scenario.task_mix
        self.theta = self.att.flow_threshold_s
        self.physics = ReplicaPhysics.from_backend(spec)
        failure = {d: spec.quality.failure_prob_for(d) for d in self.mix.difficulty_names}
        self.paths = tp.task_paths(scenario, failure)
        self.seg = tp.segmentation(self.paths.first.size - 1, self.q, dev.checkin_every_turns)
        self.c = dev.checkin_every_turns
        self.n_max = self.seg.n_max
        self.sessions = 1.0 + self.paths.repairs
        self.checkins_first = float(self.paths.first @ self.seg.checkins)
        self.checkins_repair = float(self.paths.repair @ self.seg.checkins)
        self.checkins = self.checkins_first + self.checkins_repair
        m = np.arange(self.paths.first.size)
        output_per_session = m / (1.0 - self.q) * self.mix.output_tokens.mean
        self.review_s = dev.review.base_s + dev.review.s_per_kilotoken * output_per_session / 1000.0
        hand_fix = dev.fixing.hand_fix_s
        self.rework = LogNormal(median=hand_fix.median * dev.fixing.rework_multiplier, sigma=hand_fix.sigma)

    def prefill_s(self, tokens: float) -> float:
        """Prefill seconds of ``tokens`` uncached input tokens (without the TTFT overhead)."""
        return self.physics.prefill_compute_s(round(tokens))

    # ------------------------------------------------------------------ agent turns along the task

    def agent_turns(self) -> None:
        """Turn weights, context, decode speed and the linear totals over all turns of a task."""
        mix, spec = self.mix, self.spec
        self.chain = tp.context_chain(
            mix.initial_context_tokens,
            mix.output_tokens,
            mix.tool_result_tokens,
            mix.compact_at_fraction * spec.llm.context_window_tokens,
            mix.compact_to_tokens,
        )
        chain = self.chain
        batch = 1 + min(spec.background_streams_per_replica, self.tier.batch_cap - 1)
        self.rate = np.array([self.physics.decode_rate_tok_s(batch, float(x)) for x in chain.tokens])
        self.weights, self.turns = tp.turn_weights(self.paths.total, self.q)
        per_turn = chain.p_input @ np.column_stack((1.0 / self.rate, self.rate))
        self.s_per_token_k = per_turn[:, 0]
        self.s_per_token = tp.weighted_sum(self.weights, self.s_per_token_k) / self.turns
        self.mean_rate = tp.weighted_sum(self.weights, per_turn[:, 1]) / self.turns
        planned = np.nonzero(self.paths.total)[0]
        self.gen_total = mix.output_tokens.mean * self.s_per_token * self.turns
        self.tool_total = float(planned @ self.paths.total[planned]) * mix.tool_s.mean
        self.input_total = tp.weighted_sum(self.weights, chain.mean_input)
        # turns k ≥ 1: compacted, or kept (then cold or warm)
        self.compactions = tp.weighted_sum(self.weights, chain.compact_prob) - chain.compact_prob[0]
        self.kept_weight = tp.weighted_sum(self.weights, 1.0 - chain.compact_prob) - (
            1.0 - chain.compact_prob[0]
        )
        self.kept_total = tp.weighted_sum(self.weights, chain.mean_input_kept) - chain.mean_input_kept[0]
        kept = self.kept_weight > 0
        self.kept_mean = self.kept_total / self.kept_weight if kept else float(mix.compact_to_tokens)
        self.growth_total = tp.weighted_sum(self.weights, chain.growth_kept)
        # prefill is affine in the tokens well above a few hundred: evaluate it at the mean growth
        self.warm_prefill = self.prefill_s(self.growth_total / self.kept_weight) if kept else 0.0
        self.ttft_warm = self.physics.ttft_overhead_s + self.warm_prefill

    def cache_misses(self) -> None:
        """Probabilities that the prompt cache has expired after a check-in, before a repair, and
        after a tool call (the gap since the last request exceeds the TTL)."""
        mix, dev, att, q = self.mix, self.dev, self.att, self.q
        ttl = mix.cache_ttl_s
        self.miss_tool = (1.0 - q) * float(1.0 - ln.cdf(mix.tool_s, ttl))
        if ttl <= 0.0:
            self.miss_checkin = self.miss_repair = 1.0
            return
        turn = sg.Turn(self.ttft_warm, self.s_per_token, mix.output_tokens, mix.tool_s, q)
        n = min(self.c, self.n_max)
        law = sg.segment_laws(turn, turn, n, only=n)[n]

        def resumption(y: np.ndarray) -> np.ndarray:
            return sg.resumption_cdf(
                law, y, self.theta, att.resumption_max_s, att.resumption_tau_s, att.resumption_random
            )

        points = 2000
        step = ttl / (points - 1)
        last_tool = (1.0 - q) * ln.on_grid(mix.tool_s, step, points)
        last_tool[0] += q
        checkin = ln.on_grid(dev.checkin_s, step, points)
        self.miss_checkin = 1.0 - sg.p_within(ttl, [last_tool, checkin], step, resumption)
        wrong = float(self.paths.repair_wrong.sum())
        self.miss_repair = 1.0
        if wrong > 0:
            review = LogNormal.from_mean(
                float(self.paths.repair_wrong @ self.review_s) / wrong, dev.review.sigma
            )
            parts = [
                last_tool,
                ln.on_grid(review, step, points),
                ln.on_grid(dev.fixing.diagnose_s, step, points),
            ]
            self.miss_repair = 1.0 - sg.p_within(ttl, parts, step, resumption)

    def tokens_and_ttft(self) -> None:
        """Uncached and cached input tokens and time to first token over a task's turns."""
        chain, mix = self.chain, self.mix
        within = max(0.0, self.turns - self.sessions - self.checkins)
        colds = (
            self.checkins * self.miss_checkin
            + self.paths.repairs * self.miss_repair
            + within * self.miss_tool
        )
        # a kept turn k ≥ 1 is cold (all its input uncached) or warm (only the growth uncached)
        self.cold_share = min(1.0, colds / self.kept_weight) if self.kept_weight > 0 else 0.0
        cold = self.cold_share * self.kept_weight
        self.uncached_total = (
            chain.mean_input[0]
            + self.compactions * mix.compact_to_tokens
            + self.cold_share * self.kept_total
            + (1.0 - self.cold_share) * self.growth_total
        )
        self.cached_total = max(0.0, self.input_total - self.uncached_total)
        self.ttft_total = (
            self.turns * self.physics.ttft_overhead_s
            + self.prefill_s(chain.mean_input[0])
            + self.compactions * self.prefill_s(mix.compact_to_tokens)
            + cold * self.prefill_s(self.kept_mean)
            + max(0.0, self.kept_weight - cold) * self.warm_prefill
        )
        self.agent_total = self.ttft_total + self.gen_total + self.tool_total

    # ------------------------------------------------------------------ segments

    def segment_classes(self) -> None:
        """The four segment classes: the opening and post-check-in segments of first sessions and of
        repairs, with their first turns' TTFT and their contexts' seconds per token."""
        chain, c = self.chain, self.c
        n_chain = self.s_per_token_k.size
        w_all = np.zeros(n_chain)
        w_all[: min(n_chain, self.weights.size)] = self.weights[:n_chain]
        w0, _ = tp.turn_weights(self.paths.first, self.q)
        w_first = np.zeros(n_chain)
        w_first[: min(n_chain, w0.size)] = w0[:n_chain]
        w_repair = np.maximum(w_all - w_first, 0.0)  # P(turn k belongs to a repair)
        k = np.arange(n_chain)
        inv_rate = 1.0 / self.rate

        def segment_class(ttft_first: float, w: np.ndarray, is_start: np.ndarray) -> sg.SegmentClass:
            """A class whose segments start at the turns k marked in ``is_start``, with turn weights w
            (P(the session runs turn k)); the turn at offset p of such a segment is turn k + p."""
            rows = np.nonzero(is_start & (w > 0))[0]
            if rows.size == 0:
                rows = np.nonzero(w_all)[0]
                w = w_all
            weight = w[rows]
            s_first, probs = ln.mixture_points(inv_rate, weight @ chain.p_input[rows])
            w_ext = np.concatenate((w, np.zeros(self.n_max)))
            g = np.concatenate((self.s_per_token_k, np.full(self.n_max, self.s_per_token_k[-300:].mean())))
            at: list[float] = []
            for p in range(self.n_max):
                reach = w_ext[rows + p]  # segments that get to offset p
                at.append(float(reach @ g[rows + p]) / float(reach.sum()) if reach.sum() > 1e-12 else at[-1])
            return sg.SegmentClass(ttft_first, self.ttft_warm, s_first, np.array(at) - at[0], probs)

        def input_at(w: np.ndarray) -> float:
            total = float(w.sum())
            return float(w @ chain.mean_input) / total if total > 1e-12 else self.kept_mean

        def cold_ttft(miss: float, tokens: float) -> float:
            return (
                self.physics.ttft_overhead_s
                + miss * self.prefill_s(tokens)
                + (1.0 - miss) * self.warm_prefill
            )

        is_checkin = (k >= c) & (k % c == 0)
        at_checkin = np.where(is_checkin, w_first, 0.0)
        everywhere = np.ones(n_chain, dtype=bool)
        self.classes = {
            "open0": segment_class(
                self.physics.ttft_overhead_s + self.prefill_s(chain.mean_input[0]), w_first, k == 0
            ),
            "checkin0": segment_class(
                cold_ttft(self.miss_checkin, input_at(at_checkin)), w_first, is_checkin
            ),
            # a repair's segments have no fixed place in the task: every repair turn counts as a start
            "open_repair": segment_class(
                cold_ttft(self.miss_repair, input_at(w_repair)), w_repair, everywhere
            ),
            "checkin_repair": segment_class(
                cold_ttft(self.miss_checkin, input_at(w_repair)), w_repair, everywhere
            ),
        }
        mix = self.mix
        if self.theta == math.inf:
            self.segs = {
                key: sg.unbounded_segments(cls, mix.output_tokens, mix.tool_s, self.q, self.n_max)
                for key, cls in self.classes.items()
            }
        else:
            att = self.att
            long_window = self.theta / sg.FINE_POINTS > sg.FINE_STEP_MAX_S
            method = sg.long_window_segments if long_window else sg.waiting_segments
            self.segs = {
                key: method(
                    cls,
                    mix.output_tokens,
                    mix.tool_s,
                    self.q,
                    self.n_max,
                    self.theta,
                    att.resumption_max_s,
                    att.resumption_tau_s,
                )
                for key, cls in self.classes.items()
            }

    def session_sum(self, per_class: dict[str, np.ndarray], *, last_only: bool = False) -> float:
        """Σ over a task's sessions of a per-segment quantity (arrays over n, by class); with
        ``last_only``, of each session's last segment only."""
        seg, c, total = self.seg, self.c, 0.0
        for opening, after, weight in (
            ("open0", "checkin0", self.paths.first),
            ("open_repair", "checkin_repair", self.paths.repair),
        ):
            x_open, x_after = per_class[opening], per_class[after]
            per_m = seg.single @ x_open + seg.later_last @ x_after
            if not last_only and c <= self.n_max:
                per_m = per_m + seg.checked * x_open[c] + seg.middle * x_after[c]
            total += float(weight @ per_m)
        return total

    # ------------------------------------------------------------------ the ledger

    def ledger(self) -> dict[str, float]:
        """Expected seconds per task by category, before escaped defects interrupt sessions."""
        dev, paths, fixing = self.dev, self.paths, self.dev.fixing
        seconds = dict.fromkeys(LEDGER_CATEGORIES, 0.0)
        if self.theta == math.inf:
            seconds["waiting_ttft"] = self.ttft_total
            seconds["waiting_generation"] = self.gen_total
            seconds["waiting_tool"] = self.tool_total
        else:
            for key, phase in _PHASES.items():
                seconds[key] = self.session_sum(
                    {k: getattr(s, f"wait_{phase}") for k, s in self.segs.items()}
                )
            seconds["switching"] = self.session_sum({k: s.switching for k, s in self.segs.items()})
        self.away = max(0.0, self.agent_total - sum(seconds[k] for k in _PHASES))
        seconds["prompting"] = dev.prompt_s.mean + self.checkins_first * dev.checkin_s.mean
        seconds["reviewing"] = float(paths.first @ self.review_s)
        seconds["fixing"] = (
            self.checkins_repair * dev.checkin_s.mean
            + float(paths.repair @ self.review_s)
            + paths.repairs * fixing.diagnose_s.mean
            + paths.hand_fixes * fixing.hand_fix_s.mean
            + paths.escapes * self.rework.mean
        )
        return seconds

    def interrupt(self, seconds: dict[str, float]) -> None:
        """Add what escaped defects' reworks change in running sessions (module docstring)."""
        paths, dev, att, mix = self.paths, self.dev, self.att, self.mix
        if paths.escapes <= 0.0:
            return
        turns = {key: cls.turns(mix.output_tokens, mix.tool_s, self.q) for key, cls in self.classes.items()}
        inter = {
            key: sg.interruptions(
                sg.segment_laws(*turns[key], self.n_max),
                self.rework,
                self.theta,
                att.resumption_max_s,
                att.resumption_tau_s,
            )
            for key in self.classes
        }
        c_ok = self.c <= self.n_max
        full_switch = {key: (s.switching[self.c] if c_ok else 0.0) for key, s in self.segs.items()}
        wrong = float(paths.repair_wrong.sum())
        review_wrong = float(paths.repair_wrong @ self.review_s) / wrong if wrong > 0 else 0.0
        before = {  # mean seconds of the human steps that end in each class's hand-off
            "open0": dev.prompt_s.mean,
            "checkin0": dev.checkin_s.mean + full_switch["checkin0"],
            "open_repair": full_switch["checkin0"] + review_wrong + dev.fixing.diagnose_s.mean,
            "checkin_repair": dev.checkin_s.mean + full_switch["checkin_repair"],
        }
        # per arrival: a rework surfacing in the waiting window pre-empts the rest of it; one that
        # waited for the hand-off pre-empts all of it
        per_segment, per_handoff = {}, {}
        for key, phase in _PHASES.items():
            per_segment[key] = {
                k: -getattr(s, f"moment_{phase}") - before[k] * getattr(s, f"wait_{phase}")
                for k, s in self.segs.items()
            }
            per_handoff[key] = {k: -getattr(s, f"wait_{phase}") for k, s in self.segs.items()}
        for key in ("away", "switching", "colds"):
            per_segment[key] = {
                k: getattr(x, key) + before[k] * getattr(x, f"handoff_{key}") for k, x in inter.items()
            }
            per_handoff[key] = {k: getattr(x, f"handoff_{key}") for k, x in inter.items()}
        keys = tuple(per_segment)
        first_order = {key: self.session_sum(per_segment[key]) for key in keys}
        # per second that a rework holds back: the mean hand-off change of a post-check-in segment
        zero = np.zeros(self.n_max + 1)
        per_held = {
            key: (
                self.session_sum(
                    {k: (x if k in _CHECKIN_CLASSES else zero) for k, x in per_handoff[key].items()}
                )
                / self.checkins
                if self.checkins > 0
                else 0.0
            )
            for key in keys
        }
        mean_d = {
            key: np.concatenate(([0.0], first.mean_s + np.arange(self.n_max) * rest.mean_s))
            for key, (first, rest) in turns.items()
        }
        last_time = self.session_sum(mean_d, last_only=True)
        # share of segment time whose segment ends in a check-in (not in the result)
        followed = min(1.0, max(0.0, 1.0 - last_time / self.agent_total)) if self.agent_total > 0 else 0.0
        pre_total = (
            dev.prompt_s.mean
            + self.checkins_first * before["checkin0"]
            + self.checkins_repair * before["checkin_repair"]
            + paths.repairs * before["open_repair"]
        )
        base = sum(seconds.values()) + self.away
        change = dict.fromkeys(keys, 0.0)
        for _ in range(100):
            cycle = base + sum(change[k] for k in keys if k != "colds")
            rate = paths.escapes / cycle  # reworks per second of the developer's time
            # reworks that meet an open session (directly, or held back by such a rework or by
            # the longer resumption it causes) and the seconds they hold later reworks back
            held = change["switching"] * followed
            overlapping = rate * (pre_total + self.agent_total + held)
            overlapping /= max(1.0 - rate * self.rework.mean * followed, 1e-9)
            held += overlapping * self.rework.mean * followed
            new = {k: rate * (first_order[k] + held * per_held[k]) for k in keys}
            converged = all(abs(new[k] - change[k]) <= 1e-10 * max(1.0, abs(new[k])) for k in keys)
            change = new
            if converged:
                break
        for key in _PHASES:
            seconds[key] = max(0.0, seconds[key] + change[key])
        seconds["switching"] += change["switching"]
        self.away = max(0.0, self.away + change["away"])
        lost = change["colds"] * followed * (1.0 - self.miss_checkin) * self.kept_mean
        self.uncached_total += lost
        self.cached_total = max(0.0, self.cached_total - lost)

    # ------------------------------------------------------------------ the result

    def breakdown(self) -> TaskTimeBreakdown:
        self.agent_turns()
        self.cache_misses()
        self.tokens_and_ttft()
        self.segment_classes()
        seconds = self.ledger()
        self.interrupt(seconds)
        seconds["other_work"] = self.att.other_work_prob * self.away
        seconds["idle"] = (1.0 - self.att.other_work_prob) * self.away
        price, mix = self.spec.price, self.mix
        uncached_usd = price.cache_write_usd_per_mtok if self.spec.cache_writes else price.input_usd_per_mtok
        output_total = self.turns * mix.output_tokens.mean
        usd = (
            self.tier.price_multiplier
            * (
                self.uncached_total * uncached_usd
                + self.cached_total * price.cache_read_usd_per_mtok
                + output_total * price.output_usd_per_mtok
            )
            / TOKENS_PER_MTOK
        )
        return TaskTimeBreakdown(
            scenario=self.scenario.name,
            backend=self.name,
            tier=self.tier.name,
            seconds={key: float(value) for key, value in seconds.items()},
            workday_s=self.scenario.workday_s,
            turns=self.turns,
            sessions=self.sessions,
            input_tokens=self.input_total,
            cached_tokens=float(self.cached_total),
            output_tokens=output_total,
            usd_per_task=float(usd),
            ok_share=self.paths.ok,
            fixed_share=self.paths.fixed,
            escaped_share=self.paths.escapes,
            mean_ttft_s=float(self.ttft_total / self.turns),
            mean_decode_tok_s=self.mean_rate,
        )


# --------------------------------------------------------------------------- break-even


def _metric(breakdown: TaskTimeBreakdown, metric: Metric) -> float:
    if metric == "tasks_per_dev_day":
        return breakdown.tasks_per_dev_day
    if metric == "usd_per_task":
        return breakdown.usd_per_task
    raise ValueError(f"unknown metric {metric!r} (known: tasks_per_dev_day, usd_per_task)")


def _backends_compared(
    scenario: Scenario,
    baseline: str | Backend | None,
    fast: str | Backend | None,
    speedup: float,
    price_multiplier: float,
) -> tuple[Backend, Backend]:
    """The baseline on its tier, and the fast backend: sped up, repriced, with the baseline's
    failure probabilities (each as a spec whose default tier is the one modelled)."""
    if not (speedup > 0 and math.isfinite(speedup)):
        raise ValueError(f"speedup must be a positive finite number, got {speedup}")
    if not (price_multiplier > 0 and math.isfinite(price_multiplier)):
        raise ValueError(f"price_multiplier must be a positive finite number, got {price_multiplier}")
    _, base, base_tier = _resolve(scenario, baseline)
    base = base.with_overrides({"default_tier": base_tier.name})
    _, fast_spec, fast_tier = (None, base, base_tier) if fast is None else _resolve(scenario, fast)
    price = fast_spec.price
    fast_spec = fast_spec.with_overrides(
        {
            "default_tier": fast_tier.name,
            "decode_speedup": fast_spec.decode_speedup * speedup,
            **{
                f"price.{field}": getattr(price, field) * price_multiplier
                for field in type(price).model_fields
            },
            "quality.failure_prob": dict(base.quality.failure_prob),
            "quality.failure_multiplier": base.quality.failure_multiplier,
        }
    )
    return base, fast_spec


def break_even_failure_multiplier(
    scenario: Scenario,
    *,
    speedup: float,
    price_multiplier: float = 1.0,
    metric: Metric = "tasks_per_dev_day",
    baseline: str | Backend | None = None,
    fast: str | Backend | None = None,
    m_max: float | None = None,
    xtol: float = 1e-6,
) -> float:
    """The multiplier m* on the baseline's failure probabilities at which a faster backend gives
    the baseline's ``metric`` (mean-value model, one developer, uncontended).

    The fast backend is ``fast`` (a backend of ``scenario``, a preset or a spec; default: the
    baseline itself) with its decode rate × ``speedup`` (``Backend.decode_speedup``; time to first
    token unchanged) and its list prices × ``price_multiplier``; its failure probabilities are the
    baseline's × m (each capped at 1, as ``Quality.failure_prob_for`` does); its malformed-tool-call
    rate is its own. The baseline is ``baseline`` (default: the scenario's backend) at m = 1.

    Returns:

    * m* > 1: speed pays until the fast backend makes m* times the baseline's mistakes;
    * 1.0: the two are equal at equal mistakes (e.g. ``speedup = price_multiplier = 1``);
    * 0 < m* < 1: the fast backend must make fewer mistakes to break even; 0.0 if it loses even
      with none;
    * ``math.inf``: it still wins at ``m_max`` (default: the multiplier at which every
      difficulty's failure probability reaches 1, beyond which nothing changes).

    Solved with ``scipy.optimize.brentq`` to ``xtol``; the metric falls monotonically with m.
    """
    base, fast_spec = _backends_compared(scenario, baseline, fast, speedup, price_multiplier)
    if metric not in ("tasks_per_dev_day", "usd_per_task"):
        raise ValueError(f"unknown metric {metric!r} (known: tasks_per_dev_day, usd_per_task)")
    sign = 1.0 if metric == "tasks_per_dev_day" else -1.0
    target = _metric(expected_task_time(scenario, base), metric)
    probs = [base.quality.failure_prob_for(d) for d in scenario.task_mix.difficulty_names]
    positive = [p for p in probs if p > 0.0]
    if m_max is None:
        m_max = 1.0 / min(positive) if positive else 1.0
    if not m_max >= 1.0:
        raise ValueError(f"m_max must be at least 1, got {m_max}")
    multiplier = base.quality.failure_multiplier

    def gain(m: float) -> float:
        spec = fast_spec.with_overrides({"quality.failure_multiplier": multiplier * m})
        return sign * (_metric(expected_task_time(scenario, spec), metric) - target)

    at_one = gain(1.0)
    if at_one == 0.0:
        return 1.0
    if not positive:  # no failures to multiply: the fast backend wins or loses whatever m
        return math.inf if at_one > 0.0 else 0.0
    if at_one > 0.0:
        return math.inf if gain(m_max) > 0.0 else float(optimize.brentq(gain, 1.0, m_max, xtol=xtol))
    return 0.0 if gain(0.0) < 0.0 else float(optimize.brentq(gain, 0.0, 1.0, xtol=xtol))


def break_even_grid(
    scenario: Scenario,
    speedups: Sequence[float],
    price_multipliers: Sequence[float] = (1.0,),
    *,
    metrics: Sequence[Metric] = ("tasks_per_dev_day", "usd_per_task"),
    baseline: str | Backend | None = None,
    fast: str | Backend | None = None,
) -> pd.DataFrame:
    """:func:`break_even_failure_multiplier` over a grid of speed-ups and price multipliers, as a
    tidy table with one row per speed-up × price multiplier × metric and the columns ``speedup``,
    ``price_multiplier``, ``metric``, ``m_star`` (the break-even failure multiplier, see
    :func:`break_even_failure_multiplier`), ``baseline_value`` and ``fast_value`` (the metric of the
    baseline and of the fast backend at equal mistakes, m = 1; tasks per developer-day or US dollars
    per task)."""
    rows = []
    for metric in metrics:
        for speedup in speedups:
            for price in price_multipliers:
                base, fast_spec = _backends_compared(scenario, baseline, fast, float(speedup), float(price))
                rows.append(
                    {
                        "speedup": float(speedup),
                        "price_multiplier": float(price),
                        "metric": metric,
                        "m_star": break_even_failure_multiplier(
                            scenario,
                            speedup=float(speedup),
                            price_multiplier=float(price),
                            metric=metric,
                            baseline=baseline,
                            fast=fast,
                        ),
                        "baseline_value": _metric(expected_task_time(scenario, base), metric),
                        "fast_value": _metric(expected_task_time(scenario, fast_spec), metric),
                    }
                )
    return pd.DataFrame(
        rows, columns=["speedup", "price_multiplier", "metric", "m_star", "baseline_value", "fast_value"]
    )
