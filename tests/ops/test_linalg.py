"""Tests of shlo/ops/linalg.py: dot_general, dot, convolution, dynamic_conv, cholesky,
triangular_solve, fft, batch_norm_*.

Ops are built by hand (shlo.ir) and compared with spec examples, hand-computed values and
obviously-correct numpy references (explicit loops over tiny shapes for convolution). When jax
is installed, random cases are also compared with XLA (skipped otherwise).
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import pytest

from shlo.attributes import (
    BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, EnumAttr, FloatAttr,
    IntegerAttr, StructAttr, TypeAttr,
)
from shlo.types import element_type, tensor

from harness import run_op, run_text

I64 = element_type("i64")
I1 = element_type("i1")


# --- helpers -----------------------------------------------------------------------------------


_DTYPE_NAMES = {
    np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16", np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(ml_dtypes.int4): "i4",
    np.dtype(ml_dtypes.uint4): "ui4", np.dtype(ml_dtypes.float8_e4m3fn): "f8E4M3FN",
    np.dtype(ml_dtypes.float8_e5m2): "f8E5M2", np.dtype(ml_dtypes.float8_e4m3): "f8E4M3",
    np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
}


def _type_name(dtype: np.dtype) -> str:
    return _DTYPE_NAMES[np.dtype(dtype)]


def i64s(*v: int) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(v))


def dot_dims(lb=(), rb=(), lc=(), rc=()) -> StructAttr:
    return StructAttr("stablehlo.dot", (
        ("lhs_batching_dimensions", tuple(lb)), ("rhs_batching_dimensions", tuple(rb)),
        ("lhs_contracting_dimensions", tuple(lc)), ("rhs_contracting_dimensions", tuple(rc))))


def dot_general(lhs, rhs, result: str, lb=(), rb=(), lc=(), rc=(), shape=None, **props):
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    if shape is None:
        free_l = [lhs.shape[d] for d in range(lhs.ndim) if d not in lb and d not in lc]
        free_r = [rhs.shape[d] for d in range(rhs.ndim) if d not in rb and d not in rc]
        shape = [lhs.shape[d] for d in lb] + free_l + free_r
    (out,) = run_op("stablehlo.dot_general", [lhs, rhs], results=[tensor(shape, result)],
                    dot_dimension_numbers=dot_dims(lb, rb, lc, rc), **props)
    return out


PRECISION = (EnumAttr("stablehlo", "precision", "DEFAULT"),) * 2


# --- dot_general -------------------------------------------------------------------------------


def test_dot_general_spec_example():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int32)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int32)
    out = dot_general(lhs, rhs, "i32", lb=[0], rb=[0], lc=[2], rc=[1],
                      precision_config=PRECISION)
    np.testing.assert_array_equal(out, lhs)


def test_dot_general_empty_dims_is_outer_product():
    lhs = np.array([[1, 2], [3, 4]], np.int64)
    rhs = np.array([[1, 0], [0, 1]], np.int64)
    out = dot_general(lhs, rhs, "i64")
    assert out.shape == (2, 2, 2, 2)
    np.testing.assert_array_equal(out, np.multiply.outer(lhs, rhs))


def test_dot_general_matrix_vector_and_scalar_results():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = np.array([1.0, -1.0, 2.0], np.float32)
    np.testing.assert_array_equal(dot_general(a, v, "f32", lc=[1], rc=[0]), [3.0, 9.0])
    s = dot_general(v, v, "f32", lc=[0], rc=[0])
    assert s.shape == () and s == 6.0


@pytest.mark.parametrize("seed", range(12))
def test_dot_general_random_dimension_numbers_against_einsum(seed):
    rng = np.random.default_rng(seed)
    nb, nc, nfl, nfr = rng.integers(0, 3, size=4)
    sizes = rng.integers(1, 4, size=nb + nc + nfl + nfr)
    letters = "abcdefghijkl"
    batch = list(range(nb))
    contract = list(range(nb, nb + nc))
    free_l = list(range(nb + nc, nb + nc + nfl))
    free_r = list(range(nb + nc + nfl, nb + nc + nfl + nfr))
    lhs_axes = list(rng.permutation(batch + contract + free_l))
    rhs_axes = list(rng.permutation(batch + contract + free_r))
    free_l.sort(key=lhs_axes.index)  # result dimensions keep their operand order
    free_r.sort(key=rhs_axes.index)
    lhs = rng.integers(-5, 6, size=[sizes[i] for i in lhs_axes]).astype(np.int32)
    rhs = rng.integers(-5, 6, size=[sizes[i] for i in rhs_axes]).astype(np.int32)
    spec = (''.join(letters[i] for i in lhs_axes) + "," + ''.join(letters[i] for i in rhs_axes)
            + "->" + ''.join(letters[i] for i in batch + free_l + free_r))
    expected = np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64))
    lb = [lhs_axes.index(i) for i in batch]
    rb = [rhs_axes.index(i) for i in batch]
    lc = [lhs_axes.index(i) for i in contract]
    rc = [rhs_axes.index(i) for i in contract]
    out = dot_general(lhs, rhs, "i32", lb=lb, rb=rb, lc=lc, rc=rc)
    np.testing.assert_array_equal(out, expected)
    outf = dot_general(lhs.astype(np.float32), rhs.astype(np.float32), "f32", lb=lb, rb=rb,
                       lc=lc, rc=rc)
    np.testing.assert_array_equal(outf, expected.astype(np.float32))


def test_dot_general_i8_accumulates_into_i32():
    lhs = np.full((2, 300), 127, np.int8)
    rhs = np.full((300, 2), -128, np.int8)
    out = dot_general(lhs, rhs, "i32", lc=[1], rc=[0])
    np.testing.assert_array_equal(out, np.full((2, 2), 127 * -128 * 300))


def test_dot_general_integer_results_wrap():
    lhs = np.array([100, 100], np.int8)
    out = dot_general(lhs, lhs, "i8", lc=[0], rc=[0])
    assert out == np.int8(np.int64(20000).astype(np.int8))  # 20000 mod 256, signed
    big = np.array([2**62, 2**62, 3], np.int64)
    out = dot_general(big, np.array([2, 2, 5], np.int64), "i64", lc=[0], rc=[0])
    assert int(out) == ((2**62 * 4 + 15 + 2**63) % 2**64) - 2**63
    u = np.array([2**63, 1], np.uint64)
    out = dot_general(u, np.array([3, 7], np.uint64), "ui64", lc=[0], rc=[0])
    assert int(out) == (2**63 * 3 + 7) % 2**64


def test_dot_general_int4_and_uint4():
    lhs = np.array([[7, -8], [3, 2]], ml_dtypes.int4)
    rhs = np.array([[1, 1], [1, -1]], ml_dtypes.int4)
    out = dot_general(lhs, rhs, "i4", lc=[1], rc=[0])
    np.testing.assert_array_equal(out.astype(np.int64), [[-1, -1], [5, 1]])  # 7-8, 7+8 wraps
    u = np.array([15, 15], ml_dtypes.uint4)
    assert int(dot_general(u, u, "ui4", lc=[0], rc=[0])) == (225 * 2) % 16
    wide = dot_general(u, u, "i32", lc=[0], rc=[0])
    assert int(wide) == 450


def test_dot_general_bool_is_or_of_and():
    lhs = np.array([[True, False], [False, False]])
    rhs = np.array([[True, True], [True, False]])
    out = dot_general(lhs, rhs, "i1", lc=[1], rc=[0])
    np.testing.assert_array_equal(out, [[True, True], [False, False]])


def test_dot_general_narrow_floats_round_once():
    # sum of 0..7 squared = 140, rounded to f8E4M3 (128 + 16k grid) = 144
    x = np.arange(8, dtype=np.float32).astype(ml_dtypes.float8_e4m3)
    out = dot_general(x, x, "f8E4M3", lc=[0], rc=[0])
    assert out.dtype == ml_dtypes.float8_e4m3 and float(out) == 144.0
    # bf16 x bf16 -> f32: products exact, no bf16 rounding of the sum (1 + 2^-10 survives)
    a = np.array([1.0, 2.0**-10], ml_dtypes.bfloat16)
    one = np.array([1.0, 1.0], ml_dtypes.bfloat16)
    assert float(dot_general(a, one, "f32", lc=[0], rc=[0])) == 1.0 + 2.0**-10
    # bf16 result: one rounding of the exact sum 1 + 2^-8 + 2^-8 = 1 + 2^-7 (representable;
    # summing in bf16 would lose each 2^-8 to ties-to-even)
    b = np.array([1.0, 2.0**-8, 2.0**-8], ml_dtypes.bfloat16)
    out = dot_general(b, np.ones(3, ml_dtypes.bfloat16), "bf16", lc=[0], rc=[0])
    assert float(out) == 1.0 + 2.0**-7
    h = np.array([1.0, 2.0, 3.0], np.float16)
    assert dot_general(h, h, "f16", lc=[0], rc=[0]) == np.float16(14.0)


def test_dot_general_f32_operands_f64_result():
    lhs = np.array([0.1, 0.2], np.float32)
    out = dot_general(lhs, np.ones(2, np.float32), "f64", lc=[0], rc=[0])
    assert out.dtype == np.float64
    assert out == np.float64(np.float32(0.1)) + np.float64(np.float32(0.2))


def test_dot_general_complex():
    lhs = np.array([[1 + 2j, 3 - 1j]], np.complex64)
    rhs = np.array([[2 - 1j], [1j]], np.complex64)
    out = dot_general(lhs, rhs, "complex<f32>", lc=[1], rc=[0])
    np.testing.assert_allclose(out, lhs @ rhs)
    out = dot_general(lhs.astype(np.complex128), rhs.astype(np.complex128), "complex<f64>",
                      lc=[1], rc=[0])
    assert out.dtype == np.complex128


def _algorithm(lhs: str, rhs: str, acc: str, components: int = 1) -> StructAttr:
    return StructAttr("stablehlo.dot_algorithm", (
        ("lhs_precision_type", TypeAttr(element_type(lhs))),
        ("rhs_precision_type", TypeAttr(element_type(rhs))),
        ("accumulation_type", TypeAttr(element_type(acc))),
        ("lhs_component_count", components), ("rhs_component_count", components),
        ("num_primitive_operations", 1 if components == 1 else 6),
        ("allow_imprecise_accumulation", False)))


def test_dot_general_algorithm_rounds_operands():
    x = np.array([1.0 + 2.0**-12, 1.0 + 2.0**-16], np.float32)
    one = np.ones(2, np.float32)
    plain = dot_general(x, one, "f32", lc=[0], rc=[0])
    assert plain == np.float32(2.0 + 2.0**-12 + 2.0**-16)
    tf32 = dot_general(x, one, "f32", lc=[0], rc=[0], algorithm=_algorithm("tf32", "tf32", "f32"))
    assert tf32 == 2.0  # both rounded to 10 mantissa bits
    bf16 = dot_general(x, one, "f32", lc=[0], rc=[0], algorithm=_algorithm("bf16", "bf16", "f32"))
    assert bf16 == 2.0
    # bf16_6x-style emulation of f32 (component counts > 1): computed at full precision
    x6 = dot_general(x, one, "f32", lc=[0], rc=[0],
                     algorithm=_algorithm("bf16", "bf16", "f32", components=3))
    assert x6 == plain
    # f64 accumulation of f32 operands: exact sum, rounded once
    y = np.array([1.0, 2.0**-30, -1.0], np.float32)
    f64 = dot_general(y, np.ones(3, np.float32), "f32", lc=[0], rc=[0],
                      algorithm=_algorithm("f32", "f32", "f64"))
    assert f64 == np.float32(2.0**-30)


def test_dot_general_algorithm_ignored_for_integers():
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
    rhs = np.array([[[1, 0], [0, 1]]] * 2, np.int64)
    out = dot_general(lhs, rhs, "i64", lb=[0], rb=[0], lc=[2], rc=[1],
                      algorithm=_algorithm("tf32", "tf32", "f32"))
    np.testing.assert_array_equal(out, lhs)


def test_dot_general_zero_sized_contraction_gives_zeros():
    out = dot_general(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), "f32",
                      lc=[1], rc=[0])
    np.testing.assert_array_equal(out, np.zeros((2, 3)))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((2, 3), (3,)), ((3,), (3,)), ((3,), (3, 2))])
def test_legacy_dot(shapes):
    rng = np.random.default_rng(0)
    lhs = rng.integers(-3, 4, size=shapes[0]).astype(np.int32)
    rhs = rng.integers(-3, 4, size=shapes[1]).astype(np.int32)
    expected = np.dot(lhs, rhs)
    (out,) = run_op("stablehlo.dot", [lhs, rhs], results=[tensor(np.shape(expected), "i32")],
                    precision_config=PRECISION)
    np.testing.assert_array_equal(out, expected)


# --- convolution -------------------------------------------------------------------------------


def conv_reference(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, reversal,
                   feature_group_count=1, batch_group_count=1):
    """The spec's convolution on canonical layouts, element by element (tiny shapes only).

    lhs (N, S..., C), rhs (K..., I, O) -> (N / batch_group_count, W..., O), in int64/float64/
    complex128. A padded-input position p of spatial dim d holds lhs[(p - lo) / lhs_dilation]
    when that is an integer in range, else 0.
    """
    ns = lhs.ndim - 2
    n, c, o = lhs.shape[0], lhs.shape[-1], rhs.shape[-1]
    kernel = rhs.shape[:ns]
    windows = []
    for d in range(ns):
        size = lhs.shape[1 + d]
        dilated = 0 if size == 0 else (size - 1) * lhs_dilation[d] + 1
        padded = padding[d][0] + dilated + padding[d][1]
        dw = 0 if kernel[d] == 0 else (kernel[d] - 1) * rhs_dilation[d] + 1
        windows.append(0 if padded <= 0 or dw > padded else (padded - dw) // strides[d] + 1)
    nb = n // batch_group_count
    ob = o // batch_group_count
    og = o // feature_group_count
    cg = c // feature_group_count
    acc = np.result_type(lhs.dtype, np.int64) if lhs.dtype.kind in "iub" else np.complex128
    out = np.zeros([nb, *windows, o], acc)
    for b, w, f in itertools.product(range(nb), itertools.product(*map(range, windows)),
                                     range(o)):
        batch = (f // ob) * nb + b
        total = 0
        for k in itertools.product(*map(range, kernel)):
            kk = [kernel[d] - 1 - k[d] if reversal[d] else k[d] for d in range(ns)]
            pos = [w[d] * strides[d] + kk[d] * rhs_dilation[d] - padding[d][0]
                   for d in range(ns)]
            if any(p < 0 or p % lhs_dilation[d] for d, p in enumerate(pos)):
                continue
            idx = [p // lhs_dilation[d] for d, p in enumerate(pos)]
            if any(i >= lhs.shape[1 + d] for d, i in enumerate(idx)):
                continue
            for ci in range(rhs.shape[ns]):
                channel = (f // og) * cg + ci
                total += complex(lhs[(batch, *idx, channel)]) * complex(rhs[(*k, ci, f)]) \
                    if acc == np.complex128 else int(lhs[(batch, *idx, channel)]) * int(
                        rhs[(*k, ci, f)])
        out[(b, *w, f)] = total
    return out


def conv_dn(lhs_layout, rhs_layout, out_layout) -> ConvDimensionNumbers:
    """Dimension numbers from layouts: lhs (b, f, s...), rhs (i, o, s...), out (b, f, s...)
    give the position of each canonical dimension in the op's operand/result."""
    return ConvDimensionNumbers(
        input_batch_dimension=lhs_layout[0], input_feature_dimension=lhs_layout[1],
        input_spatial_dimensions=tuple(lhs_layout[2:]),
        kernel_input_feature_dimension=rhs_layout[0],
        kernel_output_feature_dimension=rhs_layout[1],
        kernel_spatial_dimensions=tuple(rhs_layout[2:]),
        output_batch_dimension=out_layout[0], output_feature_dimension=out_layout[1],
        output_spatial_dimensions=tuple(out_layout[2:]))


