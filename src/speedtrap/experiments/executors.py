"""Executors: swappable ways to map a task function over a list of tasks.

Every executor has one method, ``map_unordered(fn, tasks)``, that yields ``fn(task)`` for each
task **as it finishes** (so that progress can be shown and results stored incrementally). Results
are in completion order; callers that need an order sort them (the runner sorts by design point
and replication, so every executor gives the same table).

``fn`` and the tasks must be picklable for :class:`ProcessExecutor` and :class:`DaskExecutor`:
``fn`` is a module-level function. An executor used as a context manager keeps its worker pool
(or Dask cluster) for the whole ``with`` block; otherwise each ``map_unordered`` call starts and
closes its own.

An interrupt (SIGINT, Ctrl-C) while :class:`ProcessExecutor` runs is the parent's to handle: its
workers ignore SIGINT from the moment they start; the parent stops the pool at once (tasks not
started are cancelled, running ones are ended), yields the results that had finished, then raises
``KeyboardInterrupt``. :class:`DaskExecutor` does the same with its local cluster: its worker
processes never take SIGINT (they start with it blocked and ignore it), and an interrupt ends them at
once (an interrupt while the cluster starts is acted on as soon as it has started).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import multiprocessing.connection
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from multiprocessing import resource_tracker
from types import FrameType, TracebackType
from typing import Any, Literal, Protocol, Self, TypeVar, runtime_checkable

from speedtrap import interrupts

T = TypeVar("T")
R = TypeVar("R")

ExecutorKind = Literal["serial", "processes", "dask"]
EXECUTOR_KINDS: tuple[str, ...] = ("serial", "processes", "dask")

DASK_EXTRA_HINT = "pip install -e '.[dask]' from a checkout (or the wheel with [dask])"
SCHEDULER_CONNECT_TIMEOUT_S = 5.0
"""Seconds to wait for a Dask scheduler at an address before giving up (Dask's default is 30)."""


@runtime_checkable
class Executor(Protocol):
    """Maps a picklable function over tasks, yielding results as they finish."""

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]: ...


def default_workers() -> int:
    """Worker processes when none are asked for: the CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has CPU affinity
        return os.cpu_count() or 1


class SerialExecutor:
    """Runs every task in this process, one after another (in task order)."""

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        for task in tasks:
            interrupts.check()  # an interrupt that code it landed in swallowed stops before the next task
            yield fn(task)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


MAX_POOL_RESTARTS = 3
"""Times one ``map_unordered`` call restarts a process pool whose worker died (killed, out of
memory) before it gives up; each restart retries only the tasks not yet finished."""


POLL_S = 0.1
"""Seconds between checks for an interrupt while waiting for a result."""
HALT_S = 1.0
"""Seconds to wait for ended workers (and the pool's manager thread) before giving up on them."""


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal the kernel sends this process when its parent dies."""


def _kill_with_parent(parent_pid: int) -> None:
    """On Linux, ask the kernel to SIGKILL this worker when its parent dies (``PR_SET_PDEATHSIG``):
    it then dies even while it computes in compiled code that never gives the parent-watch thread
    of :func:`_exit_with_parent` the interpreter. The parent is the thread that started the worker,
    the one that uses the pool. A parent that died before this call is caught by comparing
    ``os.getppid()``."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _exit_with_parent() -> None:
    """End this worker when the process that started it dies (even by SIGKILL), so that a killed
    sweep leaves no worker processes behind: by the kernel's signal on Linux (:func:`_kill_with_parent`)
    and, everywhere, by a thread that waits on the parent's sentinel."""
    parent = multiprocessing.parent_process()
    if parent is None:  # pragma: no cover - always set in a spawned worker
        return
    if parent.pid is not None:
        _kill_with_parent(parent.pid)

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="speedtrap-parent-watch", daemon=True).start()


