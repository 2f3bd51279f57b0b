"""The stages of the analytic mean-value model (``speedtrap.analysis.mean_value``, whose docstring
gives the equations): a task's agent turns, prompt-cache misses, tokens and time to first token,
segment classes, the ledger and the reworks that interrupt sessions, and the result,
:class:`TaskTimeBreakdown`, that :func:`expected_task_time` returns."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from speedtrap.analysis import lognormal as ln
from speedtrap.analysis import segments as sg
from speedtrap.analysis import task_paths as tp
from speedtrap.analysis.model_scope import resolve_backend, scope_problems
from speedtrap.config.backend import Backend
from speedtrap.config.dist import LogNormal
from speedtrap.config.ledger import LEDGER_CATEGORIES, WAITING_CATEGORIES
from speedtrap.config.scenario import Scenario
from speedtrap.config.tier import Tier
from speedtrap.serving.pricing import TOKENS_PER_MTOK
from speedtrap.serving.replica import ReplicaPhysics

__all__ = ["TaskModel", "TaskTimeBreakdown", "expected_task_time"]

_CHECKIN_CLASSES = ("checkin0", "checkin_repair")
_PHASES = {"waiting_ttft": "ttft", "waiting_generation": "gen", "waiting_tool": "tool"}


@dataclass(frozen=True)
class TaskTimeBreakdown:
    """Expected developer time and cost per completed task: one developer, one backend and tier,
    uncontended (see ``speedtrap.analysis.mean_value`` for the model).

    ``seconds`` maps each ledger category (:data:`LEDGER_CATEGORIES`) to expected developer seconds per
    completed task; their sum ``total_s`` is what a task costs the developer, so by renewal-reward
    a developer completes ``workday_s / total_s`` tasks per developer-day.
    """

    scenario: str
    backend: str
    tier: str
    seconds: dict[str, float]
    workday_s: float
    """Seconds in a developer-day."""
    turns: float
    """Expected agent turns (requests) per task, all sessions."""
    sessions: float
    """Expected agent sessions per task (first session + repairs)."""
    input_tokens: float
    """Expected input tokens per task (all requests)."""
    cached_tokens: float
    """Expected input tokens per task read from the prompt cache."""
    output_tokens: float
    """Expected output tokens per task."""
    usd_per_task: float
    """Expected US dollars billed per task."""
    ok_share: float
    """P(the first session's result is right)."""
    fixed_share: float
    """P(a caught mistake was fixed, by a repair or by hand)."""
    escaped_share: float
    """P(a wrong result escaped review)."""
    mean_ttft_s: float
    """Mean time to first token per request, s."""
    mean_decode_tok_s: float
    """Mean per-request decode speed (output tokens / decode seconds), tok/s."""

    @property
    def total_s(self) -> float:
        """Expected developer seconds per completed task (all categories)."""
        return float(sum(self.seconds.values()))

    @property
    def tasks_per_dev_day(self) -> float:
        """Completed tasks per developer-day: workday_s / total_s (renewal-reward)."""
        return self.workday_s / self.total_s

    @property
    def usd_per_dev_day(self) -> float:
        """US dollars billed per developer-day."""
        return self.usd_per_task * self.tasks_per_dev_day

    @property
    def waiting_s(self) -> float:
        """Expected seconds per task waiting on the agent (the four waiting categories)."""
        return sum(self.seconds[c] for c in WAITING_CATEGORIES)

    def shares(self) -> dict[str, float]:
        """Share of the developer's time in each category (they sum to 1)."""
        total = self.total_s
        return {c: self.seconds[c] / total for c in LEDGER_CATEGORIES}

    def summary(self) -> dict[str, float]:
        """The model's values of the ``RunResult.summary()`` keys it predicts (same names and units)."""
        shares = self.shares()
        out = {"tasks_per_dev_day": self.tasks_per_dev_day}
        out.update({f"share_{c}": shares[c] for c in LEDGER_CATEGORIES})
        out["waiting_share"] = sum(shares[c] for c in WAITING_CATEGORIES)
        out["fixing_share"] = shares["fixing"]
        out["ok_share"] = self.ok_share
        out["fixed_share"] = self.fixed_share
        out["escaped_share"] = self.escaped_share
        out["usd_per_task"] = self.usd_per_task
        out["usd_per_dev_day"] = self.usd_per_dev_day
        out["mean_queue_wait_s"] = 0.0
        out["mean_ttft_s"] = self.mean_ttft_s
        out["mean_decode_tok_s"] = self.mean_decode_tok_s
        return out


def expected_task_time(scenario: Scenario, backend: str | Backend | None = None) -> TaskTimeBreakdown:
    """The mean-value model of ``scenario``: one developer's expected seconds per completed task in
    each ledger category, turns, tokens and US dollars per task (see ``speedtrap.analysis.mean_value``).

    ``backend``: a backend of ``scenario``, a preset name or a :class:`Backend` spec; by default
    the backend of the scenario's ``always`` policy (or its only backend). Every session runs on
    it, uncontended, on the tier the ``always`` policy names for it, else its default tier.
    Raises ``ValueError`` for parallel sessions (``max_parallel_sessions > 1``), for a scenario
    routing between several backends when ``backend`` is not given, and when every tool call is
    malformed (no session would end).
    """
    problems = scope_problems(scenario)
    if problems:
        raise ValueError(
            "outside the analytic model's scope: "
            + "; ".join(problems)
            + " (scenario.with_overrides(ANALYTIC_RULES) puts it inside)"
        )
    name, spec, tier = resolve_backend(scenario, backend)
    return TaskModel(scenario, name, spec, tier).breakdown()


class TaskModel:
    """The stages of :func:`expected_task_time` (one instance per evaluation)."""

    def __init__(self, scenario: Scenario, name: str, spec: Backend, tier: Tier) -> None:
        dev = scenario.developer
        if dev.attention.max_parallel_sessions != 1:
            raise ValueError(
                "the mean-value model describes one agent session at a time "
                f"(developer.attention.max_parallel_sessions = 1, got {dev.attention.max_parallel_sessions})"
            )
        self.q = spec.quality.tool_error_prob
        if self.q >= 1.0:
            raise ValueError(
                "quality.tool_error_prob = 1: every tool call is malformed and no session ever ends"
            )
        self.scenario, self.name, self.spec, self.tier = scenario, name, spec, tier
        self.dev, self.att, self.mix = dev, dev.attention, scenario.task_mix
        self.theta = self.att.flow_threshold_s
        self.physics = ReplicaPhysics.from_backend(spec)
        failure = tp.class_failure_probs(scenario, spec)
        self.paths = tp.task_paths(scenario, failure)
        self.seg = tp.segmentation(self.paths.first.size - 1, self.q, dev.checkin_every_turns)
        self.c = dev.checkin_every_turns
        self.n_max = self.seg.n_max
        self.sessions = 1.0 + self.paths.repairs
        self.checkins_first = float(self.paths.first @ self.seg.checkins)
        self.checkins_repair = float(self.paths.repair @ self.seg.checkins)
        self.checkins = self.checkins_first + self.checkins_repair
        m = np.arange(self.paths.first.size)
        output_per_session = m / (1.0 - self.q) * self.mix.output_tokens.mean
        self.review_s = dev.review.base_s + dev.review.s_per_kilotoken * output_per_session / 1000.0
        hand_fix = dev.fixing.hand_fix_s
        self.rework = LogNormal(median=hand_fix.median * dev.fixing.rework_multiplier, sigma=hand_fix.sigma)

    def prefill_s(self, tokens: float) -> float:
        """Prefill seconds of ``tokens`` uncached input tokens (without the TTFT overhead)."""
        return self.physics.prefill_compute_s(round(tokens))

    # ------------------------------------------------------------------ agent turns along the task

    def agent_turns(self) -> None:
        """Turn weights, context, decode speed and the linear totals over all turns of a task."""
        mix, spec = self.mix, self.spec
        self.chain = tp.context_chain(
            mix.initial_context_tokens,
            mix.output_tokens,
            mix.tool_result_tokens,
            mix.compact_at_fraction * spec.llm.context_window_tokens,
            mix.compact_to_tokens,
        )
        chain = self.chain
        batch = 1 + min(spec.background_streams_per_replica, self.tier.batch_cap - 1)
        self.rate = np.array([self.physics.decode_rate_tok_s(batch, float(x)) for x in chain.tokens])
        self.weights, self.turns = tp.turn_weights(self.paths.total, self.q)
        per_turn = chain.p_input @ np.column_stack((1.0 / self.rate, self.rate))
        self.s_per_token_k = per_turn[:, 0]
        self.s_per_token = tp.weighted_sum(self.weights, self.s_per_token_k) / self.turns
        self.mean_rate = tp.weighted_sum(self.weights, per_turn[:, 1]) / self.turns
        planned = np.nonzero(self.paths.total)[0]
        self.gen_total = mix.output_tokens.mean * self.s_per_token * self.turns
        self.tool_total = float(planned @ self.paths.total[planned]) * mix.tool_s.mean
        self.input_total = tp.weighted_sum(self.weights, chain.mean_input)
        # turns k ≥ 1: compacted, or kept (then cold or warm)
        self.compactions = tp.weighted_sum(self.weights, chain.compact_prob) - chain.compact_prob[0]
        self.kept_weight = tp.weighted_sum(self.weights, 1.0 - chain.compact_prob) - (
            1.0 - chain.compact_prob[0]
        )
        self.kept_total = tp.weighted_sum(self.weights, chain.mean_input_kept) - chain.mean_input_kept[0]
        kept = self.kept_weight > 0
        self.kept_mean = self.kept_total / self.kept_weight if kept else float(mix.compact_to_tokens)
        self.growth_total = tp.weighted_sum(self.weights, chain.growth_kept)
        # prefill is affine in the tokens well above a few hundred: evaluate it at the mean growth
        self.warm_prefill = self.prefill_s(self.growth_total / self.kept_weight) if kept else 0.0
        self.ttft_warm = self.physics.ttft_overhead_s + self.warm_prefill

    def cache_misses(self) -> None:
        """Probabilities that the prompt cache has expired after a check-in, before a repair, and
        after a tool call (the gap since the last request exceeds the TTL)."""
        mix, dev, att, q = self.mix, self.dev, self.att, self.q
        ttl = mix.cache_ttl_s
        self.miss_tool = (1.0 - q) * float(1.0 - ln.cdf(mix.tool_s, ttl))
        if ttl <= 0.0:
            self.miss_checkin = self.miss_repair = 1.0
            return
        turn = sg.Turn(self.ttft_warm, self.s_per_token, mix.output_tokens, mix.tool_s, q)
        n = min(self.c, self.n_max)
        law = sg.segment_laws(turn, turn, n, only=n)[n]

        def resumption(y: np.ndarray) -> np.ndarray:
            return sg.resumption_cdf(
                law, y, self.theta, att.resumption_max_s, att.resumption_tau_s, att.resumption_random
            )

        points = 2000
        step = ttl / (points - 1)
        last_tool = (1.0 - q) * ln.on_grid(mix.tool_s, step, points)
        last_tool[0] += q
        checkin = ln.on_grid(dev.checkin_s, step, points)
        self.miss_checkin = 1.0 - sg.p_within(ttl, [last_tool, checkin], step, resumption)
        wrong = float(self.paths.repair_wrong.sum())
        self.miss_repair = 1.0
        if wrong > 0:
            review = LogNormal.from_mean(
                float(self.paths.repair_wrong @ self.review_s) / wrong, dev.review.sigma
            )
            parts = [
                last_tool,
                ln.on_grid(review, step, points),
                ln.on_grid(dev.fixing.diagnose_s, step, points),
            ]
            self.miss_repair = 1.0 - sg.p_within(ttl, parts, step, resumption)

    def tokens_and_ttft(self) -> None:
        """Uncached and cached input tokens and time to first token over a task's turns."""
        chain, mix = self.chain, self.mix
        within = max(0.0, self.turns - self.sessions - self.checkins)
        colds = (
            self.checkins * self.miss_checkin
            + self.paths.repairs * self.miss_repair
            + within * self.miss_tool
        )
        # a kept turn k ≥ 1 is cold (all its input uncached) or warm (only the growth uncached)
        self.cold_share = min(1.0, colds / self.kept_weight) if self.kept_weight > 0 else 0.0
        cold = self.cold_share * self.kept_weight
        self.uncached_total = (
            chain.mean_input[0]
            + self.compactions * mix.compact_to_tokens
            + self.cold_share * self.kept_total
            + (1.0 - self.cold_share) * self.growth_total
        )
        self.cached_total = max(0.0, self.input_total - self.uncached_total)
        self.ttft_total = (
            self.turns * self.physics.ttft_overhead_s
            + self.prefill_s(chain.mean_input[0])
            + self.compactions * self.prefill_s(mix.compact_to_tokens)
            + cold * self.prefill_s(self.kept_mean)
            + max(0.0, self.kept_weight - cold) * self.warm_prefill
        )
        self.agent_total = self.ttft_total + self.gen_total + self.tool_total

    # ------------------------------------------------------------------ segments

    def segment_classes(self) -> None:
        """The four segment classes: the opening and post-check-in segments of first sessions and of
        repairs, with their first turns' TTFT and their contexts' seconds per token."""
        chain, c = self.chain, self.c
        n_chain = self.s_per_token_k.size
        w_all = np.zeros(n_chain)
        w_all[: min(n_chain, self.weights.size)] = self.weights[:n_chain]
        w0, _ = tp.turn_weights(self.paths.first, self.q)
        w_first = np.zeros(n_chain)
        w_first[: min(n_chain, w0.size)] = w0[:n_chain]
        w_repair = np.maximum(w_all - w_first, 0.0)  # P(turn k belongs to a repair)
        k = np.arange(n_chain)
        inv_rate = 1.0 / self.rate

        def segment_class(ttft_first: float, w: np.ndarray, is_start: np.ndarray) -> sg.SegmentClass:
            """A class whose segments start at the turns k marked in ``is_start``, with turn weights w
            (P(the session runs turn k)); the turn at offset p of such a segment is turn k + p."""
            rows = np.nonzero(is_start & (w > 0))[0]
            if rows.size == 0:
                rows = np.nonzero(w_all)[0]
                w = w_all
            weight = w[rows]
            s_first, probs = ln.mixture_points(inv_rate, weight @ chain.p_input[rows])
            w_ext = np.concatenate((w, np.zeros(self.n_max)))
            g = np.concatenate((self.s_per_token_k, np.full(self.n_max, self.s_per_token_k[-300:].mean())))
            at: list[float] = []
            for p in range(self.n_max):
                reach = w_ext[rows + p]  # segments that get to offset p
                at.append(float(reach @ g[rows + p]) / float(reach.sum()) if reach.sum() > 1e-12 else at[-1])
            return sg.SegmentClass(ttft_first, self.ttft_warm, s_first, np.array(at) - at[0], probs)

        def input_at(w: np.ndarray) -> float:
            total = float(w.sum())
            return float(w @ chain.mean_input) / total if total > 1e-12 else self.kept_mean

        def cold_ttft(miss: float, tokens: float) -> float:
            return (
                self.physics.ttft_overhead_s
                + miss * self.prefill_s(tokens)
                + (1.0 - miss) * self.warm_prefill
            )

        is_checkin = (k >= c) & (k % c == 0)
        at_checkin = np.where(is_checkin, w_first, 0.0)
        everywhere = np.ones(n_chain, dtype=bool)
        self.classes = {
            "open0": segment_class(
                self.physics.ttft_overhead_s + self.prefill_s(chain.mean_input[0]), w_first, k == 0
            ),
            "checkin0": segment_class(
                cold_ttft(self.miss_checkin, input_at(at_checkin)), w_first, is_checkin
            ),
            # a repair's segments have no fixed place in the task: every repair turn counts as a start
            "open_repair": segment_class(
                cold_ttft(self.miss_repair, input_at(w_repair)), w_repair, everywhere
            ),
            "checkin_repair": segment_class(
                cold_ttft(self.miss_checkin, input_at(w_repair)), w_repair, everywhere
            ),
        }
        mix = self.mix
        if self.theta == math.inf:
            self.segs = {
                key: sg.unbounded_segments(cls, mix.output_tokens, mix.tool_s, self.q, self.n_max)
                for key, cls in self.classes.items()
            }
        else:
            att = self.att
            long_window = self.theta / sg.FINE_POINTS > sg.FINE_STEP_MAX_S
            method = sg.long_window_segments if long_window else sg.waiting_segments
            self.segs = {
                key: method(
                    cls,
                    mix.output_tokens,
                    mix.tool_s,
                    self.q,
                    self.n_max,
                    self.theta,
                    att.resumption_max_s,
                    att.resumption_tau_s,
                )
                for key, cls in self.classes.items()
            }

    def session_sum(self, per_class: dict[str, np.ndarray], *, last_only: bool = False) -> float:
        """Σ over a task's sessions of a per-segment quantity (arrays over n, by class); with
        ``last_only``, of each session's last segment only."""
        seg, c, total = self.seg, self.c, 0.0
        for opening, after, weight in (
            ("open0", "checkin0", self.paths.first),
            ("open_repair", "checkin_repair", self.paths.repair),
        ):
            x_open, x_after = per_class[opening], per_class[after]
            per_m = seg.single @ x_open + seg.later_last @ x_after
            if not last_only and c <= self.n_max:
                per_m = per_m + seg.checked * x_open[c] + seg.middle * x_after[c]
            total += float(weight @ per_m)
        return total

    # ------------------------------------------------------------------ the ledger

    def ledger(self) -> dict[str, float]:
        """Expected seconds per task by category, before escaped defects interrupt sessions."""
        dev, paths, fixing = self.dev, self.paths, self.dev.fixing
        seconds = dict.fromkeys(LEDGER_CATEGORIES, 0.0)
        if self.theta == math.inf:
            seconds["waiting_ttft"] = self.ttft_total
            seconds["waiting_generation"] = self.gen_total
            seconds["waiting_tool"] = self.tool_total
        else:
            for key, phase in _PHASES.items():
                seconds[key] = self.session_sum(
                    {k: getattr(s, f"wait_{phase}") for k, s in self.segs.items()}
                )
            seconds["switching"] = self.session_sum({k: s.switching for k, s in self.segs.items()})
        self.away = max(0.0, self.agent_total - sum(seconds[k] for k in _PHASES))
        seconds["prompting"] = dev.prompt_s.mean + self.checkins_first * dev.checkin_s.mean
        seconds["reviewing"] = float(paths.first @ self.review_s)
        seconds["fixing"] = (
            self.checkins_repair * dev.checkin_s.mean
            + float(paths.repair @ self.review_s)
            + paths.repairs * fixing.diagnose_s.mean
            + paths.hand_fixes * fixing.hand_fix_s.mean
            + paths.escapes * self.rework.mean
        )
        return seconds

    def interrupt(self, seconds: dict[str, float]) -> None:
        """Add what escaped defects' reworks change in running sessions (see ``mean_value``)."""
        paths, dev, att, mix = self.paths, self.dev, self.att, self.mix
        if paths.escapes <= 0.0:
            return
        turns = {key: cls.turns(mix.output_tokens, mix.tool_s, self.q) for key, cls in self.classes.items()}
        inter = {
            key: sg.interruptions(
                sg.segment_laws(*turns[key], self.n_max),
                self.rework,
                self.theta,
                att.resumption_max_s,
                att.resumption_tau_s,
            )
            for key in self.classes
        }
        c_ok = self.c <= self.n_max
        full_switch = {key: (s.switching[self.c] if c_ok else 0.0) for key, s in self.segs.items()}
        wrong = float(paths.repair_wrong.sum())
        review_wrong = float(paths.repair_wrong @ self.review_s) / wrong if wrong > 0 else 0.0
        before = {  # mean seconds of the human steps that end in each class's hand-off
            "open0": dev.prompt_s.mean,
            "checkin0": dev.checkin_s.mean + full_switch["checkin0"],
            "open_repair": full_switch["checkin0"] + review_wrong + dev.fixing.diagnose_s.mean,
            "checkin_repair": dev.checkin_s.mean + full_switch["checkin_repair"],
        }
        # per arrival: a rework surfacing in the waiting window pre-empts the rest of it; one that
        # waited for the hand-off pre-empts all of it
        per_segment, per_handoff = {}, {}
        for key, phase in _PHASES.items():
            per_segment[key] = {
                k: -getattr(s, f"moment_{phase}") - before[k] * getattr(s, f"wait_{phase}")
                for k, s in self.segs.items()
            }
            per_handoff[key] = {k: -getattr(s, f"wait_{phase}") for k, s in self.segs.items()}
        for key in ("away", "switching", "colds"):
            per_segment[key] = {
                k: getattr(x, key) + before[k] * getattr(x, f"handoff_{key}") for k, x in inter.items()
            }
            per_handoff[key] = {k: getattr(x, f"handoff_{key}") for k, x in inter.items()}
        keys = tuple(per_segment)
        first_order = {key: self.session_sum(per_segment[key]) for key in keys}
        # per second that a rework holds back: the mean hand-off change of a post-check-in segment
        zero = np.zeros(self.n_max + 1)
        per_held = {
            key: (
                self.session_sum(
                    {k: (x if k in _CHECKIN_CLASSES else zero) for k, x in per_handoff[key].items()}
                )
                / self.checkins
                if self.checkins > 0
                else 0.0
            )
            for key in keys
        }
        mean_d = {
            key: np.concatenate(([0.0], first.mean_s + np.arange(self.n_max) * rest.mean_s))
            for key, (first, rest) in turns.items()
        }
        last_time = self.session_sum(mean_d, last_only=True)
        # share of segment time whose segment ends in a check-in (not in the result)
        followed = min(1.0, max(0.0, 1.0 - last_time / self.agent_total)) if self.agent_total > 0 else 0.0
        pre_total = (
            dev.prompt_s.mean
            + self.checkins_first * before["checkin0"]
            + self.checkins_repair * before["checkin_repair"]
            + paths.repairs * before["open_repair"]
        )
        base = sum(seconds.values()) + self.away
        change = dict.fromkeys(keys, 0.0)
        for _ in range(100):
            cycle = base + sum(change[k] for k in keys if k != "colds")
            rate = paths.escapes / cycle  # reworks per second of the developer's time
            # reworks that meet an open session (directly, or held back by such a rework or by
            # the longer resumption it causes) and the seconds they hold later reworks back
            held = change["switching"] * followed
            overlapping = rate * (pre_total + self.agent_total + held)
            overlapping /= max(1.0 - rate * self.rework.mean * followed, 1e-9)
            held += overlapping * self.rework.mean * followed
            new = {k: rate * (first_order[k] + held * per_held[k]) for k in keys}
            converged = all(abs(new[k] - change[k]) <= 1e-10 * max(1.0, abs(new[k])) for k in keys)
            change = new
            if converged:
                break
        for key in _PHASES:
            seconds[key] = max(0.0, seconds[key] + change[key])
        seconds["switching"] += change["switching"]
        self.away = max(0.0, self.away + change["away"])
        lost = change["colds"] * followed * (1.0 - self.miss_checkin) * self.kept_mean
        self.uncached_total += lost
        self.cached_total = max(0.0, self.cached_total - lost)

    # ------------------------------------------------------------------ the result

    def breakdown(self) -> TaskTimeBreakdown:
        self.agent_turns()
        self.cache_misses()
        self.tokens_and_ttft()
        self.segment_classes()
        seconds = self.ledger()
        self.interrupt(seconds)
        seconds["other_work"] = self.att.other_work_prob * self.away
        seconds["idle"] = (1.0 - self.att.other_work_prob) * self.away
        mix = self.mix
        price = self.spec.price.for_cache_ttl(mix.cache_ttl_s)  # the write rate of the cache's lifetime
        uncached_usd = price.cache_write_usd_per_mtok if self.spec.cache_writes else price.input_usd_per_mtok
        output_total = self.turns * mix.output_tokens.mean
        usd = (
            self.tier.price_multiplier
            * (
                self.uncached_total * uncached_usd
                + self.cached_total * price.cache_read_usd_per_mtok
                + output_total * price.output_usd_per_mtok
            )
            / TOKENS_PER_MTOK
        )
        return TaskTimeBreakdown(
            scenario=self.scenario.name,
            backend=self.name,
            tier=self.tier.name,
            seconds={key: float(value) for key, value in seconds.items()},
            workday_s=self.scenario.workday_s,
            turns=self.turns,
            sessions=self.sessions,
            input_tokens=self.input_total,
            cached_tokens=float(self.cached_total),
            output_tokens=output_total,
            usd_per_task=float(usd),
            ok_share=self.paths.ok,
            fixed_share=self.paths.fixed,
            escaped_share=self.paths.escapes,
            mean_ttft_s=float(self.ttft_total / self.turns),
            mean_decode_tok_s=self.mean_rate,
        )