def _to_layout(canonical: np.ndarray, layout: Sequence[int], order: Sequence[int]) -> np.ndarray:
    """Place canonical axes (given in ``order`` meaning) at positions ``layout``."""
    perm = [0] * canonical.ndim
    for canon_axis, pos in zip(order, layout):
        perm[pos] = canon_axis
    return canonical.transpose(perm)


def run_conv(lhs_c, rhs_c, result: str, *, strides=None, padding=None, lhs_dilation=None,
             rhs_dilation=None, reversal=None, fgc=1, bgc=1, layouts=None, dynamic=False):
    """Run convolution on canonical-layout arrays placed in random (given) layouts; return the
    result moved back to the canonical (N, S..., O) layout."""
    ns = lhs_c.ndim - 2
    if layouts is None:
        layouts = (list(range(ns + 2)),) * 3
    lhs_layout, rhs_layout, out_layout = layouts
    # canonical axis order: lhs (N, S..., C) -> meaning (b, s..., f); we describe layouts as
    # positions of (b, f, s...) for lhs/out and (i, o, s...) for rhs.
    lhs = _to_layout(lhs_c, lhs_layout, [0, ns + 1] + list(range(1, ns + 1)))
    rhs = _to_layout(rhs_c, rhs_layout, [ns, ns + 1] + list(range(ns)))
    props: dict[str, Any] = {
        "dimension_numbers": conv_dn(lhs_layout, rhs_layout, out_layout),
        "feature_group_count": IntegerAttr(fgc), "batch_group_count": IntegerAttr(bgc),
        "precision_config": PRECISION,
    }
    if strides is not None:
        props["window_strides"] = i64s(*strides)
    if lhs_dilation is not None:
        props["lhs_dilation"] = i64s(*lhs_dilation)
    if rhs_dilation is not None:
        props["rhs_dilation"] = i64s(*rhs_dilation)
    if reversal is not None:
        props["window_reversal"] = DenseArrayAttr(I1, tuple(bool(r) for r in reversal))
    pad_array = np.array(padding if padding is not None else [(0, 0)] * ns,
                         np.int64).reshape(ns, 2)
    expected = conv_reference(lhs_c, rhs_c, strides or [1] * ns, pad_array.tolist(),
                              lhs_dilation or [1] * ns, rhs_dilation or [1] * ns,
                              reversal or [0] * ns, fgc, bgc)
    canon_out_shape = expected.shape
    out_shape = [0] * (ns + 2)
    for canon_axis, pos in zip([0, ns + 1] + list(range(1, ns + 1)), out_layout):
        out_shape[pos] = canon_out_shape[canon_axis]
    if dynamic:
        (out,) = run_op("stablehlo.dynamic_conv", [lhs, rhs, pad_array],
                        results=[tensor(out_shape, result)], **props)
    else:
        if padding is not None:
            props["padding"] = DenseElementsAttr(tensor((ns, 2), "i64"), pad_array)
        (out,) = run_op("stablehlo.convolution", [lhs, rhs], results=[tensor(out_shape, result)],
                        **props)
    perm = [out_layout[0]] + list(out_layout[2:]) + [out_layout[1]]
    return np.asarray(out).transpose(perm), expected


