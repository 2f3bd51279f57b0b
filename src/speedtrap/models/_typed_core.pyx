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
the rules the headline scenario uses: one backend with one tier in use, routing ``always``, the
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


cdef struct Entry:
    double time
    long seq
    int kind
    long who
    long version


cdef struct Mark:   # a finish mark (decode) or a prefill end, ordered by (value, request id)
    double value
    long req
    double vstart


cdef struct Steps:   # a replica's (or its prefill pool's) step constants (speedtrap.serving.roofline)
    double shared_read_s, experts, expert_keep, expert_read_s, full_layers, window_layers, window
    double kv_read_s, matmul_s, matmul_fixed_s, attention_s, fixed_s, collective_s, exchange_s
    double overlap, floor_s, prefill_matmul_s, prefill_attention_s


cdef Steps read_steps(c):
    """The step constants of ``c`` (a ``StepConstants``), the first two latency terms summed as the
    flat functions sum them."""
    cdef Steps k
    k.shared_read_s = c.shared_read_s
    k.experts = c.experts
    k.expert_keep = c.expert_keep
    k.expert_read_s = c.expert_read_s
    k.full_layers = c.full_layers
    k.window_layers = c.window_layers
    k.window = c.window_tokens if c.window_tokens is not None else INF
    k.kv_read_s = c.kv_read_s_per_attended
    k.matmul_s = c.matmul_s_per_token
    k.matmul_fixed_s = c.matmul_fixed_s
    k.attention_s = c.attention_s_per_attended
    k.fixed_s = c.fixed_s + c.collective_fixed_s
    k.collective_s = c.collective_s_per_token
    k.exchange_s = c.exchange_s_per_token
    k.overlap = c.overlap
    k.floor_s = c.floor_s
    k.prefill_matmul_s = c.prefill_matmul_s_per_token
    k.prefill_attention_s = c.prefill_attention_s_per_attended
    return k


# ---------------------------------------------------------------------------------- random draws

# The model's random streams in C. A per-attempt stream (``Task.rng``: numpy's
# ``Generator(PCG64(SeedSequence(entropy, spawn_key=key)))``) is seeded here as numpy seeds it:
# SeedSequence's pool mixing and ``generate_state(4, uint64)``, then ``pcg64_set_seed``; numpy keeps
# both streams stable across versions (NEP 19), and tests/models/test_core_draws.py holds them equal
# to numpy's for many entropies and keys. Draws from any stream (these and the developers' attention
# generators, reached through their ``capsule``) are numpy's own distributions
# (``numpy.random.c_distributions``: the functions ``Generator`` calls), and ``np.exp`` is numpy's own
# float64 loop (on machines with AVX-512 it differs from the C library's ``exp`` in the last bit).
cdef extern from *:
    """
    #include <stdint.h>
    typedef struct { unsigned __int128 state, inc; int has_uint32; uint32_t uinteger; } st_pcg64;
    #define ST_PCG_MULT ((((unsigned __int128)2549297995355413924ULL) << 64) | 4865540595714422341ULL)
    static inline uint64_t st_pcg64_next64(void *p) {  /* pcg_setseq_128_xsl_rr_64_random_r */
        st_pcg64 *r = (st_pcg64 *)p;
        uint64_t v;
        unsigned rot;
        r->state = r->state * ST_PCG_MULT + r->inc;
        v = ((uint64_t)(r->state >> 64)) ^ (uint64_t)r->state;
        rot = (unsigned)(r->state >> 122);
        return (v >> rot) | (v << ((-rot) & 63));
    }
    static uint32_t st_pcg64_next32(void *p) {  /* pcg64_next32: half of a 64-bit draw kept */
        st_pcg64 *r = (st_pcg64 *)p;
        uint64_t next;
        if (r->has_uint32) {
            r->has_uint32 = 0;
            return r->uinteger;
        }
        next = st_pcg64_next64(p);
        r->has_uint32 = 1;
        r->uinteger = (uint32_t)(next >> 32);
        return (uint32_t)(next & 0xffffffff);
    }
    static double st_pcg64_next_double(void *p) {
        return (st_pcg64_next64(p) >> 11) * (1.0 / 9007199254740992.0);
    }
    static uint32_t st_hashmix(uint32_t value, uint32_t *hash_const) {
        value ^= *hash_const;
        *hash_const *= 0x931e8875U;
        value *= *hash_const;
        value ^= value >> 16;
        return value;
    }
    static uint32_t st_mix(uint32_t x, uint32_t y) {
        uint32_t result = 0xca01f9ddU * x - 0x4973f715U * y;
        result ^= result >> 16;
        return result;
    }
    /* SeedSequence.mix_entropy of the assembled entropy words into a pool of 4, generate_state(4,
       uint64), and PCG64's pcg64_set_seed (the first two words the state, the last two the
       increment, high word first) */
    static void st_pcg64_seed(st_pcg64 *r, const uint32_t *entropy, int n) {
        uint32_t pool[4], hc = 0x43b0d7e5U, words[8], v;
        uint64_t s[4];
        unsigned __int128 seed, inc;
        int i, j;
        for (i = 0; i < 4; i++) pool[i] = st_hashmix(i < n ? entropy[i] : 0, &hc);
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++)
                if (i != j) pool[j] = st_mix(pool[j], st_hashmix(pool[i], &hc));
        for (i = 4; i < n; i++)
            for (j = 0; j < 4; j++) pool[j] = st_mix(pool[j], st_hashmix(entropy[i], &hc));
        hc = 0x8b51f9ddU;
        for (i = 0; i < 8; i++) {
            v = pool[i & 3];
            v ^= hc;
            hc *= 0x58f38dedU;
            v *= hc;
            v ^= v >> 16;
            words[i] = v;
        }
        for (i = 0; i < 4; i++) s[i] = (uint64_t)words[2 * i] | ((uint64_t)words[2 * i + 1] << 32);
        seed = (((unsigned __int128)s[0]) << 64) | s[1];
        inc = (((unsigned __int128)s[2]) << 64) | s[3];
        r->state = 0;
        r->inc = (inc << 1) | 1;
        r->state = r->state * ST_PCG_MULT + r->inc;
        r->state += seed;
        r->state = r->state * ST_PCG_MULT + r->inc;
        r->has_uint32 = 0;
        r->uinteger = 0;
    }
    """
    ctypedef struct st_pcg64:
        pass
    uint64_t st_pcg64_next64(void* p) noexcept nogil
    uint32_t st_pcg64_next32(void* p) noexcept nogil
    double st_pcg64_next_double(void* p) noexcept nogil
    void st_pcg64_seed(st_pcg64* r, const uint32_t* entropy, int n) noexcept nogil


