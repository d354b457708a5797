"""Element-wise functions of narrow floats as lookup tables of their careful kernels.

A float format of at most 16 bits has at most 65536 values. A unary function of such a format
is therefore a table: evaluate the careful kernel (compute in float64, round once; or whatever
the op's kernel does) once on every bit pattern, then evaluate the op by indexing the table with
the operands' bit patterns. The result is bit for bit the careful kernel's, by construction (NaN
payloads included), and costs one gather: ~1.3 ms per 10^6 elements where the f64 path of f16
`tanh` took ~80 ms and numpy's own f16 loops are scalar. Binary functions of the one-byte
formats (f8, f6, f4) are 256 x 256 tables the same way. Tables are built on first use of each
(op, dtype) and kept for the process (128 KiB for a 16-bit unary table, 64 KiB for a binary
one-byte table). docs/semantics/elementwise.md ("Narrow floats").
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ...dtypes import F16, is_ml_float, uint_of_size
from .._half import gather, gather_pairs, pad_pairs

__all__ = ["tabled_unary", "tabled_binary", "table_eligible"]

Fn = Callable[..., Any]

_TABLES: dict[tuple[str, np.dtype], np.ndarray] = {}
_LOCK = threading.Lock()


def table_eligible(dt: np.dtype, max_bytes: int = 2) -> bool:
    """True for f16 and ml_dtypes' float formats of at most ``max_bytes`` bytes."""
    dt = np.dtype(dt)
    return dt.itemsize <= max_bytes and (dt == F16 or is_ml_float(dt))


def _all_values(dt: np.dtype) -> np.ndarray:
    u = uint_of_size(dt.itemsize)
    return np.arange(1 << (8 * dt.itemsize), dtype=np.uint32).astype(u).view(dt)


def _table(key: str, dt: np.dtype, build: Callable[[], Any]) -> np.ndarray:
    t = _TABLES.get((key, dt))
    if t is None:
        with np.errstate(all="ignore"):
            t = np.ascontiguousarray(np.asarray(build()).astype(dt, copy=False))
        t.setflags(write=False)
        with _LOCK:
            t = _TABLES.setdefault((key, dt), t)
    return t


def tabled_unary(key: str, careful: Fn, dt: Any) -> Fn | None:
    """``careful`` (a unary function on arrays of ``dt`` returning ``dt``) as a table lookup
    when ``dt`` has at most 16 bits, else None. ``key`` names the function (the op's name) for
    the process-wide cache of tables."""
    dt = np.dtype(dt)
    if not table_eligible(dt):
        return None
    table = _table(key, dt, lambda: careful(_all_values(dt)))
    u = uint_of_size(dt.itemsize)

    def run(x: Any) -> Any:
        bits = np.asarray(x).view(u)
        fast = gather(table, bits)  # compiled: no intp copy of the indices
        return np.take(table, bits) if fast is None else fast

    return run


def tabled_binary(key: str, careful: Fn, dt: Any) -> Fn | None:
    """``careful`` (a binary function on arrays of ``dt``) as a 256 x 256 table lookup when
    ``dt`` is a one-byte format, else None."""
    dt = np.dtype(dt)
    if not table_eligible(dt, max_bytes=1):
        return None
    v = _all_values(dt)
    table = _table(key, dt, lambda: careful(np.repeat(v, 256), np.tile(v, 256)))
    padded = pad_pairs(table)

    def run(x: Any, y: Any) -> Any:
        fast = gather_pairs(padded, x, y)  # compiled: one pass, no index arrays
        if fast is not None:
            return fast
        hi = np.left_shift(np.asarray(x).view(np.uint8), 8, dtype=np.uint16)
        return np.take(table, np.bitwise_or(hi, np.asarray(y).view(np.uint8)))

    return run
