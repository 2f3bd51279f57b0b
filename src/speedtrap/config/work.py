"""The work developers hand to coding agents: task difficulty, agent turns, tokens, tool time.

Every default cites docs/design.md §5 or says "assumption" and why.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, StrictBool, model_validator

from speedtrap.config.base import Spec
from speedtrap.config.dist import MAX_LOG_SD, LogNormal

TURNS_LOG_SD = 0.455
"""Log-sd of agent turns per session. Fitted to GPT-5 on SWE-bench (mini-SWE-agent): mean 13,
p90 21, a p90/mean ratio of 1.62; a log-normal has p90/mean = exp(1.2816σ − σ²/2), which gives
σ = 0.455. The same shape is used at every mean."""


class Difficulty(Spec):
    """One difficulty class of tasks.

    With ``TaskMix.sizing = "effort"`` (the default) a task's class is the bucket its human-effort
    size falls in: the first class whose ``max_effort_s`` is at least the size (the last class has
    none). With ``sizing = "difficulty"`` the class is drawn by ``share`` and ``turns_mean`` is the
    mean number of agent turns (request + tool call) of a first session whose result turns out
    right; sessions that end wrong run ``failed_turns_multiplier`` times longer (TaskMix).
    """

    max_effort_s: float | None = Field(
        default=None,
        gt=0,
        description="Upper bound of the class's human-effort bucket, seconds (None: unbounded; "
        "sizing = 'effort').",
    )
    share: float | None = Field(
        default=None, gt=0, description="Relative weight in the task mix (sizing = 'difficulty')."
    )
    turns_mean: float | None = Field(
        default=None,
        ge=1,
        description="Mean agent turns of a successful first session (sizing = 'difficulty').",
    )
    human_length_s: float | None = Field(
        default=None,
        gt=0,
        description="Representative human length of the class's tasks, seconds (sizing = 'difficulty'): "
        "the task length the backend's success curve is read at (config/tier.py, Quality).",
    )


def _default_difficulties() -> dict[str, Difficulty]:
    # Shares: SWE-bench Verified's difficulty annotation, 194 "<15 min" / 261 "15 min–1 h" / 45 "≥1 h"
    # (42 "1–4 h" + 3 ">4 h") of 500 tasks: the buckets DEFAULT_FAILURE_PROB in config/tier.py uses.
    # Turns: assumption. Agent steps per task are GPT-5 mean 13, Sonnet 4 mean 37, Sonnet 4.5 mean 51
    # (SWE-bench, mini-SWE-agent). Means 22 / 38 / 65 give a first-session mean of 34 turns and,
    # with failures running 2x longer, an overall mean of ≈42, between the two Claude models; with a
    # check-in every 15 turns that is ≈4 human turns per session (Anthropic: ≈4–6).
    # Effort buckets (sizing = "effort"): the same SWE-bench annotation is an estimate of the time an
    # experienced engineer needs by hand — "<15 min", "15 min–1 h", "≥1 h" — so the classes are
    # those buckets of the task's human-effort size.
    # Human lengths (sizing = "difficulty": the length the success curve is read at): the buckets'
    # representative lengths, 7.5 min, 30 min and 2 h (the middle of "<15 min", and the geometric
    # middles of "15 min–1 h" and "1–4 h", which holds 42 of the 45 "≥1 h" tasks); the same lengths
    # as the success curve's reference distribution (config/tier.py, REFERENCE_LENGTHS_MIN).
    return {
        "easy": Difficulty(max_effort_s=900.0, share=194 / 500, turns_mean=22.0, human_length_s=450.0),
        "medium": Difficulty(max_effort_s=3600.0, share=261 / 500, turns_mean=38.0, human_length_s=1800.0),
        "hard": Difficulty(share=45 / 500, turns_mean=65.0, human_length_s=7200.0),
    }


TURNS_EXPONENT = 0.4
"""Agent turns grow as (effort)^0.4. Fitted to the per-class turn means above (22 / 38 / 65) at
the geometric middles of their effort buckets (7.5 min, 30 min, 2 h): 38·(¼)^0.4 = 21.8 and
38·4^0.4 = 66.2. Assumption: the same elasticity beyond those buckets."""


class TaskMix(Spec):
    """What tasks look like and how an agent session on them unfolds, turn by turn.

    Context grows turn by turn: turn ``k``'s input is the initial context plus every earlier
    turn's output and tool result; the previous request's input is read from the prompt cache
    when it is still warm (same backend and tier, within ``cache_ttl_s``).
    """

    sizing: Literal["effort", "difficulty"] = Field(
        default="effort",
        description="'effort': every task has a human-effort size (effort_s) that sets its class, "
        "turns and fix times; 'difficulty': the class is drawn by share and turns by class "
        "(no size; the model before effort sizing, which the analytic model covers).",
    )
    effort_s: LogNormal = Field(
        default=LogNormal(median=4_494.0, sigma=0.806),
        description="Seconds an experienced developer needs to do a task by hand: log-normal, median "
        "74.9 min, log-sd 0.806 — the total times (to pull request plus after review) of the 110 "
        "AI-disallowed issues of METR's 2025 RCT, computed from its released data.",
    )
    reference_effort_s: float = Field(
        default=1_800.0,
        gt=0,
        description="Effort at which a successful first session plans turns_at_reference turns: "
        "30 min, the geometric middle of the '15 min–1 h' bucket.",
    )
    turns_at_reference: float = Field(
        default=38.0,
        ge=1,
        description="Median agent turns of a successful first session on a task of reference_effort_s "
        "(the medium class's 38 turns, see Difficulty).",
    )
    turns_exponent: float = Field(
        default=TURNS_EXPONENT,
        ge=0,
        description="Elasticity of agent turns to task effort (turns ∝ effort^exponent).",
    )
    difficulties: dict[str, Difficulty] = Field(default_factory=_default_difficulties, min_length=1)
    turns_log_sd: float = Field(
        default=TURNS_LOG_SD, ge=0, le=MAX_LOG_SD, description="Log-sd of turns per session."
    )
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
        "Assumption: median 4 s, mean ≈11 s, p99 ≈100 s ('seconds to minutes', docs/design.md §2).",
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
        allow_inf_nan=True,  # inf: the cache never expires
        description="Prompt-cache lifetime since the last request, s: 5 minutes by default (Anthropic's "
        "default lifetime); the calibrated ensemble varies it from 5 minutes to 1 hour (Anthropic's optional "
        "lifetime, which Claude Code uses on a subscription). A lifetime beyond 5 minutes bills cache writes "
        "at the 1-hour rate (Price.for_cache_ttl).",
    )
    shared_prefix_tokens: int = Field(
        default=19_000,
        ge=0,
        description="Tokens at the head of every conversation that are the same in all of a developer's "
        "conversations (the harness's system prompt and tool definitions), so that a new conversation "
        "reads them from the prompt cache while any of the developer's conversations on the same "
        "backend (and tier) has used it within cache_ttl_s. Part of initial_context_tokens, never more "
        "than it. ≈19k tokens for Claude Code (system prompt and tool definitions, measured on the wire: "
        "hpfreilabs.com/blog/anatomy-of-claude-code-session); 12k–20k typical (markalston.net Claude Code "
        "wiki, 'The System Prompt'); 0: every new conversation starts cold.",
    )
    cache_per_tier: StrictBool = Field(
        default=True,
        description="The tier is part of the cache key, so switching tier starts a cold cache (Claude "
        "Code docs: toggling fast mode mid-session rebuilds the cache).",
    )

    @model_validator(mode="after")
    def _classes_fit_sizing(self) -> TaskMix:
        names = list(self.difficulties)
        if self.sizing == "effort":
            if not self.effort_s.median > 0:
                raise ValueError(
                    "effort_s.median: must be positive with sizing = 'effort' (a task's turns and fixing "
                    f"scale with its effort), got {self.effort_s.median}"
                )
            bounds = [self.difficulties[n].max_effort_s for n in names]
            if bounds[-1] is not None:
                raise ValueError(
                    f"difficulties.{names[-1]}.max_effort_s: the last class takes every larger task; "
                    "leave it out"
                )
            last = 0.0
            for name, bound in zip(names[:-1], bounds[:-1], strict=True):
                if bound is None:
                    raise ValueError(
                        f"difficulties.{name}.max_effort_s: required with sizing = 'effort' (the upper "
                        "bound of the class's effort bucket, s), or set task_mix.sizing = 'difficulty'"
                    )
                if bound <= last:
                    raise ValueError(f"difficulties.{name}.max_effort_s: bounds must increase, got {bound}")
                last = bound
        else:
            for name, d in self.difficulties.items():
                for field in ("share", "turns_mean", "human_length_s"):
                    if getattr(d, field) is None:
                        raise ValueError(f"difficulties.{name}.{field}: required with sizing = 'difficulty'")
        return self

    def turns_median(self, effort_s: float) -> float:
        """Median turns of a successful first session on a task of ``effort_s`` (effort sizing)."""
        return float(self.turns_at_reference * (effort_s / self.reference_effort_s) ** self.turns_exponent)

    def agent_minutes(self, effort_s: float, difficulty: str, delegated_fraction: float) -> float:
        """The length t of a task's agent work, in minutes of human work, at which the backend's
        success curve is read: the delegated part (``delegated_fraction``) of the task's human
        effort ``effort_s`` (sizing = 'effort') or of its class's ``human_length_s`` (sizing =
        'difficulty')."""
        if self.sizing == "effort":
            length_s = effort_s
        else:
            length_s = self.difficulties[difficulty].human_length_s or 0.0
        return delegated_fraction * length_s / 60.0

    def difficulty_of(self, effort_s: float) -> str:
        """The class whose effort bucket holds ``effort_s`` (effort sizing)."""
        for name, d in self.difficulties.items():
            if d.max_effort_s is None or effort_s <= d.max_effort_s:
                return name
        return name  # pragma: no cover - the validator makes the last class unbounded

    @property
    def mean_effort_s(self) -> float:
        """Mean human effort per task, seconds (the unit that values other work)."""
        return self.effort_s.mean

    @property
    def difficulty_names(self) -> list[str]:
        """Difficulty classes in declaration order."""
        return list(self.difficulties)

    def shares(self) -> list[float]:
        """Normalised shares, in ``difficulty_names`` order."""
        if self.sizing == "effort":
            from scipy.stats import norm

            mu, sigma = math.log(max(self.effort_s.median, 1e-300)), self.effort_s.sigma
            cdf = [
                1.0
                if d.max_effort_s is None
                else float(norm.cdf((math.log(d.max_effort_s) - mu) / sigma))
                if sigma > 0
                else float(math.log(d.max_effort_s) >= mu)
                for d in self.difficulties.values()
            ]
            return [b - a for a, b in zip([0.0, *cdf[:-1]], cdf, strict=True)]
        shares = [d.share or 0.0 for d in self.difficulties.values()]
        total = sum(shares)
        return [s / total for s in shares]