cdef struct Stream:   # one PCG64 stream and numpy's bit-generator interface to it
    st_pcg64 pcg
    bitgen_t bg


cdef enum:
    MAX_WORDS = 64     # entropy and spawn-key words of one stream's seed


cdef struct Seed:      # a run's root SeedSequence: its entropy words, then its spawn key's
    uint32_t words[MAX_WORDS]
    int n_entropy, n


cdef int int_words(uint32_t* out, unsigned long x) noexcept:
    """``_int_to_uint32_array(x)``: ``x`` as 32-bit words, least significant first (0: one word)."""
    cdef int n = 0
    if x == 0:
        out[0] = 0
        return 1
    while x:
        out[n] = <uint32_t> (x & 0xFFFFFFFF)
        x >>= 32
        n += 1
    return n


cdef void seed_root(Seed* root, seq) except *:
    """The words of ``seq`` (a ``SeedSequence``): ``_coerce_to_uint32_array`` of its entropy and of its
    spawn key."""
    from numpy.random.bit_generator import _coerce_to_uint32_array

    entropy = _coerce_to_uint32_array(seq.entropy)
    key = _coerce_to_uint32_array(seq.spawn_key)
    if len(entropy) + len(key) + 4 + 8 > MAX_WORDS:
        raise ValueError("the root seed has more entropy than the typed core takes")
    root.n_entropy = 0
    for w in entropy:
        root.words[root.n_entropy] = w
        root.n_entropy += 1
    root.n = root.n_entropy
    for w in key:
        root.words[root.n] = w
        root.n += 1


cdef void seed_stream(Stream* s, Seed* root, long stream, long dev, long index, long attempt) noexcept:
    """``Task.rng(stream, attempt)`` of developer ``dev``'s task ``index``: the generator of
    ``SeedSequence(root.entropy, spawn_key=(stream, *root.spawn_key, dev, index, attempt))``."""
    cdef uint32_t w[MAX_WORDS]
    cdef int n = 0, k
    for k in range(root.n_entropy):
        w[n] = root.words[k]
        n += 1
    while n < 4:  # get_assembled_entropy: the entropy padded to the pool size before a spawn key
        w[n] = 0
        n += 1
    n += int_words(w + n, <unsigned long> stream)
    for k in range(root.n_entropy, root.n):
        w[n] = root.words[k]
        n += 1
    n += int_words(w + n, <unsigned long> dev)
    n += int_words(w + n, <unsigned long> index)
    n += int_words(w + n, <unsigned long> attempt)
    st_pcg64_seed(&s.pcg, w, n)
    s.bg.state = &s.pcg
    s.bg.next_uint64 = st_pcg64_next64
    s.bg.next_uint32 = st_pcg64_next32
    s.bg.next_double = st_pcg64_next_double
    s.bg.next_raw = st_pcg64_next64


cdef bitgen_t* generator_bitgen(generator) except NULL:
    """The bit generator of a numpy ``Generator`` (its ``capsule``), drawn from in C; the caller keeps
    ``generator`` alive."""
    return <bitgen_t*> PyCapsule_GetPointer(generator.bit_generator.capsule, "BitGenerator")


cdef cnp.PyUFuncGenericFunction EXP_LOOP = NULL
cdef void* EXP_DATA = NULL


cdef void find_exp() except *:
    """numpy's float64 loop of ``np.exp`` (the first ``d->d`` loop, the one ufunc dispatch takes)."""
    global EXP_LOOP, EXP_DATA
    cdef cnp.ufunc u = np.exp
    cdef int i = list(np.exp.types).index("d->d")
    if not 0 <= i < u.ntypes:
        raise RuntimeError("numpy.exp has no float64 loop")
    EXP_LOOP = u.functions[i]
    EXP_DATA = u.data[i]


find_exp()


cdef inline void np_exp(double* x, double* out, cnp.npy_intp n) noexcept:
    """``out[:n] = np.exp(x[:n])``, numpy's loop (the same value for each element in an array of any
    length as for a numpy scalar)."""
    cdef char* args[2]
    cdef cnp.npy_intp dims[1]
    cdef cnp.npy_intp steps[2]
    args[0] = <char*> x
    args[1] = <char*> out
    dims[0] = n
    steps[0] = steps[1] = sizeof(double)
    EXP_LOOP(args, dims, steps, EXP_DATA)


cdef struct LogN:      # a LogNormal spec (speedtrap.config.dist): median, log-sd
    double median, sigma


cdef LogN read_lognormal(spec):
    cdef LogN d
    d.median = spec.median
    d.sigma = spec.sigma
    return d


cdef inline double lognormal_draw(LogN d, bitgen_t* bg) noexcept:
    """``LogNormal.draw(rng)``: ``median * np.exp(sigma * z)``, one standard normal."""
    cdef double x = d.sigma * random_standard_normal(bg), e
    np_exp(&x, &e, 1)
    return d.median * e


cdef void lognormal_fill(LogN d, bitgen_t* bg, double* out, long n) noexcept:
    """``LogNormal.sample(rng, n)``: ``n`` standard normals, then ``median * np.exp(sigma * z)``."""
    cdef long i
    for i in range(n):
        out[i] = d.sigma * random_standard_normal(bg)
    np_exp(out, out, n)
    for i in range(n):
        out[i] = d.median * out[i]


cdef inline long count_of(double x, double low) noexcept:
    """``speedtrap.agents.task.counts``: rounded, at most MAX_COUNT (NaN included), at least ``low``."""
    return <long> fmax(fmin(rint(x), MAX_COUNT), low)


def _draws_for_test(entropy, tuple spawn_key, long stream, long dev, long index, long attempt, str kind,
                    long n, double a=0.0, double b=0.0):
    """``n`` draws of ``kind`` from the stream ``seed_stream`` seeds (for the tests: numpy's
    ``Task.rng`` gives the same): ``normal``, ``random``, ``exponential`` (scale ``a``), ``lognormal``
    (``a``, ``b``), ``geometric`` (``a``), ``lognormal_spec`` (``LogNormal(median=a, sigma=b).sample``),
    or ``exp`` (``np.exp`` of the normals, one at a time)."""
    cdef Seed root
    cdef Stream s
    cdef long i
    cdef double x
    cdef LogN d
    seed_root(&root, np.random.SeedSequence(entropy, spawn_key=spawn_key))
    seed_stream(&s, &root, stream, dev, index, attempt)
    out = np.empty(n)
    cdef double[::1] o = out
    if kind == "lognormal_spec":
        d.median = a
        d.sigma = b
        lognormal_fill(d, &s.bg, &o[0], n)
        return out
    for i in range(n):
        if kind == "normal":
            o[i] = random_standard_normal(&s.bg)
        elif kind == "random":
            o[i] = random_standard_uniform(&s.bg)
        elif kind == "exponential":
            o[i] = random_exponential(&s.bg, a)
        elif kind == "lognormal":
            o[i] = random_lognormal(&s.bg, a, b)
        elif kind == "geometric":
            o[i] = random_geometric(&s.bg, a)
        elif kind == "exp":
            x = random_standard_normal(&s.bg)
            np_exp(&x, &o[i], 1)
        else:
            raise ValueError(kind)
    return out


