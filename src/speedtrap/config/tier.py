"""Service tiers, list prices and model quality: the commercial face of a backend."""

from __future__ import annotations

import functools
import math
from typing import Any

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

Probability = float


class Tier(Spec):
    """A service tier: who is admitted first, how many streams share its replicas, what it costs.

    "Fast mode" is a high-priority tier whose requests run on replicas capped at a small batch
    (docs/design.md §2, Serving). Tiers may share one fleet.
    """

    name: str = Field(default="standard", min_length=1)
    priority: int = Field(default=0, description="Higher is admitted first; FIFO within a tier.")
    batch_cap: int = Field(default=256, ge=1, description="Most streams on a replica serving this tier.")
    price_multiplier: float = Field(default=1.0, gt=0, description="Applied to the backend's list price.")
    as_of: str | None = Field(
        default=None,
        pattern=r"^\d{4}-\d{2}(-\d{2})?$",
        description="The date (YYYY-MM or YYYY-MM-DD) whose offer this tier describes.",
    )


class Price(Spec):
    """List prices in US dollars per million tokens (MTok).

    Defaults: Anthropic's Opus 4.6 list price, $5 input / $25 output per MTok; cache reads 0.1×
    input ($0.50/MTok), 5-minute cache writes 1.25× input ($6.25/MTok), 1-hour cache writes 2× input
    ($10/MTok) (Anthropic pricing page and prompt-caching documentation, docs/design.md §5). Which
    write rate applies follows the cache's lifetime (:meth:`for_cache_ttl`).
    """

    input_usd_per_mtok: float = Field(default=5.0, ge=0)
    output_usd_per_mtok: float = Field(default=25.0, ge=0)
    cache_read_usd_per_mtok: float = Field(default=0.50, ge=0)
    cache_write_usd_per_mtok: float = Field(default=6.25, ge=0)
    long_cache_write_usd_per_mtok: float = Field(
        default=10.0,
        ge=0,
        description="Cache writes of a cache living longer than 5 minutes (Anthropic's 1-hour lifetime: 2× "
        "input), $/MTok.",
    )

    def for_cache_ttl(self, ttl_s: float) -> Price:
        """This price with the write rate of a prompt cache living ``ttl_s`` seconds: the 5-minute rate
        up to :data:`SHORT_CACHE_TTL_S`, the 1-hour rate beyond it (the two lifetimes Anthropic sells)."""
        if ttl_s <= SHORT_CACHE_TTL_S:
            return self
        return self.model_copy(update={"cache_write_usd_per_mtok": self.long_cache_write_usd_per_mtok})


SHORT_CACHE_TTL_S = 300.0
"""The longest prompt-cache lifetime billed at the 5-minute write rate, s (Anthropic pricing: cache
writes cost 1.25× input for the 5-minute lifetime, 2× for the 1-hour one)."""


REFERENCE_LENGTHS_MIN: tuple[tuple[float, float], ...] = (
    (7.5, 194 / 500),
    (30.0, 261 / 500),
    (120.0, 45 / 500),
)
"""The reference task-length distribution (minutes of human work, weight): SWE-bench Verified's
difficulty annotation, 194 of 500 tasks "<15 min", 261 "15 min–1 h", 45 "≥1 h" (42 "1–4 h" and 3
">4 h"), each bucket at its representative length — 7.5 min, 30 min and 2 h, the middles of the
buckets (docs/calibration.md, "Success curve"). A failure multiplier is a ratio of mean failure
rates on this distribution (the distilled-model range 1.15–1.8 was measured on SWE-bench
Verified and Terminal-Bench), and the acceptance scales are fitted on it."""

OPUS_46_HORIZON_MIN = 718.8
"""Claude Opus 4.6's 50% time horizon, minutes: METR Time Horizon 1.1
(https://metr.org/time-horizons/, data https://metr.org/assets/benchmark_results_1_1.yaml, model
of 2026-02). METR's announcement gives ≈14.5 h with a 95% CI of roughly 6–98 h; Time Horizon 1.1's
own figure is 718.8 min (80% horizon 69.9 min)."""

OPUS_46_SLOPE = 0.412
"""β of Claude Opus 4.6's fitted curve, logits per doubling of task length: ln 4 / log2(p50/p80)
with METR Time Horizon 1.1's 50% and 80% horizons, 718.8 and 69.9 min (the logistic's 80% point
is ln 4 / β doublings below its 50% point). Across METR's models β spans ≈0.41–0.70 (GPT-4 0.64,
o3 0.69, Claude 3.7 Sonnet 0.60, Opus 4.5 0.54, Opus 4.6 0.41; docs/calibration.md)."""

