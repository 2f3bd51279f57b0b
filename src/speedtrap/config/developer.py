"""The human side: prompting, check-ins, attention, review and fixing.

Every default cites docs/design.md §5 or says "assumption" and why.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, StrictBool, field_validator, model_validator

from speedtrap.config.base import Spec
from speedtrap.config.dist import MAX_LOG_SD, LogNormal


class Attention(Spec):
    """What a developer does while an agent works, and what switching away and back costs.

    **rule = "expected_wait"** (the default). When the developer hands a session to the agent,
    and again at the end of every turn they wait on, they estimate the wait until the agent next
    needs them — the turns left before its next check-in times the turn time they have seen on
    that backend and tier (a running mean of their own sessions' turns, queue included) — and
    stay, watching the stream, while that estimate is at most their patience for this episode;
    otherwise they leave: to the oldest item needing them, else a new agent session (below their
    number of parallel sessions), else other work. Patience differs between people (each
    developer's median is drawn once from ``patience_s``) and between episodes (log-sd
    ``patience_episode_sigma``). Coming back to a session, or going into other work, after
    ``t`` seconds away from it costs the resumption overhead of :meth:`resumption_mean_s`.

    **rule = "threshold"**: the rule before expected waits, kept for the analytic model and for
    comparison: every developer waits ``flow_threshold_s`` and then leaves, going into other work
    is free, and the overhead follows ``resumption_max_s·(1 − exp(−t/resumption_tau_s))``.
    """

    rule: Literal["expected_wait", "threshold"] = Field(
        default="expected_wait",
        description="How the developer decides to leave a running agent (see the class docstring).",
    )
    patience_s: LogNormal = Field(
        default=LogNormal(median=60.0, sigma=0.7),
        description="Per-developer median of the expected wait they sit through, seconds. "
        "Assumption, bounded by sources in docs/calibration.md: people notice a delay after ≈10 s "
        "(Nielsen) and builds of 2–10 min cost developers the most time (Google, C. Winter 2017); a "
        "median of 1 min with log-sd 0.7 puts 90% of developers between 19 s and 3.2 min.",
    )
    patience_episode_sigma: float = Field(
        default=0.5,
        ge=0,
        le=MAX_LOG_SD,
        description="Log-sd of a developer's patience from one wait to the next. Assumption.",
    )
    turn_prior_s: float = Field(
        default=15.0,
        gt=0,
        description="The turn time a developer expects before they have seen one on a backend, "
        "seconds. Assumption: a request and a tool call of a few seconds each.",
    )
    turn_memory: float = Field(
        default=0.2,
        gt=0,
        le=1,
        description="Weight of the latest turn in the developer's running mean of turn times "
        "(exponential smoothing). Assumption: the last five or so turns count.",
    )
    flow_threshold_s: float = Field(
        default=10.0,
        ge=0,
        allow_inf_nan=True,  # inf: never switch away
        description="rule = 'threshold' only: seconds of waiting after which people switch tasks: "
        "≈10 s (Nielsen, after Miller 1968).",
    )
    max_parallel_sessions: int = Field(
        default=1,
        ge=1,
        description="Agent sessions a developer keeps open at once, when parallel_sessions_probs is "
        "not given (with a mix given, any value but the default 1 is an error: the mix decides). "
        "Assumption: one, as in a single-terminal workflow.",
    )
    parallel_sessions_probs: list[float] | None = Field(
        default=None,
        min_length=1,
        description="Share of developers who keep 1, 2, 3, … agent sessions open at once (each "
        "developer's number is drawn once); None: every developer keeps max_parallel_sessions.",
    )
    other_work_prob: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Probability that leaving a running agent goes to productive other work rather than "
        "a break (idle). Assumption: work, since the backlog is endless; with rule = 'threshold' the "
        "model before expected waits used 0.5.",
    )
    resumption_max_s: float = Field(
        default=750.0,
        ge=0,
        description="Mean resumption overhead after a long time away: 10–15 min to resume after an "
        "interruption of real work (Parnin & Rugaber); 12.5 min.",
    )
    resumption_tau_s: float = Field(
        default=1_800.0,
        gt=0,
        description="Time away at which the overhead reaches 63% of its maximum (rule = 'threshold'). "
        "With rule = 'expected_wait' it is the scale of the long-break part of the curve.",
    )
    resumption_short_s: float = Field(
        default=4.0,
        ge=0,
        description="rule = 'expected_wait': resumption lag after a short suspension (seconds to a "
        "few minutes): a few seconds in task-interruption experiments (Altmann & Trafton 2004; Monk, "
        "Trafton & Boehm-Davis 2008: lags of ≈2–5 s that grow with the interruption's length).",
    )
    resumption_short_scale_s: float = Field(
        default=30.0,
        gt=0,
        description="rule = 'expected_wait': suspension length over which the short lag grows by one "
        "resumption_short_s per e-fold (logarithmic growth, memory-for-goals decay). Assumption.",
    )
    other_work_resumption_max_s: float = Field(
        default=120.0,
        ge=0,
        description="rule = 'expected_wait': mean overhead of getting back into the other work a "
        "developer left a long time ago, seconds (the long-break part of its resumption; the short lag "
        "is the same as a session's). 0 for shallow work (messages, reviews) up to Parnin & Rugaber's "
        "12.5 min for an interrupted programming task; 2 min an assumption, fitted by the calibration "
        "(docs/calibration.md). Before any other work that day there is nothing to resume: no cost.",
    )
    away_s: LogNormal | None = Field(
        default=LogNormal(median=120.0, sigma=1.5),
        description="rule = 'expected_wait': seconds a developer stays on other work or a break before "
        "they next look at their agent sessions (a new episode is drawn at each look); a session that "
        "needs them meanwhile waits. Fitted to the human response gap of agent traces (TraceLab: median "
        "1.4 min, p90 20.6 min; docs/calibration.md); the default is an assumption inside the fitted "
        "ranges. None: a session needing the developer interrupts other work or a break at once.",
    )
    notice_prob: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="rule = 'expected_wait', with away episodes: probability that a session needing the "
        "developer during an away episode ends it at once (they notice the agent's notification: Claude "
        "Code's terminal or desktop notification, Codex's notify hook) instead of waiting for their next "
        "look. 0: the model before 2026-12-07 (they look only when the episode ends); 1 with "
        "cued_resumption false: the same as away_s None. Alerts draw people back to the alerting "
        "application within seconds in a share of cases only (Iqbal & Horvitz, CHI 2007, field study "
        "of email and IM alerts); no study gives "
        "the share for coding agents, so the calibration fits it to how often developers answer within "
        "15 s after a long agent stretch (docs/calibration.md).",
    )
    cued_resumption: StrictBool = Field(
        default=True,
        description="rule = 'expected_wait', with notice_prob > 0: a return the agent's notification "
        "prompts (a noticed session, served as the away episode ends) pays only the short-suspension lag "
        "of resumption_mean_s, not its long-interruption part: the check-in on screen is a cue to the "
        "task's goal, and cued resumptions are short (memory for goals: Altmann & Trafton 2002; a cue "
        "at the point of return shortens the resumption lag: Trafton, Altmann, Brock & Mintz 2003). "
        "A return at the end of an away episode, uncued, pays the whole resumption. False: noticed "
        "returns pay it too (the model before, where notice_prob = 1 is the same as away_s None). "
        "Added in the fourth round of 2026-12-07 for the in-sample reply signature (answers within "
        "15 s after long agent stretches, 19% in the vendored logs, 3% on the ensemble of 2026-12-07); "
        "docs/calibration.md.",
    )
    resumption_random: StrictBool = Field(
        default=True,
        description="Draw the overhead from an exponential around its mean. With a 12.5 min mean "
        "this puts ≈8% of long-break resumptions under one minute (Parnin & Rugaber: ~10%).",
    )

    @model_validator(mode="after")
    def _probabilities(self) -> Attention:
        probs = self.parallel_sessions_probs
        if probs is not None and (
            any(not (0.0 <= p <= 1.0) for p in probs) or not math.isclose(sum(probs), 1.0, abs_tol=1e-6)
        ):
            raise ValueError(
                f"parallel_sessions_probs must be probabilities of 1, 2, … sessions summing to 1, got {probs}"
            )
        if probs is not None and self.max_parallel_sessions != 1:
            # the mix overrides the cap: a cap set beside it would change nothing (issue 40, point 8)
            raise ValueError(
                f"max_parallel_sessions = {self.max_parallel_sessions} has no effect while "
                f"parallel_sessions_probs = {probs} is set (the mix decides each developer's sessions): "
                "set developer.attention.parallel_sessions_probs=null beside it, or give the mix itself "
                "(e.g. [0, 1] for two sessions each)"
            )
        return self

    def resumption_mean_s(self, away_s: float) -> float:
        """Mean resumption overhead in seconds after ``away_s`` seconds away.

        ``threshold`` rule: R_max·(1 − e^(−t/τ)). ``expected_wait`` rule: a short-suspension lag
        that grows with the log of the time away, r·ln(1 + t/s), plus the long-interruption cost
        R_max·(1 − e^(−t/τ))², which is negligible for waits of minutes (3 min: 0.3% of R_max)
        and reaches R_max over breaks of an hour and more (Parnin & Rugaber's interruptions).
        """
        if away_s <= 0.0:
            return 0.0
        long = -math.expm1(-away_s / self.resumption_tau_s)
        if self.rule == "threshold":
            return self.resumption_max_s * long
        return self.short_lag_mean_s(away_s) + self.resumption_max_s * long * long

    def short_lag_mean_s(self, away_s: float) -> float:
        """The ``expected_wait`` rule's short-suspension lag after ``away_s`` seconds away, s:
        r·ln(1 + t/s) (``resumption_short_s``, ``resumption_short_scale_s``)."""
        return self.resumption_short_s * math.log1p(away_s / self.resumption_short_scale_s)

    def cued_resumption_mean_s(self, away_s: float) -> float:
        """Mean resumption in seconds after ``away_s`` seconds away when the agent's notification
        prompted the return (``cued_resumption``, ``expected_wait``): the short-suspension lag
        (:meth:`short_lag_mean_s`) alone; otherwise :meth:`resumption_mean_s`."""
        if away_s <= 0.0 or not self.cued_resumption or self.rule == "threshold":
            return self.resumption_mean_s(away_s)
        return self.short_lag_mean_s(away_s)

    def other_work_resumption_mean_s(self, away_s: float | None) -> float:
        """Mean seconds to get back into other work left ``away_s`` seconds ago (None: not yet
        today, nothing to resume): the short lag of :meth:`resumption_mean_s` plus
        ``other_work_resumption_max_s``·(1 − e^(−t/τ))². The ``threshold`` rule enters other work for free."""
        if away_s is None or away_s <= 0.0 or self.rule == "threshold":
            return 0.0
        long = -math.expm1(-away_s / self.resumption_tau_s)
        return self.short_lag_mean_s(away_s) + self.other_work_resumption_max_s * long * long


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
    sigma: float = Field(
        default=0.5, ge=0, le=MAX_LOG_SD, description="Log-sd of review time around its mean. Assumption."
    )
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
        description="Seconds to fix by hand: mean ≈15 min (METR RCT data); log-sd 0.8 an assumption. "
        "With effort sizing this is the fix of a task of mean effort, scaled by effort / mean effort.",
    )
    diagnose_s: LogNormal = Field(
        default=LogNormal(median=180.0, sigma=0.6),
        description="Seconds to diagnose a mistake and write the repair prompt. Assumption: a few minutes.",
    )
    max_repair_sessions: int = Field(
        default=2,
        ge=0,
        le=100,
        description="Repair sessions tried before the developer fixes by hand. Assumption.",
    )
    escape_delay_s: float = Field(
        default=28_800.0,
        gt=0,
        description="Mean working seconds (exponential) before an escaped defect surfaces. "
        "Assumption: about one working day.",
    )
    redo_prob: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Probability that a caught mistake fixed by hand is beyond repair: the developer "
        "throws the agent's work away and does the delegated part by hand from scratch (over-delegation "
        "noticed late; METR 2025 reports developers discarding AI output). Fitted by the calibration; "
        "0: every hand fix is a fix.",
    )
    rework_multiplier: float = Field(
        default=3.0,
        ge=0,
        description="Rework of a surfaced defect costs this multiple of a hand fix. Assumption: defects "
        "found later cost several times more to fix.",
    )


class Manual(Spec):
    """Working by hand (policy ``manual``, and the part of a task a hybrid developer keeps)."""

    escape_prob: float = Field(
        default=0.10,
        ge=0,
        le=1,
        description="Probability that a hand-made change ships with a defect that surfaces later and "
        "is reworked (fixing). Assumption, see docs/calibration.md: the developer's own testing is "
        "inside the effort; this is what gets past it and past code review.",
    )


class Developer(Spec):
    """One developer's working habits (every developer of a scenario shares them; attention
    patience and parallel sessions are drawn per developer from the distributions given)."""

    prompt_s: LogNormal = Field(
        default=LogNormal(median=90.0, sigma=0.6),
        description="Seconds to write a task's opening prompt. Assumption.",
    )
    checkin_every_turns: int = Field(
        default=4,
        ge=1,
        description="Mean agent turns between human check-ins. Calibrated: a stretch of 4 turns of "
        "≈10 s lasts ≈40 s, the median time from a user message to the agent's answer in Claude Code "
        "and Codex sessions (TraceLab: 38 s; Anthropic, 'Measuring agent autonomy': ≈45 s). The "
        "longest run of tool calls per transcript, 10–21 (Anthropic), is a maximum, not the mean.",
    )
    checkin_random: StrictBool = Field(
        default=True,
        description="Stretch lengths are geometric with mean checkin_every_turns (a check-in is "
        "equally likely after any turn: the long tail of autonomous stretches, p90 ≈10× the median "
        "in TraceLab); false: exactly every checkin_every_turns turns.",
    )
    stretch_sigma: float = Field(
        default=0.0,
        ge=0,
        le=MAX_LOG_SD,
        description="With checkin_random: 0 draws geometric stretch lengths; above 0, log-normal ones "
        "with mean checkin_every_turns and this log-sd (rounded to whole turns, at least one): the heavy "
        "tail of agent stretches (TraceLab: p90 ≈10× the median). Fitted by the calibration "
        "(docs/calibration.md); 0 (geometric) when not given.",
    )
    stretches_per_transcript: float | None = Field(
        default=None,
        ge=1,
        description="Mean human turns (agent stretches) per agent transcript: after a geometric number of "
        "stretches with this mean the developer starts a fresh transcript on the same attempt — a new "
        "prompt (prompt_s, not checkin_s) and a context back to the task's opening size, with a cold "
        "prompt cache. Anthropic's Claude Code transcripts had 4.1 human turns each in Aug 2025 (6.2 in "
        "Feb 2025); fitted by the calibration. None: one transcript per session.",
    )
    reject_prob: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="Probability that the developer rejects the output of an agent stretch at a check-in: "
        "the agent redoes that stretch's turns. METR's 2025 developers accepted fewer than 44% of AI "
        "generations (Becker et al. 2025); fitted by the calibration. 0: every check-in accepts.",
    )
    checkin_s: LogNormal = Field(
        default=LogNormal(median=30.0, sigma=0.6),
        description="Seconds to read the agent's progress and reply at a check-in. Assumption.",
    )
    delegated_fraction: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="Share of a task's effort the developer hands to the agent; the rest they do by "
        "hand, while the agent runs where they can (a hybrid developer). 1: hand the whole task to "
        "the agent. Agent turns and fix times scale with the delegated effort.",
    )
    attention: Attention = Field(default_factory=Attention)
    review: Review = Field(default_factory=Review)
    fixing: Fixing = Field(default_factory=Fixing)
    manual: Manual = Field(default_factory=Manual)

    @field_validator("prompt_s")
    @classmethod
    def _prompting_takes_time(cls, prompt_s: LogNormal) -> LogNormal:
        # Every task then costs some human time, so a run always reaches its horizon.
        if prompt_s.median <= 0:
            raise ValueError("median must be positive: every task starts with some human time")
        return prompt_s
