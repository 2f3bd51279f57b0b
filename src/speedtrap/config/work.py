"""The work developers hand to coding agents: task difficulty, agent turns, tokens, tool time.

Every default cites DESIGN.md §5 or says "assumption" and why.
"""

from __future__ import annotations

from pydantic import Field

from speedtrap.config.base import Spec
from speedtrap.config.dist import LogNormal

TURNS_LOG_SD = 0.455
"""Log-sd of agent turns per session. Fitted to GPT-5 on SWE-bench (mini-SWE-agent): mean 13,
p90 21, a p90/mean ratio of 1.62; a log-normal has p90/mean = exp(1.2816σ − σ²/2), which gives
σ = 0.455. The same shape is used at every mean."""


class Difficulty(Spec):
    """One difficulty class of tasks.

    ``turns_mean`` is the mean number of agent turns (request + tool call) of a first session
    whose result turns out right; sessions that end wrong run ``failed_turns_multiplier`` times
    longer (TaskMix).
    """

    share: float = Field(gt=0, description="Relative weight in the task mix (normalised over classes).")
    turns_mean: float = Field(ge=1, description="Mean agent turns of a successful first session.")


def _default_difficulties() -> dict[str, Difficulty]:
    # Shares: SWE-bench Verified's difficulty annotation, 194 "<15 min" / 261 "15 min–1 h" / 45 "≥1 h"
    # (42 "1–4 h" + 3 ">4 h") of 500 tasks: the buckets DEFAULT_FAILURE_PROB in config/tier.py uses.
    # Turns: assumption. Agent steps per task are GPT-5 mean 13, Sonnet 4 mean 37, Sonnet 4.5 mean 51
    # (SWE-bench, mini-SWE-agent). Means 22 / 38 / 65 give a first-session mean of 34 turns and,
    # with failures running 2x longer, an overall mean of ≈42, between the two Claude models; with a
    # check-in every 15 turns that is ≈4 human turns per session (Anthropic: ≈4–6).
    return {
        "easy": Difficulty(share=194 / 500, turns_mean=22.0),
        "medium": Difficulty(share=261 / 500, turns_mean=38.0),
        "hard": Difficulty(share=45 / 500, turns_mean=65.0),
    }


class TaskMix(Spec):
    """What tasks look like and how an agent session on them unfolds, turn by turn.

    Context grows turn by turn: turn ``k``'s input is the initial context plus every earlier
    turn's output and tool result; the previous request's input is read from the prompt cache
    when it is still warm (same backend and tier, within ``cache_ttl_s``).
    """

    difficulties: dict[str, Difficulty] = Field(default_factory=_default_difficulties, min_length=1)
    turns_log_sd: float = Field(default=TURNS_LOG_SD, ge=0, description="Log-sd of turns per session.")
    failed_turns_multiplier: float = Field(
        default=2.0,
        ge=1,
        description="Sessions that end wrong run this many times more turns: failed runs cost ≈2x "
        "successful ones and run longer (OpenHands, SWE-bench analyses).",
    )
    repair_turns_fraction: float = Field(
        default=0.5,
        gt=0,
        description="Turns of a repair session as a fraction of the task's first-session turns. "
        "Assumption: a repair re-uses the context and fixes one thing, so it is shorter.",
    )
    initial_context_tokens: LogNormal = Field(
        default=LogNormal(median=62_000, sigma=0.3),
        description="Tokens of the first request: system prompt, tool definitions, project context, the "
        "files the task needs and the prompt. Assumption, set with tool_result_tokens so that the median "
        "request input comes out near 96k tokens (SemiAnalysis agent traces).",
    )
    output_tokens: LogNormal = Field(
        default=LogNormal(median=213, sigma=1.0),
        description="Output tokens per request: median ≈213 (SemiAnalysis agent traces); the log-sd "
        "of 1.0 is an assumption (a long tail of file-writing calls).",
    )
    tool_result_tokens: LogNormal = Field(
        default=LogNormal(median=1_500, sigma=1.0),
        description="Tokens a tool result adds to the context. Assumption, see initial_context_tokens.",
    )
    tool_s: LogNormal = Field(
        default=LogNormal(median=4.0, sigma=1.4),
        description="Tool execution seconds per turn (tests, builds), independent of the backend. "
        "Assumption: median 4 s, mean ≈11 s, p99 ≈100 s ('seconds to minutes', DESIGN.md §2).",
    )
    compact_at_fraction: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="The agent compacts its history when the context would pass this fraction of the "
        "backend model's context window. Assumption: agent harnesses compact automatically shortly "
        "before the window is full.",
    )
    compact_to_tokens: int = Field(
        default=40_000, ge=1, description="Context size after compaction, tokens. Assumption."
    )
    cache_ttl_s: float = Field(
        default=300.0,
        ge=0,
        description="Prompt-cache lifetime since the last request: 5 minutes (Anthropic pricing).",
    )
    cache_per_tier: bool = Field(
        default=True,
        description="The tier is part of the cache key, so switching tier starts a cold cache (Claude "
        "Code docs: toggling fast mode mid-session rebuilds the cache).",
    )

    @property
    def difficulty_names(self) -> list[str]:
        """Difficulty classes in declaration order."""
        return list(self.difficulties)

    def shares(self) -> list[float]:
        """Normalised shares, in ``difficulty_names`` order."""
        total = sum(d.share for d in self.difficulties.values())
        return [d.share / total for d in self.difficulties.values()]
