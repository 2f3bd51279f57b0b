"""The human side: prompting, check-ins, attention, review and fixing.

Every default cites DESIGN.md §5 or says "assumption" and why.
"""

from __future__ import annotations

import math

from pydantic import Field, field_validator

from speedtrap.config.base import Spec
from speedtrap.config.dist import LogNormal


class Attention(Spec):
    """What a developer does while an agent works, and what coming back costs.

    A wait longer than ``flow_threshold_s`` breaks flow: the developer leaves for another agent
    session (a new task, up to ``max_parallel_sessions``) or, at the cap, for other work
    (probability ``other_work_prob``) or idleness. Returning to a session left ``t`` seconds
    ago costs a resumption overhead with the saturating mean

        resumption_mean_s(t) = resumption_max_s · (1 − exp(−t / resumption_tau_s)),

    drawn exponentially around that mean when ``resumption_random`` (else exactly the mean).
    """

    flow_threshold_s: float = Field(
        default=10.0,
        ge=0,
        description="Seconds of waiting after which people switch tasks: ≈10 s (Nielsen, after Miller 1968).",
    )
    max_parallel_sessions: int = Field(
        default=1,
        ge=1,
        description="Agent sessions a developer keeps open at once. Assumption: one, as in a "
        "single-terminal workflow; experiments vary it.",
    )
    other_work_prob: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Probability that a flow break goes to productive other work rather than idleness. "
        "Assumption: no public figure; an even split.",
    )
    resumption_max_s: float = Field(
        default=750.0,
        ge=0,
        description="Mean resumption overhead after a long time away: 10–15 min to resume after an "
        "interruption (Parnin & Rugaber); 12.5 min.",
    )
    resumption_tau_s: float = Field(
        default=1_800.0,
        gt=0,
        description="Time away at which the overhead reaches 63% of its maximum. Assumption: the "
        "10–15 min figure comes from breaks of tens of minutes and more; τ = 30 min puts an hour "
        "away at 86% of the maximum and a one-minute wait at 3%.",
    )
    resumption_random: bool = Field(
        default=True,
        description="Draw the overhead from an exponential around its mean. With a 12.5 min mean "
        "this puts ≈8% of long-break resumptions under one minute (Parnin & Rugaber: ~10%).",
    )

    def resumption_mean_s(self, away_s: float) -> float:
        """Mean resumption overhead in seconds after ``away_s`` seconds away (saturating)."""
        if away_s <= 0.0:
            return 0.0
        return self.resumption_max_s * -math.expm1(-away_s / self.resumption_tau_s)


class Review(Spec):
    """Reviewing an agent's result: time proportional to its output; catches a wrong result
    with probability ``detect_prob``."""

    base_s: float = Field(
        default=60.0, ge=0, description="Fixed seconds per review. Assumption: opening the diff, running it."
    )
    s_per_kilotoken: float = Field(
        default=12.0,
        ge=0,
        description="Seconds per 1000 output tokens of the session. Assumption: a typical 48-turn "
        "session (≈17k output tokens) takes ≈4–5 min to review.",
    )
    sigma: float = Field(default=0.5, ge=0, description="Log-sd of review time around its mean. Assumption.")
    detect_prob: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Probability that review catches a wrong result. Assumption: code inspections are "
        "commonly credited with finding about 60% of defects; agent output is no easier to check.",
    )

    def mean_s(self, output_tokens: float) -> float:
        """Mean seconds to review a session that produced ``output_tokens`` output tokens."""
        return self.base_s + self.s_per_kilotoken * output_tokens / 1000.0


class Fixing(Spec):
    """What a caught mistake, and an escaped one, costs the developer."""

    hand_fix_prob: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Probability that a caught mistake is fixed by hand rather than by a repair session. "
        "Assumption: an even split.",
    )
    hand_fix_s: LogNormal = Field(
        default=LogNormal.from_mean(900.0, 0.8),
        description="Seconds to fix by hand: mean ≈15 min (METR RCT data); log-sd 0.8 an assumption.",
    )
    diagnose_s: LogNormal = Field(
        default=LogNormal(median=180.0, sigma=0.6),
        description="Seconds to diagnose a mistake and write the repair prompt. Assumption: a few minutes.",
    )
    max_repair_sessions: int = Field(
        default=2,
        ge=0,
        description="Repair sessions tried before the developer fixes by hand. Assumption.",
    )
    escape_delay_s: float = Field(
        default=28_800.0,
        gt=0,
        description="Mean working seconds (exponential) before an escaped defect surfaces. "
        "Assumption: about one working day.",
    )
    rework_multiplier: float = Field(
        default=3.0,
        ge=0,
        description="Rework of a surfaced defect costs this multiple of a hand fix. Assumption: defects "
        "found later cost several times more to fix.",
    )


class Developer(Spec):
    """One developer's working habits (every developer of a scenario shares them)."""

    prompt_s: LogNormal = Field(
        default=LogNormal(median=90.0, sigma=0.6),
        description="Seconds to write a task's opening prompt. Assumption.",
    )
    checkin_every_turns: int = Field(
        default=15,
        ge=1,
        description="Agent turns between human check-ins: 10–21 consecutive tool calls between human "
        "turns (Anthropic, 'Measuring agent autonomy').",
    )
    checkin_s: LogNormal = Field(
        default=LogNormal(median=30.0, sigma=0.6),
        description="Seconds to read the agent's progress and reply at a check-in. Assumption.",
    )
    attention: Attention = Field(default_factory=Attention)
    review: Review = Field(default_factory=Review)
    fixing: Fixing = Field(default_factory=Fixing)

    @field_validator("prompt_s")
    @classmethod
    def _prompting_takes_time(cls, prompt_s: LogNormal) -> LogNormal:
        # Every task then costs some human time, so a run always reaches its horizon.
        if prompt_s.median <= 0:
            raise ValueError("median must be positive: every task starts with some human time")
        return prompt_s