# ---------------------------------------------------------------------------------- binary heaps

ctypedef fused Item:
    long      # the placement heap's keys: streams << 20 | replica index
    double    # folded prefill ends still to integrate
    Mark      # finish marks and prefill ends, by (value, request id)
    Entry     # events, by (time, insertion)


cdef inline bint before(Item* a, Item* b) noexcept:
    if Item is Mark:
        return a.value < b.value or (a.value == b.value and a.req < b.req)
    elif Item is Entry:
        return a.time < b.time or (a.time == b.time and a.seq < b.seq)
    else:
        return a[0] < b[0]


cdef void heap_push(Item* h, long* n, Item x) noexcept:
    """Push ``x`` onto the binary heap ``h`` of ``n[0]`` items (room for one more is the caller's)."""
    cdef long i = n[0], parent
    n[0] += 1
    while i > 0:
        parent = (i - 1) >> 1
        if not before(&x, &h[parent]):
            break
        h[i] = h[parent]
        i = parent
    h[i] = x


cdef Item heap_pop(Item* h, long* n) noexcept:
    """Remove and return the first item of the non-empty binary heap ``h`` of ``n[0]`` items."""
    cdef Item top = h[0]
    cdef Item last
    cdef long i = 0, child
    n[0] -= 1
    if n[0] > 0:
        last = h[n[0]]
        while True:
            child = 2 * i + 1
            if child >= n[0]:
                break
            if child + 1 < n[0] and before(&h[child + 1], &h[child]):
                child += 1
            if not before(&h[child], &last):
                break
            h[i] = h[child]
            i = child
        h[i] = last
    return top


# ---------------------------------------------------------------------------------- event loop

cdef class EventLoop:
    cdef Entry* heap
    cdef long n, cap, seq
    cdef public double now
    cdef public long scheduled, executed, cancelled, skipped

    def __cinit__(self):
        self.cap = 4096
        self.skipped = 0
        self.heap = <Entry*> malloc(self.cap * sizeof(Entry))
        self.n = self.seq = 0
        self.now = 0.0
        self.scheduled = self.executed = self.cancelled = 0

    def __dealloc__(self):
        free(self.heap)

    cdef void push(self, double time, int kind, long who, long version) noexcept:
        cdef Entry e
        if self.n == self.cap:
            self.cap *= 2
            self.heap = <Entry*> realloc(self.heap, self.cap * sizeof(Entry))
        e.time = time
        e.seq = self.seq
        e.kind = kind
        e.who = who
        e.version = version
        self.seq += 1
        self.scheduled += 1
        heap_push(self.heap, &self.n, e)

    cdef Entry pop(self) noexcept:
        return heap_pop(self.heap, &self.n)


# ---------------------------------------------------------------------------------- requests

cdef struct Req:
    long id
    long input_tokens, cached_tokens, output_tokens
    double arrival_s, admitted_s, first_token_s, done_s, cost_usd
    long replica
    long session          # the session waiting on it
    long done_seq         # its place in completion order (-1: not finished)
    long dev, task, attempt, turn


cdef class Requests:
    """The requests' slots: every request in submission order when the run keeps its tables, else
    slots reused once their request's turn has ended (``release``)."""
    cdef Req* r
    cdef long n, cap, next_id
    cdef long* free_slots
    cdef long nfree, free_cap

    def __cinit__(self):
        self.cap = 1 << 12
        self.r = <Req*> malloc(self.cap * sizeof(Req))
        self.n = self.next_id = 0
        self.free_cap = 1 << 10
        self.free_slots = <long*> malloc(self.free_cap * sizeof(long))
        self.nfree = 0

    def __dealloc__(self):
        free(self.r)
        free(self.free_slots)

    cdef long new(self) noexcept:
        """A slot for the next request (its id: ``next_id``, counted by the caller)."""
        if self.nfree:
            self.nfree -= 1
            return self.free_slots[self.nfree]
        if self.n == self.cap:
            self.cap *= 2
            self.r = <Req*> realloc(self.r, self.cap * sizeof(Req))
        self.n += 1
        return self.n - 1

    cdef void release(self, long i) noexcept:
        if self.nfree == self.free_cap:
            self.free_cap *= 2
            self.free_slots = <long*> realloc(self.free_slots, self.free_cap * sizeof(long))
        self.free_slots[self.nfree] = i
        self.nfree += 1


# ---------------------------------------------------------------------------------- the pool

cdef struct Replica:
    int index, streams, decoding, dirty
    long ndec, npre
    long kv_used
    double cap                # effective cap: the tier's cap while it holds streams, else inf
    double v_tok, v_time, rate, due_s, due_mark, event_s, prefill_free_s, sum_input, sum_vstart
    long version, fold        # the live wake-up's version; a folded prefill's request (-1: none)
    Mark* dec                 # finish marks (cap entries)
    Mark* pre                 # prefill ends (cap entries)