def _init_worker() -> None:
    """Worker initializer: ignore SIGINT (the parent decides what an interrupt does; the worker was
    started with SIGINT blocked, see :func:`_sigint_blocked`) and end with the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _exit_with_parent()


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Block SIGINT in this thread for the block: processes started meanwhile inherit the mask, so
    a Ctrl-C reaches no worker before its initializer ignores SIGINT (even while it imports), and
    threads started meanwhile never take it. A SIGINT that arrives meanwhile is not lost: another
    thread takes it, or it waits until the mask is restored (the way multiprocessing starts its
    resource tracker)."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _Interrupt:
    """While entered (in the main thread, where Python handles signals), SIGINT is noted in
    :attr:`caught` instead of raising ``KeyboardInterrupt`` wherever the main thread happens to be;
    the previous handler is restored on exit. A SIGINT that Python would not have raised on (its
    handler is SIG_IGN or SIG_DFL) is left alone."""

    def __init__(self) -> None:
        self.caught = False
        self._previous: Any = None

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.caught = True

    def __enter__(self) -> Self:
        self.caught = interrupts.interrupted()  # one that code it landed in swallowed: nothing starts
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):
                signal.signal(signal.SIGINT, self._note)
                self._previous = previous
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            previous, self._previous = self._previous, None
            with contextlib.suppress(ValueError):  # closed outside the main thread: cannot restore
                signal.signal(signal.SIGINT, previous)


def _arrivals[R](
    arrived: queue.SimpleQueue[Future[R]], count: int, interrupt: _Interrupt
) -> Iterator[Future[R]]:
    """Up to ``count`` finished futures from ``arrived``, as they finish; stops when interrupted."""
    for _ in range(count):
        while not interrupt.caught:
            try:
                future = arrived.get(timeout=POLL_S)
            except queue.Empty:
                continue
            yield future
            break
        else:
            return


def _halt(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: cancel the tasks not started and end its workers, whose running tasks
    are lost (a task is a deterministic function of its inputs: it is run again on resume). Their
    futures are marked failed by the pool's manager thread, which is waited for."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # the pool drops it on shutdown
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + HALT_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.exitcode is None:
            process.kill()
            process.join(HALT_S)
    if manager is not None:
        manager.join(HALT_S)


def _drain[R](arrived: queue.SimpleQueue[Future[R]]) -> Iterator[Future[R]]:
    while True:
        try:
            yield arrived.get_nowait()
        except queue.Empty:
            return


class ProcessExecutor:
    """Runs tasks in ``workers`` local processes (``concurrent.futures.ProcessPoolExecutor``).

    Workers are started with the ``spawn`` method through their own multiprocessing context (the
    process-wide start method is left alone): forking a process that runs threads (a progress bar,
    a Dask client) is unsafe, and spawn behaves the same on every platform. As with any spawned
    workers, a script that uses this executor guards its entry point with
    ``if __name__ == "__main__":`` (the workers import the main module).

    A worker that dies (killed, out of memory) breaks the pool: the executor says so in one line on
    stderr, starts a new pool and retries the tasks that had not finished (at most
    :data:`MAX_POOL_RESTARTS` times per call). Tasks are deterministic functions of their inputs,
    so a retried task gives the same result. Workers end themselves when this process dies.

    Workers ignore SIGINT. A SIGINT to this process while ``map_unordered`` runs (in the main
    thread) stops the pool at once: tasks not started are cancelled, running ones are ended, the
    results that had finished are yielded, then ``KeyboardInterrupt`` is raised. A caller that
    stops early, or an error, also ends the running tasks rather than waiting for them.
    """

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be ≥ 1, got {workers}")
        self.workers = workers or default_workers()
        self._pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
        )

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        pending = dict(enumerate(tasks))
        own = self._pool is None
        futures: dict[Future[R], int] = {}
        arrived: queue.SimpleQueue[Future[R]] = queue.SimpleQueue()
        restarts = 0
        with _Interrupt() as interrupt:
            pool = self._start() if own else self._pool
            assert pool is not None
            try:
                while pending and not interrupt.caught:
                    arrived = queue.SimpleQueue()
                    with _sigint_blocked():
                        futures = {pool.submit(fn, task): i for i, task in pending.items()}
                    for future in futures:
                        future.add_done_callback(arrived.put)
                    try:
                        for future in _arrivals(arrived, len(futures), interrupt):
                            result = future.result()
                            del pending[futures[future]]
                            yield result
                    except BrokenProcessPool:
                        restarts += 1
                        if restarts > MAX_POOL_RESTARTS:
                            raise
                        print(
                            f"warning: a worker process died; restarting the pool and retrying "
                            f"{len(pending)} unfinished tasks ({restarts}/{MAX_POOL_RESTARTS})",
                            file=sys.stderr,
                        )
                        pool.shutdown(wait=True, cancel_futures=True)
                        pool = self._start()
                        if not own:
                            self._pool = pool
            finally:
                if pending:  # interrupted, failed or stopped early: end the running tasks now
                    _halt(pool)
                    if not own:
                        self._pool = pool = self._start()  # a new pool (its workers start when used)
                if own:
                    pool.shutdown(wait=True, cancel_futures=True)
            if interrupt.caught:  # the results that finished before the pool stopped, then the interrupt
                for future in _drain(arrived):
                    if not future.cancelled() and future.exception() is None and futures[future] in pending:
                        del pending[futures[future]]
                        yield future.result()
                raise KeyboardInterrupt

    def __enter__(self) -> Self:
        if self._pool is None:
            self._pool = self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(f"the dask executor needs the 'dask' extra: {DASK_EXTRA_HINT}") from exc
    return distributed


CLOSED_COMM_ERRORS = ("CommClosedError", "StreamClosedError", "Couldn't gather keys")
"""What Dask logs, with a traceback or not, when a worker dies mid-task."""


class OneLineClosedComms(logging.Filter):
    """Collapses the tracebacks Dask logs when a worker dies (closed connections) into one line,
    the first time; Dask reschedules the worker's tasks, so the sweep goes on."""

    def __init__(self) -> None:
        super().__init__("speedtrap-closed-comms")
        self.seen = False

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        closed = type(exc).__name__ in CLOSED_COMM_ERRORS or any(
            name in record.getMessage() for name in CLOSED_COMM_ERRORS
        )
        if not closed:
            return True
        if self.seen:
            return False
        self.seen = True
        record.msg, record.args, record.exc_info, record.exc_text = (
            "a Dask worker's connection closed (a worker died?); Dask retries its tasks on the others",
            (),
            None,
            None,
        )
        return True


