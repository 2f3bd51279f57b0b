# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A typed compiled core of the headline scenario's hot path (docs/performance.md, "A typed core").

The workflow model's event loop, serving pool, agent sessions and developers, with the Mesa model
and agents taken off the event path: the event list is a binary heap of C structs in (time,
insertion) order; a replica, a request, a session, a developer and a task's running counters are
``cdef`` classes or C arrays, and every per-turn step (submitting a request, placing and admitting
it, prefill and decode at the live rate with exact re-timing, the request's end, the tool call, the
developer's estimate of the wait and their patience, the ledger's wait split) runs in C.

It follows the Python model rule for rule (``speedtrap.agents.session``, ``developer``,
``attention``; ``speedtrap.serving.pool``, ``admission``, ``replica_clock``, ``decode_rate``), for
the rules the headline scenario uses: one backend in use, its tiers routed by ``always``,
``fast_share`` (a tier per developer), ``interactive_fast`` or ``background_slow`` (a tier per turn,
as the developer attends the session or not), and admitted as the pool admits several tiers (priority
levels, per-tier batch caps, reservations and prices); the
``expected_wait`` attention rule, every task delegated (``delegated_fraction`` 1), random
check-in stretches split into transcripts, review and repair, hand fixes and escaped defects.
The draws are the model's own, stream for stream and in the same order: the tasks come from
:class:`speedtrap.models.tasks.TaskSource` (Python, once per 16 tasks); each attempt's per-turn,
stretch, check-in and review draws (:class:`speedtrap.agents.task.TurnDraws`, ``Task.rng``) and the
attention rule's episode draws (:class:`speedtrap.agents.attention.AttentionRule`, from the
developer's generator) are made in C, through numpy's C distributions ("random draws" below).
The physics is the pool's flat decode-rate and prefill functions, written again in C over the
same step constants. A prototype outside the package, for measurement: it keeps the ledger, the
task records and the finished requests, and builds the run's ledger, task and request tables.
"""

from libc.math cimport ceil, exp, expm1, fmax, fmin, log, log1p, pow, rint, INFINITY, NAN
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from cpython.pycapsule cimport PyCapsule_GetPointer
cimport numpy as cnp
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_exponential, random_geometric, random_lognormal, random_standard_normal, random_standard_uniform,
)

import math
from array import array
from collections import deque

import numpy as np
import pandas as pd

cdef double INF = INFINITY
cdef long TALLY_BLOCK = 1024
cdef double MAX_COUNT = 1e15   # speedtrap.agents.task.MAX_COUNT

cnp.import_array()
cnp.import_ufunc()

cdef enum:
    WAKE = 0      # a replica's one wake-up (who: replica, version: its version)
    TOOL = 1      # a session's tool call ends (who: session id)
    STEP = 2      # a developer's human step ends (who: developer)
    AWAY = 3      # a developer's away episode ends (who: developer, version)
    DEFECT = 4    # an escaped defect surfaces (who: task id)
    HYBRID = 5    # a developer's hybrid hand work ends (who: developer, version)

# developer activities: ledger columns as in speedtrap.models.ledger (WAITING is split into 1-4)
cdef enum:
    PROMPTING = 0
    WAITING = 1
    REVIEWING = 5
    FIXING = 6
    SWITCHING = 7
    MANUAL = 8
    OTHER_WORK = 9
    IDLE = 10
    NCOLS = 11

# what a human step does when it ends (Developer._then)
cdef enum:
    THEN_NONE = 0
    THEN_HAND_OFF = 1
    THEN_AFTER_REVIEW = 2
    THEN_AFTER_HAND_FIX = 3
    THEN_AFTER_REWORK = 4
    THEN_FOCUS_STEP = 5
    THEN_ENTER_OTHER_WORK = 6
    THEN_AFTER_HAND_PART = 7
    THEN_AFTER_MANUAL_TASK = 8

cdef enum:
    CHECKIN = 1
    REVIEW = 2


# ---------------------------------------------------------------------------------- the parts

include "_core_draws.pxi"
include "_core_queues.pxi"
include "_core_physics.pxi"
include "_core_pool.pxi"


# ---------------------------------------------------------------------------------- agents

cdef class CTask:
    """A task's per-turn running counters in C (flushed to its Task object at the end)."""
    cdef object task
    cdef long id, index, dev
    cdef long context_tokens, cache_prefix_tokens, requests, turns, input_tokens, cached_tokens
    cdef long output_tokens, attempts, wrong_attempts, outputs, outputs_rejected, initial_context
    cdef double cache_time_s, cost_usd, tool_s, human_s
    cdef int cache_tier      # the conversation's prompt-cache key: a tier's index (-1: None)
    cdef long tier_mask      # the tiers its requests ran on (bits, the first 63), and in the order first used
    cdef list tiers_used

    def flush(self):
        t = self.task
        t.context_tokens = self.context_tokens
        t.cache_prefix_tokens = self.cache_prefix_tokens
        t.cache_time_s = self.cache_time_s
        t.requests = self.requests
        t.turns = self.turns
        t.input_tokens = self.input_tokens
        t.cached_tokens = self.cached_tokens
        t.output_tokens = self.output_tokens
        t.cost_usd = self.cost_usd
        t.tool_s = self.tool_s
        t.human_s = self.human_s
        t.attempts = self.attempts
        t.wrong_attempts = self.wrong_attempts
        t.outputs = self.outputs
        t.outputs_rejected = self.outputs_rejected


cdef class CSession:
    """An agent session's state (speedtrap.agents.session.Session): turns, stretches, check-ins."""
    cdef long id, attempt, planned_turns, turns_done, checkins_done, output_tokens, need
    cdef long stretches, stretch_start, next_checkin, transcript, transcript_left, req
    cdef int tier            # the current turn's tier (Session._tier, its estimate and cache key)
    cdef bint wrong, new_transcript, random_stretches, has_left
    cdef double tool_error_prob, left_at, idle_at_leave_s, turn_start_s, tool_end_s
    cdef double checkin_every, stretch_sigma, per_transcript  # per_transcript 0: not split
    cdef CTask task
    cdef CDev dev
    cdef list log
    # TurnDraws in C: the attempt's streams (Task.rng) and its per-turn draws so far
    cdef Stream agent, checkin, stretch, review
    cdef long drawn, drawn_cap
    cdef long* out
    cdef long* result
    cdef double* tool_s
    cdef double* u_tool

    def __dealloc__(self):
        free(self.out)
        free(self.result)
        free(self.tool_s)
        free(self.u_tool)


