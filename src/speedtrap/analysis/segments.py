"""Agent segments for the mean-value model: the turns between a hand-off to the agent and the
next moment it needs the developer (a check-in or the result), and what the developer does
meanwhile under the attention rule of ``speedtrap.agents.developer``.

A segment of n turns lasts D = Σ (ttft + generation + tool). The developer waits its first
θ = flow_threshold_s seconds, is away for the rest, (D − θ)⁺, and pays a resumption overhead of
mean R((D − θ)⁺), R(x) = R_max·(1 − e^(−x/τ)), when D > θ.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
from scipy.signal import lfilter

from speedtrap.analysis import lognormal as ln
from speedtrap.config.dist import LogNormal

FINE_POINTS = 1000
"""Grid points over the waiting window [0, θ]."""
FINE_STEP_MAX_S = 0.5
"""Longest fine-grid step, s: a longer window (θ > 500 s) is handled by :func:`long_window_segments`."""
EXACT_SEGMENTS = 64
"""Segments of up to this many turns get their duration law by convolution; longer ones a normal law."""
LAW_POINTS = 1 << 13
"""Grid points of a segment's duration law before it is coarsened to ≤ 512 points."""


@dataclass(frozen=True)
class Turn:
    """One agent turn: a fixed time to first token ``ttft_s``, a generation time ``s_per_token``
    × output tokens, and a tool time (none when the call is malformed, probability q)."""

    ttft_s: float
    s_per_token: float
    output: LogNormal
    tool: LogNormal
    tool_error_prob: float

    @property
    def mean_s(self) -> float:
        """Mean seconds of the turn."""
        q = self.tool_error_prob
        return self.ttft_s + self.s_per_token * self.output.mean + (1.0 - q) * self.tool.mean

    @property
    def var_s(self) -> float:
        """Variance of the turn's seconds."""
        q = self.tool_error_prob
        tool_m2 = (1.0 - q) * (self.tool.variance + self.tool.mean**2)
        return self.s_per_token**2 * self.output.variance + tool_m2 - ((1.0 - q) * self.tool.mean) ** 2

    def variable_on_grid(self, step: float, n: int) -> np.ndarray:
        """Masses of generation + tool time on a grid (truncated at the last point)."""
        tool = (1.0 - self.tool_error_prob) * ln.on_grid(self.tool, step, n)
        tool[0] += self.tool_error_prob
        return ln.convolve(ln.on_grid(self.output, step, n, self.s_per_token), tool)


@dataclass(frozen=True)
class SegmentClass:
    """Segments that start alike (a task's opening, after a check-in, a repair's opening …).

    The first turn has its own time to first token (a cold prompt cache prefills the whole
    context); the seconds per output token are a mixture (``probs``) over the contexts the class
    meets, held along the segment (first turn ``s_first``, later turns ``s_rest``) since the
    context changes little over a few turns.
    """

    ttft_first_s: float
    ttft_rest_s: float
    s_first: np.ndarray
    """Seconds per output token of the first turn, one value per mixture point."""
    shifts: np.ndarray
    """shifts[p]: mean change of the seconds per token from the first turn to the turn at offset p
    (the context grows along the segment); shifts[0] = 0."""
    probs: np.ndarray

    def s_at(self, position: int) -> np.ndarray:
        """Seconds per output token of the turn at offset ``position`` (0: the first), per mixture point."""
        shift = self.shifts[min(position, self.shifts.size - 1)]
        result: np.ndarray = np.maximum(self.s_first + shift, 1e-3 * self.s_first)
        return result

    def turns(self, output: LogNormal, tool: LogNormal, tool_error_prob: float) -> tuple[Turn, Turn]:
        """The class's first turn and a typical later turn at the mixture's mean seconds per token."""
        later = float(self.shifts[1:].mean()) if self.shifts.size > 1 else 0.0
        mean = float(self.probs @ self.s_first)
        return (
            Turn(self.ttft_first_s, mean, output, tool, tool_error_prob),
            Turn(self.ttft_rest_s, max(mean + later, 1e-3 * mean), output, tool, tool_error_prob),
        )


@dataclass(frozen=True)
class Segments:
    """Expected developer seconds per segment of n = 0…n_max turns (arrays over n)."""

    wait_ttft: np.ndarray
    wait_gen: np.ndarray
    wait_tool: np.ndarray
    switching: np.ndarray
    """E[R((D − θ)⁺)]: the mean resumption overhead after the segment."""
    moment_ttft: np.ndarray
    """E[∫ t·1{phase at t} dt] over the waiting window: the waiting of each phase that an
    interruption at a uniformly random instant of the window pre-empts, integrated over the instant."""
    moment_gen: np.ndarray
    moment_tool: np.ndarray


