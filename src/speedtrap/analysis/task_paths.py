"""How a task unfolds, for the mean-value model: its sessions (first attempt, repairs), their
planned turns, the check-in segments they split into, and the agent's context turn by turn.

Everything here mirrors the draws of ``speedtrap.models.tasks`` and the rules of
``speedtrap.agents.session`` / ``speedtrap.agents.developer`` exactly where a distribution is
computable (base turns, rounding, failure → detect → repair / hand fix / escape) and states its
approximation where not.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import nbinom

from speedtrap.analysis import lognormal as ln
from speedtrap.config.backend import Backend
from speedtrap.config.dist import LogNormal
from speedtrap.config.scenario import Scenario

CONTEXT_STEP_TOKENS = 250
"""Grid step of the context distribution, tokens."""
CONTEXT_TURNS = 1500
"""Turns of a task followed by the context chain; later turns use its last 300 turns' mean."""


# --------------------------------------------------------------------------- the agent's context


@dataclass(frozen=True)
class ContextChain:
    """The distribution of each turn's input tokens along a task (turn k counted over all its
    sessions: the conversation carries over to repairs), with compaction.

    Turn k's context L_k grows by the previous turn's output and tool result; when L_k plus the
    turn's output would pass the compaction point A, the input is compact_to tokens instead (and
    the prompt cache is cold). The chain is a Markov chain on a grid of context sizes.
    """

    tokens: np.ndarray
    """Grid of context sizes, tokens."""
    p_input: np.ndarray
    """p_input[k, i]: probability that turn k's input is tokens[i]."""
    mean_input: np.ndarray
    """E[input of turn k], tokens."""
    compact_prob: np.ndarray
    """P(compaction at turn k)."""
    mean_input_kept: np.ndarray
    """E[input of turn k; no compaction at turn k], tokens."""
    growth_kept: np.ndarray
    """E[growth since turn k − 1; no compaction at turn k], tokens: the uncached input of turn k on
    a warm prompt cache. A large growth makes compaction likelier, so this is below the mean
    growth times the probability of no compaction."""


@functools.lru_cache(maxsize=32)
def context_chain(
    initial: LogNormal,
    output: LogNormal,
    result: LogNormal,
    compact_at_tokens: float,
    compact_to_tokens: int,
    turns: int = CONTEXT_TURNS,
) -> ContextChain:
    """The context chain of a task mix on a model with compaction at ``compact_at_tokens``.

    Approximation: compaction is decided with an independent draw of the turn's output (in the
    simulation the same output then enters the next context; the correlation is negligible).
    """
    step = float(CONTEXT_STEP_TOKENS)
    n = math.floor(compact_at_tokens / step) + 1
    tokens = np.arange(n) * step
    growth = np.convolve(ln.on_grid(output, step, n), ln.on_grid(result, step, n))[:n]
    compact = 1.0 - ln.cdf(output, compact_at_tokens - tokens)
    lo, hi, w_hi = ln.split_point(float(compact_to_tokens), step, n)
    size = 2 * n
    growth_spectrum = np.fft.rfft(growth, size)
    # E[growth; no compaction next turn | input x] = Σ_i i·growth(i)·keep(x + i)
    keep = np.concatenate((1.0 - compact, np.zeros(n)))
    kept_growth_given_input = np.correlate(keep, growth * tokens, mode="valid")[:n]
    p_context = ln.on_grid(initial, step, n)
    p_input = np.empty((turns, n))
    mean_input = np.empty(turns)
    compact_prob = np.empty(turns)
    mean_kept = np.empty(turns)
    growth_kept = np.zeros(turns)
    for k in range(turns):
        overflow = max(0.0, 1.0 - p_context.sum())  # contexts beyond the grid: past A, compacted
        compacted = p_context * compact
        p_kept = p_context - compacted
        c = float(compacted.sum()) + overflow
        mean_kept[k] = p_kept @ tokens
        p_in = p_kept.copy()
        p_in[lo] += c * (1.0 - w_hi)
        p_in[hi] += c * w_hi
        p_input[k] = p_in
        mean_input[k] = p_in @ tokens
        compact_prob[k] = c
        if k + 1 < turns:
            growth_kept[k + 1] = p_in @ kept_growth_given_input
        p_context = np.clip(np.fft.irfft(np.fft.rfft(p_in, size) * growth_spectrum, size)[:n], 0.0, None)
    return ContextChain(tokens, p_input, mean_input, compact_prob, mean_kept, growth_kept)


def weighted_sum(weights: np.ndarray, per_turn: np.ndarray, tail_from: int = 300) -> float:
    """Σ_k w_k·g_k, with g_k beyond the chain's turns at the mean of its last ``tail_from`` values."""
    n = min(weights.size, per_turn.size)
    total = float(weights[:n] @ per_turn[:n])
    if weights.size > n:
        total += float(weights[n:].sum()) * float(per_turn[-tail_from:].mean())
    return total


