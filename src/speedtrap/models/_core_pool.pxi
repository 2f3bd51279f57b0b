# The typed core's serving pool (speedtrap.serving.pool, admission, replica_clock): one backend's
# tiers, their priority levels, caps, reservations and prices.
# Included by _typed_core.pyx (its declarations and imports come first); compiled as part of it.

cdef struct Replica:
    int index, streams, decoding, dirty
    long ndec, npre
    long kv_used
    double cap                # effective cap: the smallest cap among its streams' tiers, else inf
    bint reserved             # reserved for a priority level (Admission._reserve)
    long reserved_for         # that level's priority (ReplicaState.reserved_for)
    long* tier_streams        # own streams of each tier (ReplicaState.cap_counts, by tier)
    double v_tok, v_time, rate, due_s, due_mark, event_s, prefill_free_s, sum_input, sum_vstart
    long version, fold        # the live wake-up's version; a folded prefill's request (-1: none)
    Mark* dec                 # finish marks (cap entries)
    Mark* pre                 # prefill ends (cap entries)


cdef struct Level:            # a priority level (speedtrap.serving.admission.PriorityLevel)
    long priority
    int reserved              # the replica it has reserved (-1: none)
    long* queue               # FIFO of its waiting request ids (a ring)
    long qhead, qlen, qcap


cdef struct TierInfo:         # a tier's admission data and prices (TierAdmission)
    int batch_cap
    long priority
    int level                 # its priority level's index (levels highest first)
    double usd_uncached, usd_cached, usd_output


cdef long CAPPED_PENALTY = 1L << 40   # speedtrap.serving.admission._CAPPED_PENALTY


cdef void grow_queue(Level* lv) noexcept:
    """A level's waiting ring, doubled (storage only: ``PriorityLevel``'s deque in the Mesa model)."""
    cdef long* q = <long*> malloc(2 * lv.qcap * sizeof(long))
    cdef long k
    for k in range(lv.qlen):
        q[k] = lv.queue[(lv.qhead + k) % lv.qcap]
    free(lv.queue)
    lv.queue = q
    lv.qhead = 0
    lv.qcap *= 2


