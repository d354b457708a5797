"""One pool of worker threads for kernels that cut a large array into pieces.

Element-wise work on large arrays (the compiled float32 functions of :mod:`._wide32`, fused
chains of :mod:`shlo.interpreter.fusion`) is cut into pieces that the cores take in turn; numpy
and the compiled loops release the GIL while they work. Which core computes a piece never
changes a value: every element is computed from the same elements whatever the piece.

The caller's thread computes the first piece itself and then every piece no worker has
started (:func:`map_pieces`): two pieces of a no-op took 96 us through the workers alone, 10 us
so. Pieces run in a copy of the caller's context (numpy's ``errstate`` lives there). A piece that
itself asks for pieces (a fused chain's exponential) runs them in its own thread,
so workers never wait for each other. A forked child starts without the parent's pool.
"""

from __future__ import annotations

import contextvars
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["COSTLY_MIN", "cores", "map_pieces", "split"]

T = TypeVar("T")

_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None
_LOCAL = threading.local()
_CORES: int | None = None

COSTLY_MIN = 1 << 18
"""Operands of element-wise functions costing 0.5-25 ns an element (the compiled float32
functions of ``_wide32``, numpy's float64 transcendental loops and float32 tanh, sine and
cosine: ``elementwise/_common.on_cores``) with at least this many elements are cut into pieces
of at least half as many: a piece then outweighs its ~40 us hand-over."""


def cores() -> int:
    """The cores this process may run on (asked once: every large kernel call asks)."""
    global _CORES
    if _CORES is None:
        try:
            _CORES = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # pragma: no cover - not Linux
            _CORES = os.cpu_count() or 1
    return _CORES


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                from concurrent.futures import ThreadPoolExecutor  # (not at start-up: ~8 ms)

                _POOL = ThreadPoolExecutor(cores(), thread_name_prefix="shlo-pieces")
    return _POOL


def _in_worker(fn: Callable[[Any], T], piece: Any) -> T:
    _LOCAL.inside = True
    try:
        return fn(piece)
    finally:
        _LOCAL.inside = False


def map_pieces(fn: Callable[[Any], T], pieces: Sequence[Any]) -> list[T]:
    """``[fn(p) for p in pieces]``, the pieces spread over the cores (in this thread when
    there is one piece or one core, or when called from a piece). This thread takes the first
    piece itself, then each piece no worker has started yet: a hand-over to a worker and back
    costs 50-100 us on this project's machine (a woken thread), a large share of a piece of a
    few hundred microseconds."""
    if len(pieces) < 2 or cores() < 2 or getattr(_LOCAL, "inside", False):
        return [fn(p) for p in pieces]
    pool = _pool()
    # each piece in a copy of the caller's context: numpy's errstate is a context variable
    jobs = [pool.submit(contextvars.copy_context().run, _in_worker, fn, p) for p in pieces[1:]]
    results: list[Any] = [None] * len(pieces)
    try:
        results[0] = _in_worker(fn, pieces[0])
        for k, job in enumerate(jobs, 1):
            if job.cancel():  # not started: here
                results[k] = _in_worker(fn, pieces[k])
    finally:  # (after a failure, the pieces not started are dropped)
        for k, job in enumerate(jobs, 1):
            if not job.cancel():
                results[k] = job.result()
    return results


def split(loop: Callable[..., T], arrays: Sequence[Any], min_piece: int,
          per_core: int = 4) -> list[tuple[int, T]]:
    """``loop(*arrays)`` on sequences of one length (arrays cut along their first axis, lists),
    cut into pieces of at least ``min_piece`` items (at most ``per_core`` per core) spread over
    the cores: [(piece start, its result)]."""
    n = len(arrays[0])
    parts = min(per_core * cores(), n // min_piece) if cores() > 1 else 1
    if parts < 2:
        return [(0, loop(*arrays))]
    bounds = [n * i // parts for i in range(parts + 1)]
    return map_pieces(lambda b: (b[0], loop(*[a[b[0]:b[1]] for a in arrays])),
                      list(zip(bounds, bounds[1:])))


def _forget_pool_in_forked_child() -> None:
    global _POOL, _CORES
    _POOL = _CORES = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_forked_child)