def waiting_segments(
    cls: SegmentClass,
    output: LogNormal,
    tool: LogNormal,
    tool_error_prob: float,
    n_max: int,
    threshold_s: float,
    resume_max_s: float,
    resume_tau_s: float,
) -> Segments:
    """Waiting by phase, resumption overhead and window moments for a finite flow threshold θ.

    Turn i starts at S_i (S_1 = 0); its phases are clipped to the window [0, θ). The laws of S_i
    below θ come from convolutions on a fine grid (only the part below θ matters). The overhead
    E[R((D − θ)⁺)] = R_max·(P(D > θ) − e^(θ/τ)·(E[e^(−D/τ)] − E[e^(−D/τ); D ≤ θ])), where
    E[e^(−D/τ)] factorizes over the independent turns (log-normal Laplace transforms).
    """
    q = tool_error_prob
    a1, a = cls.ttft_first_s, cls.ttft_rest_s
    probs = cls.probs
    inv_tau = 1.0 / resume_tau_s
    tool_lap = q + (1.0 - q) * ln.laplace(tool, inv_tau)
    # E[e^(−D_n/τ)] = Π_i E[e^(−T_i/τ)] over the n turns, per mixture point
    lap_turn = np.stack(
        [
            math.exp(-(a1 if i == 0 else a) * inv_tau)
            * ln.laplace_scaled(output, inv_tau, cls.s_at(i))
            * tool_lap
            for i in range(n_max)
        ],
        axis=1,
    )
    lap_n = np.concatenate((np.ones((probs.size, 1)), np.cumprod(lap_turn, axis=1)), axis=1)
    shape = (probs.size, n_max + 1)
    occ_t, occ_g, occ_all = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    mom_t, mom_g, mom_all = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    p_le, lap_le = np.zeros(shape), np.zeros(shape)
    if threshold_s > 0.0:
        points = FINE_POINTS + 1
        h = threshold_s / FINE_POINTS
        v = np.arange(points) * h
        tool_masses = (1.0 - q) * ln.on_grid(tool, h, points)
        tool_masses[0] += q

        def variable(scales: np.ndarray) -> np.ndarray:
            gen = np.stack([ln.on_grid(output, h, points, x) for x in scales])
            return ln.batched_convolve(gen, tool_masses[None, :])

        def grid_min_moments(masses: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # E[min(V, z)] and E[min(V, z)²] for 0 ≤ z ≤ θ from masses on the grid
            cum = np.cumsum(masses, axis=1)
            cum_v, cum_v2 = np.cumsum(masses * v, axis=1), np.cumsum(masses * v * v, axis=1)
            idx = np.clip(np.floor(z / h + 1e-9).astype(int), 0, FINE_POINTS)
            above = 1.0 - cum[:, idx]
            return cum_v[:, idx] + z[None, :] * above, cum_v2[:, idx] + z[None, :] ** 2 * above

        p_start = np.zeros((probs.size, points))
        p_start[:, 0] = 1.0  # the first turn starts at once
        shift = 0.0  # S_i = shift + V, V on the grid
        for i in range(1, n_max + 1):
            ttft = a1 if i == 1 else a
            left = threshold_s - shift - v  # window left when turn i starts
            live = left > 0.0
            if not live.any() or p_start[:, live].sum() < 1e-14:
                break
            y, p = left[live], p_start[:, live]
            scales = cls.s_at(i - 1)
            var = variable(scales)
            after = np.maximum(y - ttft, 0.0)  # window left when generation starts
            head = np.minimum(y, ttft)[None, :]
            g1, g2 = ln.min_moments(output, after, scales)
            v1, v2 = grid_min_moments(var, after)
            occ_t[:, i] = p @ np.minimum(y, ttft)
            occ_g[:, i] = (p * (head + g1)).sum(axis=1)
            occ_all[:, i] = (p * np.maximum(head + v1, head + g1)).sum(axis=1)
            # ∫ t dt over each phase inside the window: the turn starts at b0, generation at b1
            b0, b1 = (threshold_s - y)[None, :], (threshold_s - after)[None, :]
            ttft_moment = 0.5 * (b1 * b1 - b0 * b0)
            gen_moment = b1 * g1 + 0.5 * g2
            mom_t[:, i] = (p * ttft_moment).sum(axis=1)
            mom_g[:, i] = (p * gen_moment).sum(axis=1)
            mom_all[:, i] = (p * (ttft_moment + np.maximum(b1 * v1 + 0.5 * v2, gen_moment))).sum(axis=1)
            p_start = ln.batched_convolve(p_start, var)
            shift += ttft
            z = threshold_s - shift
            if z >= 0.0:
                inside = v <= z + 1e-12
                p_le[:, i] = p_start[:, inside].sum(axis=1)
                lap_le[:, i] = p_start[:, inside] @ np.exp(-(shift + v[inside]) * inv_tau)
    p_gt = 1.0 - p_le
    p_gt[:, 0] = 0.0
    if threshold_s * inv_tau <= 30.0:
        switching = resume_max_s * (p_gt - math.exp(threshold_s * inv_tau) * (lap_n - lap_le))
    else:  # e^(θ/τ) would amplify rounding: sum over the duration law instead
        laws = segment_laws(*cls.turns(output, tool, tool_error_prob), n_max)
        row = [0.0] + [
            float(p @ (resume_max_s * -np.expm1(-np.maximum(d - threshold_s, 0.0) * inv_tau)))
            for d, p in laws[1:]
        ]
        switching = np.tile(np.array(row), (probs.size, 1))
    switching[:, 0] = 0.0
    w_t, w_tg, w_all = (np.cumsum(x, axis=1) for x in (occ_t, occ_g, occ_all))
    m_t, m_tg, m_all = (np.cumsum(x, axis=1) for x in (mom_t, mom_t + mom_g, mom_all))
    return Segments(
        probs @ w_t,
        probs @ (w_tg - w_t),
        probs @ np.maximum(w_all - w_tg, 0.0),
        probs @ np.maximum(switching, 0.0),
        probs @ m_t,
        probs @ (m_tg - m_t),
        probs @ np.maximum(m_all - m_tg, 0.0),
    )


def unbounded_segments(
    cls: SegmentClass, output: LogNormal, tool: LogNormal, tool_error_prob: float, n_max: int
) -> Segments:
    """As :func:`waiting_segments` for θ = ∞: the developer waits out every segment, so the window
    is the whole segment; with independent start b and duration x of a phase,
    E[∫_b^(b+x) t dt] = E[b]·E[x] + E[x²]/2."""
    q = tool_error_prob
    tool_m1 = (1.0 - q) * tool.mean
    tool_m2 = (1.0 - q) * (tool.variance + tool.mean**2)
    out_m1, out_m2 = output.mean, output.variance + output.mean**2
    shape = (cls.probs.size, n_max + 1)
    wait_t, wait_g, wait_u = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    mom_t, mom_g, mom_u = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    start = np.zeros(cls.probs.size)
    for i in range(1, n_max + 1):
        a, s = (cls.ttft_first_s if i == 1 else cls.ttft_rest_s), cls.s_at(i - 1)
        g1, g2 = s * out_m1, s * s * out_m2
        wait_t[:, i], wait_g[:, i], wait_u[:, i] = a, g1, tool_m1
        mom_t[:, i] = start * a + 0.5 * a * a
        mom_g[:, i] = (start + a) * g1 + 0.5 * g2
        mom_u[:, i] = (start + a + g1) * tool_m1 + 0.5 * tool_m2
        start = start + a + g1 + tool_m1
    p = cls.probs
    wait = [p @ np.cumsum(x, axis=1) for x in (wait_t, wait_g, wait_u)]
    moment = [p @ np.cumsum(x, axis=1) for x in (mom_t, mom_g, mom_u)]
    return Segments(
        wait_ttft=wait[0],
        wait_gen=wait[1],
        wait_tool=wait[2],
        switching=np.zeros(n_max + 1),
        moment_ttft=moment[0],
        moment_gen=moment[1],
        moment_tool=moment[2],
    )


def long_window_segments(
    cls: SegmentClass,
    output: LogNormal,
    tool: LogNormal,
    tool_error_prob: float,
    n_max: int,
    threshold_s: float,
    resume_max_s: float,
    resume_tau_s: float,
) -> Segments:
    """As :func:`waiting_segments` for a window long against a turn (θ ≫ seconds per turn), where
    a fine grid over [0, θ] would be coarse: E[min(D, θ)], E[R((D − θ)⁺)] and E[min(D, θ)²]/2 come
    from the segment's duration law, and are split among the phases in proportion to the whole
    segment's phase means and moments (most segments end inside the window)."""
    whole = unbounded_segments(cls, output, tool, tool_error_prob, n_max)
    laws = segment_laws(*cls.turns(output, tool, tool_error_prob), n_max)
    waiting, moment, switching = np.zeros(n_max + 1), np.zeros(n_max + 1), np.zeros(n_max + 1)
    for n in range(1, n_max + 1):
        d, p = laws[n]
        window = np.minimum(d, threshold_s)
        waiting[n] = p @ window
        moment[n] = p @ (0.5 * window * window)
        switching[n] = p @ (resume_max_s * -np.expm1(-np.maximum(d - threshold_s, 0.0) / resume_tau_s))
    with np.errstate(invalid="ignore", divide="ignore"):
        wait_scale = waiting / (whole.wait_ttft + whole.wait_gen + whole.wait_tool)
        moment_scale = moment / (whole.moment_ttft + whole.moment_gen + whole.moment_tool)
    wait_scale, moment_scale = np.nan_to_num(wait_scale), np.nan_to_num(moment_scale)
    return Segments(
        whole.wait_ttft * wait_scale,
        whole.wait_gen * wait_scale,
        whole.wait_tool * wait_scale,
        switching,
        whole.moment_ttft * moment_scale,
        whole.moment_gen * moment_scale,
        whole.moment_tool * moment_scale,
    )


# --------------------------------------------------------------------------- duration laws

Law = tuple[np.ndarray, np.ndarray]
"""A discrete law: values (s) and probabilities."""


def segment_laws(first: Turn, rest: Turn, n_max: int, only: int | None = None) -> list[Law]:
    """Laws of a segment's duration for n = 0…n_max turns (first turn ``first``, later ``rest``):
    n-fold convolutions by FFT on a grid for n ≤ 64, coarsened to ≤ 512 points; a normal law with
    the exact mean and variance beyond. With ``only``, just that n is computed (others empty)."""
    laws: list[Law] = [(np.zeros(1), np.ones(1))] * (n_max + 1)
    n_top = min(n_max, EXACT_SEGMENTS)
    s_tok = max(first.s_per_token, rest.s_per_token)
    q_gen = rest.output.quantile(1.0 - 1e-7) * s_tok if rest.output.sigma > 0 else rest.output.median * s_tok
    q_tool = rest.tool.quantile(1.0 - 1e-7) if rest.tool.sigma > 0 else rest.tool.median
    span = (
        n_top * (rest.mean_s - rest.ttft_s)
        + 10.0 * math.sqrt(n_top * max(rest.var_s, first.var_s))
        + q_gen
        + q_tool
    )
    step = (span + 1.0) / LAW_POINTS
    size = 2 * LAW_POINTS
    spectrum_rest = np.fft.rfft(rest.variable_on_grid(step, LAW_POINTS), size)
    current = np.fft.rfft(first.variable_on_grid(step, LAW_POINTS), size)
    grid = np.arange(LAW_POINTS) * step
    block = LAW_POINTS // 512
    wanted = range(1, n_max + 1) if only is None else [only]
    for n in range(1, n_top + 1):
        if n in wanted:
            masses = np.clip(np.fft.irfft(current, size)[:LAW_POINTS], 0.0, None)
            values = first.ttft_s + (n - 1) * rest.ttft_s + grid
            weight = masses.reshape(-1, block).sum(axis=1)
            centre = (masses * values).reshape(-1, block).sum(axis=1)
            keep = weight > 1e-14
            laws[n] = (centre[keep] / weight[keep], weight[keep] / weight[keep].sum())
        current = current * spectrum_rest
    z = np.linspace(-8.0, 8.0, 801)
    w = np.exp(-0.5 * z * z)
    w /= w.sum()
    for n in range(n_top + 1, n_max + 1):
        if n in wanted:
            mean = first.mean_s + (n - 1) * rest.mean_s
            sd = math.sqrt(first.var_s + (n - 1) * rest.var_s)
            laws[n] = (np.maximum(mean + sd * z, 0.0), w)
    return laws


def resumption_cdf(
    law: Law, y: np.ndarray, threshold_s: float, resume_max_s: float, resume_tau_s: float, random: bool
) -> np.ndarray:
    """P(resumption overhead ≤ y) after a segment of duration law ``law``: none after a wait
    within θ, else exponential (``random``) or fixed at R(D − θ)."""
    values, probs = ln.mixture_points(*law, points=128)
    mean = resume_max_s * -np.expm1(-np.maximum(values - threshold_s, 0.0) / resume_tau_s)
    zero = mean <= 0.0
    out = np.full(y.shape, probs[zero].sum())
    p, m = probs[~zero], mean[~zero]
    if p.size:
        if random:
            out = out + (p[None, :] * -np.expm1(-y[:, None] / m[None, :])).sum(axis=1)
        else:
            out = out + (p[None, :] * (m[None, :] <= y[:, None])).sum(axis=1)
    result: np.ndarray = np.clip(out, 0.0, 1.0)
    return result


def p_within(
    limit_s: float, parts: Sequence[np.ndarray], step: float, resumption: Callable[[np.ndarray], np.ndarray]
) -> float:
    """P(Σ parts + resumption ≤ limit_s) for independent parts given as masses on a grid of ``step``."""
    total = parts[0]
    for part in parts[1:]:
        total = ln.convolve(total, part)
    y = np.arange(total.size) * step
    return float(total @ resumption(np.maximum(limit_s - y, 0.0)))


# --------------------------------------------------------------------------- interruptions


@dataclass(frozen=True)
class Interruptions:
    """What a rework that surfaces during a segment of n turns changes beyond its own duration
    (arrays over n): integrated over the arrival instant while the developer waits or is away,
    and per second of the human step before the segment's hand-off (such a rework waits for the
    hand-off, then takes the developer away at once)."""

    away: np.ndarray
    switching: np.ndarray
    colds: np.ndarray
    """Prompt-cache entries lost because the session had to wait for the developer."""
    handoff_away: np.ndarray
    handoff_switching: np.ndarray
    handoff_colds: np.ndarray


def interruptions(
    laws: list[Law], rework: LogNormal, threshold_s: float, resume_max_s: float, resume_tau_s: float
) -> Interruptions:
    """Changes to time away, resumption overhead and cache misses caused by a rework of law X,
    under the rules of ``speedtrap.agents.developer`` (the developer takes an escaped defect's rework
    at once when waiting, doing other work or idle, else after the current step, ahead of new work):

    * served at the hand-off: no wait; away (D − X)⁺ and overhead R(max(X, D)) instead of
      away (D − θ)⁺ and R((D − θ)⁺);
    * surfacing while waiting, at w < min(D, θ): away (D − w − X)⁺, overhead R(max(X, D − w));
    * surfacing while away, u after the flow break (r = D − θ − u left): other work shrinks by
      min(X, r); the overhead becomes R(u + max(X, r)).

    With Λ(r) = E[e^(−max(X, r)/τ)], m(r) = E[min(X, r)] and the integrals over the arrival
    instant on a grid of r, all are sums over the segment's duration law. (The waiting these
    arrivals pre-empt comes from the window moments of :class:`Segments`.)
    """
    inv_tau = 1.0 / resume_tau_s
    top = max(float(values.max()) for values, _ in laws) + 1.0
    r = np.linspace(0.0, top, 4096)
    h = r[1] - r[0]
    min_x = ln.min_mean(rework, r)
    survive = 1.0 - ln.cdf(rework, r)
    big_lambda = np.exp(-r * inv_tau) * (1.0 - survive) + ln.upper_laplace(rework, inv_tau, r)
    resume_max_x = resume_max_s * (1.0 - big_lambda)  # E[R(max(X, r))]
    short = r - min_x  # E[(r − X)⁺]

    def integral(f: np.ndarray) -> np.ndarray:
        return np.concatenate(([0.0], np.cumsum((f[1:] + f[:-1]) * 0.5 * h)))

    int_short, int_resume, int_min = integral(short), integral(resume_max_x), integral(min_x)
    # Q(Δ) = ∫_0^Δ e^(−(Δ − r)/τ)·Λ(r) dr, by the stable recursion of an exponential filter
    decay = math.exp(-h * inv_tau)
    drive = 0.5 * h * (big_lambda[1:] + decay * big_lambda[:-1])
    big_q = np.concatenate(([0.0], lfilter([1.0], [1.0, -decay], drive)))

    def at(f: np.ndarray, x: np.ndarray) -> np.ndarray:
        result: np.ndarray = np.interp(x, r, f)
        return result

    n_max = len(laws) - 1
    out = {f.name: np.zeros(n_max + 1) for f in fields(Interruptions)}
    for n in range(1, n_max + 1):
        d, p = laws[n]
        window = np.minimum(d, threshold_s)
        gap = np.maximum(d - threshold_s, 0.0)
        base_resume = resume_max_s * -np.expm1(-gap * inv_tau)
        out["away"][n] = p @ (at(int_short, d) - at(int_short, d - window) - window * gap - at(int_min, gap))
        out["switching"][n] = p @ (
            at(int_resume, d)
            - at(int_resume, d - window)
            - window * base_resume
            + resume_max_s * (gap * np.exp(-gap * inv_tau) - at(big_q, gap))
        )
        out["colds"][n] = p @ (at(min_x, d) - at(min_x, d - window) + at(min_x, gap))
        out["handoff_away"][n] = p @ (at(short, d) - gap)
        out["handoff_switching"][n] = p @ (at(resume_max_x, d) - base_resume)
        out["handoff_colds"][n] = p @ at(survive, d)
    return Interruptions(**out)
