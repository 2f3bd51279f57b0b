# The typed core's serving physics: the pool's flat decode-rate and prefill functions in C.
# Included by _typed_core.pyx (its declarations and imports come first); compiled as part of it.

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
