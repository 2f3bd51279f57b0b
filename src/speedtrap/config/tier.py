"""Service tiers, list prices and model quality: the commercial face of a backend."""

from __future__ import annotations

from pydantic import Field, model_validator

from speedtrap.config.base import Spec

Probability = float


class Tier(Spec):
    """A service tier: who is admitted first, how many streams share its replicas, what it costs.

    "Fast mode" is a high-priority tier whose requests run on replicas capped at a small batch
    (DESIGN.md §2, Serving). Tiers may share one fleet.
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
    input ($0.50/MTok), 5-minute cache writes 1.25× input ($6.25/MTok) (Anthropic pricing page,
    DESIGN.md §5).
    """

    input_usd_per_mtok: float = Field(default=5.0, ge=0)
    output_usd_per_mtok: float = Field(default=25.0, ge=0)
    cache_read_usd_per_mtok: float = Field(default=0.50, ge=0)
    cache_write_usd_per_mtok: float = Field(default=6.25, ge=0)


DEFAULT_FAILURE_PROB: dict[str, Probability] = {"easy": 0.10, "medium": 0.28, "hard": 0.60}
"""Frontier-model probability that a task's result is wrong, by difficulty.

Assumption fitted to the calibration table: Opus 4.6 resolves 76.8% of SWE-bench Verified
(OpenHands index). SWE-bench Verified's difficulty annotation puts 194/500 tasks at "<15 min",
261 at "15 min–1 h" and 45 at "≥1 h"; failure rates of 0.10 / 0.28 / 0.60 on those buckets give
an overall failure rate of 0.239, i.e. a 76.1% resolve rate (within 0.7 points of 76.8%).
"""


class Quality(Spec):
    """How often a backend's model gets things wrong.

    ``failure_prob`` is the probability that a finished task's result is wrong, per difficulty
    class; ``failure_multiplier`` scales it (a distilled model makes more mistakes: the default
    wafer-distilled multiplier is 1.2, range 1.15–1.8 from SWE-bench Verified GPT-5 vs
    GPT-5-mini and Terminal-Bench 2.0 Codex vs Spark, DESIGN.md §5). ``tool_error_prob`` is the
    per-turn probability of a malformed tool call, which costs an extra turn.
    """

    failure_prob: dict[str, Probability] = Field(default_factory=lambda: dict(DEFAULT_FAILURE_PROB))
    failure_multiplier: float = Field(default=1.0, ge=0)
    tool_error_prob: Probability = Field(
        default=0.02,
        ge=0,
        le=1,
        description="Assumption: 2% of frontier-model tool calls are malformed (no public figure).",
    )

    @model_validator(mode="after")
    def _probabilities_in_unit_interval(self) -> Quality:
        for difficulty, p in self.failure_prob.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"failure_prob[{difficulty!r}] = {p} is not a probability in [0, 1]")
        return self

    def failure_prob_for(self, difficulty: str) -> Probability:
        """The effective failure probability for ``difficulty`` (multiplied, capped at 1)."""
        try:
            p = self.failure_prob[difficulty]
        except KeyError:
            known = ", ".join(sorted(self.failure_prob))
            raise KeyError(f"no failure probability for difficulty {difficulty!r} (known: {known})") from None
        return min(1.0, p * self.failure_multiplier)
