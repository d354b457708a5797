"""The batched matrix product every contraction reduces to (dot_general, dot, convolution):
``(G, M, K) @ (G, K, N)`` done by :class:`Matmul`, which owns the numeric choices
(docs/semantics/linalg.md):

* integers are multiplied exactly (a float64 BLAS matmul when every partial sum provably fits in
  53 bits, else float64 products of 16-32 bit limbs recombined in int64, else int64 matmul: all
  exact modulo 2**64) and wrapped once to the result type; booleans use `and` for the product
  and `or` for the sum;
* floats narrower than f32 (bf16, f16, f8, ...) are computed in float32 (their products are exact
  there) and rounded once to the result type; f32, f64 and complex compute in their own precision
  (or the result's, when it is wider); small float contractions sum in index order (bit-exact
  with the upstream interpreter and XLA), large ones call BLAS;
* a ``dot_algorithm`` (:class:`DotAlgorithm`) rounds float operands to its
  ``lhs/rhs_precision_type`` and accumulates in its ``accumulation_type``.

It knows no op: the ops' kernels (``dot.py``, ``convolution.py``) bring their operands to the
``(G, M, K)``/``(G, K, N)`` layout and call it.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

import numpy as np

from ...attributes import BoolAttr, DictAttr, IntegerAttr, StructAttr, TypeAttr
from ...dtypes import F32, F64, finfo, float_compute_dtype
from ...types import ComplexType, ElementType, FloatType, IntegerType, TensorType, element_type
from .. import _half, _pool
from .._half import half_format
from .._lazy import Once
from .._numeric import from_f64, int_to_float, round_f64_to

__all__ = ["Matmul", "DotAlgorithm", "blas_matmul", "finisher", "wrap_integers"]

_EXACT = float(2**53)
_EXACT_F32 = float(2**24)


# --- struct parameters of `#stablehlo.dot_algorithm<...>` -----------------------------------------


def _param(record: Any, name: str) -> Any:
    """A parameter of a struct-like attribute (`#stablehlo.dot_algorithm<...>`, a dict), or
    None."""
    if isinstance(record, (StructAttr, DictAttr)):
        return record.get(name)
    if isinstance(record, dict):
        return record.get(name)
    return getattr(record, name, None)


def _py(v: Any) -> Any:
    """The Python value of a struct parameter (an int/bool or an IntegerAttr/BoolAttr)."""
    return v.value if isinstance(v, (IntegerAttr, BoolAttr)) else v


def _type_param(v: Any) -> ElementType | None:
    if v is None:
        return None
    if isinstance(v, TypeAttr):
        v = v.type
    if isinstance(v, TensorType):
        v = v.element_type
    if isinstance(v, ElementType):
        return v
    if isinstance(v, str):
        return element_type(v)
    return None


# --- numeric plumbing --------------------------------------------------------------------------


def _mantissa_bits(t: ElementType) -> int:
    """Explicit mantissa bits of a float type (tf32 has 10, stored in a float32)."""
    if isinstance(t, FloatType) and t.name == "tf32":
        return 10
    return int(finfo(t.dtype).nmant)


def _float_compute_dtype(t: ElementType) -> np.dtype:
    """The dtype a float/complex element type is computed in: at least float32."""
    if isinstance(t, (ComplexType, FloatType)):
        return float_compute_dtype(t.dtype)
    return F64  # integers mixed with floats


def _max_abs(t: ElementType) -> int:
    if isinstance(t, IntegerType):
        return 1 if t.is_bool else max(abs(t.min), abs(t.max))
    return 1 << 64


def _width(t: ElementType) -> int:
    return t.width if isinstance(t, IntegerType) else 64


def _round_tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 values to tf32 (10 mantissa bits), to nearest even; NaN stays NaN."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (u >> np.uint32(13)) & np.uint32(1)
    r = ((u + np.uint32(0xFFF) + lsb) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isnan(x), x, r)


def _rounder(t: ElementType | None, compute: np.dtype) -> Callable[[np.ndarray], np.ndarray] | None:
    """A function rounding ``compute`` values to the precision of float type ``t`` (or None)."""
    if not isinstance(t, FloatType) or compute.kind != "f":
        return None
    if _mantissa_bits(t) >= finfo(compute).nmant:
        return None
    if t.name == "tf32":
        if compute == F32:
            return _round_tf32
        return lambda x: _round_tf32(x.astype(np.float32)).astype(compute)
    dt = t.dtype
    if compute == F64:
        return lambda x: round_f64_to(x, dt).astype(compute)  # one rounding, not two
    return lambda x: x.astype(dt).astype(compute)


def wrap_integers(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Integer values (int64/uint64) to ``dtype`` modulo 2**bits (numpy and ml_dtypes wrap)."""
    return x.astype(dtype)