SPEC_LHS = np.array([[1, 2, 5, 6], [3, 4, 7, 8], [10, 11, 14, 15], [12, 13, 16, 17]],
                    np.int64).reshape(1, 4, 4, 1)


def test_convolution_spec_example():
    out, expected = run_conv(SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), "i64", strides=[4, 4],
                             padding=[(0, 0), (0, 0)], lhs_dilation=[2, 2], rhs_dilation=[1, 1],
                             reversal=[0, 0])
    np.testing.assert_array_equal(out.reshape(2, 2), [[10, 26], [46, 62]])
    np.testing.assert_array_equal(out, expected)


def test_convolution_i8_to_i32_and_padding():
    out, _ = run_conv(SPEC_LHS.astype(np.int8), np.full((3, 3, 1, 1), 10, np.int8), "i32",
                      strides=[4, 4], lhs_dilation=[2, 2])
    np.testing.assert_array_equal(out.reshape(2, 2), [[100, 260], [460, 620]])
    out, expected = run_conv(SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), "i64", strides=[4, 4],
                             padding=[(1, 1), (1, 1)], lhs_dilation=[2, 2])
    np.testing.assert_array_equal(out, expected)
    assert out.shape == (1, 2, 2, 1)


def test_dynamic_conv_takes_padding_at_run_time():
    out, expected = run_conv(SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), "i64", strides=[4, 4],
                             padding=[(1, 1), (1, 1)], lhs_dilation=[2, 2], dynamic=True)
    np.testing.assert_array_equal(out.reshape(2, 2), [[1, 5], [10, 14]])
    np.testing.assert_array_equal(out, expected)


def _random_conv_case(rng: np.random.Generator) -> dict[str, Any]:
    ns = int(rng.integers(1, 3))
    fgc = bgc = 1
    if rng.random() < 0.3:
        fgc = int(rng.integers(2, 4))
    elif rng.random() < 0.3:
        bgc = int(rng.integers(2, 4))
    n = int(rng.integers(1, 3)) * bgc
    cg = int(rng.integers(1, 3))
    c = cg * fgc
    o = int(rng.integers(1, 3)) * fgc * bgc
    spatial = [int(v) for v in rng.integers(1, 6, size=ns)]
    kernel = [int(v) for v in rng.integers(1, 4, size=ns)]
    case = dict(
        lhs=rng.integers(-4, 5, size=[n, *spatial, c]).astype(np.int64),
        rhs=rng.integers(-4, 5, size=[*kernel, cg, o]).astype(np.int64),
        strides=[int(v) for v in rng.integers(1, 3, size=ns)],
        padding=[(int(a), int(b)) for a, b in rng.integers(-1, 3, size=(ns, 2))],
        lhs_dilation=[int(v) for v in rng.integers(1, 3, size=ns)],
        rhs_dilation=[int(v) for v in rng.integers(1, 3, size=ns)],
        reversal=[int(v) for v in rng.integers(0, 2, size=ns)],
        fgc=fgc, bgc=bgc,
        layouts=tuple([int(v) for v in rng.permutation(ns + 2)] for _ in range(3)),
    )
    return case


