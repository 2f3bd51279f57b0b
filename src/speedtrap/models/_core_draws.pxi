# The typed core's random draws: streams seeded as numpy seeds them, numpy's C distributions.
# Included by _typed_core.pyx (its declarations and imports come first); compiled as part of it.

# The model's random streams in C. A per-attempt stream (``Task.rng``: numpy's
# ``Generator(PCG64(SeedSequence(entropy, spawn_key=key)))``) is seeded here as numpy seeds it:
# SeedSequence's pool mixing and ``generate_state(4, uint64)``, then ``pcg64_set_seed`` (numpy keeps a
# bit generator's stream from a given seed the same across versions: NEP 19), and
# tests/models/test_core_draws.py holds them equal to numpy's for many entropies and keys. Draws from any stream (these and the developers' attention
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
