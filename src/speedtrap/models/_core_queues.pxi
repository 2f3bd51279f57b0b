# The typed core's binary heaps, event loop and request slots.
# Included by _typed_core.pyx (its declarations and imports come first); compiled as part of it.

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
    int tier              # its tier's index among the backend's tiers (the spec's order)
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