@pytest.mark.parametrize("seed", range(40))
def test_convolution_random_against_reference(seed):
    case = _random_conv_case(np.random.default_rng(seed))
    lhs, rhs = case.pop("lhs"), case.pop("rhs")
    out, expected = run_conv(lhs, rhs, "i64", **case)
    np.testing.assert_array_equal(out, expected)
    # the same in f32 and complex (float/complex paths of the matmul)
    outf, _ = run_conv(lhs.astype(np.float32), rhs.astype(np.float32), "f32", **case)
    np.testing.assert_array_equal(outf, expected.astype(np.float32))
    outc, _ = run_conv((lhs * (1 - 1j)).astype(np.complex64), rhs.astype(np.complex64),
                       "complex<f32>", **case)
    np.testing.assert_allclose(outc, expected * (1 - 1j))


def test_convolution_empty_output_and_cropping_to_nothing():
    lhs = np.ones((1, 2, 1), np.float32)
    rhs = np.ones((3, 1, 1), np.float32)
    out, expected = run_conv(lhs, rhs, "f32")  # window larger than input: 0 windows
    assert out.shape == (1, 0, 1) and expected.shape == (1, 0, 1)
    out, expected = run_conv(lhs, np.ones((1, 1, 1), np.float32), "f32", padding=[(-2, -1)])
    assert out.shape == (1, 0, 1)


def test_convolution_bf16_and_bool():
    rng = np.random.default_rng(3)
    lhs = rng.integers(-3, 4, size=(1, 5, 5, 2))
    rhs = rng.integers(-3, 4, size=(2, 2, 2, 3))
    out, expected = run_conv(lhs.astype(ml_dtypes.bfloat16), rhs.astype(ml_dtypes.bfloat16),
                             "bf16", strides=[2, 1])
    np.testing.assert_array_equal(out.astype(np.float32), expected.real.astype(np.float32))
    outb, expb = run_conv(lhs > 0, rhs > 0, "i1")
    np.testing.assert_array_equal(outb, expb != 0)


# --- cholesky ----------------------------------------------------------------------------------


def cholesky(a, lower=True, result=None):
    a = np.asarray(a)
    (out,) = run_op("stablehlo.cholesky", [a],
                    results=[tensor(a.shape, result or _type_name(a.dtype))],
                    lower=BoolAttr(lower))
    return out


def test_cholesky_spec_example():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]], np.float32)
    expected = np.array([[1, 0, 0], [2, 4, 0], [3, 5, 6]], np.float32)
    np.testing.assert_allclose(cholesky(a), expected, rtol=1e-6)
    np.testing.assert_allclose(cholesky(a, lower=False), expected.T, rtol=1e-6)


def test_cholesky_reads_only_its_triangle_and_zeroes_the_other():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]])
    garbage_upper = a.copy()
    garbage_upper[np.triu_indices(3, 1)] = [99.0, -7.0, 1e30]
    np.testing.assert_allclose(cholesky(garbage_upper), [[1, 0, 0], [2, 4, 0], [3, 5, 6]])
    garbage_lower = a.copy()
    garbage_lower[np.tril_indices(3, -1)] = [np.nan, 5.0, 3.0]
    np.testing.assert_allclose(cholesky(garbage_lower, lower=False),
                               [[1, 2, 3], [0, 4, 5], [0, 0, 6]])


def test_cholesky_batched_with_one_non_positive_definite_matrix():
    a = np.array([[[4.0, 2.0], [2.0, 5.0]], [[1.0, 5.0], [5.0, 1.0]], [[9.0, 0.0], [0.0, 1.0]]],
                 np.float32)
    out = cholesky(a)
    np.testing.assert_allclose(out[0], [[2, 0], [1, 2]])
    assert np.isnan(out[1]).all()
    np.testing.assert_allclose(out[2], [[3, 0], [0, 1]])


def test_cholesky_complex_hermitian_and_narrow_float():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    h = m @ m.conj().T + 3 * np.eye(3)
    low = cholesky(h.astype(np.complex128))
    np.testing.assert_allclose(low @ low.conj().T, h, atol=1e-12)
    up = cholesky(h.astype(np.complex64), lower=False)
    assert up.dtype == np.complex64
    np.testing.assert_allclose(up.conj().T @ up, h, atol=1e-4)
    out = cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], ml_dtypes.bfloat16))
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), [[2, 0], [1, 2]])


# --- triangular_solve --------------------------------------------------------------------------


def triangular_solve(a, b, left_side, lower, unit_diagonal, transpose_a):
    a, b = np.asarray(a), np.asarray(b)
    (out,) = run_op("stablehlo.triangular_solve", [a, b],
                    results=[tensor(b.shape, _type_name(b.dtype))],
                    left_side=BoolAttr(left_side), lower=BoolAttr(lower),
                    unit_diagonal=BoolAttr(unit_diagonal),
                    transpose_a=EnumAttr("stablehlo", "transpose", transpose_a))
    return out


def test_triangular_solve_spec_example():
    a = np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]], np.float32)
    b = np.array([[2.0, 0.0, 0.0], [4.0, 8.0, 0.0], [6.0, 10.0, 12.0]], np.float32)
    out = triangular_solve(a, b, True, True, False, "NO_TRANSPOSE")
    np.testing.assert_allclose(out, 2 * np.eye(3), atol=1e-6)


@pytest.mark.parametrize("left_side,lower,unit_diagonal,transpose_a", list(itertools.product(
    [True, False], [True, False], [True, False], ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])))
def test_triangular_solve_all_modes(left_side, lower, unit_diagonal, transpose_a):
    rng = np.random.default_rng(7)
    m, n = 4, 3
    a = rng.normal(size=(2, m, m)) + 1j * rng.normal(size=(2, m, m))
    a += 4 * np.eye(m)  # well conditioned
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        tri = tri - np.einsum("...ii->...i", tri)[..., None] * np.eye(m) + np.eye(m)
    op_a = {"NO_TRANSPOSE": tri, "TRANSPOSE": np.swapaxes(tri, -1, -2),
            "ADJOINT": np.swapaxes(tri, -1, -2).conj()}[transpose_a]
    b = rng.normal(size=(2, m, n) if left_side else (2, n, m)) + 0j
    noisy = a.copy()  # the other triangle and (with unit_diagonal) the diagonal are not read
    noisy[..., np.triu_indices(m, 1)[0], np.triu_indices(m, 1)[1]] += 0 if not lower else 50
    noisy[..., np.tril_indices(m, -1)[0], np.tril_indices(m, -1)[1]] += 0 if lower else 50
    x = triangular_solve(noisy, b, left_side, lower, unit_diagonal, transpose_a)
    residual = op_a @ x - b if left_side else x @ op_a - b
    np.testing.assert_allclose(residual, 0, atol=1e-10)
    xr = triangular_solve(noisy.real.astype(np.float32), b.real.astype(np.float32), left_side,
                          lower, unit_diagonal, transpose_a)
    assert xr.dtype == np.float32
    expected = np.linalg.solve(
        _op_real(a.real, lower, unit_diagonal, transpose_a), b.real) if left_side else \
        np.swapaxes(np.linalg.solve(np.swapaxes(
            _op_real(a.real, lower, unit_diagonal, transpose_a), -1, -2),
            np.swapaxes(b.real, -1, -2)), -1, -2)
    np.testing.assert_allclose(xr, expected, rtol=1e-4, atol=1e-5)


