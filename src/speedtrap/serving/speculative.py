"""Speculative decoding: expected tokens per target step and the cost of a draft-then-verify step."""

from __future__ import annotations


def expected_tokens_per_step(acceptance_rate: float, draft_tokens: int) -> float:
    """Expected tokens emitted per target step, ``(1 − α^(γ+1)) / (1 − α)``; ``γ + 1`` at α = 1.

    Each of the γ drafted tokens is accepted independently with probability α until the first
    rejection; the target always contributes one token (Leviathan et al. 2023, eq. 1).
    """
    if not 0.0 <= acceptance_rate <= 1.0:
        raise ValueError(f"acceptance_rate = {acceptance_rate} is not a probability in [0, 1]")
    if draft_tokens < 0:
        raise ValueError(f"draft_tokens = {draft_tokens} must be >= 0")
    if acceptance_rate == 1.0:
        return float(draft_tokens + 1)
    return (1.0 - acceptance_rate ** (draft_tokens + 1)) / (1.0 - acceptance_rate)


def speculative_step_s(
    *, verify_step_s: float, plain_step_s: float, draft_tokens: int, draft_cost: float
) -> float:
    """Seconds of one draft-then-verify step: the target's verification of γ + 1 tokens plus γ draft
    steps, each costing ``draft_cost`` of a plain target step."""
    return verify_step_s + draft_tokens * draft_cost * plain_step_s