# --------------------------------------------------------------------------- sessions


def base_turns_pmf(turns_mean: float, log_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of a task's base turns, max(1, rint(LogNormal)) with median
    turns_mean·exp(−σ²/2), as ``TaskSource`` draws them (tail beyond 6.5 σ folded into the last)."""
    median = turns_mean * math.exp(-0.5 * log_sd * log_sd)
    if log_sd == 0.0:
        return np.array([max(1, round(median))]), np.array([1.0])
    hi = max(2, math.ceil(median * math.exp(log_sd * 6.5)) + 2)
    n = np.arange(1, hi + 1)
    upper = ln.cdf(LogNormal(median=median, sigma=log_sd), n + 0.5)
    probs = np.diff(np.concatenate(([0.0], upper)))
    probs[-1] += 1.0 - upper[-1]
    keep = probs > 0
    return n[keep], probs[keep]


def planned_turns(
    base: np.ndarray, attempt: int, wrong: bool, fraction: float, multiplier: float
) -> np.ndarray:
    """A session's planned turns, as ``Session`` sets them (round half to even, like ``round``)."""
    turns = base if attempt == 0 else np.maximum(1, np.rint(fraction * base).astype(int))
    if wrong:
        result: np.ndarray = np.maximum(1, np.rint(turns * multiplier).astype(int))
        return result
    return turns


@dataclass(frozen=True)
class Paths:
    """Per task: expected sessions by planned turns, and the outcome probabilities.

    A session (attempt a) is wrong with probability p (its difficulty's failure probability,
    :func:`class_failure_probs`);
    review catches a wrong result with probability δ; a caught one is repaired by a new session
    with probability 1 − h while a < max_repair_sessions, else fixed by hand; a missed one escapes.
    So attempt a is reached with probability (p·δ·(1 − h))^a.
    """

    first: np.ndarray
    """first[m]: probability that the first session plans m turns."""
    repair: np.ndarray
    """repair[m]: expected repair sessions planning m turns."""
    total: np.ndarray
    """total[m]: probability that all of a task's sessions together plan m turns."""
    repair_wrong: np.ndarray
    """repair_wrong[m]: expected wrong sessions of m planned turns that a repair follows."""
    repairs: float
    hand_fixes: float
    escapes: float
    ok: float
    """P(the first session is right)."""
    fixed: float
    """P(a caught mistake was fixed: by a repair that came out right, or by hand)."""


def class_failure_probs(scenario: Scenario, spec: Backend) -> dict[str, float]:
    """Failure probability of a session of each difficulty class on ``spec``: 1 − its success curve
    at the class's delegated human length (``TaskMix.agent_minutes``, sizing by difficulty), as
    :meth:`speedtrap.agents.Session.failure_prob` draws it."""
    mix, delegated = scenario.task_mix, scenario.developer.delegated_fraction
    return {
        name: spec.quality.failure_prob_at(mix.agent_minutes(math.nan, name, delegated))
        for name in mix.difficulty_names
    }


def task_paths(scenario: Scenario, failure_prob: dict[str, float]) -> Paths:
    """The session and outcome structure of ``scenario``'s tasks with these failure probabilities."""
    mix = scenario.task_mix
    fixing = scenario.developer.fixing
    detect = scenario.developer.review.detect_prob
    hand = fixing.hand_fix_prob
    last = fixing.max_repair_sessions
    fraction, mult = mix.repair_turns_fraction, mix.failed_turns_multiplier
    pmfs = {
        name: base_turns_pmf(d.turns_mean or 1.0, mix.turns_log_sd)  # as TaskSource: 1 without a mean
        for name, d in mix.difficulties.items()
    }
    top = max(int(values[-1]) for values, _ in pmfs.values())
    size = math.ceil(top * max(1.0, mult)) + 2
    first, repair, repair_wrong = np.zeros(size), np.zeros(size), np.zeros(size)
    total = np.zeros(size * (last + 1) + 1)
    repairs = hand_fixes = escapes = ok = fixed = 0.0
    for share, (name, (values, probs)) in zip(mix.shares(), pmfs.items(), strict=True):
        p = failure_prob[name]
        go_on = p * detect * (1.0 - hand)
        reach = 1.0
        before = np.zeros_like(values)  # planned turns of the earlier (wrong) sessions
        for a in range(last + 1):
            right, wrong = (planned_turns(values, a, w, fraction, mult) for w in (False, True))
            target = first if a == 0 else repair
            np.add.at(target, right, share * reach * (1.0 - p) * probs)
            np.add.at(target, wrong, share * reach * p * probs)
            stop_wrong = p * ((1.0 - detect * (1.0 - hand)) if a < last else 1.0)
            np.add.at(total, before + right, share * reach * (1.0 - p) * probs)
            np.add.at(total, before + wrong, share * reach * stop_wrong * probs)
            escapes += share * reach * p * (1.0 - detect)
            hand_fixes += share * reach * p * detect * (hand if a < last else 1.0)
            if a == 0:
                ok += share * (1.0 - p)
            else:
                fixed += share * reach * (1.0 - p)
            if a < last:
                repairs += share * reach * go_on
                np.add.at(repair_wrong, wrong, share * reach * go_on * probs)
            before = before + wrong
            reach *= go_on
            if reach == 0.0:
                break
    return Paths(first, repair, total, repair_wrong, repairs, hand_fixes, escapes, ok, fixed + hand_fixes)


def turn_weights(total: np.ndarray, tool_error_prob: float) -> tuple[np.ndarray, float]:
    """w_k = P(the sessions run more than k turns), k = 0, 1, …, and E[turns].

    Planned turns m are distributed as ``total``; malformed tool calls add turns, K = m/(1 − q)
    at their mean (the exact negative-binomial spread is used only for the check-in segments).
    """
    planned = np.nonzero(total)[0]
    probs = total[planned]
    turns = planned / (1.0 - tool_error_prob)
    p_tail = np.concatenate((np.cumsum(probs[::-1])[::-1], [0.0]))
    s_tail = np.concatenate((np.cumsum((probs * turns)[::-1])[::-1], [0.0]))

    def excess(t: np.ndarray) -> np.ndarray:  # E[(K − t)⁺]
        idx = np.searchsorted(turns, t, side="right")
        result: np.ndarray = s_tail[idx] - t * p_tail[idx]
        return result

    k = np.arange(math.ceil(turns.max()) + 1, dtype=float)
    return excess(k) - excess(k + 1.0), float(probs @ turns)


# --------------------------------------------------------------------------- check-in segments


@dataclass(frozen=True)
class Segmentation:
    """How a session of m planned turns (row m) splits into segments: a check-in follows every
    c-th turn except the last, and each turn is a malformed tool call with probability q that
    costs one more turn (turns M = m + NegativeBinomial(m, 1 − q)). Columns n = 0…n_max."""

    checkins: np.ndarray
    """E[check-ins] = E[⌊(M − 1)/c⌋]."""
    single: np.ndarray
    """single[m, n] = P(no check-in, M = n): the opening segment is also the last."""
    later_last: np.ndarray
    """later_last[m, n] = P(at least one check-in, last segment of n turns)."""
    checked: np.ndarray
    """P(at least one check-in): the opening segment then has c turns."""
    middle: np.ndarray
    """E[check-ins − 1; at least one]: full segments between two check-ins."""
    n_max: int


@functools.lru_cache(maxsize=64)
def segmentation(max_planned: int, tool_error_prob: float, checkin_every: int) -> Segmentation:
    """The segment structure of sessions of 0…max_planned planned turns."""
    q, c = tool_error_prob, checkin_every
    m = np.arange(max_planned + 1)
    if q > 0.0:
        extra_hi = int(nbinom.ppf(1.0 - 1e-12, max(1, max_planned), 1.0 - q)) + 1
        j = np.arange(extra_hi + 1)
        pmf = nbinom.pmf(j[None, :], np.maximum(m, 1)[:, None], 1.0 - q)
        pmf /= np.maximum(pmf.sum(axis=1, keepdims=True), 1e-300)
        turns = m[:, None] + j[None, :]
    else:
        pmf = np.ones((m.size, 1))
        turns = m[:, None]
    pmf[0] = 0.0
    checkins = np.where(turns > 0, (turns - 1) // c, 0)
    last = np.maximum(turns - c * checkins, 0)
    n_max = max(1, int(min(c, last.max())))
    rows = np.broadcast_to(m[:, None], turns.shape)
    single = np.zeros((m.size, n_max + 1))
    later_last = np.zeros((m.size, n_max + 1))
    np.add.at(single, (rows, np.minimum(last, n_max)), np.where(checkins == 0, pmf, 0.0))
    np.add.at(later_last, (rows, np.minimum(last, n_max)), np.where(checkins > 0, pmf, 0.0))
    return Segmentation(
        checkins=(pmf * checkins).sum(axis=1),
        single=single,
        later_last=later_last,
        checked=(pmf * (checkins > 0)).sum(axis=1),
        middle=(pmf * np.maximum(checkins - 1, 0)).sum(axis=1),
        n_max=n_max,
    )