def dask_setup(worker: object) -> None:
    """Run by Dask in each worker process of the local cluster as it starts (this module is its
    preload): the process logs nothing (a worker that loses its scheduler while a stopped sweep
    closes the cluster logs an error with a traceback; a failed task's error reaches the sweep with
    its result) and ignores SIGINT (the sweep decides what an interrupt does)."""
    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    with contextlib.suppress(ValueError):  # not the worker's main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _quiet_closed_comms() -> None:
    """Install :class:`OneLineClosedComms` on the handlers of Dask's logger (once)."""
    for handler in logging.getLogger("distributed").handlers:
        if not any(isinstance(f, OneLineClosedComms) for f in handler.filters):
            handler.addFilter(OneLineClosedComms())


def _halt_local_workers(client: Any) -> None:
    """End the worker processes of ``client``'s local cluster now (those of a scheduler at an
    address are its own): each nanny stops its worker, which is killed if it has not ended within
    a fraction of :data:`HALT_S`, and starts no new one. A cluster whose workers are ended closes
    at once; otherwise each worker would finish its running task first (seconds)."""
    cluster = getattr(client, "cluster", None)
    workers = list(getattr(cluster, "workers", {}).values())
    if cluster is None or not workers:
        return

    async def close_all() -> None:
        closing = (w.close(timeout=HALT_S / 4, reason="speedtrap-interrupt") for w in workers)
        await asyncio.gather(*closing, return_exceptions=True)

    with contextlib.suppress(Exception):  # whatever is left, the cluster's own close ends
        cluster.sync(close_all, callback_timeout=2 * HALT_S)


