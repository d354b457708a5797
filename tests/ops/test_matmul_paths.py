"""The contraction fast paths give the careful paths' bits exactly.

* Small float contractions: all products, then one numpy sum over K, must equal the sequential
  loop ``acc = 0; acc += a[:, :, k] * b[:, k, :]`` bit for bit (the order the upstream
  interpreter and XLA's naive loops use). This pins numpy's row-by-row add of an outer axis.
* Integer contractions through float32 BLAS must equal exact integer arithmetic.
* BLAS threads are decided per GEMM.
* The compiled small product (loop bodies) gives the numpy path's bits.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from shlo.ops.linalg import matmul as mm
from shlo.types import element_type


def _loop(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    g, m, k = a.shape
    acc = np.zeros((g, m, b.shape[-1]), np.result_type(a, b))
    for i in range(k):
        acc += a[:, :, i, None] * b[:, i, None, :]
    return acc


SHAPES = [(1, 1, 1, 1), (1, 1, 9, 1), (1, 1, 1024, 1), (3, 1, 300, 1), (1, 2, 64, 1),
          (1, 1, 17, 2), (2, 3, 5, 4), (1, 8, 512, 10), (4, 16, 16, 16), (1, 64, 16, 64),
          (2, 1, 100, 7), (1, 5, 1000, 3), (8, 4, 32, 4), (1, 1, 8, 8), (1, 256, 1, 256),
          (2, 2, 2, 2), (1, 3, 129, 1), (5, 1, 1, 5)]


def _operands(g, m, k, n, dt, rng):
    a = rng.standard_normal((g, m, k)).astype(dt)
    b = rng.standard_normal((g, k, n)).astype(dt)
    # edge values: signed zeros (also products of zeros only), inf, NaN
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    idx = rng.integers(0, flat_a.size, max(1, flat_a.size // 5))
    flat_a[idx] = rng.choice(np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dt), idx.size)
    idx = rng.integers(0, flat_b.size, max(1, flat_b.size // 5))
    flat_b[idx] = rng.choice(np.array([0.0, -0.0, 1e30, -1e-30], dt), idx.size)
    return a, b


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64])
def test_small_contraction_equals_sequential_loop(shape, dt) -> None:
    g, m, k, n = shape
    assert g * m * n * k <= mm._SEQUENTIAL_MAX_WORK
    rng = np.random.default_rng(sum(shape))
    with np.errstate(all="ignore"):
        a, b = _operands(g, m, k, n, np.float64 if dt == np.complex64 else dt, rng)
        a, b = a.astype(dt), b.astype(dt)
        got, want = mm._float_matmul(a, b), _loop(a, b)
    assert got.dtype == want.dtype
    # Bit for bit, except which NaN (sign, payload) a NaN result carries: x86 returns the first
    # NaN operand's, and numpy's reduce loop may take the operands in the other order. The
    # spec does not specify NaN payloads.
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    g_bits, w_bits = np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8)
    keep = np.repeat(~nan.reshape(-1), want.itemsize).reshape(g_bits.shape)
    np.testing.assert_array_equal(g_bits[keep], w_bits[keep])


def test_all_negative_zero_products_sum_to_positive_zero() -> None:
    a = np.full((1, 2, 3), -0.0, np.float32)
    b = np.full((1, 3, 2), 1.0, np.float32)
    r = mm._float_matmul(a, b)
    assert np.all(r == 0) and not np.signbit(r).any()
    r1 = mm._float_matmul(a[:, :1], b[:, :, :1])
    assert r1[0, 0, 0] == 0 and not np.signbit(r1[0, 0, 0])


@pytest.mark.parametrize("lt,k,lo,hi", [("i8", 1024, -128, 128), ("ui8", 700, 0, 256),
                                         ("i4", 5000, -8, 8), ("i8", 4096, -128, 128),
                                         ("i16", 300, -300, 300), ("i16", 64, -32768, 32768)])
def test_integer_contractions_exact(lt, k, lo, hi) -> None:
    et = element_type(lt)
    res = element_type("i32") if lt != "i16" else element_type("i64")
    rng = np.random.default_rng(k)
    a = rng.integers(lo, hi, (2, 9, k)).astype(et.dtype)
    b = rng.integers(lo, hi, (2, k, 11)).astype(et.dtype)
    a.reshape(-1)[0], b.reshape(-1)[0] = lo, lo  # the extreme values
    got = mm.Matmul(et, et, res)(a, b)
    want = np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(res.dtype)
    np.testing.assert_array_equal(got, want)


def test_integer_f32_path_taken_and_split() -> None:
    et = element_type("i8")
    m = mm.Matmul(et, et, element_type("i32"))
    a = np.full((1, 2, 4096), -128, np.int8)
    b = np.full((1, 4096, 3), -128, np.int8)
    out = m._f32_exact(a, b, 4096)  # 4096 * 2^14 = 2^26: split into chunks of 1023
    assert out is not None and out.dtype == np.float64
    assert np.all(out == 4096 * 16384)


def test_blas_threads_decided_per_gemm(monkeypatch) -> None:
    entered = []

    class Spy:
        def __enter__(self):
            entered.append(1)

        def __exit__(self, *exc):
            return None

    monkeypatch.setattr(mm, "_ONE_BLAS_THREAD", Spy())
    a = np.ones((96, 64, 64), np.float32)
    mm.blas_matmul(a, a)  # 96 small GEMMs: 2^25 multiply-adds in all, each far below
    assert entered == [1]
    big = np.ones((1, 512, 512), np.float32)
    mm.blas_matmul(big, np.ones((1, 512, 512), np.float32))  # 2^27: the user's threads
    assert entered == [1]


def test_narrow_float_matmul_rounds_once() -> None:
    """bf16 operands: f32 products are exact, the f32 sum is rounded once to bf16."""
    bf = element_type("bf16")
    a = np.array([[[1.0, 2.0 ** -8, 2.0 ** -9]]], ml_dtypes.bfloat16)
    b = np.ones((1, 3, 1), ml_dtypes.bfloat16)
    got = mm.Matmul(bf, bf, bf)(a, b)
    assert float(got[0, 0, 0]) == float(np.float32(1 + 2.0 ** -8 + 2.0 ** -9).astype(ml_dtypes.bfloat16))


def test_i8_contraction_of_1024_reaches_two_to_the_24_exactly() -> None:
    """i8 x i8 at K = 1024: every partial sum is at most 2^24 in magnitude, which float32
    holds, so one f32 GEMM from the types alone (no scan of the operands) is exact; the
    extreme, 1024 products (-128)(-128), sums to 2^24 itself."""
    i8, i32 = element_type("i8"), element_type("i32")
    m = mm.Matmul(i8, i8, i32)
    assert m.bound * 1024 == mm._EXACT_F32
    a = np.full((1, 2, 1024), -128, np.int8)
    a[0, 1, ::2] = 127
    b = np.full((1, 1024, 2), -128, np.int8)
    b[0, ::3, 1] = 127
    got = m(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, a.astype(np.int64) @ b.astype(np.int64))
    assert got[0, 0, 0] == 2 ** 24


def _compiled_sequential():
    from shlo.ops import _half

    if not _half.available():
        pytest.skip("numba is not installed (or SHLO_NO_JIT is set)")
    f = mm._SEQUENTIAL.get()
    assert f is not None  # (its load checks it on a few values first)
    return f


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[0] == 1])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_compiled_small_product_equals_numpy(shape, dt) -> None:
    """The compiled sequential product (``_dot_jit.sequential_matmul``): the bits of
    matmul's numpy path, signed zeros and infinities included, wherever no result is a NaN;
    and it says when one is (its caller then takes numpy's path)."""
    f = _compiled_sequential()
    _, m, k, n = shape
    rng = np.random.default_rng(sum(shape) + 1)
    with np.errstate(all="ignore"):
        a, b = _operands(1, m, k, n, dt, rng)
        for x in (a, np.where(np.isnan(a), dt(-0.0), a)):  # with NaNs, and without
            out = np.empty((m, n), dt)
            nan = f(np.ascontiguousarray(x[0]), np.ascontiguousarray(b[0]), out)
            want = mm._float_matmul(x, b)[0]
            assert nan == bool(np.isnan(want).any())
            if not nan:
                np.testing.assert_array_equal(out.view(f"u{out.itemsize}"),
                                              want.view(f"u{want.itemsize}"))


def test_compiled_small_product_loads_when_worth_it(monkeypatch) -> None:
    """The compiled product is asked for only after SWITCH_CALLS small products through
    numpy, or at once where numba is already imported; within ``numpy_only`` never."""
    import sys

    from shlo.ops import _half

    f = _compiled_sequential()
    monkeypatch.setattr(mm._SEQUENTIAL, "value", None)
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setattr(mm, "_cold_calls", mm.SWITCH_CALLS - 2)
    assert mm.compiled_sequential() is None and mm.compiled_sequential() is None
    assert mm._cold_calls == mm.SWITCH_CALLS and mm._SEQUENTIAL.value is None
    assert mm.compiled_sequential() is f
    with _half.numpy_only():
        assert mm.compiled_sequential() is None


@pytest.mark.parametrize("dims", ["[1] x [0]", "[0] x [0]", "[1] x [1]"])
def test_dot_general_in_a_loop_takes_the_compiled_product(dims) -> None:
    """dot_general of small static shapes (a matrix times a vector, transposed operands):
    the compiled product's bits are the numpy path's (``numpy_only``), and it is the one
    that ran."""
    import shlo
    from shlo.ops import _half

    f = _compiled_sequential()
    rng = np.random.default_rng(5)
    lhs = rng.standard_normal((16, 12)).astype(np.float32)
    lhs[2, 3], lhs[4, 0] = -0.0, np.inf
    rhs_shape = {"[1] x [0]": (12, 7), "[0] x [0]": (16, 7), "[1] x [1]": (7, 12)}[dims]
    rhs = rng.standard_normal(rhs_shape).astype(np.float32)
    out = {"[1] x [0]": "16x7", "[0] x [0]": "12x7", "[1] x [1]": "16x7"}[dims]
    text = f"""func.func @main(%a: tensor<16x12xf32>, %b: tensor<{rhs_shape[0]}x{rhs_shape[1]}xf32>) -> tensor<{out}xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = {dims} : (tensor<16x12xf32>, tensor<{rhs_shape[0]}x{rhs_shape[1]}xf32>) -> tensor<{out}xf32>
  return %0 : tensor<{out}xf32>
}}"""
    module = shlo.parse(text)
    with _half.numpy_only():
        want = np.asarray(shlo.run(module, lhs, rhs))
    calls = []

    def spy(a, b, o):
        calls.append(a.shape)
        return f(a, b, o)

    import unittest.mock

    with unittest.mock.patch.object(mm._SEQUENTIAL, "value", spy):
        got = np.asarray(shlo.run(module, lhs, rhs))
    assert calls
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