cdef class StepPhysics:
    """The serving pool's flat decode-rate and prefill functions
    (``speedtrap.serving.decode_rate.pool_decode_rate`` and ``pool_prefill_s``) written again in C,
    operation for operation, over a ``ReplicaPhysics``' step constants; ``tests/serving/
    test_decode_rate.py`` holds them equal to those functions bit for bit (``decode_rate_tok_s``,
    ``prefill_s``)."""
    cdef Steps d               # decode steps
    cdef double scale, draft_share
    cdef long verify_tokens
    cdef Steps p               # prefill steps: the replica's or its prefill pool's
    cdef double p_transfer, p_ttft, p_compute_idle, p_kv_idle
    cdef double p_chunk        # 0: no chunking

    def __cinit__(self, speed):
        self.d = read_steps(speed.steps)
        self.scale = speed.decode_speedup * speed.tokens_per_step
        self.verify_tokens = speed.draft_tokens + 1 if speed.draft_tokens else 0
        self.draft_share = speed.draft_tokens * speed.draft_cost
        ppool = speed.prefill_pool
        if ppool is None:
            p, chunk = speed.steps, speed.prefill_chunk_tokens
            self.p_transfer = 0.0
        else:
            p, chunk = ppool.steps, ppool.chunk_tokens
            self.p_transfer = ppool.transfer_s_per_token
        self.p_chunk = 0.0 if chunk is None else chunk
        self.p_ttft = speed.ttft_overhead_s
        self.p = read_steps(p)
        attended_idle = p.full_layers * 0.0 + p.window_layers * min(0.0, self.p.window)
        self.p_compute_idle = 0.0 * (p.matmul_s_per_token + attended_idle * p.attention_s_per_attended)
        self.p_kv_idle = 0 * attended_idle * p.kv_read_s_per_attended

    def decode_rate_tok_s(self, int batch, double context_tokens):
        """Per-stream decode rate, tok/s (``pool_decode_rate(speed)(batch, context_tokens)``)."""
        return self.decode_rate(batch, context_tokens)

    def prefill_s(self, long uncached_tokens):
        """Seconds from admission to the first token (``pool_prefill_s(speed)(uncached_tokens)``)."""
        return self.prefill_compute(uncached_tokens)

    cdef double decode_rate(self, int batch, double context) noexcept:
        cdef double attended, kv_s, per_token_s, tokens, weights_s, compute_s, core, exchange, plain_s
        cdef double verify_s
        if batch < 1:
            batch = 1
        attended = self.d.full_layers * context + self.d.window_layers * (context if context < self.d.window else self.d.window)
        kv_s = batch * attended * self.d.kv_read_s
        per_token_s = self.d.matmul_s + attended * self.d.attention_s
        tokens = batch * 1.0 + 0.0
        weights_s = self.d.shared_read_s
        if self.d.experts:
            weights_s += self.d.experts * (1.0 - pow(self.d.expert_keep, tokens if tokens > 1.0 else 1.0)) * self.d.expert_read_s
        compute_s = batch * 1.0 * per_token_s + self.d.matmul_fixed_s
        core = (weights_s + kv_s if weights_s + kv_s >= compute_s else compute_s) + 0.0
        exchange = tokens * self.d.exchange_s
        core += exchange - self.d.overlap * (core if core < exchange else exchange)
        plain_s = core + (self.d.fixed_s + tokens * self.d.collective_s)
        if plain_s < self.d.floor_s:
            plain_s = self.d.floor_s
        if not self.verify_tokens:
            return self.scale / plain_s
        tokens = batch * self.verify_tokens + 0.0
        weights_s = self.d.shared_read_s
        if self.d.experts:
            weights_s += self.d.experts * (1.0 - pow(self.d.expert_keep, tokens if tokens > 1.0 else 1.0)) * self.d.expert_read_s
        compute_s = batch * self.verify_tokens * per_token_s + self.d.matmul_fixed_s
        core = (weights_s + kv_s if weights_s + kv_s >= compute_s else compute_s) + 0.0
        exchange = tokens * self.d.exchange_s
        core += exchange - self.d.overlap * (core if core < exchange else exchange)
        verify_s = core + (self.d.fixed_s + tokens * self.d.collective_s)
        if verify_s < self.d.floor_s:
            verify_s = self.d.floor_s
        return self.scale / (verify_s + self.draft_share * plain_s)

    cdef double prefill_compute(self, long uncached) noexcept:
        cdef double n, prompt, tokens, weights_s, memory_s, half, seen, prefill, latency_s, exchange
        cdef double core, compute
        if uncached <= 0:
            return self.p_ttft + 0.0
        n = 1.0 if self.p_chunk == 0.0 else max(1.0, ceil(uncached / self.p_chunk))
        prompt = 2.0 * 0.0 + uncached
        tokens = uncached / n
        weights_s = self.p.shared_read_s
        if self.p.experts:
            weights_s += self.p.experts * (1.0 - pow(self.p.expert_keep, tokens if tokens > 1.0 else 1.0)) * self.p.expert_read_s
        memory_s = weights_s + self.p_kv_idle
        half = prompt / 2.0
        seen = self.p.full_layers * half + self.p.window_layers * (half if half < self.p.window else self.p.window)
        prefill = tokens * (self.p.prefill_matmul_s + seen * self.p.prefill_attention_s)
        prefill += self.p.matmul_fixed_s
        latency_s = self.p.fixed_s + tokens * self.p.collective_s
        exchange = tokens * self.p.exchange_s
        core = (memory_s if memory_s >= self.p_compute_idle else self.p_compute_idle) + prefill
        core += exchange - self.p.overlap * (core if core < exchange else exchange)
        compute = n * (core + latency_s if core + latency_s >= self.p.floor_s else self.p.floor_s)
        compute += uncached * self.p_transfer
        return self.p_ttft + compute



