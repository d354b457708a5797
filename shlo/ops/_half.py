"""Narrow floats at float32 speed: compiled conversions, arithmetic, comparisons and reduction
trees of f16/bf16; the lookups of the one-byte formats' tables (and a product's factoring);
select by a bit blend for every type.

numpy's float16 loops and its float32 <-> float16 casts are scalar C on builds whose baseline
lacks F16C (numpy 2.x on x86-64: ~7 ns per element for an f16 multiply, 30x its f32 multiply),
and ml_dtypes' bf16 loops convert element by element too. The loops of :mod:`._half_jit`
(compiled with numba on first use, cached on disk) widen to float32, compute one float32
operation and round once, exactly what numpy and ml_dtypes do element by element: the results
are bit for bit theirs (tests/ops/test_fast_paths.py compares every bit pattern), at the speed
of numpy's float32 loops. The one-byte formats' kernels are tables of the careful kernels
(``elementwise/_tables.py``), read here by compiled gathers.

numba is optional (the ``fast`` extra, docs/semantics/elementwise.md). This module alone decides
whether compiled loops run (:func:`available`; for shlo's other compiled code,
:func:`jit_allowed` and :func:`jit_suspended`): numba installed, not disabled with
``SHLO_NO_JIT=1``, not a process forked from one that used numba, not within
:func:`numpy_only`, and the loops compiling on this platform. Each function here returns None
when it does not apply (another dtype, no compiled loops); callers then take the general path,
numpy's and ml_dtypes' own loops, which is always there and gives the same bits. Arrays
smaller than :data:`MIN_SIZE` elements take the general path too (a compiled call costs more
than it saves there, and small programs never pay numba's import).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

from ..dtypes import F16, F32
from . import _pool
from ._lazy import Once

__all__ = ["MIN_SIZE", "half_format", "available", "jit_allowed", "jit_suspended", "loops",
           "numpy_only", "binary", "widen", "narrow", "gather", "gather_pairs", "memory_order",
           "memory_order2", "in_order", "select", "narrow_by_table", "sign_but_zero", "compare",
           "max_min", "tree_reduce"]

Fn = Callable[..., Any]

MIN_SIZE = 4096
"""Arrays with fewer elements use the general (numpy / ml_dtypes) path."""
PIECE = 1 << 20
"""Arrays of at least two pieces of this many elements are spread over the cores (:mod:`._pool`;
the loops release the GIL). A piece's hand-over to a worker costs ~40 us on this project's
machine: 1e6-element f16 and f8 multiplies (0.4-0.6 ms) were 1.5-2x slower in 8 pieces."""

_U16 = np.dtype(np.uint16)
_U8 = np.dtype(np.uint8)


def half_format(dt: Any) -> str | None:
    """"f16" or "bf16" for those dtypes, else None."""
    dt = np.dtype(dt)
    if dt == F16:
        return "f16"
    if dt.itemsize == 2 and dt.name == "bfloat16":
        return "bf16"
    return None


def loops() -> Any:
    """The compiled loops (:mod:`._half_jit`), or None when numba is missing or disabled."""
    return _LOOPS.get()


def available() -> bool:
    """Whether the compiled loops run in this process (see the module docstring)."""
    return loops() is not None


def jit_suspended() -> bool:
    """Whether compiled code already loaded must not run now: within :func:`numpy_only`, in a
    forked child (cheap: for hot paths)."""
    return _LOOPS.value is False


def jit_allowed() -> bool:
    """Whether other compiled code (:mod:`shlo.interpreter.fusion_jit`) may run in this
    process: what :func:`available` requires, but for these loops themselves, which it does
    not load (not disabled, not a forked child, not within :func:`numpy_only`)."""
    return _LOOPS.value is not False and os.environ.get("SHLO_NO_JIT", "") in ("", "0")


@contextmanager
def numpy_only() -> Iterator[None]:
    """Within it, every caller takes the general (numpy / ml_dtypes) path: for tests that
    compare the two paths bit for bit, and for benchmarks. Kernels choose when they run, so
    prepare and run inside it."""
    loops()
    saved, _LOOPS.value = _LOOPS.value, False
    try:
        yield
    finally:
        _LOOPS.value = saved


def _no_loops_in_forked_child() -> None:
    """A process forked from one that uses (or is importing) numba must not use numba: its
    locks and LLVM's state are copied mid-use (the conformance runner's fork-based workers hung
    in numba's import). Forked children take the general path: the same results."""
    _LOOPS.value = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_no_loops_in_forked_child)