cdef class CDev:
    """A developer's state (speedtrap.agents.developer.Developer): activity, focus, sessions, what
    waits for them, and their AttentionRule."""
    cdef long index, activity, max_sessions, then, away_version
    cdef double since, idle_total_s, other_left_s, episode_patience_s
    cdef bint has_other_left, away_pending, hybrid_pending
    cdef long hybrid_version
    cdef CTask hybrid_task
    cdef str outcome_in_hand
    cdef CSession focus
    cdef CTask label_task, task_in_hand
    cdef list sessions
    cdef object pending, tasks, attention
    cdef bitgen_t* att         # the AttentionRule's generator, drawn from in C
    cdef double patience_s
    cdef double* seconds
    cdef list closed_stretches
    # Session.estimate_key and the prompt-cache key are (backend, tier): per tier of the backend
    cdef double* estimates      # AttentionRule._turn_estimate by tier (NaN: none learnt yet)
    cdef double* prompt_cache   # Developer.prompt_cache by tier (-inf: never)
    cdef int tier_session, tier_attending, tier_away   # the developer's policy's routes (tier indices)

    def __dealloc__(self):
        free(self.estimates)
        free(self.prompt_cache)


cdef inline bint interruptible(CDev d) noexcept:
    """What a developer is doing may be interrupted by something that needs them (Developer's
    ``_INTERRUPTIBLE``)."""
    return d.activity == WAITING or d.activity == OTHER_WORK or d.activity == IDLE


