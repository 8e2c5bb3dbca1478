"""Scoring on several cores, or on any ``concurrent.futures.Executor``: chunks in, results out in order.

The harness scores each case independently (:func:`playground.harness.run.score_case`
reads nothing but the case, its passages, its responses and the
configuration), so cases can be scored anywhere.  :func:`ordered_map` sends
chunks of cases to an executor and gives the results back **in the order the
chunks were sent**, whatever order the workers finish in — so a run's files
are the same bytes with one worker or many.  At most ``window`` chunks are in
flight: memory holds a few chunks, never the whole run.

:func:`open_executor` gives the executor of ``--jobs N``: none for 1 (scoring
in this process, the default), a :class:`~concurrent.futures.ProcessPoolExecutor`
of N worker processes otherwise (0: one per CPU).  Workers are spawned (a
fresh interpreter: no copy of the parent's threads, open files or store
connections; on every platform the same), children of this process.  Any other
executor works the same, e.g. Dask's ``distributed.Client(...).get_executor()``
to score on a cluster (docs/harness-at-scale.md).
"""
from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import Any, TypeVar

__all__ = ["CHUNK", "chunked", "open_executor", "ordered_map", "workers"]

T = TypeVar("T")
R = TypeVar("R")

#: Cases per chunk: large enough that one round trip (pickling, a wake-up) is small beside scoring them.
CHUNK = 64


def workers(jobs: int) -> int:
    """The number of worker processes of ``--jobs``: ``jobs``, or the CPUs for 0; below 0 is an error."""
    if jobs < 0:
        raise ValueError(f"--jobs must be 0 (one per CPU) or more, got {jobs}")
    return jobs or (os.cpu_count() or 1)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last may be shorter)."""
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


@contextmanager
def open_executor(jobs: int) -> Iterator[Executor | None]:
    """None for one job (score here), else a process pool of :func:`workers` processes, shut down on exit."""
    n = workers(jobs)
    if n == 1:
        yield None
        return
    pool = ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def ordered_map(fn: Callable[[T], R], chunks: Iterable[T], executor: Executor | None, window: int = 8
                ) -> Iterator[R]:
    """``fn(chunk)`` for every chunk, in the order of ``chunks``; at most ``window`` in flight on ``executor``.

    Without an executor each chunk is done here, one after the other.  An error in
    a worker is raised here, at its chunk; the chunks not yet started are cancelled.
    """
    if executor is None:
        for chunk in chunks:
            yield fn(chunk)
        return
    pending: deque[Future[Any]] = deque()
    try:
        for chunk in chunks:
            pending.append(executor.submit(fn, chunk))
            if len(pending) >= max(1, window):
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