def _load() -> Any:
    if os.environ.get("SHLO_NO_JIT", "") not in ("", "0"):
        return False
    try:
        from . import _half_jit

        # Compile (or load from numba's cache) and check one conversion pair here, so that a
        # platform where the half intrinsics do not lower fails once, quietly.
        probe = np.array([1.5, -0.0, 65504.0], np.float32)
        h = np.empty(3, _U16)
        _half_jit.f32_to_f16(probe, h)
        back = np.empty(3, np.float32)
        _half_jit.f16_to_f32(h, back)
        if not np.array_equal(back.view(np.uint32), probe.view(np.uint32)):
            return False
        return _half_jit
    except Exception:  # numba absent, or a compile error on this platform
        return False


_LOOPS = Once(_load)  # the module _half_jit


def _flat(x: Any, dt: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=dt).reshape(-1)


def memory_order(x: np.ndarray) -> tuple[np.ndarray, tuple[int, ...] | None]:
    """``x`` with its axes in memory order: ``(x, None)`` when it is C-contiguous (or no
    permutation makes it so), else ``(a C-contiguous transposed view, the permutation)``.
    Element-wise loops over the view, then the result transposed back by the inverse
    permutation (:func:`in_order`), keep a transposed operand's layout: copying a transposed
    50257x768 bf16 matrix into C order took 563 ms, widening it in its own order 36 ms."""
    if x.flags.c_contiguous or x.ndim < 2:
        return x, None
    perm = tuple(int(i) for i in np.argsort([-abs(s) for s in x.strides], kind="stable"))
    y = x.transpose(perm)
    return (y, perm) if y.flags.c_contiguous else (x, None)


def memory_order2(x: np.ndarray, y: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, tuple[int, ...] | None]:
    """:func:`memory_order` of two operands of one shape: the permutation of ``x``, when it
    makes ``y`` C-contiguous too."""
    xv, perm = memory_order(x)
    if perm is not None:
        yv = y.transpose(perm)
        if yv.flags.c_contiguous:
            return xv, yv, perm
    return x, y, None


def in_order(out: np.ndarray, perm: tuple[int, ...] | None) -> np.ndarray:
    """A result computed over :func:`memory_order`'s view, with the operand's axes again."""
    return out if perm is None else out.transpose(np.argsort(perm))


def binary(name: str, dt: Any, general: Fn) -> Fn | None:
    """``name`` (add, subtract, multiply, divide) on f16 or bf16 arrays of equal shapes through
    the compiled loop; ``general`` for small arrays. None when there is no compiled loop."""
    fmt = half_format(dt)
    if fmt is None or (name, fmt) not in _BINARY_NAMES:
        return None
    dt = np.dtype(dt)

    def run(x: Any, y: Any) -> Any:
        fast = _pairwise(lambda m, a, b, o: m.BINARY[(name, fmt)](a, b, o), x, y, dt,
                         lambda d: d == dt)
        return general(x, y) if fast is None else fast

    return run


_BINARY_NAMES = frozenset((op, f) for op in ("add", "subtract", "multiply", "divide")
                          for f in ("f16", "bf16"))


def widen(x: Any) -> np.ndarray | None:
    """An f16 or bf16 array as float32 (exact), or None (another dtype, small, no loops)."""
    x = np.asarray(x)
    fmt = half_format(x.dtype)
    if fmt is None or x.size < MIN_SIZE:
        return None
    mod = loops()
    if mod is None:
        return None
    return _unary(mod.f16_to_f32 if fmt == "f16" else mod.bf16_to_f32, x, _U16, F32, F32)


def _unary(loop: Fn, x: np.ndarray, view: np.dtype, out_dt: Any, out_view: np.dtype
           ) -> np.ndarray:
    """``loop(items, out)`` over ``x`` in its memory order (items seen as ``view``) into a new
    ``out_dt`` array (seen as ``out_view``), the pieces spread over the cores."""
    x, perm = memory_order(x)
    out = np.empty(x.shape, out_dt)
    _pool.split(loop, (_flat(x, x.dtype).view(view), out.reshape(-1).view(out_view)), PIECE)
    return in_order(out, perm)


def narrow(x: Any, dt: Any) -> np.ndarray | None:
    """A float32 array rounded to f16 or bf16 ``dt`` (to nearest even, as numpy's and
    ml_dtypes' casts), or None (another dtype, small, no loops)."""
    x = np.asarray(x)
    fmt = half_format(dt)
    if fmt is None or x.dtype != F32 or x.size < MIN_SIZE:
        return None
    mod = loops()
    if mod is None:
        return None
    return _unary(mod.f32_to_f16 if fmt == "f16" else mod.f32_to_bf16, x, F32, dt, _U16)


