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
(p_d: failure probability, 1 − the backend's success curve at the class's human length,
``Difficulty.human_length_s``; δ: ``detect_prob``, h: ``hand_fix_prob``); its session plans N turns
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

The model lives in three modules whose public names this one gathers:
``speedtrap.analysis.model_scope`` (the rules it follows, what takes a scenario outside them, the
backend and tier it models), ``speedtrap.analysis.task_model`` (the stages above and
:class:`TaskTimeBreakdown`) and ``speedtrap.analysis.break_even``; they build on
``lognormal``, ``segments`` and ``task_paths`` of ``speedtrap.analysis``.
"""

from speedtrap.analysis.break_even import (
    Metric,
    break_even_failure_multiplier,
    break_even_grid,
)
from speedtrap.analysis.model_scope import ANALYTIC_RULES, scope_problems
from speedtrap.analysis.task_model import TaskTimeBreakdown, expected_task_time

__all__ = [
    "ANALYTIC_RULES",
    "Metric",
    "TaskTimeBreakdown",
    "break_even_failure_multiplier",
    "break_even_grid",
    "expected_task_time",
    "scope_problems",
]