OPUS_46_ACCEPTANCE_SCALE = 0.2320
"""Claude Opus 4.6's acceptance scale: the factor on its METR horizon at which its curve (slope
:data:`OPUS_46_SLOPE`) fails 23.2% of :data:`REFERENCE_LENGTHS_MIN`, i.e. resolves 76.8% of
SWE-bench Verified (OpenHands index, docs/design.md §5) — the frontier level the model was
calibrated to before the curve (tests/config/test_tier.py re-derives it)."""


def success_prob(t_min: float, horizon_min: float, slope: float) -> float:
    """P(success) of an agent on a task of ``t_min`` minutes of human work: the logistic in log2 t
    of METR's "Measuring AI Ability to Complete Long Tasks" (Kwa et al. 2025,
    https://arxiv.org/abs/2503.14499), ``1 / (1 + exp(slope · log2(t / horizon)))``: ½ at the
    horizon, falling with t. ``t = 0`` succeeds and an infinite horizon always does."""
    if t_min <= 0.0 or horizon_min == math.inf:
        return 1.0
    if horizon_min <= 0.0:
        return 0.0
    x = slope * math.log2(t_min / horizon_min)
    if x >= 0.0:
        e = math.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(x))


def reference_failure(horizon_min: float, slope: float) -> float:
    """Mean failure probability, 1 − P(success), over :data:`REFERENCE_LENGTHS_MIN`."""
    return sum(w * (1.0 - success_prob(t, horizon_min, slope)) for t, w in REFERENCE_LENGTHS_MIN)


_LOG2_HORIZON_MAX = 1000.0
"""Longest horizon the solve tries, log2 minutes (2^1000 min: near the largest float). A multiplier so
small that even this horizon makes more mistakes than it asks for (below ≈1e-300 of the base) gets an
infinite horizon: no mistakes, which differs from what it asks for by less than any run could show."""

HORIZON_XTOL = 1e-12
"""Tolerance of the multiplier → horizon solve, in log2 minutes (a relative error of ≈7e-13)."""


@functools.lru_cache(maxsize=4096)
def horizon_for_multiplier(horizon_min: float, slope: float, multiplier: float) -> float:
    """The horizon h' (minutes) whose mean failure over :data:`REFERENCE_LENGTHS_MIN` is
    ``multiplier`` × that at ``horizon_min``: how "m× the mistakes" becomes a success curve.

    The mean failure falls strictly from 1 (h' → 0) to 0 (h' → ∞), so h' is unique; it is solved
    by bisection-type root finding (Brent) in log2 h', deterministic, to :data:`HORIZON_XTOL`.
    ``multiplier = 1`` returns ``horizon_min``; 0 returns infinity (no mistakes); a multiplier
    whose target mean failure reaches 1 has no horizon and raises ``ValueError``.
    """
    if multiplier == 1.0:
        return horizon_min
    if multiplier == 0.0:  # no mistakes
        return math.inf
    base = reference_failure(horizon_min, slope)
    target = multiplier * base
    if target >= 1.0:
        raise ValueError(
            f"quality.failure_multiplier = {multiplier:g}: {multiplier:g} × the base mean failure "
            f"{base:.4f} (reference task lengths) is {target:.4f}, at least 1; no horizon makes that "
            f"many mistakes (at most {1.0 / base:.4f} here)"
        )
    from scipy.optimize import brentq

    def excess(log2_h: float) -> float:
        return reference_failure(2.0**log2_h, slope) - target

    lo, hi = math.log2(horizon_min), math.log2(horizon_min)
    step = 1.0
    while excess(lo) < 0.0:  # more mistakes: a shorter horizon
        lo -= step
        step *= 2.0
    step = 1.0
    while excess(hi) > 0.0:  # fewer mistakes: a longer one
        if hi > _LOG2_HORIZON_MAX:  # fewer mistakes than any float horizon makes: none, in effect
            return math.inf
        hi = min(hi + step, _LOG2_HORIZON_MAX + 1.0)
        step *= 2.0
    return float(2.0 ** brentq(excess, lo, hi, xtol=HORIZON_XTOL, rtol=1e-15, maxiter=500))