def _op_real(a, lower, unit_diagonal, transpose_a):
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        tri = tri - np.einsum("...ii->...i", tri)[..., None] * np.eye(a.shape[-1]) + np.eye(
            a.shape[-1])
    return tri if transpose_a == "NO_TRANSPOSE" else np.swapaxes(tri, -1, -2)


def test_triangular_solve_complex_example():
    a = np.array([[1 + 1j, 0, 0], [2 - 2j, 3 + 4j, 0], [4 - 3j, 5 + 5j, 6 - 8j]], np.complex64)
    b = np.array([[7 - 2j], [8 + 4j], [9 - 5j]], np.complex64)
    out = triangular_solve(a, b, True, True, False, "NO_TRANSPOSE")
    np.testing.assert_allclose(out, [[2.5 - 4.5j], [4.32 + 0.24j], [-0.29 - 0.77j]], atol=1e-5)
    adj = triangular_solve(a, b, True, True, False, "ADJOINT")
    np.testing.assert_allclose(adj, [[7.18 + 2.68j], [-0.08 + 3.16j], [0.14 - 1.02j]], atol=1e-5)


def test_triangular_solve_zero_diagonal_gives_non_finite():
    a = np.array([[0.0, 0.0], [1.0, 1.0]], np.float32)
    out = triangular_solve(a, np.array([[1.0], [1.0]], np.float32), True, True, False,
                           "NO_TRANSPOSE")
    assert not np.isfinite(out).all()


# --- fft ---------------------------------------------------------------------------------------


def fft(x, fft_type, fft_length, result_shape, result):
    x = np.asarray(x)
    (out,) = run_op("stablehlo.fft", [x], results=[tensor(result_shape, result)],
                    fft_type=EnumAttr("stablehlo", "fft_type", fft_type),
                    fft_length=i64s(*fft_length))
    return out


def test_fft_spec_example():
    x = np.array([1.0 + 0j, 0, 0, 0, 0, 0, 0, 0], np.complex64)
    out = fft(x, "FFT", [8], [8], "complex<f32>")
    np.testing.assert_array_equal(out, np.ones(8, np.complex64))


def test_fft_conformance_style_values():
    x = np.array([(1 + 2j), (3 - 4j)], np.complex128)
    np.testing.assert_allclose(fft(x, "FFT", [2], [2], "complex<f64>"), [4 - 2j, -2 + 6j])
    np.testing.assert_allclose(fft([4 - 2j, -2 + 6j], "IFFT", [2], [2], "complex<f64>"), x)
    r = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(fft(r, "RFFT", [4], [3], "complex<f64>"), [10, -2 + 2j, -2])
    np.testing.assert_allclose(fft(np.array([10, -2 + 2j, -2]), "IRFFT", [4], [4], "f64"), r)


@pytest.mark.parametrize("fft_type", ["FFT", "IFFT", "RFFT", "IRFFT"])
@pytest.mark.parametrize("lengths", [[8], [4, 6], [2, 3, 4]])
def test_fft_against_numpy(fft_type, lengths):
    rng = np.random.default_rng(len(lengths))
    batch = [3]
    if fft_type == "RFFT":
        x = rng.normal(size=batch + lengths).astype(np.float32)
        expected = np.fft.rfftn(x.astype(np.float64), s=lengths,
                                axes=range(-len(lengths), 0))
        out = fft(x, fft_type, lengths, expected.shape, "complex<f32>")
    elif fft_type == "IRFFT":
        shape = batch + lengths[:-1] + [lengths[-1] // 2 + 1]
        x = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)
        expected = np.fft.irfftn(x.astype(np.complex128), s=lengths,
                                 axes=range(-len(lengths), 0))
        out = fft(x, fft_type, lengths, expected.shape, "f32")
    else:
        shape = batch + lengths
        x = (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)
        f = np.fft.fftn if fft_type == "FFT" else np.fft.ifftn
        expected = f(x.astype(np.complex128), axes=range(-len(lengths), 0))
        out = fft(x, fft_type, lengths, expected.shape, "complex<f32>")
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


# --- batch_norm --------------------------------------------------------------------------------

BN_OPERAND = np.array([[[1.0, 2.0], [3.0, 4.0]], [[3.0, 4.0], [1.0, 2.0]]], np.float32)


def _bn_attrs(epsilon: float, feature_index: int) -> dict[str, Any]:
    return {"epsilon": FloatAttr(epsilon, element_type("f32")),
            "feature_index": IntegerAttr(feature_index)}


def test_batch_norm_inference_spec_example():
    ones = np.ones(2, np.float32)
    t = tensor((2, 2, 2), "f32")
    (out,) = run_op("stablehlo.batch_norm_inference",
                    [BN_OPERAND, ones, ones, np.array([2.0, 3.0], np.float32), ones], results=[t],
                    **_bn_attrs(0.0, 2))
    np.testing.assert_allclose(out, [[[0, 0], [2, 2]], [[2, 2], [0, 0]]])


def test_batch_norm_training_spec_example():
    ones = np.ones(2, np.float32)
    v = tensor((2,), "f32")
    out, mean, var = run_op("stablehlo.batch_norm_training", [BN_OPERAND, ones, ones],
                            results=[tensor((2, 2, 2), "f32"), v, v], **_bn_attrs(0.0, 2))
    np.testing.assert_allclose(out, [[[0, 0], [2, 2]], [[2, 2], [0, 0]]])
    np.testing.assert_allclose(mean, [2, 3])
    np.testing.assert_allclose(var, [1, 1])


def test_batch_norm_grad_spec_example():
    ones = np.ones(2, np.float32)
    v = tensor((2,), "f32")
    g_operand, g_scale, g_offset = run_op(
        "stablehlo.batch_norm_grad",
        [BN_OPERAND, ones, np.array([2.0, 3.0], np.float32), ones,
         np.full((2, 2, 2), 0.1, np.float32)],
        results=[tensor((2, 2, 2), "f32"), v, v], **_bn_attrs(0.0, 2))
    np.testing.assert_allclose(g_operand, np.zeros((2, 2, 2)), atol=1e-7)
    np.testing.assert_allclose(g_scale, [0, 0], atol=1e-7)
    np.testing.assert_allclose(g_offset, [0.4, 0.4], rtol=1e-6)


