"""Linear-algebra ops: dot_general, dot, convolution, dynamic_conv, cholesky, triangular_solve,
fft, batch_norm_training, batch_norm_inference, batch_norm_grad (spec sections of the same names).

Every contraction (dot_general, dot, convolution) is reduced to one batched matrix product
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
* ``precision_config`` is ignored (CPU numerics do not depend on it); a ``dot_algorithm`` rounds
  float operands to its ``lhs/rhs_precision_type`` and accumulates in its ``accumulation_type``.

The kernels never loop over elements: windows of `convolution` are strided views
(``sliding_window_view``), `triangular_solve` loops over matrix rows (vectorized over batch and
right-hand sides), `fft` calls ``scipy.fft``.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np
import scipy.fft

from ..attributes import (
    BoolAttr, ConvDimensionNumbers, DictAttr, EnumAttr, FloatAttr, IntegerAttr, StructAttr,
    TypeAttr, ints,
)
from ..ir import Operation
from ..types import ComplexType, ElementType, FloatType, IntegerType, TensorType, element_type
from ._numeric import from_f64, int_to_float, round_f64_to
from ..registry import kernel

Run = Callable[..., Sequence[Any]]

__all__ = ["Matmul", "DotAlgorithm", "blas_matmul"]


# --- attribute helpers -------------------------------------------------------------------------


def _elem(t: Any) -> ElementType:
    assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
    return t.element_type


def _bool_attr(op: Operation, name: str, default: bool = False) -> bool:
    a = op.attr(name)
    if a is None:
        return default
    if isinstance(a, (BoolAttr, IntegerAttr)):
        return bool(a.value)
    return bool(a)


def _int_attr(op: Operation, name: str, default: int) -> int:
    a = op.attr(name)
    if a is None:
        return default
    return int(a.value if isinstance(a, (IntegerAttr, BoolAttr)) else a)


def _float_attr(op: Operation, name: str, default: float) -> float:
    a = op.attr(name)
    if a is None:
        return default
    return float(a.value if isinstance(a, (FloatAttr, IntegerAttr)) else a)


def _enum_attr(op: Operation, name: str, default: str) -> str:
    a = op.attr(name)
    if a is None:
        return default
    if isinstance(a, EnumAttr):
        return a.value
    return str(getattr(a, "value", a))


def _param(record: Any, name: str) -> Any:
    """A parameter of a struct-like attribute (`#stablehlo.dot<...>`, a dict), or None."""
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

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_C64 = np.dtype(np.complex64)
_C128 = np.dtype(np.complex128)
_EXACT = float(2**53)


def _mantissa_bits(t: ElementType) -> int:
    """Explicit mantissa bits of a float type (tf32 has 10, stored in a float32)."""
    if isinstance(t, FloatType) and t.name == "tf32":
        return 10
    return int(ml_dtypes.finfo(t.dtype).nmant)


def _float_compute_dtype(t: ElementType) -> np.dtype:
    """The dtype a float/complex element type is computed in: at least float32."""
    if isinstance(t, ComplexType):
        return t.dtype
    if isinstance(t, FloatType):
        return _F64 if t.dtype == _F64 else _F32
    return _F64  # integers mixed with floats


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
    if _mantissa_bits(t) >= np.finfo(compute).nmant:
        return None
    if t.name == "tf32":
        if compute == _F32:
            return _round_tf32
        return lambda x: _round_tf32(x.astype(np.float32)).astype(compute)
    dt = t.dtype
    if compute == _F64:
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


def _finisher(compute: np.dtype, result: ElementType) -> Callable[[np.ndarray], np.ndarray]:
    """Convert computed values (``compute`` dtype) to the result type with a single rounding."""
    kind, dt = _kind(result), result.dtype
    if kind == "complex":
        return lambda x: x.astype(dt, copy=False)
    if compute.kind == "c":  # not a valid StableHLO combination; keep the real part
        real = _finisher(np.dtype(np.finfo(compute).dtype), result)
        return lambda x: real(x.real)
    if kind == "bool":
        return lambda x: x != 0
    if kind == "int":
        return lambda x: x.astype(dt)
    if compute == _F64:
        return from_f64(dt)
    return lambda x: x.astype(dt, copy=False)


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
                if np.finfo(acc_dt).nmant > np.finfo(compute).nmant:
                    compute = np.result_type(compute, acc_dt)
                else:
                    real = np.dtype(np.finfo(compute).dtype)
                    self.acc_round = _rounder(acc, real) if compute.kind == "f" else None
            if algorithm.lhs_component_count == 1:
                self.lhs_round = _rounder(algorithm.lhs_precision_type, compute)
            if algorithm.rhs_component_count == 1:
                self.rhs_round = _rounder(algorithm.rhs_precision_type, compute)
        self.compute = np.dtype(compute)
        self.finish = _finisher(self.compute, result)

    def __call__(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.integral:
            return self._integral(a, b)
        a = a.astype(self.compute, copy=False)
        b = b.astype(self.compute, copy=False)
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
        if self.bound * k < _EXACT:
            out = blas_matmul(a.astype(_F64), b.astype(_F64))  # exact: every sum fits 53 bits
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


def _float_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` for float/complex (G, M, K) x (G, K, N) operands of the same dtype."""
    g, m, k = a.shape
    n = b.shape[-1]
    if k > _SEQUENTIAL_MAX_K or g * m * n * k > _SEQUENTIAL_MAX_WORK:
        return blas_matmul(a, b)
    columns = np.ascontiguousarray(a.transpose(0, 2, 1))[:, :, :, None]  # (G, K, M, 1)
    rows = b[:, :, None, :]  # (G, K, 1, N)
    acc = np.zeros((g, m, n), dtype=np.result_type(a, b))
    for i in range(k):  # a loop over the contracted elements, vectorized over G, M, N
        acc += columns[:, i] * rows[:, i]
    return acc


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
    """``np.matmul(a, b)``, on one BLAS thread when the product is small (see above)."""
    k = a.shape[-1]
    work = (a.size // k if k else 0) * b.shape[-1] * k
    if b.ndim > 2 and a.ndim == 2:
        work *= math.prod(b.shape[:-2])
    if work > _SINGLE_THREAD_MAX_WORK:
        return np.matmul(a, b)
    with _ONE_BLAS_THREAD:
        return np.matmul(a, b)


def _limbs(x: np.ndarray, n: int, bits: int) -> list[np.ndarray]:
    """``x`` (int64) as ``sum(limb[i] << bits * i)``: unsigned low limbs, a signed top limb."""
    mask = np.int64((1 << bits) - 1)
    out = []
    for _ in range(n - 1):
        out.append((x & mask).astype(_F64))
        x = x >> np.int64(bits)
    out.append(x.astype(_F64))
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


# --- dot_general / dot -------------------------------------------------------------------------


def _prepare_dot(op: Operation, lhs_batching_dimensions: Sequence[int],
                 rhs_batching_dimensions: Sequence[int], lhs_contracting_dimensions: Sequence[int],
                 rhs_contracting_dimensions: Sequence[int],
                 algorithm: DotAlgorithm | None = None) -> Run:
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    lb, rb = tuple(lhs_batching_dimensions), tuple(rhs_batching_dimensions)
    lc, rc = tuple(lhs_contracting_dimensions), tuple(rhs_contracting_dimensions)
    lhs_result_dimensions = [d for d in range(lhs_t.rank) if d not in lb and d not in lc]
    rhs_result_dimensions = [d for d in range(rhs_t.rank) if d not in rb and d not in rc]
    lhs_perm = lb + tuple(lhs_result_dimensions) + lc
    rhs_perm = rb + rc + tuple(rhs_result_dimensions)
    nb, nm, nc = len(lb), len(lhs_result_dimensions), len(lc)
    matmul = Matmul(_elem(lhs_t), _elem(rhs_t), _elem(op.results[0].type), algorithm)
    prod = math.prod

    def run(lhs: Any, rhs: Any) -> Sequence[Any]:
        a = np.asarray(lhs).transpose(lhs_perm)
        b = np.asarray(rhs).transpose(rhs_perm)
        batch, free_l, contract = a.shape[:nb], a.shape[nb:nb + nm], a.shape[nb + nm:]
        free_r = b.shape[nb + nc:]
        g, m, k, n = prod(batch), prod(free_l), prod(contract), prod(free_r)
        out = matmul(a.reshape(g, m, k), b.reshape(g, k, n))
        return (out.reshape(batch + free_l + free_r),)

    return run


@kernel("stablehlo.dot_general")
def dot_general(op: Operation, ctx: Any) -> Run:
    """Spec "dot_general": dot products between slices of `lhs` and `rhs`.

    ``result = transpose(lhs, batching + result + contracting) @ transpose(rhs, batching +
    contracting + result)`` as one batched matrix product. ``precision_config`` is ignored;
    ``algorithm`` is honoured as described in :class:`DotAlgorithm`.
    """
    dn = op.attr("dot_dimension_numbers")

    def dims(name: str) -> tuple[int, ...]:
        v = _param(dn, name) if dn is not None else None
        if v is None:
            v = op.attr(name)
        return ints(v, ()) or ()

    algo = op.attr("algorithm")
    return _prepare_dot(op, dims("lhs_batching_dimensions"), dims("rhs_batching_dimensions"),
                        dims("lhs_contracting_dimensions"), dims("rhs_contracting_dimensions"),
                        DotAlgorithm(algo) if algo is not None else None)


@kernel("stablehlo.dot")
def dot(op: Operation, ctx: Any) -> Run:
    """Legacy `stablehlo.dot` (spec "Not in HLO" ops): vector/matrix products of rank-1 or rank-2
    operands, i.e. `dot_general` contracting the last dimension of `lhs` with the first of `rhs`.
    """
    lhs_rank = op.operands[0].type.rank
    return _prepare_dot(op, (), (), (lhs_rank - 1,), (0,))


# --- convolution -------------------------------------------------------------------------------


def _conv_dimension_numbers(op: Operation) -> ConvDimensionNumbers:
    dn = op.attr("dimension_numbers")
    if isinstance(dn, ConvDimensionNumbers):
        return dn
    names = ConvDimensionNumbers.__dataclass_fields__
    values = {}
    for name in names:
        v = _param(dn, name) if dn is not None else None
        if v is None:
            v = op.attr(name)
        if v is None:
            raise ValueError(f"convolution: missing dimension number `{name}`")
        values[name] = ints(v) if name.endswith("dimensions") else int(
            v.value if isinstance(v, IntegerAttr) else v)
    return ConvDimensionNumbers(**values)


def _pairs(values: Sequence[int] | None, n: int) -> list[tuple[int, int]]:
    if values is None:
        return [(0, 0)] * n
    v = list(values)
    if len(v) != 2 * n:
        raise ValueError(f"padding has {len(v)} values, expected {2 * n}")
    return [(int(v[2 * i]), int(v[2 * i + 1])) for i in range(n)]


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class _Convolution:
    """A prepared convolution (spec "convolution"), run as im2col + one batched matmul.

    Canonical layouts: lhs `(N, spatial..., C)`, rhs `(spatial..., I, O)`, result
    `(N, spatial..., O)`; transposes to and from the op's dimension numbers are fixed here.
    """

    def __init__(self, op: Operation) -> None:
        dn = _conv_dimension_numbers(op)
        self.ns = ns = len(dn.input_spatial_dimensions)
        self.lhs_perm = ((dn.input_batch_dimension,) + tuple(dn.input_spatial_dimensions)
                         + (dn.input_feature_dimension,))
        self.rhs_perm = (tuple(dn.kernel_spatial_dimensions)
                         + (dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension))
        self.out_perm = _inverse((dn.output_batch_dimension,) + tuple(dn.output_spatial_dimensions)
                                 + (dn.output_feature_dimension,))
        self.window_strides = ints(op.attr("window_strides"), (1,) * ns) or (1,) * ns
        self.lhs_dilation = ints(op.attr("lhs_dilation"), (1,) * ns) or (1,) * ns
        self.rhs_dilation = ints(op.attr("rhs_dilation"), (1,) * ns) or (1,) * ns
        reversal = ints(op.attr("window_reversal"), (0,) * ns) or (0,) * ns
        self.reversed_dims = tuple(i for i, r in enumerate(reversal) if r)
        self.padding = _pairs(ints(op.attr("padding")), ns) if op.attr("padding") is not None \
            else [(0, 0)] * ns
        self.feature_group_count = _int_attr(op, "feature_group_count", 1)
        self.batch_group_count = _int_attr(op, "batch_group_count", 1)
        self.matmul = Matmul(_elem(op.operands[0].type), _elem(op.operands[1].type),
                             _elem(op.results[0].type))
        self.result_dtype = op.results[0].type.dtype

    def _padded_lhs(self, x: np.ndarray, padding: Sequence[tuple[int, int]]) -> np.ndarray:
        """`pad(lhs, 0, low, high, interior = lhs_dilation - 1)` on the spatial axes of ``x``."""
        if all(d == 1 for d in self.lhs_dilation) and all(p == (0, 0) for p in padding):
            return x
        shape, place, crop = [x.shape[0]], [slice(None)], [slice(None)]
        for i, (lo, hi) in enumerate(padding):
            n, dil = x.shape[1 + i], self.lhs_dilation[i]
            dilated = (n - 1) * dil + 1 if n else 0
            size = max(lo, 0) + dilated + max(hi, 0)
            shape.append(size)
            place.append(slice(max(lo, 0), max(lo, 0) + dilated, dil))
            crop.append(slice(max(-lo, 0), max(size - max(-hi, 0), max(-lo, 0))))
        shape.append(x.shape[-1])
        place.append(slice(None))
        crop.append(slice(None))
        buf = np.zeros(shape, dtype=x.dtype)
        buf[tuple(place)] = x
        return buf[tuple(crop)]

    def __call__(self, lhs: Any, rhs: Any,
                 padding: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
        ns = self.ns
        x = np.asarray(lhs).transpose(self.lhs_perm)  # (N, spatial..., C)
        w = np.asarray(rhs).transpose(self.rhs_perm)  # (spatial..., I, O)
        if self.reversed_dims:
            w = np.flip(w, self.reversed_dims)
        x = self._padded_lhs(x, self.padding if padding is None else padding)
        kernel = w.shape[:ns]
        dilated_window = [(k - 1) * d + 1 if k else 0 for k, d in zip(kernel, self.rhs_dilation)]
        padded = x.shape[1:1 + ns]
        num_windows = [0 if p == 0 or dw > p else (p - dw) // s + 1
                       for p, dw, s in zip(padded, dilated_window, self.window_strides)]
        n, c, o = x.shape[0], x.shape[-1], w.shape[-1]
        fgc, bgc = self.feature_group_count, self.batch_group_count
        out_shape = (n // bgc, *num_windows, o)
        if 0 in out_shape or 0 in kernel or c == 0:
            return np.zeros(out_shape, self.result_dtype).transpose(self.out_perm)
        # windows: (N, out..., C, k...) as a strided view of the padded input.
        # ml_dtypes such as float8_e5m2 do not survive as_strided: slide over same-size uints.
        raw = x if x.dtype.isbuiltin == 1 else x.view(f"u{x.dtype.itemsize}")
        win = np.lib.stride_tricks.sliding_window_view(
            raw, dilated_window, axis=tuple(range(1, 1 + ns)))
        win = win[(slice(None),) + tuple(slice(None, None, s) for s in self.window_strides)
                  + (slice(None),) + tuple(slice(None, None, d) for d in self.rhs_dilation)]
        if raw is not x:
            win = win.view(x.dtype)
        kprod = math.prod(kernel)
        if bgc > 1:
            # lhs batch splits into bgc groups, rhs output features into bgc groups.
            nb, ob = n // bgc, o // bgc
            p = win.reshape((bgc, nb) + win.shape[1:])
            p = p.transpose((0, 1) + tuple(range(2, 2 + ns)) + tuple(range(3 + ns, 3 + 2 * ns))
                            + (2 + ns,))  # (G, Nb, out..., k..., C)
            a = p.reshape(bgc, nb * math.prod(num_windows), kprod * c)
            b = w.reshape(kernel + (c, bgc, ob)).transpose(
                (ns + 1,) + tuple(range(ns)) + (ns, ns + 2)).reshape(bgc, kprod * c, ob)
            out = self.matmul(a, b).reshape((bgc, nb, *num_windows, ob))
            out = np.moveaxis(out, 0, -2).reshape(out_shape)
        else:
            g, cg, og = fgc, c // fgc, o // fgc
            p = win.reshape((n,) + tuple(num_windows) + (g, cg) + tuple(kernel))
            p = p.transpose((1 + ns,) + tuple(range(1 + ns)) + tuple(range(3 + ns, 3 + 2 * ns))
                            + (2 + ns,))  # (G, N, out..., k..., Cg)
            a = p.reshape(g, n * math.prod(num_windows), kprod * cg)
            b = w.reshape(kernel + (cg, g, og)).transpose(
                (ns + 1,) + tuple(range(ns)) + (ns, ns + 2)).reshape(g, kprod * cg, og)
            out = self.matmul(a, b).reshape((g, n, *num_windows, og))
            out = np.moveaxis(out, 0, -2).reshape(out_shape)
        return out.transpose(self.out_perm)


@kernel("stablehlo.convolution")
def convolution(op: Operation, ctx: Any) -> Run:
    """Spec "convolution": dot products between windows of `lhs` and slices of `rhs`.

    lhs dilation and padding (negative padding crops) build the padded input once, windows are
    a strided view (``rhs_dilation`` and ``window_strides`` are view strides), window reversal
    flips the kernel, and feature/batch groups become the batch of one matmul.
    """
    conv = _Convolution(op)

    def run(lhs: Any, rhs: Any) -> Sequence[Any]:
        return (conv(lhs, rhs),)

    return run


@kernel("stablehlo.dynamic_conv")
def dynamic_conv(op: Operation, ctx: Any) -> Run:
    """`stablehlo.dynamic_conv` (spec "Dynamism" ops): `convolution` whose padding is the third
    operand, a `(N-2)x2` integer tensor read at run time.
    """
    conv = _Convolution(op)
    ns = conv.ns

    def run(lhs: Any, rhs: Any, padding: Any) -> Sequence[Any]:
        pad = _pairs([int(v) for v in np.asarray(padding).reshape(-1)], ns)
        return (conv(lhs, rhs, pad),)

    return run


# --- cholesky ----------------------------------------------------------------------------------


def _linalg_dtype(t: ElementType) -> np.dtype:
    """The dtype a factorization of element type ``t`` runs in (LAPACK: f32/f64/c64/c128)."""
    if isinstance(t, ComplexType):
        return t.dtype
    return _F64 if t.dtype == _F64 else _F32


@kernel("stablehlo.cholesky")
def cholesky(op: Operation, ctx: Any) -> Run:
    """Spec "cholesky": Cholesky factor of each matrix `a[..., :, :]`.

    Only the `lower` (or upper) triangle of `a` is read: the Hermitian matrix is rebuilt from it.
    The opposite triangle of the result is zero. A matrix that is not Hermitian positive-definite
    (undefined behaviour in the spec) gives a result filled with NaN, as XLA does.
    """
    lower = _bool_attr(op, "lower", False)
    compute = _linalg_dtype(_elem(op.operands[0].type))
    result_dtype = op.results[0].type.dtype

    def factor(h: np.ndarray) -> np.ndarray:
        try:
            return np.linalg.cholesky(h)
        except np.linalg.LinAlgError:
            # Some matrix of the batch is not positive-definite: factor them one by one.
            flat = h.reshape((-1,) + h.shape[-2:])
            out = np.empty_like(flat)
            for i in range(flat.shape[0]):  # a loop over matrices, on the error path only
                try:
                    out[i] = np.linalg.cholesky(flat[i])
                except np.linalg.LinAlgError:
                    out[i] = np.nan
            return out.reshape(h.shape)

    def run(a: Any) -> Sequence[Any]:
        x = np.asarray(a).astype(compute)
        if x.shape[-1] == 0:
            return (x.astype(result_dtype),)
        t = np.tril(x) if lower else np.triu(x)
        strict = np.tril(x, -1) if lower else np.triu(x, 1)
        h = t + np.conj(np.swapaxes(strict, -1, -2))  # Hermitian: lower factor reads tril only
        with np.errstate(all="ignore"):
            factor_lower = factor(h)
            if lower:
                res = factor_lower
            else:
                res = np.conj(np.swapaxes(factor_lower, -1, -2))
        return (res.astype(result_dtype),)

    return run


# --- triangular_solve --------------------------------------------------------------------------


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """Solve ``t @ x = b`` for triangular ``t`` (..., M, M), ``b`` (..., M, N) by substitution.

    A loop over the M rows, each step vectorized over the batch and the N right-hand sides.
    """
    m = t.shape[-1]
    x = np.empty(b.shape, dtype=np.result_type(t, b))
    rows = range(m) if lower else range(m - 1, -1, -1)
    for i in rows:
        r = b[..., i, :]
        done = slice(0, i) if lower else slice(i + 1, m)
        if (i if lower else m - 1 - i) > 0:
            r = r - blas_matmul(t[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = r if unit_diagonal else r / t[..., i, i][..., None]
    return x


@kernel("stablehlo.triangular_solve")
def triangular_solve(op: Operation, ctx: Any) -> Run:
    """Spec "triangular_solve": solves `op(a) @ x = b` (`left_side`) or `x @ op(a) = b`.

    `op(a)` is `a`, `transpose(a)` or `adjoint(a)` (`transpose_a`); only the `lower` (or upper)
    triangle of `a` is read, and with `unit_diagonal` its diagonal is taken as ones (not read).
    A zero on the diagonal (undefined behaviour) gives inf/NaN as IEEE division does.
    """
    left_side = _bool_attr(op, "left_side", False)
    lower = _bool_attr(op, "lower", False)
    unit_diagonal = _bool_attr(op, "unit_diagonal", False)
    transpose_a = _enum_attr(op, "transpose_a", "NO_TRANSPOSE")
    if transpose_a not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        raise ValueError(f"triangular_solve: unknown transpose_a {transpose_a}")
    compute = _linalg_dtype(_elem(op.operands[0].type))
    if compute == _F32:
        compute = _F64  # accuracy: substitution in double, rounded once
    elif compute == _C64:
        compute = _C128
    finish = _finisher(compute, _elem(op.results[0].type))
    # op(a) is lower-triangular iff `lower` xor transposed; right side solves the transpose.
    effective_lower = lower != (transpose_a != "NO_TRANSPOSE")
    if not left_side:
        effective_lower = not effective_lower

    def run(a: Any, b: Any) -> Sequence[Any]:
        x = np.asarray(a).astype(compute)
        t = np.tril(x) if lower else np.triu(x)
        if transpose_a != "NO_TRANSPOSE":
            t = np.swapaxes(t, -1, -2)
            if transpose_a == "ADJOINT":
                t = np.conj(t)
        rhs = np.asarray(b).astype(compute)
        if not left_side:  # x @ t = b  <=>  t^T @ x^T = b^T
            t, rhs = np.swapaxes(t, -1, -2), np.swapaxes(rhs, -1, -2)
        with np.errstate(all="ignore"):
            res = _substitute(t, rhs, effective_lower, unit_diagonal)
        if not left_side:
            res = np.swapaxes(res, -1, -2)
        return (finish(np.ascontiguousarray(res)),)

    return run


# --- fft ---------------------------------------------------------------------------------------


@kernel("stablehlo.fft")
def fft(op: Operation, ctx: Any) -> Run:
    """Spec "fft": FFT, IFFT, RFFT, IRFFT over the trailing `size(fft_length)` dimensions.

    Computed by ``scipy.fft`` (pocketfft) in the operand's own precision (complex64/f32 stay
    single precision), which agrees bit for bit with XLA CPU's FFT on the test corpus; IFFT and
    IRFFT are normalized by 1/prod(fft_length), as the spec's inverse transforms are.
    """
    fft_type = _enum_attr(op, "fft_type", "FFT")
    fft_length = tuple(ints(op.attr("fft_length"), ()) or ())
    axes = tuple(range(-len(fft_length), 0))
    result_dtype = op.results[0].type.dtype
    operand_et = _elem(op.operands[0].type)
    double = operand_et.dtype in (_F64, _C128)
    real_dtype, complex_dtype = (_F64, _C128) if double else (_F32, _C64)
    transforms = {"FFT": (scipy.fft.fftn, complex_dtype), "IFFT": (scipy.fft.ifftn, complex_dtype),
                  "RFFT": (scipy.fft.rfftn, real_dtype), "IRFFT": (scipy.fft.irfftn, complex_dtype)}
    if fft_type not in transforms:
        raise ValueError(f"fft: unknown fft_type {fft_type}")
    transform, operand_dtype = transforms[fft_type]

    def run(operand: Any) -> Sequence[Any]:
        x = np.asarray(operand)
        if x.size == 0 or 0 in fft_length:
            return (np.zeros(_fft_result_shape(x.shape, fft_type, fft_length), result_dtype),)
        out = transform(x.astype(operand_dtype, copy=False), s=fft_length, axes=axes)
        return (out.astype(result_dtype, copy=False),)

    return run


def _fft_result_shape(shape: tuple[int, ...], fft_type: str,
                      fft_length: tuple[int, ...]) -> tuple[int, ...]:
    if not fft_length:
        return shape
    if fft_type == "RFFT":
        return shape[:-1] + (fft_length[-1] // 2 + 1,)
    if fft_type == "IRFFT":
        return shape[:-1] + (fft_length[-1],)
    return shape


# --- batch_norm_* ------------------------------------------------------------------------------


def _norm_dtype(t: ElementType) -> np.dtype:
    """batch_norm_* compute in float32 (f64 for f64) and round once to the element type."""
    return _F64 if t.dtype == _F64 else _F32


class _BatchNorm:
    """Shared decoding of batch_norm_* attributes: `epsilon`, `feature_index`."""

    def __init__(self, op: Operation) -> None:
        operand_t = op.operands[0].type
        self.rank = operand_t.rank
        self.feature_index = _int_attr(op, "feature_index", 0)
        self.compute = _norm_dtype(_elem(operand_t))
        # epsilon is an f32 constant (spec I6): round it to f32 first.
        self.epsilon = self.compute.type(np.float32(_float_attr(op, "epsilon", 0.0)))
        self.reduce_axes = tuple(d for d in range(self.rank) if d != self.feature_index)
        self.dtypes = [r.type.dtype for r in op.results]

    def bcast(self, v: Any) -> np.ndarray:
        """`broadcast_in_dim(v, [feature_index], shape(operand))` as a broadcastable view."""
        shape = [1] * self.rank
        shape[self.feature_index] = -1
        return np.asarray(v).astype(self.compute).reshape(shape)

    def compute_sum(self, x: np.ndarray) -> np.ndarray:
        return np.sum(x, axis=self.reduce_axes)

    def elements_per_feature(self, x: np.ndarray) -> Any:
        n = x.shape[self.feature_index]
        return self.compute.type(x.size / n if n else 0)

    def compute_mean(self, x: np.ndarray) -> np.ndarray:
        return self.compute_sum(x) / self.elements_per_feature(x)

    def normalize(self, x: np.ndarray, scale: Any, offset: Any, mean: np.ndarray,
                  variance: np.ndarray) -> np.ndarray:
        stddev = np.sqrt(self.bcast(variance) + self.epsilon)
        normalized = (x - self.bcast(mean)) / stddev
        return self.bcast(scale) * normalized + self.bcast(offset)


@kernel("stablehlo.batch_norm_inference")
def batch_norm_inference(op: Operation, ctx: Any) -> Run:
    """Spec "batch_norm_inference": `scale * (operand - mean) / sqrt(variance + epsilon) + offset`
    along `feature_index`.
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, offset: Any, mean: Any, variance: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        with np.errstate(all="ignore"):
            out = bn.normalize(x, scale, offset, mean, variance)
        return (out.astype(bn.dtypes[0]),)

    return run


@kernel("stablehlo.batch_norm_training")
def batch_norm_training(op: Operation, ctx: Any) -> Run:
    """Spec "batch_norm_training": mean and variance over all dimensions but `feature_index`,
    then `batch_norm_inference` with them; results `(output, batch_mean, batch_var)`.
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, offset: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        with np.errstate(all="ignore"):
            mean = bn.compute_mean(x)
            centered = x - bn.bcast(mean)
            variance = bn.compute_mean(centered * centered)
            out = bn.normalize(x, scale, offset, mean, variance)
        return (out.astype(bn.dtypes[0]), mean.astype(bn.dtypes[1]),
                variance.astype(bn.dtypes[2]))

    return run


@kernel("stablehlo.batch_norm_grad")
def batch_norm_grad(op: Operation, ctx: Any) -> Run:
    """Spec "batch_norm_grad": gradients of `batch_norm_training` with respect to operand, scale
    and offset, by the spec's decomposition (XLA's batchnorm_expander formulas).
    """
    bn = _BatchNorm(op)

    def run(operand: Any, scale: Any, mean: Any, variance: Any,
            grad_output: Any) -> Sequence[Any]:
        x = np.asarray(operand).astype(bn.compute)
        dy = np.asarray(grad_output).astype(bn.compute)
        with np.errstate(all="ignore"):
            variance_eps = bn.bcast(variance) + bn.epsilon
            centered_operand = x - bn.bcast(mean)
            stddev = np.sqrt(variance_eps)
            normalized_operand = centered_operand / stddev
            elements_per_feature = bn.elements_per_feature(x)
            i1 = dy * elements_per_feature
            i2 = bn.bcast(bn.compute_sum(dy))
            i3 = bn.bcast(bn.compute_sum(dy * centered_operand))
            i4 = i3 * centered_operand
            i5 = i4 / variance_eps
            grad_operand = (bn.bcast(scale) / stddev / elements_per_feature) * ((i1 - i2) - i5)
            grad_scale = bn.compute_sum(dy * normalized_operand)
            grad_offset = bn.compute_sum(dy)
        return (grad_operand.astype(bn.dtypes[0]), grad_scale.astype(bn.dtypes[1]),
                grad_offset.astype(bn.dtypes[2]))

    return run


# --- constraints (spec "Ops" section, C1..Cn) ---------------------------------------------------
# The verifiers of the linear-algebra ops (shlo/verifier.py calls them through the registry).

from typing import Any as _Any  # noqa: E402

from ..attributes import ArrayAttr as _ArrayAttr, ConvDimensionNumbers as _ConvDN  # noqa: E402
from ..ir import Operation as _Operation  # noqa: E402
from ..types import (  # noqa: E402
    ComplexType as _ComplexType, FloatType as _FloatType, QuantizedType as _QuantizedType,
    TensorType as _TensorType,
)
from . import _constraints as _c  # noqa: E402
from ..registry import verifier  # noqa: E402

_PRECISIONS = frozenset({"DEFAULT", "HIGH", "HIGHEST"})


def _precision_config(op: _Operation, diag: _Any, label: str) -> bool:
    a = op.attr("precision_config")
    if a is None:
        return True
    values = list(a) if isinstance(a, (_ArrayAttr, tuple, list)) else None
    if values is None:
        return True
    if len(values) > 2:
        diag.error(op, label, f"expects precision config to be empty or have <= 2 elements, got "
                              f"{len(values)}")
        return False
    for v in values:
        p = getattr(v, "value", v)
        if isinstance(p, str) and p not in _PRECISIONS:
            diag.error(op, label, f"'precision_config' failed to satisfy constraint: precision "
                                  f"must be one of DEFAULT, HIGH, HIGHEST, got {p}")
            return False
    return True


def _shape_mismatch(op: _Operation, diag: _Any, label: str, shape: tuple) -> bool:
    """Compare an inferred shape with the result's (upstream's "inferred shape" message)."""
    res = op.results[0].type
    if isinstance(res, _TensorType) and not _c.compatible_shapes(shape, res.shape):
        diag.error(op, label, f"inferred shape '{_c.dims_str(shape)}' is incompatible with return "
                              f"type of operation '{_c.type_str(res)}'")
        return False
    return True


def _check_quantized_dot_like(op: _Operation, diag: _Any, lhs: _Any, rhs: _Any, res: _Any,
                              rhs_qdim: int | None, label: str) -> bool:
    """The quantization constraints dot_general and convolution share: rhs quantized whenever
    anything is, storage/expressed types agree, hybrid ops keep float lhs and result."""
    le, re_, oe = lhs.element_type, rhs.element_type, res.element_type
    lq, rq, oq = (isinstance(e, _QuantizedType) for e in (le, re_, oe))
    if not (lq or rq or oq):
        return True
    if not rq or lq != oq:
        diag.error(op, label, "rhs should be quantized for quantized operations and "
                              "is_quantized(lhs)=is_quantized(result) should hold")
        return False
    if lq:
        if (le.storage_type, le.min, le.max) != (re_.storage_type, re_.min, re_.max):
            diag.error(op, label, "mismatched lhs and rhs quantization storage types: "
                                  + _c.types_str([lhs, rhs]))
            return False
        if not le.expressed_type == re_.expressed_type == oe.expressed_type:
            diag.error(op, label, "mismatched lhs, rhs and result quantization expressed types: "
                                  + _c.types_str([lhs, rhs, res]))
            return False
    elif not re_.expressed_type == le == oe:
        diag.error(op, label, "mismatched rhs quantization expressed type and lhs and result "
                              "element type: " + _c.types_str([lhs, rhs, res]))
        return False
    return True


@verifier("stablehlo.dot_general")
def _verify_dot_general(op: _Operation, diag: _Any) -> None:
    """dot_general (C1-C20): batching and contracting dimensions pair up, are unique, in range
    and of equal sizes; precision_config has at most 2 entries; the result shape; the
    quantization constraints; a known `algorithm`.

    `element_type(lhs) = element_type(rhs)` for non-quantized operands is not enforced: upstream
    accepts mixed element types (for example `i8 x i8 -> i32`, `bf16 x f32`)."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA],
                        attrs={"dot_dimension_numbers": "any"},
                        optional_attrs={"precision_config": "any", "algorithm": "any"}):
        return
    lhs, rhs = op.operands[0].type, op.operands[1].type
    res = op.results[0].type
    dn = op.attr("dot_dimension_numbers")
    if not isinstance(dn, _c.StructAttr):
        return
    lb, rb = _c.struct_ints(dn, "lhs_batching_dimensions"), _c.struct_ints(dn,
                                                                          "rhs_batching_dimensions")
    lc = _c.struct_ints(dn, "lhs_contracting_dimensions")
    rc = _c.struct_ints(dn, "rhs_contracting_dimensions")
    if len(lb) != len(rb):
        diag.error(op, "C1", f"lhs and rhs should have the same number of batching dimensions: "
                             f"{len(lb)} vs {len(rb)}")
        return
    if len(lc) != len(rc):
        diag.error(op, "C2", f"lhs and rhs should have the same number of contracting "
                             f"dimensions: {len(lc)} vs {len(rc)}")
        return
    for side, b, c, label in (("lhs", lb, lc, "C3"), ("rhs", rb, rc, "C4")):
        if not _c._disjoint(op, diag, label, b, c, f"{side}_batching_dimensions",
                            f"{side}_contracting_dimensions"):
            return
    for name, dims, t, label in (("lhs_batching_dimensions", lb, lhs, "C5"),
                                 ("lhs_contracting_dimensions", lc, lhs, "C6"),
                                 ("rhs_batching_dimensions", rb, rhs, "C7"),
                                 ("rhs_contracting_dimensions", rc, rhs, "C8")):
        if t.shape is None:
            continue
        for d in dims:
            if not 0 <= d < len(t.shape):
                diag.error(op, label, f"{name} value: {d} is out of range: [0, {len(t.shape)})")
                return
    if lhs.shape is not None and rhs.shape is not None:
        for a, b in zip(lb, rb):
            if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
                diag.error(op, "C9", f"batching dimension sizes must match for lhs/rhs: "
                                     f"dim(lhs, {a}) = {lhs.shape[a]}, dim(rhs, {b}) = "
                                     f"{rhs.shape[b]}")
                return
        for a, b in zip(lc, rc):
            if not _c.compatible_dims(lhs.shape[a], rhs.shape[b]):
                diag.error(op, "C10", f"contracting dimension sizes must match for lhs/rhs: "
                                      f"dim(lhs, {a}) = {lhs.shape[a]}, dim(rhs, {b}) = "
                                      f"{rhs.shape[b]}")
                return
    if not _precision_config(op, diag, "C11"):
        return
    if lhs.shape is not None and rhs.shape is not None:
        shape = tuple([lhs.shape[d] for d in lb] +
                      [s for d, s in enumerate(lhs.shape) if d not in lb and d not in lc] +
                      [s for d, s in enumerate(rhs.shape) if d not in rb and d not in rc])
        if not _shape_mismatch(op, diag, "C12", shape):
            return
    re_ = rhs.element_type
    if isinstance(re_, _QuantizedType):
        if re_.quantization_dimension is None:
            if re_.zero_points and re_.zero_points[0] != 0:
                diag.error(op, "C17", f"Zero point of rhs should be 0, got {re_.zero_points[0]}")
                return
        else:
            if any(z != 0 for z in re_.zero_points):
                diag.error(op, "C17", "Zero points of rhs should be 0")
                return
            if re_.quantization_dimension in rc:
                diag.error(op, "C18", "Quantization dimension of rhs should not be in the "
                                      "contracting dimension of rhs")
                return
    if not _check_quantized_dot_like(op, diag, lhs, rhs, res, None, "C14"):
        return
    _check_dot_algorithm(op, diag)


def _type_name(t: _Any) -> str:
    t = getattr(t, "type", t)
    return getattr(t, "name", str(t))


def _check_dot_algorithm(op: _Operation, diag: _Any) -> None:
    a = op.attr("algorithm")
    if not isinstance(a, _c.StructAttr):
        return
    lp, rp = _type_name(a.get("lhs_precision_type")), _type_name(a.get("rhs_precision_type"))
    acc = _type_name(a.get("accumulation_type"))
    lcc = _c.struct_int(a, "lhs_component_count", 1)
    rcc = _c.struct_int(a, "rhs_component_count", 1)
    nops = _c.struct_int(a, "num_primitive_operations", 1)
    imprecise = _c.struct_int(a, "allow_imprecise_accumulation", 0)
    if lcc < 1:
        diag.error(op, "C21", "lhs component count must be positive")
        return
    if rcc < 1:
        diag.error(op, "C22", "rhs component count must be positive")
        return
    if nops < 1:
        diag.error(op, "C23", "num primitive operations must be positive")
        return
    f8 = lambda t: t.startswith("f8")  # noqa: E731
    known = lcc == 1 and rcc == 1 and (
        f8(lp) and f8(rp) and acc == "f32" and nops == 1 or
        lp == rp == "f16" and acc in ("f16", "f32") and nops == 1 or
        lp == rp == "bf16" and acc in ("bf16", "f32") and nops in (1, 3, 6, 9) or
        lp == rp == "tf32" and acc == "f32" and nops in (1, 3) or
        lp == rp == "f32" and acc == "f32" and nops == 1 or
        lp == rp == "f64" and acc == "f64" and nops == 1)
    if not known:
        diag.error(op, "C24", f"dot algorithm not known to be supported on any hardware: "
                              f"{{lhs:'{lp}', rhs:'{rp}', accum:'{acc}', lhs_components:{lcc}, "
                              f"rhs_components:{rcc}, primitive_ops:{nops}, "
                              f"imprecise:{int(imprecise)}}}")


@verifier("stablehlo.dot")
def _verify_dot(op: _Operation, diag: _Any) -> None:
    """`dot` (beyond the seed spec): ranks 1 or 2, matching contracting dimensions, and the
    result shape of the matrix/vector product."""
    if not _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA],
                        optional_attrs={"precision_config": "any"}):
        return
    lhs, rhs = op.operands[0].type, op.operands[1].type
    if not _precision_config(op, diag, "C1"):
        return
    if lhs.shape is None or rhs.shape is None:
        return
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        diag.error(op, "C1", f"expected both lhs/rhs ranks to be either 1 or 2, got "
                             f"{len(lhs.shape)} and {len(rhs.shape)}")
        return
    if not _c.compatible_dims(lhs.shape[-1], rhs.shape[0]):
        diag.error(op, "C2", f"expected lhs dimension {len(lhs.shape) - 1} ({lhs.shape[-1]}) "
                             f"and rhs dimension 0 ({rhs.shape[0]}) to match")
        return
    shape = tuple(lhs.shape[:-1]) + tuple(rhs.shape[1:])
    _shape_mismatch(op, diag, "C3", shape)


def _conv_dims(dn: _Any) -> tuple | None:
    if isinstance(dn, _ConvDN):
        return dn
    return None


def _check_convolution(op: _Operation, diag: _Any, dynamic: bool) -> None:
    lhs, rhs = op.operands[0].type, op.operands[1].type
    res = op.results[0].type
    dn = _conv_dims(op.attr("dimension_numbers"))
    fgc = _c.int_attr(op, "feature_group_count", 1)
    bgc = _c.int_attr(op, "batch_group_count", 1)
    if fgc <= 0:
        diag.error(op, "C21", f"op attribute 'feature_group_count' failed to satisfy constraint: "
                              f"64-bit signless integer attribute whose value is positive (got "
                              f"{fgc})")
        return
    if bgc <= 0:
        diag.error(op, "C22", f"op attribute 'batch_group_count' failed to satisfy constraint: "
                              f"64-bit signless integer attribute whose value is positive (got "
                              f"{bgc})")
        return
    if lhs.shape is None or rhs.shape is None or dn is None:
        return
    got = f"Got: '{_c.type_str(lhs)}' and '{_c.type_str(rhs)}'."
    if len(lhs.shape) != len(rhs.shape):
        diag.error(op, "C1", f"expects convolution arguments to have same number of dimensions. "
                             f"{got}")
        return
    n = len(lhs.shape)
    if n < 2:
        diag.error(op, "C1", f"expects convolution arguments to have >= 2 dimensions. {got}")
        return
    isd, ksd, osd = (dn.input_spatial_dimensions, dn.kernel_spatial_dimensions,
                     dn.output_spatial_dimensions)
    if not len(isd) == len(ksd) == len(osd):
        diag.error(op, "C12, C17, C19", f"expects the same size for input, kernel and output "
                                        f"spatial-dimensions, but got {len(isd)}, {len(ksd)}, "
                                        f"and {len(osd)} resp.")
        return
    nsp = len(isd)
    if n != nsp + 2:
        diag.error(op, "C12", f"expects convolution arguments to have {nsp + 2} dimensions. Got: "
                              f"{n}")
        return
    ins = [dn.input_batch_dimension, *isd, dn.input_feature_dimension]
    ker = [*ksd, dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension]
    out = [dn.output_batch_dimension, *osd, dn.output_feature_dimension]
    for name, dims, label in (("input", ins, "C13"), ("kernel", ker, "C18"),
                              ("output", out, "C20")):
        if not _c.is_unique(dims):
            diag.error(op, label, f"expects {name} dimension-numbers to be unique, got "
                                  f"{{{', '.join(map(str, dims))}}}.")
            return
    for dims, label in ((ins, "C13"), (ker, "C18"), (out, "C20")):
        if any(not 0 <= d < n for d in dims):
            diag.error(op, label, f"expects input, kernel, and output dimension-numbers to be "
                                  f"in-range [0, {n}).")
            return
    if fgc > 1 and bgc > 1:
        diag.error(op, "C23", f"expects batch_group_count and feature_group_count not to be both"
                              f" greater than 1. Got {bgc} and {fgc} resp.")
        return
    le, re_, oe = lhs.element_type, rhs.element_type, res.element_type
    if not isinstance(le, _QuantizedType) and not isinstance(re_, _QuantizedType) and \
            not _c.same_element_type(le, re_):
        diag.error(op, "C27", f"expects lhs and rhs to have compatible element type. Got: "
                              f"'{_c.type_str(le)}' and '{_c.type_str(re_)}'")
        return
    batch = lhs.shape[dn.input_batch_dimension]
    if batch is not None and batch % bgc:
        diag.error(op, "C10", f"expects input batch dimension ({batch}) to be divisible by "
                              f"batch_group_count. Got batch_group_count = {bgc}.")
        return
    feat = lhs.shape[dn.input_feature_dimension]
    if feat is not None and feat % fgc:
        diag.error(op, "C11", f"expects input feature dimension ({feat}) to be a multiple of "
                              f"feature_group_count. Got feature_group_count = {fgc}.")
        return
    kin = rhs.shape[dn.kernel_input_feature_dimension]
    if feat is not None and kin is not None and feat // fgc != kin:
        diag.error(op, "C14", f"expects input feature dimension ({feat}) / feature_group_count = "
                              f"kernel input feature dimension ({kin}). Got feature_group_count "
                              f"= {fgc}.")
        return
    kout = rhs.shape[dn.kernel_output_feature_dimension]
    if kout is not None and kout % bgc:
        diag.error(op, "C15", f"expects output feature dimension size ({kout}) to be a multiple "
                              f"of batch_group_count. Got batch_group_count = {bgc}.")
        return
    if kout is not None and kout % fgc:
        diag.error(op, "C16", f"expects kernel output feature dimension ({kout}) to be divisible"
                              f" by feature_group_count. For feature_group_count = {fgc}.")
        return
    window = [rhs.shape[d] for d in ksd]
    if not _c.positive_window(op, diag, "C25", window):
        return
    strides = _c.window_list(op, diag, "C2, C3", "window_strides", "window-strides", nsp,
                             positive="stride", check_size=not dynamic)
    if strides is None:
        return
    pad = [(0, 0)] * nsp if dynamic else _c.padding_pairs(op, diag, "C4", nsp)
    if pad is None:
        return
    lhs_dil = _c.window_list(op, diag, "C5, C6", "lhs_dilation", "base-dilation factors", nsp,
                             positive="base dilation factor")
    if lhs_dil is None:
        return
    rhs_dil = _c.window_list(op, diag, "C7, C8", "rhs_dilation", "window-dilation factors", nsp,
                             positive="window dilation factor")
    if rhs_dil is None:
        return
    rev = op.attr("window_reversal")
    if rev is not None:
        vals = _c.ints_of(rev)
        if vals and len(vals) != nsp:
            diag.error(op, "C9", f"expects window-reversal to have same dimension-size as size of"
                                 f" window dimensions ({nsp}), but got: {len(vals)}.")
            return
    if not _precision_config(op, diag, "C24"):
        return
    shape: list = [None] * n
    shape[dn.output_batch_dimension] = None if batch is None else batch // bgc
    shape[dn.output_feature_dimension] = kout
    for i in range(nsp):
        if dynamic or window[i] is None:
            shape[osd[i]] = None
        else:
            shape[osd[i]] = _c.num_windows(lhs.shape[isd[i]], window[i], strides[i], pad[i],
                                           lhs_dil[i], rhs_dil[i])
    if not _shape_mismatch(op, diag, "C25, C26", tuple(shape)):
        return
    if isinstance(re_, _QuantizedType) and re_.quantization_dimension is not None and \
            re_.quantization_dimension != dn.kernel_output_feature_dimension:
        diag.error(op, "C32", "quantization dimension of rhs should be same with "
                              "kernel_output_feature_dimension")
        return
    if isinstance(oe, _QuantizedType) and oe.quantization_dimension is not None and \
            oe.quantization_dimension != dn.output_feature_dimension:
        diag.error(op, "C33", "quantization dimension of result should be same with "
                              "output_feature_dimension")
        return
    if isinstance(re_, _QuantizedType) and re_.quantization_dimension is None and \
            isinstance(oe, _QuantizedType) and oe.quantization_dimension is not None:
        diag.error(op, "C31", "a per-tensor quantized rhs requires a per-tensor quantized result")
        return
    _check_quantized_dot_like(op, diag, lhs, rhs, res, None, "C28")


_CONV_ATTRS = {"dimension_numbers": "any", "feature_group_count": "int",
               "batch_group_count": "int"}
_CONV_OPTIONAL = {"window_strides": "ints", "lhs_dilation": "ints", "rhs_dilation": "ints",
                  "window_reversal": "any", "precision_config": "any"}


@verifier("stablehlo.convolution")
def _verify_convolution(op: _Operation, diag: _Any) -> None:
    """convolution (C1-C33): window attributes, dimension numbers, group counts, the result
    shape and the quantization constraints."""
    if _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA], attrs=_CONV_ATTRS,
                    optional_attrs={**_CONV_OPTIONAL, "padding": "i64elements"}):
        _check_convolution(op, diag, dynamic=False)


@verifier("stablehlo.dynamic_conv")
def _verify_dynamic_conv(op: _Operation, diag: _Any) -> None:
    """dynamic_conv (beyond the seed spec): convolution with `padding` as an operand."""
    if _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA, _c.INT_TENSOR], [_c.TENSOR_QA],
                    attrs=_CONV_ATTRS, optional_attrs=_CONV_OPTIONAL):
        _check_convolution(op, diag, dynamic=True)


@verifier("stablehlo.cholesky")
def _verify_cholesky(op: _Operation, diag: _Any) -> None:
    """(C1) `baseline_type(a) = baseline_type(result)`; (C2) `2 <= rank(a)`;
    (C3) `dim(a, -2) = dim(a, -1)`."""
    if not _c.signature(op, diag, [_c.FP_C_Q_TENSOR], [_c.FP_C_Q_TENSOR],
                        optional_attrs={"lower": "bool"}):
        return
    a = op.operands[0].type
    if a.shape is not None:
        if len(a.shape) < 2:
            diag.error(op, "C2", f"argument 'a' must have rank >= 2, got shape "
                                 f"{', '.join(map(_dstr, a.shape))}")
            return
        if not _c.compatible_dims(a.shape[-2], a.shape[-1]):
            diag.error(op, "C3", f"minor dimensions of 'a' must have equal size, got shape "
                                 f"{', '.join(map(_dstr, a.shape))}")
            return
    _c.check_inferred(op, diag, "C1", [a])


def _dstr(d: _Any) -> str:
    return "?" if d is None else str(d)


@verifier("stablehlo.triangular_solve")
def _verify_triangular_solve(op: _Operation, diag: _Any) -> None:
    """(C1) baseline element types agree; (C2) `2 <= rank(a) = rank(b)`; (C3) `a` is square
    and shares its size with `b` on the side given by `left_side`, batch dimensions agree;
    (C4) `baseline_type(b) = baseline_type(result)`."""
    if not _c.signature(op, diag, [_c.FP_C_Q_TENSOR, _c.FP_C_Q_TENSOR], [_c.FP_C_Q_TENSOR],
                        attrs={"left_side": "bool", "lower": "bool", "unit_diagonal": "bool",
                               "transpose_a": "any"}):
        return
    a, b = op.operands[0].type, op.operands[1].type
    t = _c.enum_attr(op, "transpose_a")
    if t is not None and t not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        diag.error(op, "I6", f"Invalid transpose option value for triangular solve: {t}")
        return
    if not _c.compatible_element_types(a.element_type, b.element_type):
        diag.error(op, "C1", f"expects a and b to have the same element type: "
                             f"{_c.types_str([a, b])}")
        return
    if a.shape is not None:
        if len(a.shape) < 2:
            diag.error(op, "C2", f"operand 'a' must have rank >= 2, but got '{_c.type_str(a)}'")
            return
        if not _c.compatible_dims(a.shape[-2], a.shape[-1]):
            diag.error(op, "C3", f"two minor dimensions of operand 'a' must be compatible, but got"
                                 f" '{_c.type_str(a)}'")
            return
    if a.shape is not None and b.shape is not None:
        if len(a.shape) != len(b.shape):
            diag.error(op, "C2", f"operands must have equal rank, but got '{_c.type_str(a)}' and "
                                 f"'{_c.type_str(b)}'")
            return
        left = _c.bool_attr(op, "left_side", True)
        shared = b.shape[-2] if left else b.shape[-1]
        if not _c.compatible_dims(a.shape[-1], shared):
            diag.error(op, "C3", f"shared dimension of operands 'a' and 'b' must be compatible, "
                                 f"but got '{_c.type_str(a)}' and '{_c.type_str(b)}'")
            return
        if not _c.compatible_shapes(a.shape[:-2], b.shape[:-2]):
            diag.error(op, "C3", f"batch dimensions of the operands must be compatible, but got "
                                 f"'{_c.type_str(a)}' and '{_c.type_str(b)}'")
            return
    _c.check_inferred(op, diag, "C4", [b])


@verifier("stablehlo.fft")
def _verify_fft(op: _Operation, diag: _Any) -> None:
    """fft (C1-C5): `size(fft_length) <= rank(operand)`, between 1 and 3, element types per
    fft_type, the innermost dimensions match fft_length, and the result shape."""
    if not _c.signature(op, diag, [_c.FP_C_TENSOR], [_c.FP_C_TENSOR],
                        attrs={"fft_type": "any", "fft_length": "ints"}):
        return
    operand = op.operands[0].type
    kind = _c.enum_attr(op, "fft_type")
    length = _c.ints_attr(op, "fft_length")
    if kind not in ("FFT", "IFFT", "RFFT", "IRFFT"):
        diag.error(op, "I2", f"fft_type must be one of FFT, IFFT, RFFT, IRFFT, got {kind}")
        return
    k = len(length)
    if not 1 <= k <= 3:
        diag.error(op, "C3", f"rank must be between 1 and 3, but got {k}.")
        return
    shape = operand.shape
    if shape is not None and len(shape) < k:
        diag.error(op, "C1", f"operand rank must not be less than fft rank of {k} for operand of"
                             f" type '{_c.type_str(operand)}'")
        return
    et = operand.element_type
    if kind == "RFFT":
        if not isinstance(et, _FloatType) or et.name not in ("f32", "f64"):
            diag.error(op, "C2", f"RFFT requires f32 or f64 input type, but is given "
                                 f"'{_c.type_str(et)}'.")
            return
    elif not isinstance(et, _ComplexType):
        diag.error(op, "C2", f"FFT/IFFT/IRFFT take a complex tensor as input, but is given "
                             f"'{_c.type_str(operand)}'")
        return
    if shape is None:
        return
    inner = list(shape[len(shape) - k:])
    if kind == "RFFT":
        if not _c.compatible_shapes(inner, length):
            diag.error(op, "C4", f"RFFT requires innermost dimensions to be compatible with "
                                 f"fft_length. Got: {', '.join(map(_dstr, inner))} but wanted "
                                 f"{', '.join(map(str, length))}.")
            return
        last = length[-1]
        out = list(shape[:-1]) + [0 if last == 0 else last // 2 + 1]
        out_et = _ComplexType(et)
    elif kind == "IRFFT":
        if not _c.compatible_shapes(inner[:-1], length[:-1]):
            diag.error(op, "C4", f"IRFFT requires non-final dimensions to be compatible with "
                                 f"fft_length. Got: {', '.join(map(_dstr, inner))} but wanted "
                                 f"{', '.join(map(str, length))}")
            return
        want = 0 if length[-1] == 0 else length[-1] // 2 + 1
        if inner[-1] is not None and inner[-1] != want:
            diag.error(op, "C5", f"IRFFT requires innermost dimension to be compatible with "
                                 f"fft_length[-1]/2+1. Got: {inner[-1]} but fft_length is "
                                 f"{length[-1]}.")
            return
        out = list(shape[:-1]) + [length[-1]]
        out_et = et.element
    else:
        out, out_et = list(shape), et
    _c.check_inferred(op, diag, "C2, C5", [_TensorType(tuple(out), out_et)])


def _batch_norm(op: _Operation, diag: _Any, n_multi: list[int], n_single: list[int],
                results_multi: int, results_single: int) -> None:
    ops = [v.type for v in op.operands]
    fi = _c.int_attr(op, "feature_index", 0)
    if fi < 0:
        diag.error(op, "C1", f"op attribute 'feature_index' failed to satisfy constraint: 64-bit "
                             f"signless integer attribute whose value is non-negative (got {fi})")
        return
    multi = [ops[i] for i in n_multi]
    single = [ops[i] for i in n_single]
    ets = [t.element_type for t in ops]
    if any(not _c.compatible_element_types(ets[0], e) for e in ets[1:]):
        diag.error(op, "C2", f"requires the same element type for all operands: "
                             f"{_c.types_str(ops)}")
        return
    operand = multi[0]
    if operand.shape is None:
        return
    rank = len(operand.shape)
    if fi >= rank:
        diag.error(op, "C1", f"expects featureIndex to be smaller than the rank of "
                             f"multi-dimensional operands; got featureIndex {fi}, and rank "
                             f"{rank}.")
        return
    if not _c.same_shapes(op, diag, "C3", multi, message="expects multi-dimensional operands "
                                                         "to have compatible shapes"):
        return
    if not _c.same_shapes(op, diag, "C4", single, message="expects single-dimensional operands "
                                                          "to have compatible shapes"):
        return
    features = operand.shape[fi]
    for t in single:
        if t.shape is not None and len(t.shape) == 1 and \
                not _c.compatible_dims(t.shape[0], features):
            diag.error(op, "C5", f"expects the size of single-dimensional operands to be "
                                 f"compatible with feature count, but the size of "
                                 f"single-dimensional operands is {t.shape[0]} and the feature "
                                 f"count is {features}.")
            return
    scale = _TensorType((features,), single[0].element_type)
    _c.check_inferred(op, diag, "C3, C4, C7",
                      [operand] * results_multi + [scale] * results_single)


_BN_SINGLE = _c.TC(_c.F | _c.Q, rank=1)


@verifier("stablehlo.batch_norm_inference")
def _verify_batch_norm_inference(op: _Operation, diag: _Any) -> None:
    """batch_norm_inference (C1-C7)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR] + [_BN_SINGLE] * 4, [_c.FP_Q_TENSOR],
                    attrs={"epsilon": "float", "feature_index": "int"}):
        _batch_norm(op, diag, [0], [1, 2, 3, 4], 1, 0)


@verifier("stablehlo.batch_norm_training")
def _verify_batch_norm_training(op: _Operation, diag: _Any) -> None:
    """batch_norm_training (C1-C7)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR, _BN_SINGLE, _BN_SINGLE],
                    [_c.FP_Q_TENSOR, _BN_SINGLE, _BN_SINGLE],
                    attrs={"epsilon": "float", "feature_index": "int"}):
        _batch_norm(op, diag, [0], [1, 2], 1, 2)


@verifier("stablehlo.batch_norm_grad")
def _verify_batch_norm_grad(op: _Operation, diag: _Any) -> None:
    """batch_norm_grad (C1-C5)."""
    if _c.signature(op, diag, [_c.FP_Q_TENSOR, _BN_SINGLE, _BN_SINGLE, _BN_SINGLE,
                               _c.FP_Q_TENSOR], [_c.FP_Q_TENSOR, _BN_SINGLE, _BN_SINGLE],
                    attrs={"epsilon": "float", "feature_index": "int"}):
        _batch_norm(op, diag, [0, 4], [1, 2, 3], 1, 2)
