"""What a trace keeps of a value by default (:class:`Summary`), and how it is computed: one
value at a time (:func:`summarize`) or many small values at once (:func:`summarize_lists`,
three `reduceat`s per dtype instead of three reductions per value)."""

from __future__ import annotations

import math
import zlib
from typing import Any, NamedTuple

import numpy as np

from ..dtypes import is_ml_float, is_sub_byte_int

__all__ = ["BATCH_ELEMENTS", "Summary", "SummaryTable", "summarize", "summarize_lists",
           "summary_bytes"]


class Summary(NamedTuple):
    """What a trace keeps of a value by default. ``min``/``max``/``mean`` are over the finite
    elements (magnitudes for complex; None when there are none; the mean of a float64 sum);
    ``hash`` is the CRC-32 of the value's bytes (8 hex digits) (equal values of equal types
    have equal hashes). (A named tuple: made once per traced result, it must be cheap.)"""

    shape: tuple[int, ...]
    dtype: str
    min: float | None
    max: float | None
    mean: float | None
    nan: int
    inf: int
    hash: str

    def __str__(self) -> str:
        shape = "x".join(map(str, self.shape)) or "scalar"
        rng = "" if self.min is None else f" [{self.min:.6g}, {self.max:.6g}] mean {self.mean:.6g}"
        bad = (f" nan {self.nan}" if self.nan else "") + (f" inf {self.inf}" if self.inf else "")
        return f"{shape} {self.dtype}{rng}{bad}"


def _as_numbers(a: np.ndarray) -> np.ndarray:
    """``a`` in a dtype numpy reduces (ml_dtypes floats through f32, sub-byte ints as int8)."""
    if is_ml_float(a.dtype):
        return a.astype(np.float32)
    if is_sub_byte_int(a.dtype):
        return a.astype(np.int8)
    return a


def _name(dt: np.dtype) -> str:
    name = _NAMES.get(dt)
    if name is None:
        name = _NAMES[dt] = str(dt)
        _ITEMSIZE[name] = dt.itemsize
    return name


def summarize(value: Any) -> Summary:
    """The :class:`Summary` of a run-time value (tokens and tuples summarise as their kind).

    The common case costs one CRC and three reductions: the sum comes first, and a finite sum
    means no NaN or inf anywhere (one would make it NaN or inf), so the counts need no pass;
    numpy scalars (scalar programs) are summarised with Python floats."""
    cls = type(value)
    if cls is not np.ndarray:
        if isinstance(value, np.generic) and value.dtype.kind in "fiu" and \
                value.dtype.isbuiltin == 1:
            return _scalar_summary(value)
        if isinstance(value, tuple) or not isinstance(value, (np.ndarray, np.generic)):
            kind = "tuple" if isinstance(value, tuple) else type(value).__name__.lower()
            return Summary((), kind, None, None, None, 0, 0, "")
    a = np.asarray(value)
    dt = a.dtype
    if a.flags.c_contiguous:
        flat = a.reshape(-1)
        digest = f"{_CRC(a if dt.kind != 'V' and a.ndim else flat.view(np.uint8)):08x}"
    else:
        flat = np.ascontiguousarray(a).reshape(-1)
        digest = f"{_CRC(flat.view(np.uint8)):08x}"
    nan = inf = 0
    lo = hi = mean = None
    if a.size:
        w = _as_numbers(flat)
        kind = w.dtype.kind
        if kind == "c":
            w = np.abs(w)
        elif kind == "b":
            w = w.view(np.int8)
        total = float(_ADD(w, dtype=np.float64))
        if math.isfinite(total):  # no NaN or inf anywhere
            lo, hi, mean = float(_MIN(w)), float(_MAX(w)), total / w.size
        else:  # the slow path: count them, summarise the finite rest
            finite = np.isfinite(w)
            nan = int(np.isnan(w).sum())
            inf = int(finite.size - finite.sum()) - nan
            if nan or inf:
                w = w[finite]
            if w.size:
                lo, hi = float(_MIN(w)), float(_MAX(w))
                mean = float(_ADD(w, dtype=np.float64)) / w.size
    return Summary(a.shape, _name(dt), lo, hi, mean, nan, inf, digest)