cdef class Pool:
    """ServingPool for one tier (speedtrap.serving.pool, admission, replica_clock) over C arrays."""
    cdef EventLoop loop
    cdef Requests reqs
    cdef Replica* reps
    cdef int nrep, batch_cap, bg
    cdef double kv_capacity, overhead_s
    cdef double usd_uncached, usd_cached, usd_output
    cdef long* queue          # FIFO of waiting request ids (a ring)
    cdef long qhead, qlen, qcap
    cdef long* loads          # placement heap: streams << 20 | index (stale entries included)
    cdef long nloads
    cdef int loads_limit, loads_cap
    cdef int* dirty
    cdef int ndirty
    cdef double* notes        # folded prefill ends still to integrate (a heap)
    cdef long nnotes
    cdef int notes_cap
    cdef double stat_t, area_system, area_waiting
    cdef long in_system, waiting, completed
    cdef public long events_scheduled, events_cancelled
    cdef dict prefill_memo
    cdef StepPhysics physics
    cdef long* done_buf         # requests finished in one wake-up (at most a replica's streams)
    cdef double* tally_buf      # packed values of finished requests (RequestTally.add_values)
    cdef long ntally
    cdef object tally           # a RequestTally (summary-only runs), else None

    def __cinit__(self, EventLoop loop, Requests reqs, speed, int replicas, info, int bg):
        cdef int i
        self.loop = loop
        self.reqs = reqs
        self.nrep = replicas
        self.batch_cap = info.batch_cap
        self.usd_uncached = info.usd_per_uncached
        self.usd_cached = info.usd_per_cached
        self.usd_output = info.usd_per_output
        self.bg = bg
        self.kv_capacity = float(speed.kv_capacity_tokens)
        self.overhead_s = float(getattr(speed, "ttft_overhead_s", 0.0))
        self.physics = StepPhysics(speed)
        self.prefill_memo = {}
        self.reps = <Replica*> malloc(replicas * sizeof(Replica))
        for i in range(replicas):
            self.reps[i].index = i
            self.reps[i].streams = self.reps[i].decoding = self.reps[i].ndec = self.reps[i].npre = 0
            self.reps[i].dirty = 0
            self.reps[i].kv_used = 0
            self.reps[i].cap = INF
            self.reps[i].v_tok = self.reps[i].v_time = self.reps[i].rate = 0.0
            self.reps[i].due_s = INF
            self.reps[i].due_mark = NAN
            self.reps[i].event_s = INF
            self.reps[i].prefill_free_s = 0.0
            self.reps[i].sum_input = self.reps[i].sum_vstart = 0.0
            self.reps[i].version = 0
            self.reps[i].fold = -1
            self.reps[i].dec = <Mark*> malloc((self.batch_cap + 1) * sizeof(Mark))
            self.reps[i].pre = <Mark*> malloc((self.batch_cap + 1) * sizeof(Mark))
        self.qcap = 1024
        self.queue = <long*> malloc(self.qcap * sizeof(long))
        self.qhead = self.qlen = 0
        self.loads_limit = 8 * replicas + 64
        self.loads_cap = self.loads_limit + 2
        self.loads = <long*> malloc(self.loads_cap * sizeof(long))
        self.nloads = 0
        for i in range(replicas):
            self.loads_push(i)
        self.dirty = <int*> malloc(replicas * sizeof(int))
        self.ndirty = 0
        self.notes_cap = 1024
        self.notes = <double*> malloc(self.notes_cap * sizeof(double))
        self.nnotes = 0
        self.stat_t = 0.0
        self.area_system = self.area_waiting = 0.0
        self.in_system = self.waiting = self.completed = 0
        self.events_scheduled = self.events_cancelled = 0
        self.tally = None
        self.tally_buf = <double*> malloc(4 * TALLY_BLOCK * sizeof(double))
        self.done_buf = <long*> malloc((self.batch_cap + 1) * sizeof(long))
        self.ntally = 0

    def __dealloc__(self):
        cdef int i
        if self.reps != NULL:
            for i in range(self.nrep):
                free(self.reps[i].dec)
                free(self.reps[i].pre)
            free(self.reps)
        free(self.queue); free(self.loads); free(self.dirty); free(self.notes); free(self.tally_buf)
        free(self.done_buf)

    cdef double prefill_s(self, long uncached) except? -1:
        """ServingPool's prefill time of ``uncached`` tokens (``pool_prefill_s``, through
        StepPhysics.prefill_compute), memoised; refused as the pool refuses an invalid one."""
        cached = self.prefill_memo.get(uncached)
        if cached is not None:
            return <double> cached
        cdef double s = self.physics.prefill_compute(uncached)
        if not (0 <= s < INF):
            raise ValueError(f"prefill_s({uncached}) = {s}; need 0 <= seconds < inf")
        self.prefill_memo[uncached] = s
        return s

    # -- placement heap ------------------------------------------------------------------------

    cdef void loads_push(self, int i) noexcept:
        """Admission's placement heap (``Admission._rebuild_loads``): one entry for replica ``i``."""
        heap_push(self.loads, &self.nloads, (<long> self.reps[i].streams << 20) | i)

    cdef void note_load(self, int i) noexcept:
        """Admission's note that replica ``i``'s load changed (its placement key is stale)."""
        cdef int j
        if self.nloads > self.loads_limit:
            self.nloads = 0
            for j in range(self.nrep):
                self.loads_push(j)
        else:
            self.loads_push(i)

    cdef int place(self, long kv_need) noexcept:
        """The replica to admit a request to now (-1: none): Admission._place and _scan, one tier."""
        cdef long key, streams
        cdef int i, best = -1
        cdef long best_key = 0
        cdef double kv_limit = self.kv_capacity - kv_need
        cdef Replica* r
        while True:
            key = self.loads[0]
            i = <int> (key & 0xFFFFF)
            streams = key >> 20
            if self.reps[i].streams == streams:
                break
            heap_pop(self.loads, &self.nloads)
        r = &self.reps[i]
        if r.cap >= self.batch_cap:
            if streams >= self.batch_cap:
                return -1
            if r.kv_used <= kv_limit:
                return i
        for i in range(self.nrep):  # the scan
            r = &self.reps[i]
            if r.streams >= self.batch_cap:
                continue
            if r.kv_used > kv_limit:
                continue
            if best < 0 or r.streams < best_key:
                best = i
                best_key = r.streams
                if best_key == 0:
                    break
        return best

    # -- statistics ----------------------------------------------------------------------------

    cdef void notes_push(self, double at) noexcept:
        """ReplicaClock's folded prefill ends still to integrate (``ReplicaClock._catch_up_notes``)."""
        if self.nnotes == self.notes_cap:
            self.notes_cap *= 2
            self.notes = <double*> realloc(self.notes, self.notes_cap * sizeof(double))
        heap_push(self.notes, &self.nnotes, at)

    cdef void integrate(self, double now) noexcept:
        """ServingPool's time-averaged statistics (``ServingPool._time_average``) up to ``now``,
        folded prefill ends included as ``ReplicaClock._catch_up_notes`` counts them."""
        cdef double at, dt
        while self.nnotes and self.notes[0] <= now:
            at = heap_pop(self.notes, &self.nnotes)
            dt = at - self.stat_t
            if dt > 0:
                self.area_system += self.in_system * dt
                self.area_waiting += self.waiting * dt
                self.stat_t = at
        dt = now - self.stat_t
        if dt > 0:
            self.area_system += self.in_system * dt
            self.area_waiting += self.waiting * dt
            self.stat_t = now

    # -- submit, admit, re-time, wake ----------------------------------------------------------

    cdef long submit(self, double now, long input_tokens, long cached_tokens, long output_tokens,
                     long session, long dev, long task, long attempt, long turn) except -1:
        """ServingPool.submit (speedtrap.serving.pool): a request arrives; refused as the pool refuses
        one no replica could hold; admitted where ``Admission._place`` finds room, else queued FIFO."""
        cdef long i
        cdef Req* q
        cdef int r
        if input_tokens + output_tokens > self.kv_capacity:
            raise ValueError(
                f"request needs {input_tokens + output_tokens} KV tokens, more than a replica holds "
                f"({self.kv_capacity:g}); it could never be admitted"
            )
        i = self.reqs.new()
        q = &self.reqs.r[i]
        q.id = self.reqs.next_id
        self.reqs.next_id += 1
        q.input_tokens = input_tokens
        q.cached_tokens = cached_tokens
        q.output_tokens = output_tokens
        q.arrival_s = now
        q.admitted_s = q.first_token_s = q.done_s = NAN
        q.cost_usd = ((input_tokens - cached_tokens) * self.usd_uncached + cached_tokens * self.usd_cached
                      + output_tokens * self.usd_output)
        q.replica = -1
        q.done_seq = -1
        q.session = session
        q.dev = dev
        q.task = task
        q.attempt = attempt
        q.turn = turn
        self.integrate(now)
        self.in_system += 1
        if self.qlen == 0:
            r = self.place(input_tokens + output_tokens)
            if r >= 0:
                self.admit(i, r, now)
                self.retime(r, now)
                return i
        self.waiting += 1
        if self.qlen == self.qcap:
            self.grow_queue()
        self.queue[(self.qhead + self.qlen) % self.qcap] = i
        self.qlen += 1
        return i

    cdef void grow_queue(self) noexcept:
        """The waiting queue's ring, doubled (storage only: ``Admission``'s deque in the Mesa model)."""
        cdef long* q = <long*> malloc(2 * self.qcap * sizeof(long))
        cdef long k
        for k in range(self.qlen):
            q[k] = self.queue[(self.qhead + k) % self.qcap]
        free(self.queue)
        self.queue = q
        self.qhead = 0
        self.qcap *= 2

    cdef void unfold(self, Replica* r, long i) noexcept:
        """ReplicaClock._unfold (speedtrap.serving.replica_clock): a folded prefill end taken out."""
        cdef Req* q = &self.reqs.r[i]
        cdef double at = q.first_token_s
        cdef Mark m
        cdef int k, found = -1
        q.first_token_s = NAN
        r.decoding = 0
        r.ndec = 0
        r.sum_input -= q.input_tokens
        r.rate = 0.0
        r.due_mark = NAN
        r.due_s = INF
        m.value = at
        m.req = i
        m.vstart = 0.0
        heap_push(r.pre, &r.npre, m)
        for k in range(self.nnotes):
            if self.notes[k] == at:
                found = k
                break
        if found >= 0:  # not yet integrated: remove it and restore the heap
            self.notes[found] = self.notes[self.nnotes - 1]
            self.nnotes -= 1
            self.reheap_notes()

    cdef void reheap_notes(self) noexcept:
        """The folded prefill ends re-heaped after an unfold (as ``ReplicaClock._unfold`` leaves them)."""
        cdef long n = self.nnotes, k
        self.nnotes = 0
        for k in range(n):
            self.notes_push(self.notes[k])

    cdef void admit(self, long i, int ri, double now) except *:
        """Admission._admit (speedtrap.serving.admission): a request admitted to replica ``ri`` at ``now``:
        its prefill, its first token and its place among the replica's streams."""
        cdef Replica* r = &self.reps[ri]
        cdef Req* q = &self.reqs.r[i]
        cdef long fold = r.fold
        cdef double prefill, overhead, start, end
        cdef Mark m
        if fold >= 0:
            r.fold = -1
            if now <= self.reqs.r[fold].first_token_s:
                self.unfold(r, fold)
        q = &self.reqs.r[i]
        prefill = self.prefill_s(q.input_tokens - q.cached_tokens)
        q.admitted_s = now
        q.replica = ri
        r.streams += 1
        self.note_load(ri)
        r.kv_used += q.input_tokens + q.output_tokens
        if self.batch_cap < r.cap:
            r.cap = self.batch_cap
        if prefill > 0:
            overhead = self.overhead_s if self.overhead_s < prefill else prefill
            start = now + overhead
            if r.prefill_free_s > start:
                start = r.prefill_free_s
            end = start + (prefill - overhead)
            r.prefill_free_s = end
            m.value = end
            m.req = i
            m.vstart = 0.0
            heap_push(r.pre, &r.npre, m)
        else:
            q.first_token_s = now
            self.start_decoding(r, i, now)

    cdef void start_decoding(self, Replica* r, long i, double now) noexcept:
        """ReplicaClock._start_decoding: a request whose prefill ended joins the decoding batch."""
        cdef Req* q = &self.reqs.r[i]
        cdef Mark m
        if r.decoding:
            r.v_tok += r.rate * (now - r.v_time)
        else:
            r.v_tok = 0.0
            r.sum_vstart = 0.0
            r.due_mark = NAN
        r.v_time = now
        m.value = r.v_tok + q.output_tokens - 1
        m.req = i
        m.vstart = r.v_tok
        heap_push(r.dec, &r.ndec, m)
        r.decoding += 1
        r.sum_input += q.input_tokens
        r.sum_vstart += r.v_tok

    cdef void retime(self, int ri, double now) except *:
        """ReplicaClock._retime: the replica's decode progress to ``now`` and its next wake-up at the
        live decode rate (``StepPhysics.decode_rate``, the pool's flat decode-rate function)."""
        cdef Replica* r = &self.reps[ri]
        cdef double start = now, v, context, room, rate, head, due, at
        cdef int n = r.decoding, batch
        cdef Mark m
        cdef Req* q
        r.dirty = 0
        if not n and r.npre == 1 and r.pre[0].value > now:
            m = heap_pop(r.pre, &r.npre)
            at = m.value
            q = &self.reqs.r[m.req]
            q.first_token_s = at
            r.v_tok = 0.0
            r.sum_vstart = 0.0
            r.due_mark = NAN
            r.v_time = at
            m.value = 0.0 + q.output_tokens - 1
            m.vstart = 0.0
            heap_push(r.dec, &r.ndec, m)
            r.decoding = n = 1
            r.sum_input += q.input_tokens
            r.sum_vstart += 0.0
            r.fold = m.req
            self.notes_push(at)
            now = at
        if n:
            v = r.v_tok
            if r.v_time != now:
                v = v + r.rate * (now - r.v_time)
                r.v_tok = v
                r.v_time = now
            context = (r.sum_input + n * v - r.sum_vstart) / n
            room = r.cap - r.streams
            batch = n + (self.bg if self.bg < room else <int> room)
            rate = self.physics.decode_rate(batch, context)
            head = r.dec[0].value
            if rate != r.rate or head != r.due_mark:
                if not rate > 0 or rate == INF:
                    raise ValueError(f"decode_rate_tok_s({batch}, {context:g}) = {rate}; need 0 < rate < inf")
                r.rate = rate
                r.due_mark = head
                r.due_s = due = now + (head - v) / rate
            else:
                due = r.due_s
        else:
            r.rate = 0.0
            r.due_mark = NAN
            r.due_s = due = INF
        if r.npre and r.pre[0].value < due:
            due = r.pre[0].value
        if due < start:
            due = start
        if r.event_s < INF:
            if r.event_s == due:
                return
            self.events_cancelled += 1
            self.loop.cancelled += 1
            r.version += 1
            r.event_s = INF
        if due < INF:
            r.version += 1
            self.loop.push(due, WAKE, ri, r.version)
            r.event_s = due
            self.events_scheduled += 1

    cdef void wake(self, int ri, double now, Core core) except *:
        """ReplicaClock.wake and ServingPool._on_wake: requests finished by ``now`` handed to the core
        (``Session._on_request_done``), then the queue dispatched."""
        cdef Replica* r = &self.reps[ri]
        cdef double v
        cdef Mark m
        cdef Req* q
        cdef long ndone = 0, k
        cdef long* done_ids = self.done_buf
        self.integrate(now)
        r.event_s = INF
        r.fold = -1
        if r.decoding:
            v = r.v_tok + r.rate * (now - r.v_time)
            if now >= r.due_s and v < r.due_mark:
                v = r.due_mark
            r.v_tok = v
            r.v_time = now
            while r.ndec and r.dec[0].value <= v:
                m = heap_pop(r.dec, &r.ndec)
                q = &self.reqs.r[m.req]
                r.decoding -= 1
                r.sum_input -= q.input_tokens
                r.sum_vstart -= m.vstart
                r.streams -= 1
                self.note_load(ri)
                r.kv_used -= q.input_tokens + q.output_tokens
                if r.streams == 0:
                    r.cap = INF
                q.done_s = now
                q.done_seq = self.completed + ndone
                if self.tally is not None:
                    self.tally_add(q)
                done_ids[ndone] = m.req
                ndone += 1
            self.in_system -= ndone
        while r.npre and r.pre[0].value <= now:
            m = heap_pop(r.pre, &r.npre)
            self.reqs.r[m.req].first_token_s = now
            self.start_decoding(r, m.req, now)
        if self.waiting:
            if not r.dirty:
                r.dirty = 1
                self.dirty[self.ndirty] = ri
                self.ndirty += 1
            self.dispatch(now)
            self.flush(now)
        else:
            self.retime(ri, now)
        self.completed += ndone
        for k in range(ndone):
            core.request_done(done_ids[k])

    cdef void tally_add(self, Req* q) except *:
        """RequestTally.add's values of a finished request, handed over every TALLY_BLOCK requests."""
        cdef double tokens = <double> q.output_tokens - 1.0, seconds = q.done_s - q.first_token_s
        cdef double* b = self.tally_buf + 4 * self.ntally
        b[0] = q.admitted_s - q.arrival_s
        b[1] = q.first_token_s - q.arrival_s
        b[2] = tokens / seconds if tokens > 0 and seconds > 0 else NAN
        b[3] = q.cost_usd
        self.ntally += 1
        if self.ntally == TALLY_BLOCK:
            self.tally_flush()

    cdef void tally_flush(self) except *:
        values = array("d")
        values.frombytes((<char*> self.tally_buf)[:self.ntally * 4 * sizeof(double)])
        self.tally.add_values(values)
        self.ntally = 0

    cdef void dispatch(self, double now) except *:
        """Admission._dispatch: waiting requests admitted in FIFO order while a replica has room."""
        cdef long i
        cdef int ri
        cdef Req* q
        while self.qlen:
            i = self.queue[self.qhead]
            q = &self.reqs.r[i]
            ri = self.place(q.input_tokens + q.output_tokens)
            if ri < 0:
                break
            self.qhead = (self.qhead + 1) % self.qcap
            self.qlen -= 1
            self.waiting -= 1
            self.admit(i, ri, now)
            if not self.reps[ri].dirty:
                self.reps[ri].dirty = 1
                self.dirty[self.ndirty] = ri
                self.ndirty += 1

    cdef void flush(self, double now) except *:
        """ReplicaClock._flush: every dirty replica retimed at ``now``."""
        cdef int k
        for k in range(self.ndirty):
            self.retime(self.dirty[k], now)
        self.ndirty = 0