cdef class Core:
    """One run of the workflow model (speedtrap.models.workflow.WorkflowModel): its event loop, one
    backend's serving pool (speedtrap.agents.backend.Backend), the developers (Developer), their
    sessions (Session) and tasks (Task), rule for rule and draw for draw; each method names the Mesa
    method it mirrors, which is the reference (a rule is written there first)."""
    cdef EventLoop loop
    cdef Requests reqs
    cdef Pool pool
    cdef list devs, sessions, ctasks
    cdef dict escaped          # tasks whose defect has not surfaced yet, by id
    cdef long next_task, turns
    cdef object task_tally, request_tally
    cdef double* ledger
    cdef object mix, spec, quality, tasks_list, backend_name
    cdef list tier_names
    cdef int ntiers
    cdef long capacity_streams
    # specs read once
    cdef double compact_at, ttl, turn_memory, turn_prior, detect_prob, hand_fix_prob
    cdef double review_base_s, review_s_per_kt, res_short_s, res_short_scale, res_max, res_tau
    cdef double ow_max, failed_mult, repair_fraction
    cdef long compact_to, shared_prefix, max_repairs
    cdef double reject_prob, redo_prob, other_work_prob, notice_prob, manual_escape_prob
    cdef bint manual_only
    cdef bint keep_stretches
    # the draws: the root seed, the streams' spawn-key tags and the distributions drawn in C
    cdef Seed root
    cdef long agent_stream, checkin_stream, stretch_stream, review_stream, redo_stream
    cdef LogN output_d, tool_d, result_d, checkin_d, prompt_d, away_d
    cdef double episode_sigma
    cdef bint away_on, resumption_random, cued_resumption

    def __cinit__(self, scenario, seed, str name, list tiers, list routes, speed, list infos,
                  bint tables=True):
        """WorkflowModel.__init__: the streams spawned from the root ``seed``, the backend ``name`` with
        its ``tiers`` (names, the spec's order) and their ``TierAdmission`` ``infos``, the developers
        (Developer.__init__, each with its TaskSource and AttentionRule, and its policy's routes:
        ``routes[i]``, the tier indices of developer ``i``'s sessions, of a turn they attend and of one
        they do not, from ``RoutingPolicy.for_developer``, ``for_session`` and ``for_turn``) and their
        start."""
        cdef CDev d
        cdef long i, k
        from speedtrap.agents import task as task_module
        from speedtrap.agents.attention import AttentionRule
        from speedtrap.models.tasks import ATTENTION_STREAM, TaskSource, stream_rng

        bspec = scenario.backends[name]
        self.loop = EventLoop()
        self.reqs = Requests()
        self.pool = Pool(self.loop, self.reqs, speed, bspec.replicas, infos, bspec.background_streams_per_replica)
        self.backend_name = name
        self.tier_names = tiers
        self.ntiers = len(tiers)
        self.capacity_streams = bspec.replicas * max(t.batch_cap for t in bspec.tiers)
        self.mix = mix = scenario.task_mix
        self.spec = spec = scenario.developer
        self.quality = bspec.quality
        a = spec.attention
        self.compact_at = mix.compact_at_fraction * bspec.llm.context_window_tokens
        self.compact_to = mix.compact_to_tokens
        self.ttl = mix.cache_ttl_s
        self.shared_prefix = mix.shared_prefix_tokens
        self.turn_memory = a.turn_memory
        self.turn_prior = a.turn_prior_s
        self.detect_prob = spec.review.detect_prob
        self.hand_fix_prob = spec.fixing.hand_fix_prob
        self.max_repairs = spec.fixing.max_repair_sessions
        self.review_base_s = spec.review.base_s
        self.review_s_per_kt = spec.review.s_per_kilotoken
        self.res_short_s = a.resumption_short_s
        self.res_short_scale = a.resumption_short_scale_s
        self.res_max = a.resumption_max_s
        self.res_tau = a.resumption_tau_s
        self.ow_max = a.other_work_resumption_max_s
        self.failed_mult = mix.failed_turns_multiplier
        self.reject_prob = spec.reject_prob
        self.manual_escape_prob = spec.manual.escape_prob
        self.manual_only = scenario.policy.kind == "manual"  # ManualPolicy.manual: no agent sessions
        self.redo_prob = spec.fixing.redo_prob
        self.other_work_prob = a.other_work_prob
        self.notice_prob = a.notice_prob
        self.repair_fraction = mix.repair_turns_fraction
        self.keep_stretches = tables
        self.escaped = {}
        self.next_task = self.turns = 0
        if tables:
            self.task_tally = self.request_tally = None
        else:
            from speedtrap.models.tallies import TaskTally
            from speedtrap.serving.request import RequestTally

            self.task_tally = TaskTally()
            self.request_tally = self.pool.tally = RequestTally()
        n = scenario.developers
        self.ledger = <double*> malloc(n * NCOLS * sizeof(double))
        for k in range(n * NCOLS):
            self.ledger[k] = 0.0
        self.agent_stream = task_module.AGENT_STREAM
        self.checkin_stream = task_module.CHECKIN_STREAM
        self.stretch_stream = task_module.STRETCH_STREAM
        self.review_stream = task_module.REVIEW_STREAM
        self.redo_stream = task_module.REDO_STREAM
        self.output_d = read_lognormal(mix.output_tokens)
        self.tool_d = read_lognormal(mix.tool_s)
        self.result_d = read_lognormal(mix.tool_result_tokens)
        self.checkin_d = read_lognormal(spec.checkin_s)
        self.prompt_d = read_lognormal(spec.prompt_s)
        self.episode_sigma = a.patience_episode_sigma
        self.away_on = a.away_s is not None and a.rule == "expected_wait"  # AttentionRule.away_episode_s
        if self.away_on:
            self.away_d = read_lognormal(a.away_s)
        self.resumption_random = a.resumption_random
        self.cued_resumption = a.cued_resumption
        root = np.random.SeedSequence(seed)
        seed_root(&self.root, root)
        self.devs = []
        self.sessions = []
        self.ctasks = []
        self.tasks_list = []
        for i in range(n):
            d = CDev()
            d.index = i
            d.tasks = TaskSource(root, i, mix, spec)
            d.attention = AttentionRule(a, stream_rng(root, ATTENTION_STREAM, i))
            d.att = generator_bitgen(d.attention._rng)
            d.patience_s = d.attention.patience_s
            d.episode_patience_s = d.patience_s
            d.max_sessions = d.attention.max_sessions
            d.activity = IDLE
            d.since = 0.0
            d.idle_total_s = 0.0
            d.has_other_left = False
            d.estimates = <double*> malloc(self.ntiers * sizeof(double))
            d.prompt_cache = <double*> malloc(self.ntiers * sizeof(double))
            for k in range(self.ntiers):
                d.estimates[k] = NAN
                d.prompt_cache[k] = -INF
            d.tier_session, d.tier_attending, d.tier_away = routes[i]
            d.sessions = []
            d.pending = deque()
            d.then = THEN_NONE
            d.away_version = 0
            d.away_pending = False
            d.hybrid_version = 0
            d.hybrid_pending = False
            d.outcome_in_hand = ""
            d.label_task = None
            d.task_in_hand = None
            d.focus = None
            d.seconds = self.ledger + i * NCOLS
            d.closed_stretches = []
            self.devs.append(d)
        for d in self.devs:
            self.start_new_task(d)

    def __dealloc__(self):
        free(self.ledger)

    # -- the run -------------------------------------------------------------------------------

    def run_until(self, double end):
        """Run every event due at or before ``end`` seconds (as ``EventModel.run_until``)."""
        cdef Entry e
        cdef EventLoop loop = self.loop
        cdef CDev d
        while loop.n > 0:
            if loop.heap[0].time > end:
                break
            e = loop.pop()
            if e.kind == WAKE:
                if e.version != self.pool.reps[e.who].version:
                    loop.skipped += 1
                    continue
                loop.now = e.time
                loop.executed += 1
                self.pool.wake(<int> e.who, e.time, self)
            elif e.kind == TOOL:
                loop.now = e.time
                loop.executed += 1
                self.tool_done(<CSession> self.sessions[e.who])
            elif e.kind == STEP:
                loop.now = e.time
                loop.executed += 1
                self.step_done(<CDev> self.devs[e.who])
            elif e.kind == AWAY:
                d = <CDev> self.devs[e.who]
                if e.version != d.away_version or not d.away_pending:
                    loop.skipped += 1
                    continue
                loop.now = e.time
                loop.executed += 1
                self.away_end(d)
            elif e.kind == HYBRID:
                d = <CDev> self.devs[e.who]
                if e.version != d.hybrid_version or not d.hybrid_pending:
                    loop.skipped += 1
                    continue
                loop.now = e.time
                loop.executed += 1
                self.hand_work_done(d)
            else:
                loop.now = e.time
                loop.executed += 1
                self.defect(<CTask> self.escaped.pop(e.who))
        if end > loop.now:
            loop.now = end

    def finish(self):
        """Charge every developer's activity up to now and write the tasks' counters to them (once,
        at the end of the run)."""
        cdef CDev d
        cdef double now = self.loop.now
        for d in self.devs:
            self.charge(d, now)
        for t in self.ctasks:
            (<CTask> t).flush()
            if (<CTask> t).tiers_used:  # Session._on_request_done: each tier in the order first used
                (<CTask> t).task.tiers.extend([self.tier_names[k] for k in (<CTask> t).tiers_used])

    # -- sessions (speedtrap.agents.session) ---------------------------------------------------

    cdef CSession open_session(self, CDev d, CTask t, long attempt):
        """Developer._open_session and Session.__init__ (speedtrap.agents.session): the session's
        draws (TurnDraws: the attempt's streams), its failure (``Session.failure_prob``), planned turns
        and first check-in."""
        cdef CSession s = CSession()
        task = t.task
        mix = self.mix
        s.id = len(self.sessions)
        self.sessions.append(s)
        s.dev = d
        s.task = t
        s.attempt = attempt
        t_min = mix.agent_minutes(task.effort_s, task.difficulty, self.spec.delegated_fraction)
        s.wrong = task.u_fail[attempt] < self.quality.failure_prob_at(t_min)
        s.tool_error_prob = self.quality.tool_error_prob
        base = task.base_turns if attempt == 0 else max(1, round(self.repair_fraction * task.base_turns))
        s.planned_turns = max(1, round(base * self.failed_mult)) if s.wrong else base
        s.turns_done = s.checkins_done = s.output_tokens = s.need = 0
        s.has_left = False
        s.log = []
        s.idle_at_leave_s = 0.0
        s.turn_start_s = self.loop.now
        s.req = -1
        s.tool_end_s = INF
        s.tier = d.tier_session  # Session.__init__: the session's route (RoutingPolicy.for_session)
        seed_stream(&s.agent, &self.root, self.agent_stream, t.dev, t.index, attempt)
        seed_stream(&s.checkin, &self.root, self.checkin_stream, t.dev, t.index, attempt)
        seed_stream(&s.stretch, &self.root, self.stretch_stream, t.dev, t.index, attempt)
        seed_stream(&s.review, &self.root, self.review_stream, t.dev, t.index, attempt)
        every = self.spec.checkin_every_turns
        autonomy = self.quality.autonomy
        if autonomy != 1.0:  # Quality.autonomy: longer or shorter stretches
            every = max(1.0, every * autonomy) if self.spec.checkin_random else max(1, round(every * autonomy))
        s.checkin_every = every
        s.random_stretches = self.spec.checkin_random
        s.stretch_sigma = self.spec.stretch_sigma
        per = self.spec.stretches_per_transcript
        s.per_transcript = 0.0 if per is None else per
        s.stretches = 0
        s.stretch_start = 0
        s.next_checkin = self.stretch_end(s, 0)
        s.transcript = 0
        s.transcript_left = self.transcript_length(s)
        s.new_transcript = False
        t.attempts = attempt + 1
        t.wrong_attempts += s.wrong
        d.sessions.append(s)
        return s

    cdef long stretch_end(self, CSession s, long start):
        """Session._stretch_end: the turn at which the stretch starting after turn ``start`` stops for a
        check-in (fixed ``checkin_every_turns``, or drawn by ``TurnDraws.stretch_turns``)."""
        s.stretch_start = start
        if not s.random_stretches:
            return start + <long> s.checkin_every
        s.stretches += 1
        return start + self.stretch_turns(s)

    cdef long stretch_turns(self, CSession s) noexcept:
        """TurnDraws.stretch_turns: the next stretch's turns from the attempt's stretch stream,
        log-normal with mean ``checkin_every`` and log-sd ``stretch_sigma`` rounded to at least one
        (``counts``), or geometric with that mean where ``stretch_sigma`` is 0."""
        cdef double mean = s.checkin_every, sigma = s.stretch_sigma, mu
        if sigma > 0.0:
            mu = log(mean) - 0.5 * sigma * sigma
            return count_of(random_lognormal(&s.stretch.bg, mu, sigma), 1.0)
        return random_geometric(&s.stretch.bg, 1.0 / mean)

    cdef void draw_turns(self, CSession s, long k) except *:
        """TurnDraws.ensure: turns drawn in chunks of 32 until turn ``k`` is, each chunk from the agent
        stream in TurnDraws' order: output tokens, tool seconds, tool-result tokens (``LogNormal.sample``,
        tokens rounded by ``counts``), then the tool-error uniforms."""
        cdef long n, i
        cdef double buf[32]
        while k >= s.drawn:
            n = s.drawn
            if n + 32 > s.drawn_cap:
                s.drawn_cap = 2 * s.drawn_cap if s.drawn_cap else 64
                s.out = <long*> realloc(s.out, s.drawn_cap * sizeof(long))
                s.result = <long*> realloc(s.result, s.drawn_cap * sizeof(long))
                s.tool_s = <double*> realloc(s.tool_s, s.drawn_cap * sizeof(double))
                s.u_tool = <double*> realloc(s.u_tool, s.drawn_cap * sizeof(double))
                if s.out == NULL or s.result == NULL or s.tool_s == NULL or s.u_tool == NULL:
                    raise MemoryError()
            lognormal_fill(self.output_d, &s.agent.bg, buf, 32)
            for i in range(32):
                s.out[n + i] = count_of(buf[i], 1.0)
            lognormal_fill(self.tool_d, &s.agent.bg, s.tool_s + n, 32)
            lognormal_fill(self.result_d, &s.agent.bg, buf, 32)
            for i in range(32):
                s.result[n + i] = count_of(buf[i], 0.0)
            for i in range(32):
                s.u_tool[n + i] = random_standard_uniform(&s.agent.bg)
            s.drawn = n + 32

    cdef long transcript_length(self, CSession s):
        """Session._transcript_length: stretches until a fresh prompt starts a new transcript."""
        cdef double mean = s.per_transcript, u
        if mean == 0.0:
            return 1 << 62
        if mean <= 1.0:
            return 1
        u = random_standard_uniform(&s.review.bg)  # TurnDraws.review_uniform
        return 1 + <long> (log1p(-u) / log1p(-1.0 / mean))

    cdef void advance(self, CSession s) except *:
        """Session.advance: the agent's next turn, or its stop for a check-in or the review."""
        cdef double now = self.loop.now
        if s.log:
            (<list> s.log[len(s.log) - 1])[2] = now
        s.log.append([now, INF, INF, s.transcript])
        s.need = 0
        self.start_turn(s, now)

    cdef void start_turn(self, CSession s, double now) except *:
        """Session._start_turn: one agent turn's request (its tier, context, prompt cache, compaction)
        submitted. The tier is the policy's ``for_turn``: the attending route while the developer's focus
        is the session, else the other one (the same under ``always`` and ``fast_share``); it is the
        turn's estimate key and, with ``cache_per_tier``, its prompt-cache key."""
        cdef long k = s.turns_done, out, context, cached = 0
        cdef CTask t = s.task
        cdef CDev d = s.dev
        cdef int tier
        if k >= s.drawn:
            self.draw_turns(s, k)
        out = s.out[k]
        tier = d.tier_attending if d.focus is s else d.tier_away
        context = t.context_tokens
        if context + out > self.compact_at:
            context = t.context_tokens = self.compact_to
            t.cache_tier = -1
        s.tier = tier
        if t.cache_tier == tier and now - t.cache_time_s <= self.ttl and t.cache_prefix_tokens <= context:
            cached = t.cache_prefix_tokens
        elif self.shared_prefix:
            if now - d.prompt_cache[tier] <= self.ttl:
                cached = self.shared_prefix if self.shared_prefix < context else context
        s.turn_start_s = now
        s.tool_end_s = INF
        try:
            s.req = self.pool.submit(now, tier, context, cached, out, s.id, d.index, t.index, s.attempt, k)
        except ValueError as exc:  # a request no replica could ever hold (Session._start_turn)
            raise ValueError(
                f"backends.{self.backend_name}: {exc} (requests are sized by "
                "task_mix.initial_context_tokens, task_mix.output_tokens and task_mix.tool_result_tokens)"
            ) from None

    cdef void request_done(self, long i) except *:
        """Session._on_request_done: a turn's request finished (tokens, cost), its tool call begun."""
        cdef Req* q = &self.reqs.r[i]
        cdef CSession s = <CSession> self.sessions[q.session]
        cdef CTask t = s.task
        cdef long k = s.turns_done
        cdef double now = q.done_s, tool_s
        t.cache_tier = s.tier
        t.cache_prefix_tokens = q.input_tokens
        t.cache_time_s = now
        if self.shared_prefix:
            s.dev.prompt_cache[s.tier] = now
        if s.tier < 63:  # Session._on_request_done: the tier noted the first time it is used
            if not t.tier_mask & (1L << s.tier):
                t.tier_mask |= 1L << s.tier
                t.tiers_used.append(s.tier)
        elif s.tier not in t.tiers_used:
            t.tiers_used.append(s.tier)
        t.context_tokens = q.input_tokens + q.output_tokens + <long> s.result[k]
        t.requests += 1
        t.turns += 1
        t.input_tokens += q.input_tokens
        t.cached_tokens += q.cached_tokens
        t.output_tokens += q.output_tokens
        t.cost_usd += q.cost_usd
        s.output_tokens += q.output_tokens
        if <double> s.u_tool[k] < s.tool_error_prob:
            s.planned_turns += 1
            tool_s = 0.0
        else:
            tool_s = s.tool_s[k]
        t.tool_s += tool_s
        s.tool_end_s = now + tool_s
        self.loop.push(s.tool_end_s, TOOL, s.id, 0)

    cdef void tool_done(self, CSession s) except *:
        """Session._on_tool_done: the tool call ended; the next turn, or a check-in (``done >=
        next_checkin``) or the review handed to the developer (``Developer.take_session``)."""
        cdef CDev d = s.dev
        cdef double now = s.tool_end_s
        cdef long done
        self.note_turn_end(d, s, now - s.turn_start_s, now)
        s.turns_done = done = s.turns_done + 1
        if self.task_tally is not None:  # no tables: the request's slot is free once its turn ends
            self.reqs.release(s.req)
        s.req = -1
        if done >= s.planned_turns:
            s.need = REVIEW
            (<list> s.log[len(s.log) - 1])[1] = now
            self.take_session(d, s)
        elif done >= s.next_checkin:
            s.need = CHECKIN
            (<list> s.log[len(s.log) - 1])[1] = now
            self.judge_checkin(s, done)
            s.next_checkin = self.stretch_end(s, done)
            self.take_session(d, s)
        else:
            self.start_turn(s, now)
            if d.focus is s and d.activity == WAITING:
                self.maybe_leave(d, self.expected_wait_s(d, s))

    cdef void judge_checkin(self, CSession s, long done) except *:
        """Session._judge_checkin: the developer judges a check-in (``reject_prob``: the stretch redone)."""
        s.task.outputs += 1
        if self.reject_prob > 0.0 and random_standard_uniform(&s.review.bg) < self.reject_prob:
            s.task.outputs_rejected += 1
            s.planned_turns += done - s.stretch_start
        s.transcript_left -= 1
        if s.transcript_left <= 0:
            s.new_transcript = True
            s.transcript_left = self.transcript_length(s)
        else:
            s.new_transcript = False

    cdef double next_checkin_s(self, CSession s) except? -1:
        """Session.next_checkin_s: seconds the developer spends on the check-in."""
        cdef double v
        if s.new_transcript:
            s.new_transcript = False
            s.transcript += 1
            s.task.context_tokens = s.task.initial_context
            s.task.cache_tier = -1
            return lognormal_draw(self.prompt_d, &s.review.bg)  # prompt_s.draw(TurnDraws.review_rng())
        v = lognormal_draw(self.checkin_d, &s.checkin.bg)  # TurnDraws.checkin_s(checkins_done)
        s.checkins_done += 1
        return v

    # -- developers (speedtrap.agents.developer, attention) -----------------------------------

    cdef double expected_wait_s(self, CDev d, CSession s) noexcept:
        """Developer.expected_wait_s and AttentionRule.expected_wait_s: the wait the developer expects
        for session ``s`` (turns left × the learnt turn time)."""
        cdef double turns
        if s.random_stretches:
            turns = s.checkin_every  # the mean of a random stretch (memoryless)
        else:
            turns = s.checkin_every - s.turns_done % (<long> s.checkin_every)
        cdef double estimate = d.estimates[s.tier]  # by the session's estimate key (its current tier)
        return turns * (estimate if estimate == estimate else self.turn_prior)

    cdef void note_turn_end(self, CDev d, CSession s, double turn_s, double now) noexcept:
        """Developer.note_turn_end and AttentionRule.learn_turn: the turn time learnt (``turn_memory``)
        on the session's estimate key (the tier of the turn that ended), and ``Developer.reconsider``
        while waiting."""
        cdef double old = d.estimates[s.tier]
        d.estimates[s.tier] = old + self.turn_memory * (turn_s - old) if old == old else turn_s
        if d.focus is s and d.activity == WAITING:
            self.charge(d, now)

    cdef void charge(self, CDev d, double now) noexcept:
        """Developer._charge: the current activity's seconds since ``since`` charged to the ledger
        categories (waiting split into queue, time to first token, generation and tool as ``Ledger`` does)."""
        cdef double since = d.since, b1, b2, b3, admitted, first, done, tool_end, part
        cdef double* row = d.seconds
        cdef CSession f, o
        cdef Req* q
        if now > since:
            f = d.focus
            if d.activity == WAITING and f is not None:
                if f.req < 0:
                    admitted = first = done = INF
                else:
                    q = &self.reqs.r[f.req]
                    admitted = q.admitted_s if q.admitted_s == q.admitted_s else INF
                    first = q.first_token_s if q.first_token_s == q.first_token_s else INF
                    done = q.done_s if q.done_s == q.done_s else INF
                b1 = min(max(admitted, since), now)
                b2 = min(max(first, b1), now)
                b3 = min(max(done, b2), now)
                if b1 > since:
                    row[1] += b1 - since
                if b2 > b1:
                    row[2] += b2 - b1
                if b3 > b2:
                    row[3] += b3 - b2
                if now > b3:
                    row[4] += now - b3
            else:
                row[d.activity] += now - since
                if d.activity == IDLE:
                    d.idle_total_s += now - since
            if d.label_task is not None:
                d.label_task.human_s += now - since
            elif (d.activity == IDLE or d.activity == SWITCHING) and d.sessions:
                # Developer._charge: unvalued time while sessions are open, in equal parts to their tasks
                part = (now - since) / len(d.sessions)
                for o in d.sessions:
                    o.task.human_s += part
        d.since = now

    cdef void new_episode(self, CDev d) noexcept:
        """AttentionRule.new_episode: this waiting episode's patience, the developer's patience times
        ``exp(patience_episode_sigma · z)`` (one standard normal of their attention stream)."""
        cdef double sigma = self.episode_sigma
        d.episode_patience_s = d.patience_s * (exp(sigma * random_standard_normal(d.att)) if sigma > 0.0 else 1.0)

    cdef bint chooses_other_work(self, CDev d) noexcept:
        """AttentionRule.chooses_other_work: other work (probability ``other_work_prob``) or a break."""
        cdef double p = self.other_work_prob
        return p >= 1.0 or (p > 0.0 and random_standard_uniform(d.att) < p)

    cdef bint notices(self, CDev d) noexcept:
        """AttentionRule.notices: a session needing the developer ends their away episode at once
        (probability ``notice_prob``)."""
        cdef double p = self.notice_prob
        return p >= 1.0 or (p > 0.0 and random_standard_uniform(d.att) < p)

    cdef double away_episode_s(self, CDev d) noexcept:
        """AttentionRule.away_episode_s: one away episode (``away_s.draw``), inf without them."""
        if not self.away_on:
            return INF
        return lognormal_draw(self.away_d, d.att)

    cdef double drawn_s(self, CDev d, double mean_s) noexcept:
        """AttentionRule.drawn_s: exponential around ``mean_s`` with ``resumption_random``, else the mean."""
        if mean_s > 0.0 and self.resumption_random:
            return random_exponential(d.att, mean_s)
        return mean_s

    cdef double resumption_mean_s(self, double away_s) noexcept:
        """Attention.resumption_mean_s (speedtrap.config.developer): the mean resumption after ``away_s``."""
        cdef double lng
        if away_s <= 0.0:
            return 0.0
        lng = -expm1(-away_s / self.res_tau)
        return self.short_lag_s(away_s) + self.res_max * lng * lng

    cdef double short_lag_s(self, double away_s) noexcept:
        """Attention.short_lag_mean_s: the short-suspension lag r·ln(1 + t/s) after ``away_s``."""
        return self.res_short_s * log1p(away_s / self.res_short_scale)

    cdef double other_resumption_mean_s(self, CDev d, double now) noexcept:
        """Attention.other_work_resumption_mean_s after the time since other work was left (0 before
        any that day), as ``Developer._fill_gap`` asks it."""
        cdef double away_s, lng
        if not d.has_other_left:
            return 0.0
        away_s = now - d.other_left_s
        if away_s <= 0.0:
            return 0.0
        lng = -expm1(-away_s / self.res_tau)
        return self.short_lag_s(away_s) + self.ow_max * lng * lng

    cdef void maybe_leave(self, CDev d, double expected_s) except *:
        """Developer._maybe_leave with AttentionRule.leaves: leave a wait longer than the episode's
        patience."""
        cdef bint only_other
        if expected_s <= d.episode_patience_s:
            return
        only_other = not d.pending and len(d.sessions) >= d.max_sessions
        if only_other and self.other_work_prob > 0.0:  # other work's round trip must pay
            if self.other_resumption_mean_s(d, self.loop.now) + self.resumption_mean_s(expected_s) >= expected_s:
                return
        self.fill_gap(d)

    cdef void set_activity(self, CDev d, long activity, CSession focus, CTask task) except *:
        """Developer._set: the activity, focus and task changed (the previous one charged first)."""
        cdef double now = self.loop.now
        cdef CSession old
        self.charge(d, now)
        if d.activity == OTHER_WORK and activity != OTHER_WORK:
            d.other_left_s = now
            d.has_other_left = True
        old = d.focus
        if old is not focus:
            if old is not None:
                old.left_at = now
                old.has_left = True
                old.idle_at_leave_s = d.idle_total_s
            if focus is not None:
                focus.has_left = False
            d.focus = focus
        d.activity = activity
        if focus is not None:
            task = focus.task
        d.label_task = task
        if d.away_pending:
            d.away_pending = False
            d.away_version += 1
            self.loop.cancelled += 1

    cdef void begin(self, CDev d, long activity, double duration_s, CSession focus, long then,
                    CTask task=None) except *:
        """Developer._begin: a human step of ``duration_s`` seconds, then ``then``
        (Developer._on_step_done)."""
        self.set_activity(d, activity, focus, task)
        d.then = then
        self.loop.push(self.loop.now + duration_s, STEP, d.index, 0)

    cdef void step_done(self, CDev d) except *:
        """Developer._on_step_done: the continuation of the human step that ended."""
        cdef long then = d.then
        d.then = THEN_NONE
        if then == THEN_HAND_OFF:
            self.hand_off(d)
        elif then == THEN_AFTER_REVIEW:
            self.after_review(d)
        elif then == THEN_AFTER_HAND_FIX:
            t = d.task_in_hand
            d.task_in_hand = None
            t.task.fixed_by = "hand"
            self.accept(d, t, "fixed")
        elif then == THEN_AFTER_REWORK:
            t = d.task_in_hand
            d.task_in_hand = None
            t.task.rework_done_s = self.loop.now
            t.task.rework_spent_s += t.task.rework_s
            t.task.outcome = "reworked"
            self.fill_gap(d)
        elif then == THEN_FOCUS_STEP:
            self.do_step(d, d.focus)
        elif then == THEN_ENTER_OTHER_WORK:
            if d.pending:
                self.serve(d, d.pending.popleft())
            else:
                self.go_away(d, OTHER_WORK)
        elif then == THEN_AFTER_HAND_PART:
            t = d.task_in_hand
            d.task_in_hand = None
            self.accept(d, t, d.outcome_in_hand)
        elif then == THEN_AFTER_MANUAL_TASK:  # Developer._after_manual_task
            t = d.task_in_hand
            d.task_in_hand = None
            self.accept(d, t, "escaped" if t.task.u_fail[0] < self.manual_escape_prob else "ok")

    cdef void start_new_task(self, CDev d) except *:
        """Developer._start_new_task: the backlog's next task (TaskSource.next) and its first session."""
        cdef CTask t = CTask()
        task = d.tasks.next()
        task.owner = None
        task.start_s = self.loop.now
        if not self.manual_only:  # Session.__init__ names the backend a session runs on
            task.backends.append(self.backend_name)
        if self.task_tally is None:
            self.tasks_list.append(task)
            self.ctasks.append(t)
        else:
            self.task_tally.started(task)
        t.task = task
        t.id = self.next_task
        self.next_task += 1
        t.index = task.index
        t.dev = d.index
        t.context_tokens = t.initial_context = task.initial_context_tokens
        t.cache_tier = -1
        t.tier_mask = 0
        t.tiers_used = []
        t.cache_prefix_tokens = 0
        t.cache_time_s = -INF
        t.requests = t.turns = t.input_tokens = t.cached_tokens = t.output_tokens = 0
        t.attempts = t.wrong_attempts = t.outputs = t.outputs_rejected = 0
        t.cost_usd = t.tool_s = t.human_s = 0.0
        if self.manual_only:  # policy manual: the whole task by hand, in its effort time
            task.manual_left_s = 0.0
            task.manual_done_s = task.effort_s
            d.task_in_hand = t
            self.begin(d, MANUAL, task.effort_s, None, THEN_AFTER_MANUAL_TASK, t)
            return
        s = self.open_session(d, t, 0)
        self.begin(d, PROMPTING, task.prompt_s, s, THEN_HAND_OFF)

    cdef void hand_off(self, CDev d) except *:
        """Developer._hand_off: the session handed to the agent; the developer serves what waits or waits
        (a new attention episode) and may leave (``_watch_or_leave``)."""
        cdef CSession s = d.focus
        if d.pending:
            self.serve(d, d.pending.popleft())
            self.advance(s)
        elif s.task.task.manual_left_s > 0.0:
            self.advance(s)
            self.work_by_hand(d, s)
        else:
            self.set_activity(d, WAITING, s, None)
            self.advance(s)
            self.new_episode(d)
            self.maybe_leave(d, self.expected_wait_s(d, s))

    cdef void work_by_hand(self, CDev d, CSession s) except *:
        """Developer._work_by_hand: hybrid hand work on the part of ``s``'s task the developer kept,
        while its agent runs; interrupted by anything that needs the developer."""
        task = s.task.task
        self.set_activity(d, MANUAL, s, None)
        d.hybrid_task = s.task
        d.hybrid_pending = True
        self.loop.push(self.loop.now + task.manual_left_s, HYBRID, d.index, d.hybrid_version)

    cdef void pause_hand_work(self, CDev d) except *:
        """Developer._pause_hand_work: hybrid hand work stopped now, what is left of it kept."""
        cdef double done
        if not d.hybrid_pending or d.hybrid_task is None:
            return
        task = d.hybrid_task.task
        done = self.loop.now - d.since
        task.manual_left_s = max(0.0, task.manual_left_s - done)
        task.manual_done_s += done
        d.hybrid_pending = False
        d.hybrid_version += 1
        self.loop.cancelled += 1
        d.hybrid_task = None

    cdef void hand_work_done(self, CDev d) except *:
        """Developer._on_hand_work_done: the kept part done; what waits, else wait on the session (a new
        attention episode, ``_watch_or_leave``)."""
        cdef CSession s
        task = d.hybrid_task.task
        task.manual_done_s += task.manual_left_s
        task.manual_left_s = 0.0
        d.hybrid_pending = False
        d.hybrid_version += 1
        d.hybrid_task = None
        s = d.focus
        if d.pending:
            self.serve(d, d.pending.popleft())
        elif s.need:
            self.do_step(d, s)
        else:
            self.set_activity(d, WAITING, s, None)
            self.new_episode(d)
            self.maybe_leave(d, self.expected_wait_s(d, s))

    cdef void fill_gap(self, CDev d) except *:
        """Developer._fill_gap: what waits, a new task (room for a session), idle, or other work after
        its resumption (Developer._enter_other_work)."""
        cdef double overhead_s
        if d.pending:
            self.serve(d, d.pending.popleft())
        elif len(d.sessions) < d.max_sessions:
            self.start_new_task(d)
        elif not self.chooses_other_work(d):
            self.go_away(d, IDLE)
        else:
            overhead_s = self.other_resumption_mean_s(d, self.loop.now)
            if overhead_s > 0.0:  # drawn around the mean (AttentionRule.other_work_resumption_s)
                overhead_s = self.drawn_s(d, overhead_s)
            if overhead_s > 0.0:
                self.begin(d, SWITCHING, overhead_s, None, THEN_ENTER_OTHER_WORK)
            else:
                self.go_away(d, OTHER_WORK)

    cdef void go_away(self, CDev d, long activity) except *:
        """Developer._go_away: idle or other work, looking again after an away episode
        (AttentionRule.away_episode_s)."""
        cdef double away_s
        self.set_activity(d, activity, None, None)
        away_s = self.away_episode_s(d)
        if away_s < INF:
            d.away_pending = True
            self.loop.push(self.loop.now + away_s, AWAY, d.index, d.away_version)

    cdef void away_end(self, CDev d, bint cued=False) except *:
        """Developer._on_away_end: back from an away episode: serve what waits (``cued``: a noticed
        notification ended it), else away again."""
        cdef double away_s
        d.away_pending = False
        d.away_version += 1
        if d.pending:
            self.serve(d, d.pending.popleft(), cued)
        else:
            away_s = self.away_episode_s(d)
            d.away_pending = True
            self.loop.push(self.loop.now + away_s, AWAY, d.index, d.away_version)

    cdef void take_session(self, CDev d, CSession s) except *:
        """Developer.take_session: a session needs the developer: at once, or queued behind the current
        step (``interruptible``)."""
        if d.away_pending:
            d.pending.append(s)
            if self.notices(d):  # noticed: the episode's end, still queued, is stale
                self.loop.cancelled += 1
                self.away_end(d, True)
        elif d.activity == WAITING and d.focus is s:
            self.do_step(d, s)
        elif d.hybrid_pending:
            self.pause_hand_work(d)
            if d.focus is s:
                self.do_step(d, s)
            else:
                self.serve(d, s)
        elif interruptible(d):
            self.serve(d, s)
        else:
            d.pending.append(s)

    cdef void defect(self, CTask t) except *:
        """Task.on_defect_surfaced and Developer.take_rework: an escaped defect surfaces; its rework is
        served at once or queued."""
        cdef CDev d = <CDev> self.devs[t.dev]
        t.task.surfaced_s = self.loop.now
        if d.away_pending:
            d.pending.append(t)
        elif d.hybrid_pending:
            self.pause_hand_work(d)
            self.serve(d, t)
        elif interruptible(d):
            self.serve(d, t)
        else:
            d.pending.append(t)

    cdef void serve(self, CDev d, item, bint cued=False) except *:
        """Developer._serve: a session or a rework taken up, after a resumption grown with the time away
        (AttentionRule.time_away_s and resumption_s; the short lag alone when ``cued`` with
        ``cued_resumption``) unless still in flow or on the same task."""
        cdef CSession s
        cdef CTask t
        cdef double away_s, overhead_s
        if isinstance(item, CTask):
            t = <CTask> item
            d.task_in_hand = t
            self.begin(d, FIXING, t.task.rework_s, None, THEN_AFTER_REWORK, t)
            return
        s = <CSession> item
        away_s = self.loop.now - s.left_at if s.has_left else 0.0
        if away_s > 0.0:  # time_away_s: a break is not time away
            away_s = max(0.0, away_s - (d.idle_total_s - s.idle_at_leave_s))
        if cued and self.cued_resumption:  # Attention.cued_resumption_mean_s: the short lag alone
            overhead_s = self.short_lag_s(away_s) if away_s > 0.0 else 0.0
        else:
            overhead_s = self.resumption_mean_s(away_s)
        if overhead_s > 0.0:  # drawn around the mean (AttentionRule.resumption_s)
            overhead_s = self.drawn_s(d, overhead_s)
        if overhead_s > 0.0:
            self.begin(d, SWITCHING, overhead_s, s, THEN_FOCUS_STEP)
        else:
            self.do_step(d, s)

    cdef void do_step(self, CDev d, CSession s) except *:
        """Developer._do_step: the check-in, the review (``Review``: base + per kilotoken) or a repair's
        prompt, as the session needs."""
        cdef bint repair = s.attempt > 0
        cdef double review_s
        if s.need == CHECKIN:
            self.begin(d, FIXING if repair else PROMPTING, self.next_checkin_s(s), s, THEN_HAND_OFF)
        else:
            review_s = (self.review_base_s + self.review_s_per_kt * s.output_tokens / 1000.0) * \
                s.task.task.review_factor[s.attempt]
            self.begin(d, FIXING if repair else REVIEWING, review_s, s, THEN_AFTER_REVIEW)

    cdef void close(self, CDev d, CSession s) except *:
        """Developer._close: the session closed, its stretches kept."""
        d.sessions.remove(s)
        if self.keep_stretches:
            for row in s.log:
                d.closed_stretches.append((s.task.index, s.attempt, *row))
        self.sessions[s.id] = None

    cdef void after_review(self, CDev d) except *:
        """Developer._after_review: accepted (ok, or fixed by repair), caught (a repair session while
        ``attempt < max_repair_sessions`` and the hand-fix draw says repair, else a hand fix) or escaped."""
        cdef CSession s = d.focus, repair
        cdef CTask t = s.task
        cdef long attempt = s.attempt
        task = t.task
        self.close(d, s)
        t.outputs += 1
        if not s.wrong:
            if attempt > 0:
                task.fixed_by = "repair"
            self.accept(d, t, "ok" if attempt == 0 else "fixed")
        elif task.u_detect[attempt] < self.detect_prob:
            t.outputs_rejected += 1
            if attempt < self.max_repairs and task.u_hand[attempt] >= self.hand_fix_prob:
                repair = self.open_session(d, t, attempt + 1)
                self.begin(d, FIXING, task.diagnose_s[attempt], repair, THEN_HAND_OFF)
            else:
                d.task_in_hand = t
                self.begin(d, FIXING, self.hand_fix_s(t, attempt), None, THEN_AFTER_HAND_FIX, t)
        else:
            self.accept(d, t, "escaped")

    cdef double hand_fix_s(self, CTask t, long attempt) except? -1:
        """Developer._hand_fix_s: the hand fix, or with redo_prob (a uniform of the task's redo stream,
        ``Task.rng(REDO_STREAM, attempt)``) a redo of the delegated effort."""
        cdef Stream redo
        task = t.task
        fix_s = task.hand_fix_s
        effort_s = task.effort_s
        if self.redo_prob > 0.0 and effort_s == effort_s:
            seed_stream(&redo, &self.root, self.redo_stream, t.dev, t.index, attempt)
            if random_standard_uniform(&redo.bg) < self.redo_prob:
                fix_s = max(fix_s, effort_s * self.spec.delegated_fraction)
        return fix_s

    cdef void accept(self, CDev d, CTask t, str outcome) except *:
        """Developer._accept and Task.finish: the task accepted as ``outcome`` (an escaped defect
        scheduled to surface after ``escape_delay_s``); the developer fills the gap."""
        cdef double left
        task = t.task
        if task.manual_left_s > 0.0:  # a hybrid developer first finishes the part they kept
            left = task.manual_left_s
            task.manual_left_s = 0.0
            task.manual_done_s += left
            d.task_in_hand = t
            d.outcome_in_hand = outcome
            self.begin(d, MANUAL, left, None, THEN_AFTER_HAND_PART, t)
            return
        task.finish(self.loop.now, outcome)
        if outcome == "escaped":
            self.escaped[t.id] = t
            self.loop.push(self.loop.now + task.escape_delay_s, DEFECT, t.id, 0)
        self.fill_gap(d)

    # -- results -------------------------------------------------------------------------------

    def event_counts(self):
        """(events scheduled, executed, cancelled, pending): cancelled events still in the heap are
        not pending."""
        return (self.loop.scheduled, self.loop.executed, self.loop.cancelled,
                self.loop.n - (self.loop.cancelled - self.loop.skipped))

    @property
    def time(self):
        return self.loop.now

    def request_slots(self):
        """Request slots allocated: every request with tables, else at most those in flight at once."""
        return self.reqs.n

    def agent_turns(self):
        """Agent turns completed (requests finished)."""
        return self.pool.completed

    def summary_parts(self):
        """A summary-only run's task and request aggregates: ``(TaskCounts, request means)`` as
        ``WorkflowModel.summary`` takes them from its tallies."""
        from speedtrap.serving.request import tally_means

        if self.task_tally is None:
            raise ValueError("this run kept its tables: build the summary from them")
        if self.pool.ntally:
            self.pool.tally_flush()
        return self.task_tally.counts(), tally_means([self.request_tally])

    def ledger_frame(self):
        from speedtrap.config.ledger import LEDGER_CATEGORIES
        n = len(self.devs)
        return pd.DataFrame(
            {
                "developer": [d for d in range(n) for _ in LEDGER_CATEGORIES],
                "category": pd.Categorical(
                    [c for _ in range(n) for c in LEDGER_CATEGORIES], categories=list(LEDGER_CATEGORIES)
                ),
                "seconds": [self.ledger[d * NCOLS + c] for d in range(n) for c in range(NCOLS)],
            }
        )

    def requests_frame(self):
        """Finished requests as ``WorkflowModel.requests_frame`` gives them: in completion order,
        then stably sorted by arrival."""
        cdef long n = self.reqs.n, i, k = 0, m = self.pool.completed
        cdef Req* q
        cols = {c: np.empty(m, dtype=np.int64) for c in
                ("id", "replica", "input_tokens", "cached_tokens", "output_tokens", "developer", "task",
                 "attempt", "turn", "tier")}
        fcols = {c: np.empty(m) for c in ("arrival_s", "admitted_s", "first_token_s", "done_s", "cost_usd")}
        cdef long[:] cid = cols["id"], crep = cols["replica"], cin = cols["input_tokens"]
        cdef long[:] cca = cols["cached_tokens"], cou = cols["output_tokens"], cde = cols["developer"]
        cdef long[:] cta = cols["task"], cat = cols["attempt"], ctu = cols["turn"], cti = cols["tier"]
        cdef double[:] far = fcols["arrival_s"], fad = fcols["admitted_s"], ffi = fcols["first_token_s"]
        cdef double[:] fdo = fcols["done_s"], fco = fcols["cost_usd"]
        for i in range(n):
            q = &self.reqs.r[i]
            if q.done_seq < 0:
                continue
            k = q.done_seq
            cid[k] = q.id; crep[k] = q.replica; cin[k] = q.input_tokens; cca[k] = q.cached_tokens
            cou[k] = q.output_tokens; cde[k] = q.dev; cta[k] = q.task; cat[k] = q.attempt; ctu[k] = q.turn
            cti[k] = q.tier
            far[k] = q.arrival_s; fad[k] = q.admitted_s; ffi[k] = q.first_token_s; fdo[k] = q.done_s
            fco[k] = q.cost_usd
        # stably sorted by arrival here, column by column (the permutation sort_values(kind="stable")
        # takes: a stable sort's order is unique), rather than the whole frame afterwards
        order = np.argsort(fcols["arrival_s"], kind="stable")
        cols = {c: v[order] for c, v in cols.items()}
        fcols = {c: v[order] for c, v in fcols.items()}
        a, b, f, d = fcols["arrival_s"], fcols["admitted_s"], fcols["first_token_s"], fcols["done_s"]
        return pd.DataFrame(
            {
                "backend": pd.Series([self.backend_name] * m, dtype="str"),
                "id": cols["id"], "tier": pd.Series(np.array(self.tier_names, dtype=object)[cols["tier"]], dtype="str"),
                "replica": cols["replica"], "input_tokens": cols["input_tokens"],
                "cached_tokens": cols["cached_tokens"], "output_tokens": cols["output_tokens"],
                "arrival_s": a, "admitted_s": b, "first_token_s": f, "done_s": d,
                "queue_wait_s": b - a, "ttft_s": f - a, "prefill_s": f - b, "decode_s": d - f,
                "sojourn_s": d - a, "cost_usd": fcols["cost_usd"], "developer": cols["developer"],
                "task": cols["task"], "attempt": cols["attempt"], "turn": cols["turn"],
            }
        )

    def stretches_frame(self):
        cdef CDev d
        cdef CSession s
        rows = []
        for d in self.devs:
            i = d.index
            rows.extend((i, *row) for row in d.closed_stretches)
            for s in d.sessions:
                rows.extend((i, s.task.index, s.attempt, *r) for r in s.log)
        names = ["developer", "task", "attempt", "handoff_s", "need_s", "back_s", "transcript"]
        if not rows:
            frame = pd.DataFrame(rows, columns=names)
            for column in ("need_s", "back_s"):
                frame[column] = frame[column].astype("float64").replace(math.inf, math.nan)
            return frame
        # column by column (the dtypes a frame of these rows infers: int64, and float64 for the
        # times), an open stretch's inf need and back times as NaN
        columns = {name: np.array(values) for name, values in zip(names, zip(*rows))}
        for column in ("need_s", "back_s"):
            v = columns[column].astype("float64")
            v[v == math.inf] = math.nan
            columns[column] = v
        return pd.DataFrame(columns)

    def tasks(self):
        return self.tasks_list

    def backend_stats_frame(self):
        """As WorkflowModel.backend_stats_frame (the pool's time averages over the run)."""
        cdef Pool p = self.pool
        cdef double now = self.loop.now
        p.integrate(now)
        in_system = p.area_system / now
        waiting = p.area_waiting / now
        return pd.DataFrame([{
            "backend": self.backend_name, "replicas": p.nrep, "capacity_streams": self.capacity_streams,
            "mean_in_service": in_system - waiting, "mean_waiting": waiting,
            "utilization": (in_system - waiting) / self.capacity_streams, "requests": p.completed,
        }])

    def pool_stats(self):
        return (self.pool.area_system, self.pool.area_waiting, self.pool.completed)