@pytest.mark.parametrize("feature_index", [0, 1, 3])
def test_batch_norm_random_against_textbook_formulas(feature_index):
    rng = np.random.default_rng(feature_index)
    x = rng.normal(size=(3, 4, 2, 5)).astype(np.float64)
    c = x.shape[feature_index]
    scale, offset = rng.normal(size=c), rng.normal(size=c)
    dy = rng.normal(size=x.shape)
    eps = 0.01
    axes = tuple(d for d in range(4) if d != feature_index)
    shape = [1] * 4
    shape[feature_index] = c
    mean = x.mean(axis=axes)
    var = x.var(axis=axes)
    xhat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + np.float32(eps))
    vt, t = tensor((c,), "f64"), tensor(x.shape, "f64")
    out, m, v = run_op("stablehlo.batch_norm_training", [x, scale, offset], results=[t, vt, vt],
                       **_bn_attrs(eps, feature_index))
    np.testing.assert_allclose(m, mean, rtol=1e-12)
    np.testing.assert_allclose(v, var, rtol=1e-12)
    np.testing.assert_allclose(out, xhat * scale.reshape(shape) + offset.reshape(shape),
                               rtol=1e-10, atol=1e-12)
    (inf,) = run_op("stablehlo.batch_norm_inference", [x, scale, offset, mean, var], results=[t],
                    **_bn_attrs(eps, feature_index))
    np.testing.assert_allclose(inf, out, rtol=1e-12, atol=1e-12)
    # Gradient of batch_norm_training (mean/var of the batch) in its textbook form:
    # dx = scale / std * (dy - mean(dy) - xhat * mean(dy * xhat)).
    gx, gs, go = run_op("stablehlo.batch_norm_grad", [x, scale, mean, var, dy], results=[t, vt, vt],
                        **_bn_attrs(eps, feature_index))
    std = np.sqrt(var + np.float32(eps)).reshape(shape)
    dx = scale.reshape(shape) / std * (dy - dy.mean(axis=axes, keepdims=True)
                                       - xhat * (dy * xhat).mean(axis=axes, keepdims=True))
    np.testing.assert_allclose(gx, dx, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gs, (dy * xhat).sum(axis=axes), rtol=1e-10)
    np.testing.assert_allclose(go, dy.sum(axis=axes), rtol=1e-12)


def test_batch_norm_bf16_keeps_dtype():
    x = BN_OPERAND.astype(ml_dtypes.bfloat16)
    ones = np.ones(2, ml_dtypes.bfloat16)
    v = tensor((2,), "bf16")
    out, mean, var = run_op("stablehlo.batch_norm_training", [x, ones, ones],
                            results=[tensor((2, 2, 2), "bf16"), v, v], **_bn_attrs(0.0, 2))
    np.testing.assert_array_equal(out.astype(np.float32), [[[0, 0], [2, 2]], [[2, 2], [0, 0]]])
    np.testing.assert_array_equal(mean.astype(np.float32), [2, 3])


# --- differential tests against XLA (jax) ------------------------------------------------------


@pytest.fixture(scope="module")
def lax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax.lax


@pytest.mark.parametrize("seed", range(10))
def test_dot_general_against_xla(lax, seed):
    rng = np.random.default_rng(100 + seed)
    nb, nc, nfl, nfr = (int(v) for v in rng.integers(0, 3, size=4))
    sizes = [int(v) for v in rng.integers(1, 5, size=nb + nc + nfl + nfr)]
    batch = list(range(nb))
    contract = list(range(nb, nb + nc))
    free_l = list(range(nb + nc, nb + nc + nfl))
    free_r = list(range(nb + nc + nfl, nb + nc + nfl + nfr))
    lhs_axes = [int(v) for v in rng.permutation(batch + contract + free_l)]
    rhs_axes = [int(v) for v in rng.permutation(batch + contract + free_r)]
    dims = (([lhs_axes.index(i) for i in contract], [rhs_axes.index(i) for i in contract]),
            ([lhs_axes.index(i) for i in batch], [rhs_axes.index(i) for i in batch]))
    for dtype, result, preferred in [(np.float64, "f64", None), (np.int8, "i32", np.int32),
                                     (np.int32, "i32", None)]:
        lhs = rng.integers(-100, 100, size=[sizes[i] for i in lhs_axes]).astype(dtype)
        rhs = rng.integers(-100, 100, size=[sizes[i] for i in rhs_axes]).astype(dtype)
        if dtype == np.float64:
            lhs, rhs = lhs / 7, rhs / 3
        expected = np.asarray(lax.dot_general(lhs, rhs, dims, preferred_element_type=preferred))
        out = dot_general(lhs, rhs, result, lb=dims[1][0], rb=dims[1][1], lc=dims[0][0],
                          rc=dims[0][1])
        np.testing.assert_allclose(out, expected, rtol=1e-13)


@pytest.mark.parametrize("seed", range(25))
def test_convolution_against_xla(lax, seed):
    rng = np.random.default_rng(200 + seed)
    case = _random_conv_case(rng)
    if any(case["reversal"]):
        case["reversal"] = None  # window reversal is not exposed by jax.lax
    lhs, rhs = case.pop("lhs").astype(np.float64), case.pop("rhs").astype(np.float64)
    out, _ = run_conv(lhs, rhs, "f64", **case)
    ns = lhs.ndim - 2
    spatial = "".join("HWD"[i] for i in range(ns))
    expected = lax.conv_general_dilated(
        lhs, rhs, window_strides=case["strides"], padding=case["padding"],
        lhs_dilation=case["lhs_dilation"], rhs_dilation=case["rhs_dilation"],
        dimension_numbers=("N" + spatial + "C", spatial + "IO", "N" + spatial + "C"),
        feature_group_count=case["fgc"], batch_group_count=case["bgc"])
    np.testing.assert_allclose(out, np.asarray(expected), rtol=1e-12, atol=1e-12)


def test_triangular_solve_and_cholesky_against_xla(lax):
    rng = np.random.default_rng(5)
    m = rng.normal(size=(2, 4, 4))
    spd = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    np.testing.assert_allclose(cholesky(spd), np.asarray(lax.linalg.cholesky(spd)), rtol=1e-12)
    b = rng.normal(size=(2, 4, 3))
    a = np.tril(spd)
    for transpose_a in ["NO_TRANSPOSE", "TRANSPOSE"]:
        expected = lax.linalg.triangular_solve(a, b, left_side=True, lower=True,
                                               transpose_a=transpose_a == "TRANSPOSE")
        out = triangular_solve(a, b, True, True, False, transpose_a)
        np.testing.assert_allclose(out, np.asarray(expected), rtol=1e-12)


def test_fft_against_xla(lax):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 4, 6))
    expected = np.asarray(lax.fft(x, "RFFT", (4, 6)))
    np.testing.assert_allclose(fft(x, "RFFT", [4, 6], [2, 4, 4], "complex<f64>"), expected,
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name,result", [("i32", "i32"), ("ui32", "i64"), ("i64", "i64"),
                                         ("ui64", "ui64"), ("i16", "i64")])
def test_dot_general_wide_integers_are_exact_modulo_the_result_width(name, result):
    rng = np.random.default_rng(4)
    dtype = element_type(name).dtype
    info = np.iinfo(dtype)
    k = 200
    lhs = rng.integers(info.min, info.max, size=(2, k), dtype=dtype, endpoint=True)
    rhs = rng.integers(info.min, info.max, size=(k, 3), dtype=dtype, endpoint=True)
    out = dot_general(lhs, rhs, result, lc=[1], rc=[0])
    rinfo = np.iinfo(element_type(result).dtype)
    span = 1 << rinfo.bits
    for i, j in itertools.product(range(2), range(3)):
        exact = sum(int(x) * int(y) for x, y in zip(lhs[i], rhs[:, j]))
        assert int(out[i, j]) == (exact - rinfo.min) % span + rinfo.min


# --- programs in text form (need the parser) ---------------------------------------------------


def _parser_available() -> bool:
    try:
        import shlo

        shlo.parse("func.func @main() { func.return }")
    except Exception:  # the parser is missing or unfinished
        return False
    return True


needs_parser = pytest.mark.skipif(not _parser_available(), reason="shlo.syntax.parser missing")