def _kind(t: ElementType) -> str:
    """"bool", "int", "float" or "complex" (ml_dtypes' dtype.kind is "V" for int4 and bf16)."""
    if isinstance(t, ComplexType):
        return "complex"
    if isinstance(t, FloatType):
        return "float"
    if isinstance(t, IntegerType):
        return "bool" if t.is_bool else "int"
    raise TypeError(f"unsupported element type {t}")


def finisher(compute: np.dtype, result: ElementType) -> Callable[[np.ndarray], np.ndarray]:
    """Convert computed values (``compute`` dtype) to the result type with a single rounding."""
    kind, dt = _kind(result), result.dtype
    if kind == "complex":
        return lambda x: x.astype(dt, copy=False)
    if compute.kind == "c":  # not a valid StableHLO combination; keep the real part
        real = finisher(np.dtype(finfo(compute).dtype), result)
        return lambda x: real(x.real)
    if kind == "bool":
        return lambda x: x != 0
    if kind == "int":
        return lambda x: x.astype(dt)
    if compute == F64:
        return from_f64(dt)
    if compute == F32 and half_format(dt):
        def narrow(x: np.ndarray) -> np.ndarray:  # compiled rounding, numpy's bits
            r = _half.narrow(x, dt)
            return x.astype(dt) if r is None else r

        return narrow
    return lambda x: x.astype(dt, copy=False)


def _to(x: np.ndarray, compute: np.dtype) -> np.ndarray:
    """``x`` as ``compute`` values (exact widening; f16/bf16 -> f32 by the compiled loop)."""
    if compute == F32:
        w = _half.widen(x)
        if w is not None:
            return w
    return x.astype(compute, copy=False)


class DotAlgorithm:
    """`#stablehlo.dot_algorithm<...>` decoded: the parts shlo honours (spec "dot_general").

    Operands are rounded to ``lhs_precision_type`` / ``rhs_precision_type`` when those are
    narrower than the computation and the component count is 1 (a count above 1 asks for a
    multi-pass emulation of *higher* precision: computed directly instead); products are summed
    in ``accumulation_type`` when it is wider than the computation, or the sum is rounded to it
    once when it is narrower.
    """

    def __init__(self, attr: Any) -> None:
        self.lhs_precision_type = _type_param(_param(attr, "lhs_precision_type"))
        self.rhs_precision_type = _type_param(_param(attr, "rhs_precision_type"))
        self.accumulation_type = _type_param(_param(attr, "accumulation_type"))
        self.lhs_component_count = int(_py(_param(attr, "lhs_component_count")) or 1)
        self.rhs_component_count = int(_py(_param(attr, "rhs_component_count")) or 1)
        self.num_primitive_operations = int(_py(_param(attr, "num_primitive_operations")) or 1)
        self.allow_imprecise_accumulation = bool(
            _py(_param(attr, "allow_imprecise_accumulation")))