class DaskExecutor:
    """Runs tasks on a Dask cluster: the scheduler at ``address``, or a local cluster of
    ``workers`` single-threaded worker processes started (and closed) by this executor.

    Needs the ``dask`` extra (``pip install -e '.[dask]'`` from a checkout). The local cluster's scheduler,
    its web server (dashboard) and its workers listen on ports the system picks (``:0``), so a
    port already in use, such as 8787 by another Dask dashboard, does not matter. It logs only
    errors, and its worker processes log nothing (:func:`dask_setup`). Dask retries the tasks of a
    worker that dies on the remaining workers; the closed connections that such a death leaves are
    reported in one line, not a traceback each.

    An interrupt (SIGINT, Ctrl-C) while ``map_unordered`` runs (in the main thread) is handled as
    :class:`ProcessExecutor` handles it: the local cluster's workers, which never take SIGINT
    themselves, are ended at once (their running tasks are lost), the results that had finished
    are yielded, then ``KeyboardInterrupt`` is raised. An interrupt while the local cluster starts
    is noted and acted on as soon as it has started (Dask's start cannot be cut short cleanly).
    """

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        if address is not None and workers is not None:
            raise ValueError("workers applies to a local cluster; the scheduler at an address has its own")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be ≥ 1, got {workers}")
        _import_distributed()  # fail now, with the install hint, rather than at the first map
        self.address = address
        self.workers = workers or default_workers()
        self._stack: ExitStack | None = None
        self._client: Any = None

    def _connect(self, stack: ExitStack) -> Any:
        distributed = _import_distributed()
        if self.address is not None:
            try:
                client = distributed.Client(self.address, timeout=SCHEDULER_CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                raise ValueError(
                    f"--scheduler {self.address}: no Dask scheduler answered within "
                    f"{SCHEDULER_CONNECT_TIMEOUT_S:g} s ({type(exc).__name__})"
                ) from None
            return stack.enter_context(client)
        # multiprocessing's resource tracker, when it starts, unblocks SIGINT in the thread that
        # started it (the cluster's event loop would): started now, it leaves the mask alone
        resource_tracker.ensure_running()
        with _sigint_blocked():  # its event-loop thread and worker processes never take SIGINT
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=self.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # distributed starts its web server anyway: any free port
                    silence_logs=logging.ERROR,
                    preload=[__name__],  # dask_setup, in each worker process
                )
            )
        _quiet_closed_comms()  # after the cluster has set up Dask's log handler
        return stack.enter_context(distributed.Client(cluster))

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        distributed = _import_distributed()
        with _Interrupt() as interrupt, ExitStack() as stack:
            client = self._client if self._client is not None else self._connect(stack)
            if interrupt.caught:  # while the cluster started: it closes, nothing ran
                raise KeyboardInterrupt
            futures = client.map(fn, list(tasks), pure=False)
            yielded: set[Any] = set()
            try:
                finished = distributed.as_completed(futures)
                while not finished.is_empty() and not interrupt.caught:
                    if not finished.has_ready():
                        time.sleep(POLL_S)
                        continue
                    for future in finished.next_batch(block=False):
                        yielded.add(future.key)
                        yield future.result()
            finally:
                client.cancel([f for f in futures if f.status != "finished"])
            if interrupt.caught:  # the results that had finished on the workers, then the interrupt
                for future in futures:
                    if future.key not in yielded and future.status == "finished":
                        with contextlib.suppress(Exception):
                            result = future.result(timeout=HALT_S)
                            yielded.add(future.key)
                            yield result
                _halt_local_workers(client)
                raise KeyboardInterrupt

    def __enter__(self) -> Self:
        if self._client is None:
            stack = ExitStack()
            try:
                with _Interrupt() as interrupt:
                    self._client = self._connect(stack)
                if interrupt.caught:
                    raise KeyboardInterrupt
            except BaseException:
                self._client = None
                stack.close()
                raise
            self._stack = stack
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._stack is not None:
            self._client = None
            stack, self._stack = self._stack, None
            stack.close()


def make_executor(
    kind: str = "serial", workers: int | None = None, scheduler: str | None = None
) -> SerialExecutor | ProcessExecutor | DaskExecutor:
    """An executor by name: ``serial``, ``processes`` (``workers`` processes, default: the CPUs)
    or ``dask`` (the scheduler at ``scheduler``, or a local cluster of ``workers`` processes)."""
    if scheduler is not None and kind != "dask":
        raise ValueError(f"a scheduler address needs the dask executor, not {kind!r}")
    if kind == "serial":
        if workers not in (None, 1):
            raise ValueError("the serial executor runs one task at a time; drop workers or pick processes")
        return SerialExecutor()
    if kind == "processes":
        return ProcessExecutor(workers)
    if kind == "dask":
        return DaskExecutor(scheduler, workers)
    raise ValueError(f"unknown executor {kind!r} (known: {', '.join(EXECUTOR_KINDS)})")
