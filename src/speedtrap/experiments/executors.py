"""Executors: swappable ways to map a task function over a list of tasks.

Every executor has one method, ``map_unordered(fn, tasks)``, that yields ``fn(task)`` for each
task **as it finishes** (so that progress can be shown and results stored incrementally). Results
are in completion order; callers that need an order sort them (the runner sorts by design point
and replication, so every executor gives the same table).

``fn`` and the tasks must be picklable for :class:`ProcessExecutor` and :class:`DaskExecutor`:
``fn`` is a module-level function. An executor used as a context manager keeps its worker pool
(or Dask cluster) for the whole ``with`` block; otherwise each ``map_unordered`` call starts and
closes its own.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import ExitStack
from types import TracebackType
from typing import Any, Literal, Protocol, Self, TypeVar, runtime_checkable

T = TypeVar("T")
R = TypeVar("R")

ExecutorKind = Literal["serial", "processes", "dask"]
EXECUTOR_KINDS: tuple[str, ...] = ("serial", "processes", "dask")

DASK_EXTRA_HINT = "pip install 'speedtrap[dask]'"


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
            yield fn(task)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class ProcessExecutor:
    """Runs tasks in ``workers`` local processes (``concurrent.futures.ProcessPoolExecutor``).

    Workers are started with the ``spawn`` method through their own multiprocessing context (the
    process-wide start method is left alone): forking a process that runs threads (a progress bar,
    a Dask client) is unsafe, and spawn behaves the same on every platform. As with any spawned
    workers, a script that uses this executor guards its entry point with
    ``if __name__ == "__main__":`` (the workers import the main module).
    """

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be ≥ 1, got {workers}")
        self.workers = workers or default_workers()
        self._pool: ProcessPoolExecutor | None = None

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        own = self._pool is None
        pool = self._start() if own else self._pool
        assert pool is not None
        futures: list[Future[R]] = []
        try:
            futures = [pool.submit(fn, task) for task in tasks]
            for future in as_completed(futures):
                yield future.result()
        finally:
            for future in futures:
                future.cancel()
            if own:
                pool.shutdown(wait=True, cancel_futures=True)

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


class DaskExecutor:
    """Runs tasks on a Dask cluster: the scheduler at ``address``, or a local cluster of
    ``workers`` single-threaded worker processes started (and closed) by this executor.

    Needs the ``dask`` extra (``pip install 'speedtrap[dask]'``). The local cluster has no
    dashboard (no port to collide with) and logs only errors.
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
            return stack.enter_context(distributed.Client(self.address))
        cluster = stack.enter_context(
            distributed.LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
        )
        return stack.enter_context(distributed.Client(cluster))

    def map_unordered(self, fn: Callable[[T], R], tasks: Sequence[T]) -> Iterator[R]:
        distributed = _import_distributed()
        with ExitStack() as stack:
            client = self._client if self._client is not None else self._connect(stack)
            futures = client.map(fn, list(tasks), pure=False)
            try:
                for future in distributed.as_completed(futures):
                    yield future.result()
            finally:
                client.cancel(futures)

    def __enter__(self) -> Self:
        if self._client is None:
            stack = ExitStack()
            try:
                self._client = self._connect(stack)
            except BaseException:
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