cdef class Pool:
    """ServingPool over C arrays (speedtrap.serving.pool, admission, replica_clock): the backend's
    tiers (``TierAdmission``: cap, priority, prices), their priority levels (``PriorityLevel``: FIFO
    queues and reserved replicas) and the replicas."""
    cdef EventLoop loop
    cdef Requests reqs
    cdef Replica* reps
    cdef int nrep, max_cap, bg, ntiers, nlevels
    cdef double kv_capacity, overhead_s
    cdef TierInfo* tiers
    cdef Level* levels
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

    def __cinit__(self, EventLoop loop, Requests reqs, speed, int replicas, infos, int bg):
        """ServingPool.__init__: ``infos`` the backend's tiers' ``TierAdmission`` in the spec's order,
        each with its ``PriorityLevel`` (one per distinct priority, highest first)."""
        cdef int i, k
        cdef TierInfo* t
        self.loop = loop
        self.reqs = reqs
        self.nrep = replicas
        self.ntiers = len(infos)
        self.tiers = <TierInfo*> malloc(self.ntiers * sizeof(TierInfo))
        priorities = sorted({info.priority for info in infos}, reverse=True)
        self.nlevels = len(priorities)
        self.levels = <Level*> malloc(self.nlevels * sizeof(Level))
        for k in range(self.nlevels):
            self.levels[k].priority = priorities[k]
            self.levels[k].reserved = -1
            self.levels[k].qcap = 1024
            self.levels[k].queue = <long*> malloc(1024 * sizeof(long))
            self.levels[k].qhead = self.levels[k].qlen = 0
        self.max_cap = 0
        for k, info in enumerate(infos):
            t = &self.tiers[k]
            t.batch_cap = info.batch_cap
            t.priority = info.priority
            t.level = priorities.index(info.priority)
            t.usd_uncached = info.usd_per_uncached
            t.usd_cached = info.usd_per_cached
            t.usd_output = info.usd_per_output
            if t.batch_cap > self.max_cap:
                self.max_cap = t.batch_cap
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
            self.reps[i].reserved = 0
            self.reps[i].reserved_for = 0
            self.reps[i].tier_streams = <long*> malloc(self.ntiers * sizeof(long))
            for k in range(self.ntiers):
                self.reps[i].tier_streams[k] = 0
            self.reps[i].dec = <Mark*> malloc((self.max_cap + 1) * sizeof(Mark))
            self.reps[i].pre = <Mark*> malloc((self.max_cap + 1) * sizeof(Mark))
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
        self.done_buf = <long*> malloc((self.max_cap + 1) * sizeof(long))
        self.ntally = 0

    def __dealloc__(self):
        cdef int i
        if self.reps != NULL:
            for i in range(self.nrep):
                free(self.reps[i].dec)
                free(self.reps[i].pre)
                free(self.reps[i].tier_streams)
            free(self.reps)
        if self.levels != NULL:
            for i in range(self.nlevels):
                free(self.levels[i].queue)
            free(self.levels)
        free(self.tiers); free(self.loads); free(self.dirty); free(self.notes); free(self.tally_buf)
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

    cdef int place(self, Req* q) noexcept:
        """The replica to admit ``q`` to now (-1: none): Admission._place, its fast path (the least
        loaded replica, when uncapped for the request's tier and open to its priority), else _scan:
        among the replicas open to its priority, with a slot under its tier's cap (or under their own
        smaller cap, after the others: ``_CAPPED_PENALTY``) and KV room, the least loaded, lowest index
        first."""
        cdef long key, streams
        cdef int i, best = -1
        cdef long best_key = 0
        cdef TierInfo* t = &self.tiers[q.tier]
        cdef int cap_req = t.batch_cap
        cdef long prio = t.priority
        cdef double kv_limit = self.kv_capacity - (q.input_tokens + q.output_tokens)
        cdef Replica* r
        while True:
            key = self.loads[0]
            i = <int> (key & 0xFFFFF)
            streams = key >> 20
            if self.reps[i].streams == streams:
                break
            heap_pop(self.loads, &self.nloads)
        r = &self.reps[i]
        if r.cap >= cap_req and (not r.reserved or prio >= r.reserved_for):
            if streams >= cap_req:
                return -1
            if r.kv_used <= kv_limit:
                return i
        for i in range(self.nrep):  # Admission._scan
            r = &self.reps[i]
            if r.reserved and prio < r.reserved_for:
                continue
            streams = r.streams
            if r.cap < cap_req:
                if streams >= r.cap:
                    continue
                key = streams + CAPPED_PENALTY
            else:
                if streams >= cap_req:
                    continue
                key = streams
            if r.kv_used > kv_limit:
                continue
            if best < 0 or key < best_key:
                best = i
                best_key = key
                if key == 0:
                    break
        return best

    cdef void reserve(self, int lv, Req* q) noexcept:
        """Admission._reserve: reserve for level ``lv`` the unreserved replica that will soonest fit its
        head ``q`` (fewest streams, then least KV, in excess of what it needs; lowest index first)."""
        cdef long need_kv = q.input_tokens + q.output_tokens, k1, best_k1 = 0
        cdef double k2, best_k2 = 0.0
        cdef int i, best = -1
        cdef int cap_req = self.tiers[q.tier].batch_cap
        cdef Replica* r
        for i in range(self.nrep):
            r = &self.reps[i]
            if r.reserved:
                continue
            k1 = r.streams + 1 - cap_req
            if k1 < 0:
                k1 = 0
            k2 = <double> (r.kv_used + need_kv) - self.kv_capacity
            if not k2 > 0.0:
                k2 = 0.0
            if best < 0 or k1 < best_k1 or (k1 == best_k1 and k2 < best_k2):
                best = i
                best_k1 = k1
                best_k2 = k2
        if best >= 0:
            self.reps[best].reserved = 1
            self.reps[best].reserved_for = self.levels[lv].priority
            self.levels[lv].reserved = best

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

    cdef long submit(self, double now, int tier, long input_tokens, long cached_tokens, long output_tokens,
                     long session, long dev, long task, long attempt, long turn) except -1:
        """ServingPool.submit (speedtrap.serving.pool): a request of ``tier`` arrives, priced by its tier;
        refused as the pool refuses one no replica could hold; admitted at once where its level's queue
        is empty and ``Admission._place`` finds room, else queued FIFO in its level (a blocked new head
        reserves a replica for the level, ``Admission._reserve``, unless the level is the lowest)."""
        cdef long i
        cdef Req* q
        cdef int r
        cdef TierInfo* t = &self.tiers[tier]
        cdef Level* lv = &self.levels[t.level]
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
        q.tier = tier
        q.cost_usd = ((input_tokens - cached_tokens) * t.usd_uncached + cached_tokens * t.usd_cached
                      + output_tokens * t.usd_output)
        q.replica = -1
        q.done_seq = -1
        q.session = session
        q.dev = dev
        q.task = task
        q.attempt = attempt
        q.turn = turn
        self.integrate(now)
        self.in_system += 1
        if lv.qlen == 0:
            r = self.place(q)
            if r >= 0:
                self.admit(i, r, now)
                self.retime(r, now)
                return i
            if t.level != self.nlevels - 1 and lv.reserved < 0:
                self.reserve(t.level, q)
        self.waiting += 1
        if lv.qlen == lv.qcap:
            grow_queue(lv)
        lv.queue[(lv.qhead + lv.qlen) % lv.qcap] = i
        lv.qlen += 1
        return i

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
        cdef int cap
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
        cap = self.tiers[q.tier].batch_cap
        r.tier_streams[q.tier] += 1
        if cap < r.cap:
            r.cap = cap
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
                r.tier_streams[q.tier] -= 1
                if r.tier_streams[q.tier] == 0 and self.tiers[q.tier].batch_cap == r.cap:
                    self.lowest_cap(r)
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

    cdef void lowest_cap(self, Replica* r) noexcept:
        """The replica's effective cap once a tier's last stream left it (``ServingPool._on_wake``): the
        smallest cap among the tiers of the streams still on it, else inf."""
        cdef int k
        cdef double cap = INF
        for k in range(self.ntiers):
            if r.tier_streams[k] and self.tiers[k].batch_cap < cap:
                cap = self.tiers[k].batch_cap
        r.cap = cap

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
        """Admission._dispatch: waiting requests admitted, priority levels high to low, FIFO within a
        level; a level's blocked head reserves a replica for it (``_reserve``, but in the lowest level),
        and a level whose queue empties releases its reservation."""
        cdef long i
        cdef int ri, k
        cdef bint blocked
        cdef Req* q
        cdef Level* lv
        for k in range(self.nlevels):
            lv = &self.levels[k]
            blocked = False
            while lv.qlen:
                i = lv.queue[lv.qhead]
                q = &self.reqs.r[i]
                ri = self.place(q)
                if ri < 0:
                    if k != self.nlevels - 1 and lv.reserved < 0:
                        self.reserve(k, q)
                    blocked = True
                    break
                lv.qhead = (lv.qhead + 1) % lv.qcap
                lv.qlen -= 1
                self.waiting -= 1
                self.admit(i, ri, now)
                if not self.reps[ri].dirty:
                    self.reps[ri].dirty = 1
                    self.dirty[self.ndirty] = ri
                    self.ndirty += 1
            if not blocked and lv.reserved >= 0:
                self.reps[lv.reserved].reserved = 0
                lv.reserved = -1

    cdef void flush(self, double now) except *:
        """ReplicaClock._flush: every dirty replica retimed at ``now``."""
        cdef int k
        for k in range(self.ndirty):
            self.retime(self.dirty[k], now)
        self.ndirty = 0