def gather(table: np.ndarray, index: Any,
           via: Callable[[np.ndarray, np.ndarray], Any] | None = None) -> np.ndarray | None:
    """``table[index]`` for a table of 1-, 2-, 4- or 8-byte entries and uint8/uint16 indices,
    or None (small, no loops): numpy's take first converts the indices to intp. ``via``: a
    compiled loop ``(index, out)`` on flat pieces (``out`` as unsigned ints of the entries'
    size) that computes the entries in registers (``elementwise/_pair_forms.py``, checked
    there), else the compiled lookup."""
    index = np.asarray(index)
    if index.size < MIN_SIZE or table.dtype.itemsize not in (1, 2, 4, 8) or \
            index.dtype not in (_U8, _U16):
        return None
    mod = loops()
    if mod is None:
        return None
    u = np.dtype(f"u{table.dtype.itemsize}")
    t = table.view(u)
    return _unary(via or (lambda i, o: mod.gather16(t, i, o)), index, index.dtype, table.dtype,
                  u)


def gather_pairs(table: np.ndarray, x: Any, y: Any,
                 via: Callable[[np.ndarray, np.ndarray, np.ndarray], Any] | None = None
                 ) -> np.ndarray | None:
    """``table[x * 256 + y]`` for a 65536-entry table of 1-byte entries and one-byte ``x``,
    ``y`` of one shape (their bit patterns), or None (small, shapes differ, no loops). ``via``:
    a compiled loop ``(x, y, out)`` on flat uint8 pieces that computes the table's entries in
    registers (``elementwise/_pair_forms.py``, checked there), else the compiled lookup."""
    x, y = np.asarray(x), np.asarray(y)
    if x.size < MIN_SIZE or x.shape != y.shape or table.dtype.itemsize != 1:
        return None
    mod = loops()
    if mod is None:
        return None
    x, y, perm = memory_order2(x, y)
    out = np.empty(x.shape, table.dtype)
    t = table.view(_U8)
    flat = (_flat(x, x.dtype).view(_U8), _flat(y, y.dtype).view(_U8), out.reshape(-1).view(_U8))
    _pool.split(via or (lambda a, b, o: mod.gather_pairs(t, a, b, o)), flat, PIECE)
    return in_order(out, perm)


def select(pred: Any, on_true: Any, on_false: Any) -> np.ndarray | None:
    """``np.where(pred, on_true, on_false)`` for arrays of one shape and dtype (items of 1, 2,
    4 or 8 bytes) through the compiled bit blend (``_half_jit.select_bits``), or None (small,
    shapes or dtypes differ, no loops). The bits are moved, never computed."""
    pred, on_true, on_false = np.asarray(pred), np.asarray(on_true), np.asarray(on_false)
    dt = on_true.dtype
    if on_true.size < MIN_SIZE or not pred.shape == on_true.shape == on_false.shape or \
            on_false.dtype != dt or pred.dtype != np.bool_ or dt.itemsize not in (1, 2, 4, 8):
        return None
    mod = loops()
    if mod is None:
        return None
    u = np.dtype(f"u{dt.itemsize}")
    x, y, perm = memory_order2(on_true, on_false)
    p = pred if perm is None else pred.transpose(perm)
    out = np.empty(x.shape, dt)
    flat = (_flat(p, np.bool_).view(_U8), _flat(x.view(u), u), _flat(y.view(u), u),
            out.reshape(-1).view(u))
    _pool.split(mod.select_bits, flat, PIECE)
    return in_order(out, perm)


def sign_but_zero(x: np.ndarray, sign: int, flip: bool) -> np.ndarray | None:
    """The unsigned ``x`` with its ``sign`` bit flipped (``flip``) or cleared where the rest
    is not zero (``_bytes_jit.sign_but_zero``: FNUZ negate and abs), or None (small, no
    loops)."""
    if x.size < MIN_SIZE:
        return None
    mod = loops()
    if mod is None:
        return None
    s = x.dtype.type(sign)
    return _unary(lambda b, o: mod.sign_but_zero(b, o, s, flip), x, x.dtype, x.dtype, x.dtype)


def narrow_by_table(table: np.ndarray, shift: int, x: Any, dt: Any,
                    via: Callable[[np.ndarray, np.ndarray], Any] | None = None
                    ) -> np.ndarray | None:
    """float32 ``x`` rounded to the one-byte format ``dt`` by its table (``_bytes_jit.
    narrow_by_table``; ``_tables.tabled_narrowing``) or by ``via(bits, out)``, a loop that
    computes it; or None (small, not float32, no loops)."""
    x = np.asarray(x)
    if x.size < MIN_SIZE or x.dtype != F32:
        return None
    mod = loops()
    if mod is None:
        return None
    loop = via if via is not None else lambda b, o: mod.narrow_by_table(table, shift, b, o)
    return _unary(loop, x, np.dtype(np.uint32), dt, _U8)