class Quality(Spec):
    """How often a backend's model gets things wrong: its success curve.

    The probability that a session's result is right is the logistic success curve of METR's
    "Measuring AI Ability to Complete Long Tasks" (Kwa et al. 2025, :func:`success_prob`) at the
    task's length t — the human minutes of the part of the task handed to the agent
    (``TaskMix.agent_minutes``) — with the 50% horizon ``horizon_min × acceptance_scale`` and
    slope ``horizon_slope``; the failure probability is its complement, never clipped.

    ``failure_multiplier`` m writes "m× the mistakes": the horizon becomes the one whose mean
    failure over the reference task lengths (:data:`REFERENCE_LENGTHS_MIN`, SWE-bench Verified's
    buckets) is m × that of the curve above (:func:`horizon_for_multiplier`); a multiplier that
    would need a mean failure of 1 or more is refused. So a backend is written either by its
    horizon (``horizon_min``, a model METR measured) or by a multiplier on the frontier default
    (the distilled wafer preset: m = 1.2, range 1.15–1.8 from SWE-bench Verified GPT-5 vs GPT-5-mini
    and Terminal-Bench 2.0 Codex vs Spark, docs/design.md §5), or both (m× the mistakes of that
    horizon's model). ``tool_error_prob`` is the per-turn probability of a malformed tool call,
    which costs an extra turn; ``autonomy`` scales how many turns the agent runs between check-ins
    (earlier agents ran shorter stretches). Sources and ranges: docs/calibration.md, "Success curve".
    """

    horizon_min: float = Field(
        default=OPUS_46_HORIZON_MIN,
        gt=0,
        description="METR 50% time horizon of the backend's model, minutes of human task length "
        "(default: Claude Opus 4.6, 718.8 min, METR Time Horizon 1.1, "
        "https://metr.org/assets/benchmark_results_1_1.yaml; range ≈360–5900 min from METR's "
        "reported 95% CI of about 6–98 h).",
    )
    horizon_slope: float = Field(
        default=OPUS_46_SLOPE,
        gt=0,
        le=10,
        description="β: logits of failure per doubling of task length (default 0.412, Claude Opus 4.6's "
        "p50/p80 horizons 718.8/69.9 min; range 0.41–0.70 across METR's models, "
        "https://metr.org/assets/benchmark_results_1_1.yaml).",
    )
    acceptance_scale: float = Field(
        default=OPUS_46_ACCEPTANCE_SCALE,
        gt=0,
        le=1,
        description="The horizon at which half the results are accepted by the developer, as a "
        "fraction of METR's algorithmically scored horizon. Default 0.2320: Opus 4.6's curve then "
        "resolves 76.8% of SWE-bench Verified's task lengths (OpenHands index). Range 0.23–1: "
        "0.63 fits Claude 3.7 Sonnet (60.4 min) to its 62.3%; 1 takes METR's scoring as acceptance; "
        "METR's holistic review found none of Claude 3.7 Sonnet's test-passing runs mergeable as-is "
        "(https://metr.org/blog/2025-08-12-research-update-towards-reconciling-slowdown-with-time-horizons/).",
    )
    failure_multiplier: float = Field(
        default=1.0,
        ge=0,
        description="m× the mistakes: the horizon whose mean failure over SWE-bench Verified's task "
        "lengths is m × this curve's (no clipping; refused where that reaches 1).",
    )
    autonomy: float = Field(
        default=1.0,
        gt=0,
        le=10,
        description="How long the agent runs between check-ins, as a multiple of the developer's "
        "developer.checkin_every_turns (a session's mean stretch is their product, at least one turn). "
        "1 for today's agents, on which the stretches are calibrated (TraceLab 2026). Agents ran shorter "
        "stretches a year earlier: the longest run of consecutive tool calls per Claude Code transcript "
        "grew from 9.8 (Feb 2025) to 21.2 (Aug 2025), ×2.2 in six months (Anthropic, 'How AI is "
        "transforming work at Anthropic'); the METR-era backend's value is fitted by the calibration "
        "(docs/calibration.md).",
    )
    tool_error_prob: Probability = Field(
        default=0.02,
        ge=0,
        le=1,
        description="Assumption: 2% of frontier-model tool calls are malformed (no public figure).",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_failure_table(cls, data: Any) -> Any:
        if isinstance(data, dict) and "failure_prob" in data:
            raise ValueError(
                "quality.failure_prob: the failure table by difficulty class was replaced by the agent's "
                "success curve (docs/calibration.md, 'Success curve'); write the model's METR horizon "
                "(quality.horizon_min, minutes) or a quality.failure_multiplier on the default instead"
            )
        return data

    @model_validator(mode="after")
    def _multiplier_reachable(self) -> Quality:
        self.effective_horizon_min  # noqa: B018 - raises for an unreachable failure_multiplier
        return self

    @property
    def accepted_horizon_min(self) -> float:
        """The 50% horizon of acceptance before the multiplier: ``horizon_min × acceptance_scale``."""
        return self.horizon_min * self.acceptance_scale

    @property
    def effective_horizon_min(self) -> float:
        """The curve's 50% horizon, minutes, with ``failure_multiplier`` applied."""
        return horizon_for_multiplier(self.accepted_horizon_min, self.horizon_slope, self.failure_multiplier)

    def failure_prob_at(self, t_min: float) -> Probability:
        """Probability that a session's result on ``t_min`` minutes of delegated human work is
        wrong: 1 − P(success) on the curve (never clipped)."""
        return 1.0 - success_prob(t_min, self.effective_horizon_min, self.horizon_slope)

    @property
    def reference_failure(self) -> Probability:
        """Mean failure probability over the reference task lengths (SWE-bench Verified's buckets)."""
        return reference_failure(self.effective_horizon_min, self.horizon_slope)
