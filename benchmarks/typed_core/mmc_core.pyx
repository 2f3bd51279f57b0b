# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A typed compiled core for the pool benchmark's workload (docs/performance.md, "A typed core").

The event loop (a binary heap of C structs ordered by time, then insertion) and the serving pool's
algorithm (a processor-sharing virtual clock per replica, a heap of finish marks per replica, one
pending wake-up per replica re-timed when its streams change, a FIFO queue, placement on the
replica with the most free slots) in ``cdef`` classes over C arrays: no Python object is created
or called on the event path. Python sees it only at the boundary: the customers' inter-arrival gaps
and output tokens in, their queue waits out. A prototype outside the package, for measurement only.
"""

from libc.stdlib cimport free, malloc, realloc

import numpy as np

cdef enum:
    ARRIVAL = 0
    WAKE = 1


cdef struct Entry:
    double time
    long seq
    int kind
    int who
    long version


cdef class EventLoop:
    """Events in (time, insertion) order over a heap of C structs."""

    cdef Entry* heap
    cdef long n, cap, seq
    cdef public double now
    cdef public long scheduled, executed, cancelled

    def __cinit__(self):
        self.cap = 1024
        self.heap = <Entry*> malloc(self.cap * sizeof(Entry))
        if self.heap == NULL:
            raise MemoryError()
        self.n = self.seq = 0
        self.now = 0.0
        self.scheduled = self.executed = self.cancelled = 0

    def __dealloc__(self):
        free(self.heap)

    cdef inline bint less(self, Entry* a, Entry* b) noexcept nogil:
        return a.time < b.time or (a.time == b.time and a.seq < b.seq)

    cdef void push(self, double time, int kind, int who, long version) noexcept:
        cdef long i, parent
        cdef Entry e
        if self.n == self.cap:
            self.cap *= 2
            self.heap = <Entry*> realloc(self.heap, self.cap * sizeof(Entry))
        e.time, e.seq, e.kind, e.who, e.version = time, self.seq, kind, who, version
        self.seq += 1
        self.scheduled += 1
        i = self.n
        self.n += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not self.less(&e, &self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = e

    cdef Entry pop(self) noexcept:
        cdef Entry top = self.heap[0]
        cdef Entry last
        cdef long i = 0, child
        self.n -= 1
        if self.n > 0:
            last = self.heap[self.n]
            while True:
                child = 2 * i + 1
                if child >= self.n:
                    break
                if child + 1 < self.n and self.less(&self.heap[child + 1], &self.heap[child]):
                    child += 1
                if not self.less(&self.heap[child], &last):
                    break
                self.heap[i] = self.heap[child]
                i = child
            self.heap[i] = last
        return top


cdef class Pool:
    """Replicas with processor-sharing virtual clocks (module docstring), fed by :meth:`arrive`."""

    cdef EventLoop loop
    cdef int replicas, cap
    cdef double rate
    cdef double* v          # each replica's virtual clock (tokens decoded by each stream so far)
    cdef double* last       # when v was last brought up to date
    cdef int* batch
    cdef long* version      # the live wake-up's version; an older one is a cancelled event
    cdef double* wake_at    # the live wake-up's time (INF: none)
    cdef double* marks      # per replica a heap of finish marks, cap entries each
    cdef long* mark_req
    cdef long* queue
    cdef long qhead, qtail
    cdef double[:] arrival_s, admitted_s, done_s
    cdef long[:] tokens

    def __cinit__(self, EventLoop loop, int replicas, int cap, double rate, long customers):
        self.loop = loop
        self.replicas, self.cap, self.rate = replicas, cap, rate
        self.v = <double*> malloc(replicas * sizeof(double))
        self.last = <double*> malloc(replicas * sizeof(double))
        self.wake_at = <double*> malloc(replicas * sizeof(double))
        self.batch = <int*> malloc(replicas * sizeof(int))
        self.version = <long*> malloc(replicas * sizeof(long))
        self.marks = <double*> malloc(replicas * cap * sizeof(double))
        self.mark_req = <long*> malloc(replicas * cap * sizeof(long))
        self.queue = <long*> malloc(customers * sizeof(long))
        for r in range(replicas):
            self.v[r] = self.last[r] = 0.0
            self.wake_at[r] = 1e300
            self.batch[r] = 0
            self.version[r] = 0
        self.qhead = self.qtail = 0

    def __dealloc__(self):
        free(self.v); free(self.last); free(self.wake_at); free(self.batch); free(self.version)
        free(self.marks); free(self.mark_req); free(self.queue)

    cdef inline void advance(self, int r, double now) noexcept:
        if self.batch[r] > 0:
            self.v[r] += (now - self.last[r]) * self.rate
        self.last[r] = now

    cdef void push_mark(self, int r, double mark, long req) noexcept:
        cdef double* m = self.marks + r * self.cap
        cdef long* q = self.mark_req + r * self.cap
        cdef int i = self.batch[r], parent
        self.batch[r] += 1
        while i > 0:
            parent = (i - 1) >> 1
            if m[parent] <= mark:
                break
            m[i], q[i] = m[parent], q[parent]
            i = parent
        m[i], q[i] = mark, req

    cdef long pop_mark(self, int r) noexcept:
        cdef double* m = self.marks + r * self.cap
        cdef long* q = self.mark_req + r * self.cap
        cdef long top = q[0]
        cdef int n, i = 0, child
        self.batch[r] -= 1
        n = self.batch[r]
        if n > 0:
            lm, lq = m[n], q[n]
            while True:
                child = 2 * i + 1
                if child >= n:
                    break
                if child + 1 < n and m[child + 1] < m[child]:
                    child += 1
                if m[child] >= lm:
                    break
                m[i], q[i] = m[child], q[child]
                i = child
            m[i], q[i] = lm, lq
        return top

    cdef void retime(self, int r, double now) noexcept:
        """One wake-up per replica, at its first finish mark; a changed time cancels the old one."""
        cdef double at = 1e300
        if self.batch[r] > 0:
            at = now + (self.marks[r * self.cap] - self.v[r]) / self.rate
            if at < now:
                at = now
        if at != self.wake_at[r]:
            if self.wake_at[r] < 1e300:
                self.loop.cancelled += 1
            self.version[r] += 1
            self.wake_at[r] = at
            if at < 1e300:
                self.loop.push(at, WAKE, r, self.version[r])

    cdef void admit(self, long i, int r, double now) noexcept:
        self.advance(r, now)
        self.admitted_s[i] = now
        self.push_mark(r, self.v[r] + (self.tokens[i] - 1), i)  # the first token comes with prefill
        self.retime(r, now)

    cdef int place(self) noexcept:
        cdef int r, best = -1, free_best = 0
        for r in range(self.replicas):
            if self.cap - self.batch[r] > free_best:
                best, free_best = r, self.cap - self.batch[r]
        return best

    cdef void arrive(self, long i, double now) noexcept:
        self.arrival_s[i] = now
        cdef int r = self.place()
        if r < 0:
            self.queue[self.qtail] = i
            self.qtail += 1
        else:
            self.admit(i, r, now)

    cdef void wake(self, int r, double now) noexcept:
        cdef long i
        self.wake_at[r] = 1e300
        self.advance(r, now)
        while self.batch[r] > 0 and self.marks[r * self.cap] <= self.v[r] + 1e-9:
            i = self.pop_mark(r)
            self.done_s[i] = now
        while self.batch[r] < self.cap and self.qhead < self.qtail:
            i = self.queue[self.qhead]
            self.qhead += 1
            self.advance(r, now)
            self.admitted_s[i] = now
            self.push_mark(r, self.v[r] + (self.tokens[i] - 1), i)
        self.retime(r, now)


def run(gaps_s, output_tokens, int replicas=1, int cap=8, double rate=1000.0):
    """Replay the customers (inter-arrival gaps, output tokens) through the typed core; return
    ``(queue waits in arrival order, events scheduled, run, cancelled)``."""
    cdef long n = len(gaps_s), next_i = 0
    cdef double[:] gaps = np.asarray(gaps_s, dtype=np.float64)
    cdef EventLoop loop = EventLoop()
    cdef Pool pool = Pool(loop, replicas, cap, rate, n)
    cdef Entry e
    pool.arrival_s = np.empty(n)
    pool.admitted_s = np.empty(n)
    pool.done_s = np.empty(n)
    pool.tokens = np.asarray(output_tokens, dtype=np.int64)
    loop.push(gaps[0], ARRIVAL, 0, 0)
    while loop.n > 0:
        e = loop.pop()
        if e.kind == WAKE and e.version != pool.version[e.who]:
            continue  # cancelled (counted when it was replaced)
        loop.now = e.time
        loop.executed += 1
        if e.kind == ARRIVAL:
            pool.arrive(next_i, e.time)
            next_i += 1
            if next_i < n:
                loop.push(e.time + gaps[next_i], ARRIVAL, 0, 0)
        else:
            pool.wake(e.who, e.time)
    waits = np.asarray(pool.admitted_s) - np.asarray(pool.arrival_s)
    return waits, loop.scheduled, loop.executed, loop.cancelled