def _pairwise(loop: Callable[[Any, Any], Any], x: Any, y: Any, out_dt: Any,
              formats: Callable[[np.dtype], bool]) -> np.ndarray | None:
    """``loop(mod, x, y, out)`` over operands of one shape and dtype (``formats(dtype)``; as
    unsigned ints of their size) into a new ``out_dt`` array, ``mod`` the compiled module; or
    None (small, shapes or dtypes differ, no loops: asked at each call, numpy_only() may be in
    force)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.size < MIN_SIZE or x.shape != y.shape or x.dtype != y.dtype or not formats(x.dtype):
        return None
    mod = loops()
    if mod is None:
        return None
    u = np.dtype(f"u{x.dtype.itemsize}")
    x, y, perm = memory_order2(x, y)
    out = np.empty(x.shape, out_dt)
    flat = (_flat(x, x.dtype).view(u), _flat(y, y.dtype).view(u),
            out.reshape(-1).view(np.dtype(f"u{out.dtype.itemsize}")))
    _pool.split(lambda a, b, o: loop(mod, a, b, o), flat, PIECE)
    return in_order(out, perm)


def compare(spec: np.ndarray, direction: str, x: Any, y: Any) -> np.ndarray | None:
    """The IEEE comparison ``direction`` (LT, ..., NE) of float arrays of at most 16 bits by
    integer keys (``_half_jit.compare_keys``; ``spec`` from ``_tables.compare_form``), or
    None."""
    def loop(mod: Any, a: Any, b: Any, o: Any) -> None:
        mod.compare_keys(a, b, o, np.concatenate([spec, mod.DIRECTIONS[direction]]))

    return _pairwise(loop, x, y, np.bool_, lambda dt: dt.itemsize <= 2)


def max_min(is_max: bool, x: Any, y: Any) -> np.ndarray | None:
    """maximum (``is_max``) or minimum of f16/bf16 arrays through the compiled loop
    (``_half_jit.MAX_MIN``), or None."""
    dt = np.asarray(x).dtype
    fmt = half_format(dt)
    return _pairwise(lambda m, a, b, o: m.MAX_MIN[fmt](a, b, o, is_max), x, y, dt,
                     lambda d: fmt is not None)


_SCRATCH = threading.local()
_SCRATCH_KEPT = 64 << 20


def _scratch(nbytes: int) -> np.ndarray:
    """A uint8 buffer of ``nbytes`` (aligned as numpy allocates) for the trees' levels, kept
    per thread up to 64 MiB and reused: a fresh half-megabyte buffer is fresh pages whenever
    the allocator has handed its last one back, and their faults cost a 1e6-element f8 sum
    ~100-300 us inside ``shlo.run`` (its kernel alone: 375 us)."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.size < nbytes:
        buf = np.empty(nbytes, np.uint8)
        if nbytes <= _SCRATCH_KEPT:
            _SCRATCH.buf = buf
    return buf[:nbytes]


def tree_reduce(x: Any, swapped: np.ndarray | None, mul: bool) -> np.ndarray | None:
    """The pairwise tree (``_regions.tree_reduce_last``) of the last axis of ``x``, f16/bf16
    add (``mul``: multiply) through the compiled tree, or a one-byte format's through its op's
    256 x 256 table with the operands swapped (``swapped``, entry ``y * 256 + x``); None
    (small, another dtype, no loops)."""
    x = np.asarray(x)
    fmt = half_format(x.dtype)
    if x.size < MIN_SIZE or x.ndim == 0 or x.shape[-1] < 2 or (fmt is None and swapped is None):
        return None
    mod = loops()
    if mod is None:
        return None
    n = x.shape[-1]
    u = _U16 if fmt else _U8
    rows = np.ascontiguousarray(x).reshape(-1, n).view(u)
    out = np.empty(rows.shape[0], u)
    if sys.byteorder != "little":  # pragma: no cover - the loops read pairs as words
        return None
    if fmt:
        size = 2 * (n // 2 + 2 + n // 2 % 2)  # two halves, each even: 4-byte aligned
        bf16 = fmt == "bf16"
        _pool.split(lambda r, o: mod.tree16(r, o, _scratch(2 * size).view(_U16), mul, bf16),
                    (rows, out), 1)
    else:
        swapped = swapped.view(_U8)
        _pool.split(lambda r, o: mod.tree_pairs(swapped, r, o, _scratch(n // 2 + 2)),
                    (rows, out), 1)
    return out.view(x.dtype).reshape(x.shape[:-1])