def _scalar_summary(x: np.generic) -> Summary:
    name = _name(x.dtype)
    digest = f"{_CRC(x.tobytes()):08x}"
    v = float(x)
    if math.isfinite(v):
        return Summary((), name, v, v, v, 0, 0, digest)
    return Summary((), name, None, None, None, int(v != v), int(v == v), digest)


class SummaryTable:
    """Summaries of small values as columns (one row per value; a row becomes a
    :class:`Summary` when read, :meth:`summary`): filling it costs no object per value."""

    def __init__(self) -> None:
        self.shapes: list[tuple[int, ...]] = []
        self.names: list[str] = []
        self.lows: list[Any] = []
        self.highs: list[Any] = []
        self.means: list[float] = []
        self.crcs: list[int] = []

    def summary(self, row: int) -> Summary:
        return _new(Summary, (self.shapes[row], self.names[row], float(self.lows[row]),
                              float(self.highs[row]), self.means[row], 0, 0,
                              f"{self.crcs[row]:08x}"))


def summarize_lists(lists: list[list[Any]], table: SummaryTable) -> None:
    """Replace every value in ``lists`` by its summary: a :class:`Summary`, or for small
    arrays (at most :data:`BATCH_ELEMENTS` elements of numpy's own numeric dtypes, without
    NaN or inf) the number of its row in ``table`` (ints are not values: an entry is a value
    only until the list is summarised). Small arrays are summarised a dtype at a time: their
    concatenation is reduced with three `reduceat`s (a small value's own reductions cost more
    than most small ops); the rows hold what :func:`summarize` gives each."""
    groups: dict[np.dtype, Any] = {}
    ndarray, limit = np.ndarray, BATCH_ELEMENTS
    for lst in lists:
        for j, v in enumerate(lst):
            if type(v) is ndarray:
                dt = v.dtype
                group = groups.get(dt)
                if group is None:
                    group = groups[dt] = [] if dt.kind in "fiu" and not is_ml_float(dt) else False
                if group is not False and 0 < v.size <= limit:
                    group.append((lst, j, v))
                    continue
            if type(v) is not Summary and type(v) is not int:
                lst[j] = summarize(v)
    for dt, items in groups.items():
        if items:
            _summarize_group(dt, items, table)


def _summarize_group(dt: np.dtype, items: list[tuple[list[Any], int, np.ndarray]],
                     table: SummaryTable) -> None:
    values = [a for _, _, a in items]
    sizes = np.array([a.size for a in values], np.intp)
    starts = np.zeros(len(items), np.intp)
    np.cumsum(sizes[:-1], out=starts[1:])
    flat = np.concatenate(values, axis=None)
    totals = np.add.reduceat(flat, starts, dtype=np.float64)
    means = totals / sizes
    width = dt.itemsize
    data = memoryview(flat.view(np.uint8))
    crc = _CRC
    row = len(table.crcs)
    table.crcs.extend([crc(data[s:e]) for s, e in zip((starts * width).tolist(),
                                                       ((starts + sizes) * width).tolist())])
    table.shapes.extend([a.shape for a in values])
    table.names.extend([_name(dt)] * len(values))
    table.lows.extend(np.minimum.reduceat(flat, starts).tolist())
    table.highs.extend(np.maximum.reduceat(flat, starts).tolist())
    table.means.extend(means.tolist())
    for lst, i, _ in items:
        lst[i] = row
        row += 1
    if not np.isfinite(totals).all():  # NaN or inf somewhere (as in summarize): one by one
        for k in np.flatnonzero(~np.isfinite(totals)).tolist():
            lst, i, a = items[k]
            lst[i] = summarize(a)


def summary_bytes(summaries: list[Summary]) -> int:
    """The bytes of the values ``summaries`` describe (0 for tuples and tokens)."""
    n = 0
    for s in summaries:
        size = _ITEMSIZE.get(s.dtype, 0)
        if size:
            for d in s.shape:
                size *= d
            n += size
    return n


BATCH_ELEMENTS = 1 << 14
"""Arrays of at most this many elements are summarised in batches (:func:`summarize_lists`)."""

_NAMES: dict[np.dtype, str] = {}
_ITEMSIZE: dict[str, int] = {}  # by dtype name, of the names made here
_CRC = zlib.crc32
_new = tuple.__new__  # (a named tuple made from its fields without its Python __new__)
_MIN, _MAX, _ADD = np.minimum.reduce, np.maximum.reduce, np.add.reduce