@needs_parser
def test_text_spec_examples_generic_form():
    text = """
    func.func @main(%lhs: tensor<2x2x2xi64>, %rhs: tensor<2x2x2xi64>) -> tensor<2x2x2xi64> {
      %result = "stablehlo.dot_general"(%lhs, %rhs) {
        dot_dimension_numbers = #stablehlo.dot<
          lhs_batching_dimensions = [0],
          rhs_batching_dimensions = [0],
          lhs_contracting_dimensions = [2],
          rhs_contracting_dimensions = [1]
        >,
        precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
      } : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
      func.return %result : tensor<2x2x2xi64>
    }"""
    lhs = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int64)
    rhs = np.array([[[1, 0], [0, 1]], [[1, 0], [0, 1]]], np.int64)
    (out,) = run_text(text, lhs, rhs, verify=True)
    np.testing.assert_array_equal(out, lhs)

    text = """
    func.func @main(%lhs: tensor<1x4x4x1xi32>, %rhs: tensor<3x3x1x1xi32>) -> tensor<1x2x2x1xi32> {
      %result = "stablehlo.convolution"(%lhs, %rhs) {
        window_strides = array<i64: 4, 4>,
        padding = dense<0> : tensor<2x2xi64>,
        lhs_dilation = array<i64: 2, 2>,
        rhs_dilation = array<i64: 1, 1>,
        window_reversal = array<i1: false, false>,
        dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
        feature_group_count = 1 : i64,
        batch_group_count = 1 : i64,
        precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
      } : (tensor<1x4x4x1xi32>, tensor<3x3x1x1xi32>) -> tensor<1x2x2x1xi32>
      func.return %result : tensor<1x2x2x1xi32>
    }"""
    (out,) = run_text(text, SPEC_LHS.astype(np.int32), np.ones((3, 3, 1, 1), np.int32), verify=True)
    np.testing.assert_array_equal(out.reshape(2, 2), [[10, 26], [46, 62]])

    text = """
    func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>)
        -> (tensor<3x3xf32>, tensor<3x3xf32>) {
      %l = "stablehlo.cholesky"(%a) {lower = true}
        : (tensor<3x3xf32>) -> tensor<3x3xf32>
      %x = "stablehlo.triangular_solve"(%l, %b) {
        left_side = true, lower = true, unit_diagonal = false,
        transpose_a = #stablehlo<transpose NO_TRANSPOSE>
      } : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
      func.return %l, %x : tensor<3x3xf32>, tensor<3x3xf32>
    }"""
    a = np.array([[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]], np.float32)
    b = np.array([[2.0, 0.0, 0.0], [4.0, 8.0, 0.0], [6.0, 10.0, 12.0]], np.float32)
    low, x = run_text(text, a, b, verify=True)
    np.testing.assert_allclose(low, [[1, 0, 0], [2, 4, 0], [3, 5, 6]], rtol=1e-6)
    np.testing.assert_allclose(low @ x, b, rtol=1e-5, atol=1e-5)

    text = """
    func.func @main(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
      %result = "stablehlo.fft"(%x) {
        fft_type = #stablehlo<fft_type FFT>,
        fft_length = array<i64: 8>
      } : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
      func.return %result : tensor<8xcomplex<f32>>
    }"""
    (out,) = run_text(text, np.eye(1, 8, dtype=np.complex64)[0], verify=True)
    np.testing.assert_array_equal(out, np.ones(8, np.complex64))


@needs_parser
def test_text_batch_norm_spec_examples():
    operand_t = "tensor<2x2x2xf32>"
    text = f"""
    func.func @main(%operand: {operand_t}, %scale: tensor<2xf32>, %offset: tensor<2xf32>,
                    %mean: tensor<2xf32>, %variance: tensor<2xf32>, %grad: {operand_t})
        -> ({operand_t}, {operand_t}, tensor<2xf32>, tensor<2xf32>, {operand_t},
            tensor<2xf32>, tensor<2xf32>) {{
      %r = "stablehlo.batch_norm_inference"(%operand, %scale, %offset, %mean, %variance) {{
        epsilon = 0.0 : f32, feature_index = 2 : i64
      }} : ({operand_t}, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
          -> {operand_t}
      %o, %bm, %bv = "stablehlo.batch_norm_training"(%operand, %scale, %offset) {{
        epsilon = 0.0 : f32, feature_index = 2 : i64
      }} : ({operand_t}, tensor<2xf32>, tensor<2xf32>)
          -> ({operand_t}, tensor<2xf32>, tensor<2xf32>)
      %go, %gs, %gf = "stablehlo.batch_norm_grad"(%operand, %scale, %mean, %variance,
                                                  %grad) {{
        epsilon = 0.0 : f32, feature_index = 2 : i64
      }} : ({operand_t}, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, {operand_t})
          -> ({operand_t}, tensor<2xf32>, tensor<2xf32>)
      func.return %r, %o, %bm, %bv, %go, %gs, %gf : {operand_t}, {operand_t}, tensor<2xf32>,
          tensor<2xf32>, {operand_t}, tensor<2xf32>, tensor<2xf32>
    }}"""
    ones = np.ones(2, np.float32)
    r, o, bm, bv, go, gs, gf = run_text(text, BN_OPERAND, ones, ones,
                                        np.array([2.0, 3.0], np.float32), ones,
                                        np.full((2, 2, 2), 0.1, np.float32), verify=True)
    expected = [[[0, 0], [2, 2]], [[2, 2], [0, 0]]]
    np.testing.assert_allclose(r, expected)
    np.testing.assert_allclose(o, expected)
    np.testing.assert_allclose(bm, [2, 3])
    np.testing.assert_allclose(bv, [1, 1])
    np.testing.assert_allclose(go, np.zeros((2, 2, 2)), atol=1e-7)
    np.testing.assert_allclose(gs, [0, 0], atol=1e-7)
    np.testing.assert_allclose(gf, [0.4, 0.4], rtol=1e-6)


@needs_parser
def test_text_pretty_forms():
    text = """
    func.func @main(%lhs: tensor<2x3xi8>, %rhs: tensor<3x4xi8>, %x: tensor<1x4x4x1xi64>,
                    %w: tensor<3x3x1x1xi64>) -> (tensor<2x4xi32>, tensor<1x2x2x1xi64>,
                                                 tensor<2x4xi8>) {
      %0 = stablehlo.dot_general %lhs, %rhs, contracting_dims = [1] x [0],
             precision = [DEFAULT, DEFAULT] : (tensor<2x3xi8>, tensor<3x4xi8>) -> tensor<2x4xi32>
      %1 = stablehlo.convolution(%x, %w)
             dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
             window = {stride = [4, 4], pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2]}
             {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
             : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<1x2x2x1xi64>
      %2 = "stablehlo.dot"(%lhs, %rhs) : (tensor<2x3xi8>, tensor<3x4xi8>) -> tensor<2x4xi8>
      func.return %0, %1, %2 : tensor<2x4xi32>, tensor<1x2x2x1xi64>, tensor<2x4xi8>
    }"""
    lhs = np.array([[127, 127, 127], [-128, 1, 2]], np.int8)
    rhs = np.array([[127, 1, 0, -1], [127, 1, 0, 2], [127, 1, 1, 3]], np.int8)
    d, c, d8 = run_text(text, lhs, rhs, SPEC_LHS, np.ones((3, 3, 1, 1), np.int64), verify=True)
    exact = lhs.astype(np.int64) @ rhs.astype(np.int64)
    np.testing.assert_array_equal(d, exact)
    np.testing.assert_array_equal(d8, exact.astype(np.int8))
    np.testing.assert_array_equal(c.reshape(2, 2), [[1, 5], [10, 14]])