# ---------------------------------------------------------------------------------- agents

cdef class CTask:
    """A task's per-turn running counters in C (flushed to its Task object at the end)."""
    cdef object task
    cdef long id, index, dev
    cdef long context_tokens, cache_prefix_tokens, requests, turns, input_tokens, cached_tokens
    cdef long output_tokens, attempts, wrong_attempts, outputs, outputs_rejected, initial_context
    cdef double cache_time_s, cost_usd, tool_s, human_s
    cdef bint cached_key     # the conversation's prompt-cache key is the session's (else None)

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
    cdef double since, idle_total_s, other_left_s, episode_patience_s, estimate
    cdef double prompt_cache_s
    cdef bint has_estimate, has_other_left, away_pending, hybrid_pending
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
    cdef object mix, spec, quality, tasks_list, backend_name, tier
    cdef long capacity_streams
    # specs read once
    cdef double compact_at, ttl, turn_memory, turn_prior, detect_prob, hand_fix_prob
    cdef double review_base_s, review_s_per_kt, res_short_s, res_short_scale, res_max, res_tau
    cdef double ow_max, failed_mult, repair_fraction
    cdef long compact_to, shared_prefix, max_repairs
    cdef double reject_prob, redo_prob, other_work_prob, manual_escape_prob
    cdef bint manual_only
    cdef bint keep_stretches
    # the draws: the root seed, the streams' spawn-key tags and the distributions drawn in C
    cdef Seed root
    cdef long agent_stream, checkin_stream, stretch_stream, review_stream, redo_stream
    cdef LogN output_d, tool_d, result_d, checkin_d, prompt_d, away_d
    cdef double episode_sigma
    cdef bint away_on, resumption_random

    def __cinit__(self, scenario, seed, str name, str tier, speed, info, bint tables=True):
        """WorkflowModel.__init__: the streams spawned from the root ``seed``, the backend, the
        developers (Developer.__init__, each with its TaskSource and AttentionRule) and their start."""
        cdef CDev d
        cdef long i, k
        from speedtrap.agents import task as task_module
        from speedtrap.agents.attention import AttentionRule
        from speedtrap.models.tasks import ATTENTION_STREAM, TaskSource, stream_rng

        bspec = scenario.backends[name]
        self.loop = EventLoop()
        self.reqs = Requests()
        self.pool = Pool(self.loop, self.reqs, speed, bspec.replicas, info, bspec.background_streams_per_replica)
        self.backend_name = name
        self.tier = tier
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
            d.has_estimate = False
            d.prompt_cache_s = -INF
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
            if (<CTask> t).requests:
                (<CTask> t).task.tiers.append(self.tier)

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
        """Session._start_turn: one agent turn's request (context, prompt cache, compaction) submitted."""
        cdef long k = s.turns_done, out, context, cached = 0
        cdef CTask t = s.task
        if k >= s.drawn:
            self.draw_turns(s, k)
        out = s.out[k]
        context = t.context_tokens
        if context + out > self.compact_at:
            context = t.context_tokens = self.compact_to
            t.cached_key = False
        if t.cached_key and now - t.cache_time_s <= self.ttl and t.cache_prefix_tokens <= context:
            cached = t.cache_prefix_tokens
        elif self.shared_prefix:
            if now - s.dev.prompt_cache_s <= self.ttl:
                cached = self.shared_prefix if self.shared_prefix < context else context
        s.turn_start_s = now
        s.tool_end_s = INF
        try:
            s.req = self.pool.submit(now, context, cached, out, s.id, s.dev.index, t.index, s.attempt, k)
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
        t.cached_key = True
        t.cache_prefix_tokens = q.input_tokens
        t.cache_time_s = now
        if self.shared_prefix:
            s.dev.prompt_cache_s = now
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
            s.task.cached_key = False
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
        return turns * (d.estimate if d.has_estimate else self.turn_prior)

    cdef void note_turn_end(self, CDev d, CSession s, double turn_s, double now) noexcept:
        """Developer.note_turn_end and AttentionRule.learn_turn: the turn time learnt (``turn_memory``),
        and ``Developer.reconsider`` while waiting."""
        if d.has_estimate:
            d.estimate = d.estimate + self.turn_memory * (turn_s - d.estimate)
        else:
            d.estimate = turn_s
            d.has_estimate = True
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
        cdef double lng, short
        if away_s <= 0.0:
            return 0.0
        lng = -expm1(-away_s / self.res_tau)
        short = self.res_short_s * log1p(away_s / self.res_short_scale)
        return short + self.res_max * lng * lng

    cdef double other_resumption_mean_s(self, CDev d, double now) noexcept:
        """Attention.other_work_resumption_mean_s after the time since other work was left (0 before
        any that day), as ``Developer._fill_gap`` asks it."""
        cdef double away_s, lng, short
        if not d.has_other_left:
            return 0.0
        away_s = now - d.other_left_s
        if away_s <= 0.0:
            return 0.0
        lng = -expm1(-away_s / self.res_tau)
        short = self.res_short_s * log1p(away_s / self.res_short_scale)
        return short + self.ow_max * lng * lng

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
        t.cached_key = False
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

    cdef void away_end(self, CDev d) except *:
        """Developer._on_away_end: back from an away episode: serve what waits, else away again."""
        cdef double away_s
        d.away_pending = False
        d.away_version += 1
        if d.pending:
            self.serve(d, d.pending.popleft())
        else:
            away_s = self.away_episode_s(d)
            d.away_pending = True
            self.loop.push(self.loop.now + away_s, AWAY, d.index, d.away_version)

    cdef void take_session(self, CDev d, CSession s) except *:
        """Developer.take_session: a session needs the developer: at once, or queued behind the current
        step (``interruptible``)."""
        if d.away_pending:
            d.pending.append(s)
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

    cdef void serve(self, CDev d, item) except *:
        """Developer._serve: a session or a rework taken up, after a resumption grown with the time away
        (AttentionRule.time_away_s and resumption_s) unless still in flow or on the same task."""
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
                 "attempt", "turn")}
        fcols = {c: np.empty(m) for c in ("arrival_s", "admitted_s", "first_token_s", "done_s", "cost_usd")}
        cdef long[:] cid = cols["id"], crep = cols["replica"], cin = cols["input_tokens"]
        cdef long[:] cca = cols["cached_tokens"], cou = cols["output_tokens"], cde = cols["developer"]
        cdef long[:] cta = cols["task"], cat = cols["attempt"], ctu = cols["turn"]
        cdef double[:] far = fcols["arrival_s"], fad = fcols["admitted_s"], ffi = fcols["first_token_s"]
        cdef double[:] fdo = fcols["done_s"], fco = fcols["cost_usd"]
        for i in range(n):
            q = &self.reqs.r[i]
            if q.done_seq < 0:
                continue
            k = q.done_seq
            cid[k] = q.id; crep[k] = q.replica; cin[k] = q.input_tokens; cca[k] = q.cached_tokens
            cou[k] = q.output_tokens; cde[k] = q.dev; cta[k] = q.task; cat[k] = q.attempt; ctu[k] = q.turn
            far[k] = q.arrival_s; fad[k] = q.admitted_s; ffi[k] = q.first_token_s; fdo[k] = q.done_s
            fco[k] = q.cost_usd
        a, b, f, d = fcols["arrival_s"], fcols["admitted_s"], fcols["first_token_s"], fcols["done_s"]
        frame = pd.DataFrame(
            {
                "backend": pd.Series([self.backend_name] * m, dtype="str"),
                "id": cols["id"], "tier": pd.Series([self.tier] * m, dtype="str"),
                "replica": cols["replica"], "input_tokens": cols["input_tokens"],
                "cached_tokens": cols["cached_tokens"], "output_tokens": cols["output_tokens"],
                "arrival_s": a, "admitted_s": b, "first_token_s": f, "done_s": d,
                "queue_wait_s": b - a, "ttft_s": f - a, "prefill_s": f - b, "decode_s": d - f,
                "sojourn_s": d - a, "cost_usd": fcols["cost_usd"], "developer": cols["developer"],
                "task": cols["task"], "attempt": cols["attempt"], "turn": cols["turn"],
            }
        )
        return frame.sort_values("arrival_s", kind="stable", ignore_index=True)

    def stretches_frame(self):
        cdef CDev d
        cdef CSession s
        rows = []
        for d in self.devs:
            i = d.index
            rows.extend((i, *row) for row in d.closed_stretches)
            for s in d.sessions:
                rows.extend((i, s.task.index, s.attempt, *r) for r in s.log)
        frame = pd.DataFrame(
            rows, columns=["developer", "task", "attempt", "handoff_s", "need_s", "back_s", "transcript"]
        )
        for column in ("need_s", "back_s"):
            frame[column] = frame[column].astype("float64").replace(math.inf, math.nan)
        return frame

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