class Matmul:
    """Batched matrix product ``(G, M, K) @ (G, K, N) -> (G, M, N)`` of the result's dtype.

    Decides once (from the operand and result element types and an optional dot algorithm) how
    to compute; see the module docstring and docs/semantics/linalg.md.
    """

    def __init__(self, lhs: ElementType, rhs: ElementType, result: ElementType,
                 algorithm: DotAlgorithm | None = None) -> None:
        self.result_dtype = result.dtype
        self.result_kind = _kind(result)
        self.integral = isinstance(lhs, IntegerType) and isinstance(rhs, IntegerType)
        self.lhs_round = self.rhs_round = self.acc_round = None
        if self.integral:
            # Largest |partial sum| per contracted element: decides float64 exactness.
            self.bound = float(_max_abs(lhs)) * float(_max_abs(rhs))
            self.lhs_width, self.rhs_width = _width(lhs), _width(rhs)
            return
        compute = np.result_type(_float_compute_dtype(lhs), _float_compute_dtype(rhs))
        if isinstance(result, (FloatType, ComplexType)):
            compute = np.result_type(compute, _float_compute_dtype(result))
        if algorithm is not None:
            acc = algorithm.accumulation_type
            if isinstance(acc, FloatType) and compute.kind in "fc":
                acc_dt = _float_compute_dtype(acc)
                if finfo(acc_dt).nmant > finfo(compute).nmant:
                    compute = np.result_type(compute, acc_dt)
                else:
                    real = np.dtype(finfo(compute).dtype)
                    self.acc_round = _rounder(acc, real) if compute.kind == "f" else None
            if algorithm.lhs_component_count == 1:
                self.lhs_round = _rounder(algorithm.lhs_precision_type, compute)
            if algorithm.rhs_component_count == 1:
                self.rhs_round = _rounder(algorithm.rhs_precision_type, compute)
        self.compute = np.dtype(compute)
        self.finish = finisher(self.compute, result)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.integral:
            return self._integral(a, b)
        a, b = _to(a, self.compute), _to(b, self.compute)
        if self.lhs_round is not None:
            a = self.lhs_round(a)
        if self.rhs_round is not None:
            b = self.rhs_round(b)
        out = _float_matmul(a, b)
        if self.acc_round is not None:
            out = self.acc_round(out)
        return self.finish(out)

    def _integral(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        k = max(a.shape[-1], 1)
        out = None
        if self.lhs_width <= 16 and self.rhs_width <= 16:
            out = self._f32_exact(a, b, k)
        if out is None and self.bound * k <= _EXACT:
            out = blas_matmul(a.astype(F64), b.astype(F64))  # exact: every sum fits 53 bits
        if out is not None:
            if self.result_kind == "float":
                return from_f64(self.result_dtype)(out)
            if self.result_kind == "complex":
                return out.astype(self.result_dtype)
            out = out.astype(np.int64)
        else:
            plan = self._limb_plan(k)
            if plan is not None:
                out = _limb_matmul(a.astype(np.int64), b.astype(np.int64), *plan)
            else:
                out = np.matmul(a.astype(np.int64), b.astype(np.int64))  # modulo 2**64
        if self.result_kind == "bool":
            return out != 0
        if self.result_kind == "complex":
            return out.astype(self.result_dtype)
        if self.result_kind == "float":
            return int_to_float(out, self.result_dtype)
        return wrap_integers(out, self.result_dtype)

    def _f32_exact(self, a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray | None:
        """``a @ b`` of integers through float32 BLAS, exactly, as float64 values; or None.

        Exact when every partial sum is an integer of at most 2**24 in magnitude (all such are
        float32 values, so every addition is exact), whatever order and FMA BLAS uses:
        ``k * max|a| * max|b| <= 2**24``, decided from the types when they allow it (i4 x i4 up
        to k = 2**18, i8 x i8 up to k = 1024), else from the operands' actual largest
        magnitudes. Where the contraction is too long for that, it is split into chunks of K
        that are, the chunk products summed in float64 (exact up to 2**53). None (use the
        float64 or limb paths) when a chunk would be shorter than 64."""
        af, bf = a.astype(F32), b.astype(F32)
        if self.bound * k <= _EXACT_F32:
            return blas_matmul(af, bf).astype(F64)
        if not af.size or not bf.size:
            return None
        p = float(np.max(np.abs(af))) * float(np.max(np.abs(bf)))
        if p == 0:
            return blas_matmul(af, bf).astype(F64)
        chunk = int(_EXACT_F32 // p)
        if chunk >= k:
            return blas_matmul(af, bf).astype(F64)
        if chunk < 64 or p * k > _EXACT:
            return None
        out = None
        for s in range(0, k, chunk):
            part = blas_matmul(af[..., s:s + chunk], bf[..., s:s + chunk, :]).astype(F64)
            out = part if out is None else out + part
        return out

    def _limb_plan(self, k: int) -> tuple[int, int, int] | None:
        """Split both operands into n limbs of bl / br bits so limb products sum exactly in
        float64 (n**2 BLAS matmuls beat numpy's integer matmul by far); None if n > 4."""
        for n in (2, 3, 4):
            bl, br = -(-self.lhs_width // n), -(-self.rhs_width // n)
            if 2.0 ** (bl + br) * k < _EXACT:
                return n, bl, br
        return None


# Small float contractions accumulate one contracted element at a time, in index order: the
# order of the spec's `reduce`, of the upstream interpreter and of XLA's naive loops (so results
# agree bit for bit). Larger ones go to BLAS (blocked sums, FMA): last-bit differences only.
_SEQUENTIAL_MAX_K = 1024
_SEQUENTIAL_MAX_WORK = 1 << 16


def plain_float(matmul: Matmul, lhs: np.dtype, rhs: np.dtype) -> bool:
    """Whether ``matmul`` on operands of dtypes ``lhs`` and ``rhs`` is :func:`_float_matmul`
    alone: floats already of the compute dtype, no operand or accumulator rounding, and the
    result's dtype."""
    return (not matmul.integral and matmul.lhs_round is None and matmul.rhs_round is None and
            matmul.acc_round is None and lhs == rhs == matmul.compute == matmul.result_dtype)


def product_for(matmul: Matmul, lhs: np.dtype, rhs: np.dtype) -> Callable[..., np.ndarray]:
    """The function computing ``matmul`` on (G, M, K) x (G, K, N) operands of these dtypes:
    :func:`_float_matmul` itself when that is all it does (:func:`plain_float`)."""
    return _float_matmul if plain_float(matmul, lhs, rhs) else matmul


def sequential_slabs(matmul: Matmul, m: int, k: int, n: int, lhs: np.dtype,
                     rhs: np.dtype) -> bool:
    """Whether a (1, M, K) x (1, K, N) product of ``matmul`` is :func:`_float_matmul`'s
    sequential sum over K of the (M, N) slabs of products with nothing around it (no operand or
    accumulator rounding, operands and result already of the compute dtype), so a caller may
    compute ``add.reduce(P, axis=0, initial=+0)`` of the (K, M, N) products ``P`` itself
    (M*N > 1: the K axis is not the innermost one, so numpy adds the slabs in index order;
    starting from +0 is the same as adding +0 at the end, see :func:`_float_matmul`)."""
    return (plain_float(matmul, lhs, rhs) and m * n > 1 and 0 < k <= _SEQUENTIAL_MAX_K and
            m * n * k <= _SEQUENTIAL_MAX_WORK)


SWITCH_CALLS = 100_000
"""Small products a process computes through numpy (~5 us each: ~0.5 s) before it loads the
compiled one (:mod:`._dot_jit`; numba's import ~0.5 s), at once where numba is loaded."""
_cold_calls = 0


def compiled_sequential() -> Callable[[np.ndarray, np.ndarray, np.ndarray], bool] | None:
    """:func:`._dot_jit.sequential_matmul` (``(a, b, out) -> whether out holds a NaN``), the
    sequential product of :func:`_float_matmul` for one (M, K) x (K, N) product of f32 or f64
    C-contiguous operands, where compiled code may run and the process has computed
    :data:`SWITCH_CALLS` small products or loaded numba already; else None (take numpy's)."""
    global _cold_calls
    f = _SEQUENTIAL.value
    if f is None:
        if _cold_calls < SWITCH_CALLS and "numba" not in sys.modules:
            _cold_calls += 1
            return None
        if not _half.jit_allowed():
            return None
        f = _SEQUENTIAL.get()
    return f if f and not _half.jit_suspended() else None


def _load_sequential() -> Any:
    try:
        from ._dot_jit import sequential_matmul

        # compiled (or read from numba's cache) for both dtypes, and checked once
        for dt in (np.float32, np.float64):
            a = np.array([[-0.0, 1.5, 3.0], [2.0, -0.0, 0.25]], dt)
            b = np.array([[1.0, -0.0], [-2.0, 4.0], [0.5, 1e-30]], dt)
            out = np.empty((2, 2), dt)
            want = _float_matmul(a[None], b[None])[0]
            if sequential_matmul(a, b, out) or out.tobytes() != want.tobytes():
                return False
        return sequential_matmul
    except Exception:  # numba absent, or a compile error on this platform
        return False


_SEQUENTIAL = Once(_load_sequential)


def _float_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for float/complex (G, M, K) x (G, K, N) operands of the same dtype."""
    g, m, k = a.shape
    n = b.shape[-1]
    if k > _SEQUENTIAL_MAX_K or g * m * n * k > _SEQUENTIAL_MAX_WORK:
        return blas_matmul(a, b)
    if k == 0:
        return np.zeros((g, m, n), dtype=np.result_type(a, b))
    # All products at once, (G, K, M, N), then one sum over K. With M*N > 1 the K axis is not
    # the innermost one in memory (order="C": numpy would otherwise lay the products out like
    # the operands, and a transposed operand puts K innermost), so numpy's add.reduce adds the
    # (M, N) slabs one after the other in index order k = 0, 1, ... (never its pairwise sum,
    # which it uses only along the innermost axis); with M*N = 1 add.accumulate gives the same
    # sequential order. Starting the sum from P[0] instead of from +0 changes only a zero's
    # sign (-0 when every partial sum is -0): adding +0 at the end gives exactly acc = 0;
    # acc += P[k] (tests pin it).
    products = np.multiply(a.transpose(0, 2, 1)[:, :, :, None], b[:, :, None, :], order="C")
    if m * n == 1:
        total = np.add.accumulate(products, axis=1)[:, -1]
    else:
        total = np.add.reduce(products, axis=1)
    return np.add(total, total.dtype.type(0))


# BLAS threads. OpenBLAS splits a GEMM over all cores from about 2**18 multiply-adds; its worker
# threads must then be woken and synchronised, which costs tens of microseconds on an idle
# machine and tens of *milliseconds* on a busy one (a 128x128 matmul measured 40 ms with 2
# threads on a loaded 2-core machine, 0.07 ms with one). Products below
# _SINGLE_THREAD_MAX_WORK multiply-adds (about a millisecond on one core) run on one BLAS thread;
# larger ones use the threads the user configured (OPENBLAS_NUM_THREADS, threadpoolctl).
_SINGLE_THREAD_MAX_WORK = 1 << 25


class _BlasThreads:
    """Temporarily limits BLAS to one thread (threadpoolctl's controller of numpy's BLAS,
    found once, on first use); a no-op when BLAS already uses one thread or cannot be
    controlled. Nested and concurrent users (process-grid threads) are counted, so the
    user's setting is restored when the last one leaves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._controllers: list[Any] | None = None
        self._saved: list[int] = []
        self._depth = 0

    def _find(self) -> list[Any]:
        try:
            from threadpoolctl import ThreadpoolController

            return list(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # pragma: no cover - threadpoolctl is a dependency
            return []

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                if self._controllers is None:
                    self._controllers = self._find()
                self._saved = [c.get_num_threads() for c in self._controllers]
                for c, t in zip(self._controllers, self._saved):
                    if t != 1:
                        c.set_num_threads(1)
            self._depth += 1

    def __exit__(self, *exc: Any) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for c, t in zip(self._controllers or (), self._saved):
                    if t != 1:
                        c.set_num_threads(t)


_ONE_BLAS_THREAD = _BlasThreads()


def blas_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``, on one BLAS thread when each GEMM of it is small (see above): a
    batched product is decided by the size of one of its GEMMs (a 96-GEMM attention matmul took
    1.32 s with 2 threads on the loaded machine, 6.9 ms with 1)."""
    k = a.shape[-1]
    rows = a.shape[-2] if a.ndim >= 2 else 1
    work = rows * b.shape[-1] * k  # of one GEMM: numpy's batched matmul calls BLAS per GEMM
    if work > _SINGLE_THREAD_MAX_WORK:
        return np.matmul(a, b)
    g = a.shape[0] if a.ndim == 3 else 1
    if g >= 2 and b.ndim == 3 and b.shape[0] == g and g * work >= _PARALLEL_MIN_WORK and \
            _pool.cores() > 1:
        return _batched_on_cores(a, b)
    with _ONE_BLAS_THREAD:
        return np.matmul(a, b)


_PARALLEL_MIN_WORK = 1 << 24
"""A batch of single-thread GEMMs with at least this many multiply-adds in all (~1 ms on one
core) is spread over the cores, whole GEMMs to each: every GEMM is computed on one BLAS
thread as before, so the bits do not depend on which core computed it."""


def _batched_on_cores(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)`` for (G, M, K) x (G, K, N) operands, the G GEMMs spread over the cores
    in pieces (:mod:`..._pool`), each on one BLAS thread."""
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), np.result_type(a, b))
    with _ONE_BLAS_THREAD:  # (2 pieces per core: each hand-over costs ~40 us)
        _pool.split(lambda x, y, o: np.matmul(x, y, out=o), (a, b, out), 1, per_core=2)
    return out


def _limbs(x: np.ndarray, n: int, bits: int) -> list[np.ndarray]:
    """``x`` (int64) as ``sum(limb[i] << bits * i)``: unsigned low limbs, a signed top limb."""
    mask = np.int64((1 << bits) - 1)
    out = []
    for _ in range(n - 1):
        out.append((x & mask).astype(F64))
        x = x >> np.int64(bits)
    out.append(x.astype(F64))
    return out


def _limb_matmul(a: np.ndarray, b: np.ndarray, n: int, bl: int, br: int) -> np.ndarray:
    """Exact ``a @ b`` modulo 2**64 for int64 ``a``, ``b`` through float64 limb products."""
    la, lb = _limbs(a, n, bl), _limbs(b, n, br)
    out = None
    for i, x in enumerate(la):
        for j, y in enumerate(lb):
            part = blas_matmul(x, y).astype(np.int64) << np.int64(bl * i + br * j)  # wraps
            out = part if out is None else out + part
    return out