# --- end to end against XLA: the same StableHLO text through shlo and XLA ----------------------


@pytest.fixture(scope="module")
def xla_run():
    jax = pytest.importorskip("jax")
    if not _parser_available():
        pytest.skip("shlo.syntax.parser missing")
    jax.config.update("jax_enable_x64", True)
    from jax._src import xla_bridge
    from jax._src.lib import xla_client

    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]

    def run(text: str, *args: np.ndarray) -> list[np.ndarray]:
        exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                       xla_client.CompileOptions())
        outs = exe.execute([jax.device_put(np.asarray(a), dev) for a in args])
        return [np.asarray(o) for o in outs]

    return run


def _shape_str(shape: Sequence[int], elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


@pytest.mark.parametrize("seed", range(8))
def test_convolution_text_against_xla(xla_run, seed):
    rng = np.random.default_rng(300 + seed)
    case = _random_conv_case(rng)
    lhs_c, rhs_c = case["lhs"].astype(np.float32), case["rhs"].astype(np.float32)
    ns = lhs_c.ndim - 2
    lhs_layout, rhs_layout, out_layout = case["layouts"]
    lhs = _to_layout(lhs_c, lhs_layout, [0, ns + 1] + list(range(1, ns + 1)))
    rhs = _to_layout(rhs_c, rhs_layout, [ns, ns + 1] + list(range(ns)))
    expected_canon = conv_reference(lhs_c, rhs_c, case["strides"], case["padding"],
                                    case["lhs_dilation"], case["rhs_dilation"], case["reversal"],
                                    case["fgc"], case["bgc"])
    out_shape = [0] * (ns + 2)
    for canon_axis, pos in zip([0, ns + 1] + list(range(1, ns + 1)), out_layout):
        out_shape[pos] = expected_canon.shape[canon_axis]

    def layout_str(layout, names):
        chars = [""] * (ns + 2)
        for name, pos in zip(names, layout):
            chars[pos] = name
        return "[" + ", ".join(chars) + "]"

    sp = [str(i) for i in range(ns)]
    dims = (layout_str(lhs_layout, ["b", "f"] + sp) + "x" + layout_str(rhs_layout, ["i", "o"] + sp)
            + "->" + layout_str(out_layout, ["b", "f"] + sp))
    lt, rt, ot = (_shape_str(lhs.shape, "f32"), _shape_str(rhs.shape, "f32"),
                  _shape_str(out_shape, "f32"))
    pad = ", ".join(f"[{lo}, {hi}]" for lo, hi in case["padding"])
    rev = ", ".join("true" if r else "false" for r in case["reversal"])
    text = f"""
    func.func @main(%lhs: {lt}, %rhs: {rt}) -> {ot} {{
      %0 = stablehlo.convolution(%lhs, %rhs) dim_numbers = {dims},
        window = {{stride = {case["strides"]}, pad = [{pad}], lhs_dilate = {case["lhs_dilation"]},
                  rhs_dilate = {case["rhs_dilation"]}, reverse = [{rev}]}}
        {{batch_group_count = {case["bgc"]} : i64, feature_group_count = {case["fgc"]} : i64}}
        : ({lt}, {rt}) -> {ot}
      return %0 : {ot}
    }}"""
    (mine,) = run_text(text, lhs, rhs, verify=True)
    (xla,) = xla_run(text, lhs, rhs)
    np.testing.assert_array_equal(mine, xla)  # small integers: exact in f32 everywhere


@pytest.mark.parametrize("seed", range(6))
def test_dot_general_text_against_xla(xla_run, seed):
    rng = np.random.default_rng(400 + seed)
    nb, nc, nfl, nfr = (int(v) for v in rng.integers(0, 3, size=4))
    sizes = [int(v) for v in rng.integers(1, 5, size=nb + nc + nfl + nfr)]
    batch, contract = list(range(nb)), list(range(nb, nb + nc))
    free_l = list(range(nb + nc, nb + nc + nfl))
    free_r = list(range(nb + nc + nfl, nb + nc + nfl + nfr))
    lhs_axes = [int(v) for v in rng.permutation(batch + contract + free_l)]
    rhs_axes = [int(v) for v in rng.permutation(batch + contract + free_r)]
    free_l.sort(key=lhs_axes.index)
    free_r.sort(key=rhs_axes.index)
    out_shape = [sizes[i] for i in batch + free_l + free_r]
    lhs = rng.integers(-128, 128, size=[sizes[i] for i in lhs_axes]).astype(np.int8)
    rhs = rng.integers(-128, 128, size=[sizes[i] for i in rhs_axes]).astype(np.int8)
    lb = [lhs_axes.index(i) for i in batch]
    rb = [rhs_axes.index(i) for i in batch]
    lc = [lhs_axes.index(i) for i in contract]
    rc = [rhs_axes.index(i) for i in contract]
    lt, rt = _shape_str(lhs.shape, "i8"), _shape_str(rhs.shape, "i8")
    for result in ["i32", "i8"]:
        ot = _shape_str(out_shape, result)
        text = f"""
        func.func @main(%lhs: {lt}, %rhs: {rt}) -> {ot} {{
          %0 = stablehlo.dot_general %lhs, %rhs, batching_dims = {lb} x {rb},
                 contracting_dims = {lc} x {rc} : ({lt}, {rt}) -> {ot}
          return %0 : {ot}
        }}"""
        (mine,) = run_text(text, lhs, rhs, verify=True)
        (xla,) = xla_run(text, lhs, rhs)
        np.testing.assert_array_equal(mine, xla)


def test_small_float_contractions_sum_in_index_order():
    # (1e8 + 1) rounds to 1e8 in f32, then - 1e8 gives 0: the spec's reduction order (and the
    # upstream interpreter's and XLA's), not the exact 1.
    lhs = np.array([1e8, 1.0, -1e8], np.float32)
    assert dot_general(lhs, np.ones(3, np.float32), "f32", lc=[0], rc=[0]) == 0.0
    # complex: each product rounded (re = ar*br - ai*bi), then accumulated in order
    a = np.array([[1 + 1e-4j, 3 - 1j, -1 + 2j]], np.complex64)
    b = np.array([[1e4 + 2j], [2 + 3j], [-2 - 5j]], np.complex64)
    acc = np.complex64(0)
    for k in range(3):
        acc = np.complex64(acc + np.complex64(a[0, k] * b[k, 0]))
    out = dot_general(a, b, "complex<f32>", lc=[1], rc=[0])
    assert out[0, 0] == acc


@pytest.mark.parametrize("dtype,name", [(np.int64, "i64"), (np.float64, "f64"), (np.int32, "i32")])
def test_dot_general_rounds_once_to_a_narrow_result(dtype, name):
    # 2^31 + 2^23 + 1 is just above the midpoint of two bf16 neighbours: correctly rounded it is
    # 2^31 + 2^24; through float32 first (2^31 + 2^23, a tie) it would become 2^31.
    lhs = np.array([2**30, 2**23, 1], dtype)
    rhs = np.array([2, 1, 1], dtype)
    out = dot_general(lhs, rhs, "bf16", lc=[0], rc=[0])
    assert float(out) == 2.0**31 + 2.0**24
