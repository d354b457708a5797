"""dot_general, convolution, fft, triangular_solve, cholesky and batch_norm_* against the
upstream interpreter and XLA.

Contractions use small integers for every element type (every partial sum is exact, so the
summation order the spec leaves open does not matter and results must agree exactly), plus
random f32/f64/complex values compared within a tolerance. The upstream interpreter has no
cholesky or batch_norm_* (it aborts: "unsupported at the moment") and aborts on complex<f32>
fft; those run against XLA only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import Batch, Case, Tol, params, seed, xfail_params
from shlo.testing.programs import FunctionBuilder, Val
from shlo.types import element_type

CONTRACT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui4", "ui8", "ui16", "ui32", "ui64",
                  "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "bf16",
                  "f16", "f32", "f64", "complex<f32>", "complex<f64>"]


def _small(et: str, shape: tuple[int, ...], rng: np.random.Generator, hi: int = 2
           ) -> np.ndarray:
    t = element_type(et)
    if t.is_integer and t.width == 2:  # type: ignore[attr-defined]
        hi = 1
    lo = 0 if t.is_unsigned else -hi
    v = rng.integers(lo, hi + 1, shape)
    if t.is_complex:
        return (v + 1j * rng.integers(-hi, hi + 1, shape)).astype(t.dtype)
    return v.astype(t.dtype)


def _random(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    t = element_type(et)
    v = rng.standard_normal(shape)
    if t.is_complex:
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(t.dtype)


def _rel(et: str, f32: float = 1e-5, f64: float = 1e-12) -> Tol:
    return Tol("rel", f32 if et in ("f32", "complex<f32>") else f64)


# --- dot_general -----------------------------------------------------------------------------


def _dot(dims: str, shape: tuple[int, ...], res: str | None = None, lhs: int = 0, rhs: int = 1
         ) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        return fb.op1("dot_general", [ins[lhs], ins[rhs]], shape, res or ins[lhs].et,
                      f"dot_dimension_numbers = #stablehlo.dot<{dims}>")
    return build


MATMUL = "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]"
BATCHED = ("lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]")
TRANSPOSED = "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]"
WIDER = {"i8": "i32", "ui8": "ui32", "i16": "i64", "bf16": "f32", "f16": "f32", "f32": "f64",
         "f8E4M3FN": "f32", "f8E5M2": "bf16", "i4": "i8"}


def dot_batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("dot-" + et))
    types = [((3, 4), et), ((4, 2), et), ((2, 3, 4), et), ((2, 4, 2), et), ((4, 3), et)]
    args = [_small(et, s, rng) for s, _ in types]
    cases = [Case("matmul", _dot(MATMUL, (3, 2))),
             Case("batched", _dot(BATCHED, (2, 3, 2), lhs=2, rhs=3)),
             Case("transposed", _dot(TRANSPOSED, (3, 3), lhs=4, rhs=0))]
    if et in WIDER:
        cases.append(Case(f"matmul_to_{WIDER[et]}", _dot(MATMUL, (3, 2), WIDER[et])))
    if et in ("f32", "f64", "complex<f32>", "complex<f64>"):
        types += [((3, 8), et), ((8, 5), et)]
        args += [_random(et, (3, 8), rng), _random(et, (8, 5), rng)]
        cases.append(Case("matmul_random", _dot(MATMUL, (3, 5), lhs=5, rhs=6), _rel(et)))
    for c in cases:
        if et == "i2":
            c.skip["xla"] = "XLA has no dot of 2-bit integers ('unsupported operand type S2')"
        elif et == "i4" and c.label == "matmul_to_i8":
            c.skip["xla"] = ("XLA rejects an i4 x i4 -> i8 dot ('custom element sizes on "
                             "non-sub-byte types')")
    return Batch(f"dot-{et}", types, args, cases)


# --- convolution -----------------------------------------------------------------------------

CONV_TYPES = ["i8", "i32", "ui16", "f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64",
              "complex<f32>"]


def _conv(attrs: str, out: tuple[int, ...], lhs: int, rhs: int) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        return fb.op1("convolution", [ins[lhs], ins[rhs]], out, ins[lhs].et, attrs)
    return build


NHWC = "dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"
NCHW = "dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>"


def _conv_attrs(dims: str, strides: str = "1, 1", pad: str = "[0, 0], [0, 0]",
                lhs_dil: str = "1, 1", rhs_dil: str = "1, 1", groups: int = 1,
                batch_groups: int = 1) -> str:
    return (f"{dims}, window_strides = array<i64: {strides}>, "
            f"padding = dense<[{pad}]> : tensor<2x2xi64>, lhs_dilation = array<i64: {lhs_dil}>, "
            f"rhs_dilation = array<i64: {rhs_dil}>, feature_group_count = {groups} : i64, "
            f"batch_group_count = {batch_groups} : i64")


def conv_batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("conv-" + et))
    # input 1x5x6x2 (NHWC), kernel 3x2x2x3 (HWIO); grouped: 1x4x4x4, kernel 2x2x2x4, 2 groups;
    # NCHW with lhs dilation (transposed convolution): 2x2x3x3, kernel 2x2x2x2 (OIHW)
    types = [((1, 5, 6, 2), et), ((3, 2, 2, 3), et), ((1, 4, 4, 4), et), ((2, 2, 2, 4), et),
             ((2, 2, 3, 3), et), ((2, 2, 2, 2), et)]
    args = [_small(et, s, rng, 1) for s, _ in types]
    cases = [
        Case("conv2d_strided_padded", _conv(_conv_attrs(NHWC, "2, 1", "[1, 1], [0, 1]",
                                                         rhs_dil="1, 2"), (1, 3, 5, 3), 0, 1)),
        Case("conv2d_grouped", _conv(_conv_attrs(NHWC, groups=2), (1, 3, 3, 4), 2, 3)),
        Case("conv2d_lhs_dilated_nchw", _conv(_conv_attrs(NCHW, pad="[1, 1], [1, 1]",
                                                          lhs_dil="2, 2"), (2, 2, 6, 6), 4, 5)),
        Case("conv2d_batch_grouped", _conv(_conv_attrs(NCHW, batch_groups=2), (1, 2, 2, 2),
                                           4, 5)),
    ]
    return Batch(f"conv-{et}", types, args, cases)


# --- fft -------------------------------------------------------------------------------------


def _fft(kind: str, out: tuple[int, ...], res: str, length: str, src: int) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        return fb.op1("fft", [ins[src]], out, res,
                      f"fft_type = #stablehlo<fft_type {kind}>, fft_length = array<i64: {length}>")
    return build


def fft_batch(part: str) -> Batch:
    ct = f"complex<{part}>"
    rng = np.random.default_rng(seed("fft-" + part))
    types = [((2, 8), ct), ((2, 8), part), ((2, 5), ct), ((2, 4, 4), ct)]
    args = [_random(ct, (2, 8), rng), _random(part, (2, 8), rng), _random(ct, (2, 5), rng),
            _random(ct, (2, 4, 4), rng)]
    tol = _rel(part, 1e-5, 1e-12)
    cases = [Case("fft", _fft("FFT", (2, 8), ct, "8", 0), tol),
             Case("ifft", _fft("IFFT", (2, 8), ct, "8", 0), tol),
             Case("rfft", _fft("RFFT", (2, 5), ct, "8", 1), tol),
             Case("irfft", _fft("IRFFT", (2, 8), part, "8", 2), tol),
             Case("fft_2d", _fft("FFT", (2, 4, 4), ct, "4, 4", 3), tol)]
    if part == "f32":
        for c in cases:
            c.skip["upstream"] = ("the upstream interpreter aborts on complex<f32> fft "
                                  "('Semantics mismatch between provided type and complex value')")
    return Batch(f"fft-{part}", types, args, cases)


# --- triangular_solve, cholesky --------------------------------------------------------------

SOLVE_TYPES = ["f32", "f64", "complex<f32>", "complex<f64>"]


def _tri(left: bool, lower: bool, unit: bool, transpose: str, out: tuple[int, ...], a: int,
         b: int) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        attrs = (f"left_side = {str(left).lower()}, lower = {str(lower).lower()}, "
                 f"unit_diagonal = {str(unit).lower()}, "
                 f"transpose_a = #stablehlo<transpose {transpose}>")
        return fb.op1("triangular_solve", [ins[a], ins[b]], out, ins[a].et, attrs)
    return build


def _cholesky(lower: bool) -> Any:
    def build(fb: FunctionBuilder, ins: list[Val]) -> Val:
        return fb.op1("cholesky", [ins[3]], ins[3].shape, ins[3].et,
                      f"lower = {str(lower).lower()}")
    return build


def solve_batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("solve-" + et))
    a = _random(et, (2, 4, 4), rng) + 4 * np.eye(4, dtype=element_type(et).dtype)
    left, right = _random(et, (2, 4, 3), rng), _random(et, (2, 3, 4), rng)
    m = _random(et, (2, 4, 4), rng)
    spd = (m @ np.conj(np.swapaxes(m, -1, -2)) + 4 * np.eye(4)).astype(element_type(et).dtype)
    tol = _rel(et, 1e-4, 1e-11)
    no_chol = {"upstream": "the upstream interpreter has no cholesky ('unsupported at the "
                           "moment'; it aborts)"}
    no_batch = {"upstream": "the upstream interpreter aborts on batched triangular_solve "
                            "('Incompatible index and shape found while flattening index')"}
    cases = [
        Case("left_lower", _tri(True, True, False, "NO_TRANSPOSE", (4, 3), 4, 5), tol),
        Case("left_upper_transpose", _tri(True, False, False, "TRANSPOSE", (4, 3), 4, 5), tol),
        Case("right_lower_adjoint_unit", _tri(False, True, True, "ADJOINT", (3, 4), 4, 6), tol),
        Case("right_upper", _tri(False, False, False, "NO_TRANSPOSE", (3, 4), 4, 6), tol),
        Case("batched_left_upper_adjoint", _tri(True, False, False, "ADJOINT", (2, 4, 3), 0, 1),
             tol, skip=dict(no_batch)),
        Case("batched_right_lower", _tri(False, True, False, "NO_TRANSPOSE", (2, 3, 4), 0, 2),
             tol, skip=dict(no_batch)),
        Case("cholesky_lower", _cholesky(True), tol, skip=dict(no_chol)),
        Case("cholesky_upper", _cholesky(False), tol, skip=dict(no_chol)),
    ]
    if not element_type(et).is_complex:
        cases[2].skip["upstream"] = ("the upstream interpreter crashes (SIGSEGV) on "
                                     "transpose_a = ADJOINT with real operands")
    types = [((2, 4, 4), et), ((2, 4, 3), et), ((2, 3, 4), et), ((2, 4, 4), et), ((4, 4), et),
             ((4, 3), et), ((3, 4), et)]
    return Batch(f"solve-{et}", types, [a, left, right, spd, a[1], left[0], right[1]], cases)


# --- batch_norm_* ----------------------------------------------------------------------------

BN_TYPES = ["bf16", "f16", "f32", "f64"]
NO_BN = {"upstream": "the upstream interpreter has no batch_norm_* ('unsupported at the "
                     "moment'; it aborts)"}


def bn_batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("bn-" + et))
    dt = element_type(et).dtype
    x = (rng.standard_normal((2, 3, 4)) * 2 + 1).astype(dt)
    scale, offset = rng.uniform(0.5, 2, 3).astype(dt), rng.standard_normal(3).astype(dt)
    mean, var = rng.standard_normal(3).astype(dt), rng.uniform(0.5, 2, 3).astype(dt)
    grad = rng.standard_normal((2, 3, 4)).astype(dt)
    attrs = "epsilon = 0.001 : f32, feature_index = 1 : i64"
    # XLA's batchnorm expander rounds its intermediate results to bf16/f16 (errors of ~1e-2
    # where shlo, computing in f32 and rounding once, stays within half an ulp)
    rel = {"bf16": 8e-3, "f16": 1e-3, "f32": 1e-5, "f64": 1e-12}[et]
    xla_rel = {"bf16": 8e-2, "f16": 2e-2}.get(et, rel)
    tol = Tol("rel", rel, (("xla", Tol("rel", xla_rel)),))
    f = ((3,), et)

    def training(k: int) -> Any:
        return lambda fb, i: fb.op("batch_norm_training", [i[0], i[1], i[2]],
                                   [((2, 3, 4), et), f, f], attrs)[k]

    def grad_(k: int) -> Any:
        return lambda fb, i: fb.op("batch_norm_grad", [i[0], i[1], i[3], i[4], i[5]],
                                   [((2, 3, 4), et), f, f], attrs)[k]

    cases = [Case("inference", lambda fb, i: fb.op1("batch_norm_inference",
                                                    [i[0], i[1], i[2], i[3], i[4]],
                                                    (2, 3, 4), et, attrs), tol, skip=dict(NO_BN))]
    cases += [Case(f"training_{n}", training(k), tol, skip=dict(NO_BN))
              for k, n in enumerate(["output", "mean", "variance"])]
    cases += [Case(f"grad_{n}", grad_(k), tol, skip=dict(NO_BN))
              for k, n in enumerate(["operand", "scale", "offset"])]
    types = [((2, 3, 4), et), f, f, f, f, ((2, 3, 4), et)]
    return Batch(f"bn-{et}", types, [x, scale, offset, mean, var, grad], cases)


BATCHES = {}
for _b in ([dot_batch(t) for t in CONTRACT_TYPES] + [conv_batch(t) for t in CONV_TYPES]
           + [fft_batch(p) for p in ("f32", "f64")] + [solve_batch(t) for t in SOLVE_TYPES]
           + [bn_batch(t) for t in BN_TYPES]):
    BATCHES[_b.key] = _b


@pytest.mark.parametrize("oracle,key", params(list(BATCHES.values())))
def test_linalg(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BATCHES[key], oracle)


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
