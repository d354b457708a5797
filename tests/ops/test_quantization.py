"""Quantized semantics: uniform_quantize/uniform_dequantize, dequantize_op_quantize for every
other op (and its batch_norm, compare, select, hybrid variants), quantized region bodies, exact
integer accumulation in dot_general/convolution, tosa.rescale, and the public API.

Values are hand-computed from the spec's formulas (docs/spec.md, "Quantization computations")
or spec examples; the official corpus runs in tests/conformance.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import shlo
import shlo.quantization as q
from shlo.ops.tosa import apply_rescale, multiplier_and_shift
from shlo.syntax.parser import parse
from shlo.types import QuantizedType, element_type

from harness import run_text

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"


def qtype(text: str) -> QuantizedType:
    m = parse(f"func.func @f(%a: tensor<{text}>) {{ return }}")
    return q.argument_types(m, "f")[0].element_type


# --- quantize / dequantize (spec "Quantization computations") ---------------------------------


def test_spec_example_uniform_quantize_per_axis():
    out = run_text("""func.func @main(%x: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>> {
      %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>
      return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>
    }""", np.array([4.0, 15.0], np.float32), verify=True)[0]
    assert out.dtype == np.int8 and out.tolist() == [10, 10]


def test_spec_example_requantize_and_dequantize():
    text = """func.func @main(%x: tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>)
        -> (tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>, tensor<2xf32>) {
      %0 = stablehlo.uniform_quantize %x : (tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>
      %1 = stablehlo.uniform_dequantize %x : (tensor<2x!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>>) -> tensor<2xf32>
      return %0, %1 : tensor<2x!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>>, tensor<2xf32>
    }"""
    req, deq = run_text(text, np.array([10, 10], np.int8), verify=True)
    assert req.tolist() == [20, 45]
    np.testing.assert_allclose(deq, [4.0, 15.0], rtol=1e-6)


def test_quantize_rounds_half_to_even_before_the_zero_point():
    t = qtype("4x!quant.uniform<i8:f32, 1.0:-3>")
    # x / scale = 2.5, 3.5, -2.5, -0.5 -> 2, 4, -2, -0, then + zero point -3
    assert q.quantize(np.array([2.5, 3.5, -2.5, -0.5], np.float32), t).tolist() == [-1, 1, -5, -3]


def test_quantize_clamps_to_storage_min_max_and_handles_nan_inf():
    t = qtype("5x!quant.uniform<i8<-100:100>:f32, 0.5:10>")
    x = np.array([1000.0, -1000.0, np.inf, -np.inf, np.nan], np.float32)
    assert q.quantize(x, t).tolist() == [100, -100, 100, -100, 0]
    narrow = qtype("1x!quant.uniform<i8<5:100>:f32, 1.0:10>")
    assert q.quantize(np.array([np.nan], np.float32), narrow).tolist() == [5]


def test_dequantize_does_not_wrap_in_the_storage_type():
    t = qtype("2x!quant.uniform<i8:f32, 0.5:-128>")
    # 127 - (-128) = 255 overflows i8: the subtraction is exact
    np.testing.assert_array_equal(q.dequantize(np.array([127, -128], np.int8), t),
                                  np.array([127.5, 0.0], np.float32))


def test_per_axis_along_a_middle_dimension():
    t = parse("func.func @f(%a: tensor<2x3x!quant.uniform<i8:f32:1, {1.0:0, 2.0:1, 4.0:-1}>>) "
              "{ return }")
    tt = q.argument_types(t, "f")[0]
    x = np.array([[1, 1, 1], [2, 3, 4]], np.int8)
    expect = np.array([[1.0, 0.0, 8.0], [2.0, 4.0, 20.0]], np.float32)
    np.testing.assert_array_equal(q.dequantize(x, tt), expect)
    np.testing.assert_array_equal(q.quantize(expect, tt), x)


def test_sub_byte_and_unsigned_storage_and_bf16_expressed():
    i4 = qtype("3x!quant.uniform<i4:f32, 0.5:1>")
    s = q.quantize(np.array([10.0, -10.0, 1.0], np.float32), i4)
    assert s.dtype == ml_dtypes.int4 and s.astype(np.int8).tolist() == [7, -8, 3]
    u8 = qtype("2x!quant.uniform<u8:f32, 2.0:128>")
    assert q.quantize(np.array([-300.0, 4.0], np.float32), u8).tolist() == [0, 130]
    bf = qtype("2x!quant.uniform<i8:bf16, 0.25:0>")
    d = q.dequantize(np.array([3, -5], np.int8), bf)
    assert d.dtype == ml_dtypes.bfloat16 and d.astype(np.float32).tolist() == [0.75, -1.25]


# --- dequantize_op_quantize and its variants ------------------------------------------------------


def test_quantized_add_from_the_interpreter_tests():
    out = run_text("""func.func @main() -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>> {
      %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
      %b = stablehlo.constant dense<[3.0, 4.0]> : tensor<2xf32>
      %qa = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.1:-30>>
      %qb = stablehlo.uniform_quantize %b : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
      %r = stablehlo.add %qa, %qb : (tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
      return %r : tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
    }""", verify=True)[0]
    assert out.tolist() == [-12, -8]


def test_unary_op_and_quantized_constant():
    # constant storage [-5, 0, 7] with scale 0.5, zero point 1: values -3, -0.5, 3
    out = run_text("""func.func @main() -> tensor<3x!quant.uniform<i8:f32, 0.25:-2>> {
      %c = stablehlo.constant() {value = dense<[-5, 0, 7]> : tensor<3xi8>} : () -> tensor<3x!quant.uniform<i8:f32, 0.5:1>>
      %r = stablehlo.abs %c : (tensor<3x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<3x!quant.uniform<i8:f32, 0.25:-2>>
      return %r : tensor<3x!quant.uniform<i8:f32, 0.25:-2>>
    }""", verify=True)[0]
    assert out.tolist() == [10, 0, 10]  # 3/0.25-2, 0.5/0.25-2, 3/0.25-2


def test_compare_dequantizes_both_sides():
    # 1.0 (scale 0.1) against 1.0 (scale 0.5): equal as reals, different storage values
    out = run_text("""func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.1:0>>, %b: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2xi1> {
      %r = stablehlo.compare EQ, %a, %b : (tensor<2x!quant.uniform<i8:f32, 0.1:0>>, tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2xi1>
      return %r : tensor<2xi1>
    }""", np.array([10, 10], np.int8), np.array([2, 3], np.int8), verify=True)[0]
    assert out.tolist() == [True, False]


def test_select_requantizes_to_the_result_type():
    out = run_text("""func.func @main(%p: tensor<2xi1>, %a: tensor<2x!quant.uniform<i8:f32, 0.1:0>>, %b: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 1.0:0>> {
      %r = stablehlo.select %p, %a, %b : (tensor<2xi1>, tensor<2x!quant.uniform<i8:f32, 0.1:0>>, tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 1.0:0>>
      return %r : tensor<2x!quant.uniform<i8:f32, 1.0:0>>
    }""", np.array([True, False]), np.array([30, 30], np.int8), np.array([9, 9], np.int8), verify=True)[0]
    assert out.tolist() == [3, 4]  # 3.0 -> 3; 4.5 -> 4 (half to even)


def test_batch_norm_training_quantizes_all_three_results():
    t = "!quant.uniform<i8:f32, 0.5:0>"
    text = f"""func.func @main(%x: tensor<2x2x{t}>, %s: tensor<2x{t}>, %o: tensor<2x{t}>)
        -> (tensor<2x2x{t}>, tensor<2x{t}>, tensor<2x{t}>) {{
      %r:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 0.0 : f32, feature_index = 1 : i64}}
        : (tensor<2x2x{t}>, tensor<2x{t}>, tensor<2x{t}>) -> (tensor<2x2x{t}>, tensor<2x{t}>, tensor<2x{t}>)
      return %r#0, %r#1, %r#2 : tensor<2x2x{t}>, tensor<2x{t}>, tensor<2x{t}>
    }}"""
    x = np.array([[2, 4], [6, 12]], np.int8)  # reals [[1, 2], [3, 6]]
    out, mean, var = run_text(text, x, np.array([2, 2], np.int8), np.array([0, 0], np.int8), verify=True)
    assert mean.tolist() == [4, 8]  # means 2, 4
    assert var.tolist() == [2, 8]   # variances 1, 4
    assert out.tolist() == [[-2, -2], [2, 2]]  # (x - mean) / sqrt(var) = -1, 1


def test_hybrid_dot_general_dequantizes_only_rhs():
    out = run_text("""func.func @main(%l: tensor<1x2xf32>, %r: tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:0}>>) -> tensor<1x2xf32> {
      %0 = stablehlo.dot_general %l, %r, contracting_dims = [1] x [0] : (tensor<1x2xf32>, tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 2.0:0}>>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    }""", np.array([[1.0, 2.0]], np.float32), np.array([[2, 1], [4, 3]], np.int8), verify=True)[0]
    np.testing.assert_array_equal(out, [[1.0 * 1 + 2.0 * 2, 1.0 * 2 + 2.0 * 6]])


# --- region bodies ------------------------------------------------------------------------------


def test_reduce_body_saturates_at_each_step():
    # add of storage values would wrap (100 + 100 + 10 = -46 in i8); quantized add clamps at
    # every step, so every schedule gives 127
    out = run_text("""func.func @main(%x: tensor<3x!quant.uniform<i8:f32, 1.0:0>>) -> tensor<!quant.uniform<i8:f32, 1.0:0>> {
      %init = stablehlo.constant() {value = dense<0> : tensor<i8>} : () -> tensor<!quant.uniform<i8:f32, 1.0:0>>
      %r = stablehlo.reduce(%x init: %init) applies stablehlo.add across dimensions = [0] : (tensor<3x!quant.uniform<i8:f32, 1.0:0>>, tensor<!quant.uniform<i8:f32, 1.0:0>>) -> tensor<!quant.uniform<i8:f32, 1.0:0>>
      return %r : tensor<!quant.uniform<i8:f32, 1.0:0>>
    }""", np.array([100, 100, 10], np.int8), verify=True)[0]
    assert int(out) == 127


def test_reduce_window_max_and_sort_with_quantized_comparator():
    t = "!quant.uniform<i8:f32, 0.5:-10>"
    text = f"""func.func @main(%x: tensor<4x{t}>) -> (tensor<2x{t}>, tensor<4x{t}>) {{
      %init = stablehlo.constant() {{value = dense<-128> : tensor<i8>}} : () -> tensor<{t}>
      %m = "stablehlo.reduce_window"(%x, %init) ({{
        ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):
          %0 = stablehlo.maximum %a, %b : tensor<{t}>
          stablehlo.return %0 : tensor<{t}>
      }}) {{window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}} : (tensor<4x{t}>, tensor<{t}>) -> tensor<2x{t}>
      %s = "stablehlo.sort"(%x) ({{
        ^bb0(%a: tensor<{t}>, %b: tensor<{t}>):
          %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
          stablehlo.return %0 : tensor<i1>
      }}) {{dimension = 0 : i64}} : (tensor<4x{t}>) -> tensor<4x{t}>
      return %m, %s : tensor<2x{t}>, tensor<4x{t}>
    }}"""
    m, s = run_text(text, np.array([3, -7, 20, 11], np.int8), verify=True)
    assert m.tolist() == [3, 20] and s.tolist() == [20, 11, 3, -7]


# --- dot_general / convolution: exact accumulation ----------------------------------------------


def _exact_dot(lhs, zl, sl, rhs, zr, sr, so, zo, lo, hi):
    acc = (lhs.astype(np.int64) - zl) @ (rhs.astype(np.int64) - zr)
    real = acc * (np.float64(np.float32(sl)) * np.float64(np.float32(sr))) / np.float64(
        np.float32(so))
    return np.clip(np.rint(real) + zo, lo, hi)


@pytest.mark.parametrize("res", ["i32:f32, 1.0E-2:3", "i8:f32, 0.37:-5"])
def test_dot_general_accumulates_exactly(res):
    rng = np.random.default_rng(0)
    lhs = rng.integers(-128, 128, (3, 40)).astype(np.int8)
    rhs = rng.integers(-127, 128, (40, 4)).astype(np.int8)
    text = f"""func.func @main(%l: tensor<3x40x!quant.uniform<i8:f32, 0.1:7>>, %r: tensor<40x4x!quant.uniform<i8:f32, 0.1:0>>) -> tensor<3x4x!quant.uniform<{res}>> {{
      %0 = stablehlo.dot_general %l, %r, contracting_dims = [1] x [0] : (tensor<3x40x!quant.uniform<i8:f32, 0.1:7>>, tensor<40x4x!quant.uniform<i8:f32, 0.1:0>>) -> tensor<3x4x!quant.uniform<{res}>>
      return %0 : tensor<3x4x!quant.uniform<{res}>>
    }}"""
    out = run_text(text, lhs, rhs, verify=True)[0]
    rt = qtype(f"1x!quant.uniform<{res}>")
    expect = _exact_dot(lhs, 7, 0.1, rhs, 0, 0.1, rt.scales[0], rt.zero_points[0], rt.min,
                        rt.max)
    np.testing.assert_array_equal(out.astype(np.int64), expect.astype(np.int64))


def test_dot_general_per_axis_rhs_and_result():
    text = """func.func @main(%l: tensor<2x3x!quant.uniform<i8:f32, 2.0:1>>, %r: tensor<3x2x!quant.uniform<i8:f32:1, {1.0:0, 3.0:0}>>) -> tensor<2x2x!quant.uniform<i32:f32:1, {2.0:0, 6.0:5}>> {
      %0 = stablehlo.dot_general %l, %r, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 2.0:1>>, tensor<3x2x!quant.uniform<i8:f32:1, {1.0:0, 3.0:0}>>) -> tensor<2x2x!quant.uniform<i32:f32:1, {2.0:0, 6.0:5}>>
      return %0 : tensor<2x2x!quant.uniform<i32:f32:1, {2.0:0, 6.0:5}>>
    }"""
    lhs = np.array([[2, 3, 4], [1, 1, 1]], np.int8)
    rhs = np.array([[1, -1], [2, 0], [3, 5]], np.int8)
    acc = (lhs.astype(np.int64) - 1) @ rhs.astype(np.int64)  # [[14, 14], [0, 0]]
    out = run_text(text, lhs, rhs, verify=True)[0]
    # column 0: acc * 2*1/2 + 0; column 1: acc * 2*3/6 + 5
    assert out.tolist() == [[acc[0, 0], acc[0, 1] + 5], [acc[1, 0], acc[1, 1] + 5]]


def test_convolution_pads_with_the_dequantized_zero():
    # lhs zero point 5: storage 5 is the real 0, and padding must add real zeros
    text = """func.func @main(%l: tensor<1x3x1x!quant.uniform<i8:f32, 1.0:5>>, %r: tensor<3x1x1x!quant.uniform<i8:f32, 1.0:0>>) -> tensor<1x3x1x!quant.uniform<i32:f32, 1.0:0>> {
      %0 = stablehlo.convolution(%l, %r) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x1x!quant.uniform<i8:f32, 1.0:5>>, tensor<3x1x1x!quant.uniform<i8:f32, 1.0:0>>) -> tensor<1x3x1x!quant.uniform<i32:f32, 1.0:0>>
      return %0 : tensor<1x3x1x!quant.uniform<i32:f32, 1.0:0>>
    }"""
    out = run_text(text, np.array([[[6], [7], [8]]], np.int8), np.array([[[1]], [[1]], [[1]]], np.int8), verify=True)
    assert out[0].reshape(-1).tolist() == [1 + 2, 1 + 2 + 3, 2 + 3]


# --- tosa.rescale ----------------------------------------------------------------------------------


def test_multiplier_and_shift_as_tosa_computes_them():
    assert multiplier_and_shift(0.025 / 0.15 * 2 ** 20) == (1431655765, 13)
    assert multiplier_and_shift(0.5 * 2 ** 20) == (1 << 30, 11)
    assert multiplier_and_shift(2.0 ** -20) == (1 << 30, 50)
    assert multiplier_and_shift(1.0) == (1 << 30, 30)


def test_apply_rescale_rounding_modes():
    v = np.array([3, -3, 5], np.int64)
    # 3 * 2^30 >> 31 = 1.5 -> 2 (half up); -1.5 -> -1; 2.5 -> 3
    m, s = np.int64(1 << 30), np.int64(31)
    assert apply_rescale(v, m, s).tolist() == [2, -1, 3]
    # +-0.5 at shift 40: single rounding goes up (1, 0); double rounding adds +-2^30 first and
    # so rounds half away from zero (1, -1)
    half = np.array([1 << 9, -(1 << 9)], np.int64)
    assert apply_rescale(half, np.int64(1 << 30), np.int64(40)).tolist() == [1, 0]
    assert apply_rescale(half, np.int64(1 << 30), np.int64(40), "DOUBLE_ROUND").tolist() == [1, -1]


def test_tosa_rescale_kernel_forms():
    text = """func.func @main(%x: tensor<3xi8>) -> (tensor<3xi32>, tensor<3xi8>) {
      %m = "tosa.const"() <{values = dense<1431655765> : tensor<1xi32>}> : () -> tensor<1xi32>
      %s = "tosa.const"() <{values = dense<13> : tensor<1xi8>}> : () -> tensor<1xi8>
      %iz = "tosa.const"() <{values = dense<-1> : tensor<1xi8>}> : () -> tensor<1xi8>
      %oz = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
      %0 = tosa.rescale %x, %m, %s, %iz, %oz {input_unsigned = false, output_unsigned = false, per_channel = false, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<3xi8>, tensor<1xi32>, tensor<1xi8>, tensor<1xi8>, tensor<1xi32>) -> tensor<3xi32>
      %1 = "tosa.rescale"(%x) {input_zp = 0 : i32, output_zp = 3 : i32, multiplier = array<i32: 1073741824>, shift = array<i8: 28>, scale32 = true, double_round = false, per_channel = false} : (tensor<3xi8>) -> tensor<3xi8>
      return %0, %1 : tensor<3xi32>, tensor<3xi8>
    }"""
    a, b = run_text(text, np.array([9, 127, -128], np.int8), verify=True)
    # (x + 1) * 0.1666... * 2^20 rounded; (x * 4) + 3 saturated to i8
    np.testing.assert_array_equal(a, np.rint(np.array([10, 128, -127]) * 2 ** 20 / 6))
    assert b.tolist() == [39, 127, -128]


def test_tosa_rescale_per_channel_and_unsigned():
    text = """func.func @main(%x: tensor<2x2xi8>) -> tensor<2x2xi8> {
      %m = "tosa.const"() <{values = dense<[1073741824, 1073741824]> : tensor<2xi32>}> : () -> tensor<2xi32>
      %s = "tosa.const"() <{values = dense<[30, 29]> : tensor<2xi8>}> : () -> tensor<2xi8>
      %iz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
      %oz = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
      %0 = tosa.rescale %x, %m, %s, %iz, %oz {input_unsigned = true, output_unsigned = true, per_channel = true, rounding_mode = SINGLE_ROUND, scale32 = true} : (tensor<2x2xi8>, tensor<2xi32>, tensor<2xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x2xi8>
      return %0 : tensor<2x2xi8>
    }"""
    out = run_text(text, np.array([[-1, 100], [10, 10]], np.int8), verify=True)[0]
    # -1 read unsigned is 255; channel 1 doubles and saturates at 255 (stored as -1)
    assert out.view(np.uint8).tolist() == [[255, 200], [10, 20]]


def test_tosa_rescale_verifier():
    bad = """func.func @main(%x: tensor<3xf32>) -> tensor<3xi32> {
      %0 = "tosa.rescale"(%x) {input_zp = 0 : i32, output_zp = 0 : i32, multiplier = array<i32: 1>, shift = array<i8: 1>, scale32 = true, double_round = false, per_channel = false} : (tensor<3xf32>) -> tensor<3xi32>
      return %0 : tensor<3xi32>
    }"""
    with pytest.raises(shlo.VerificationError, match="integer or quantized"):
        shlo.verify(parse(bad))
    bad_shift = bad.replace("tensor<3xf32>", "tensor<3xi8>")
    with pytest.raises(shlo.VerificationError, match="shift values in"):
        shlo.verify(parse(bad_shift))


def test_uniform_quantize_verifier():
    bad = """func.func @main(%x: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f16, 1.0>> {
      %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f16, 1.0>>
      return %0 : tensor<2x!quant.uniform<i8:f16, 1.0>>
    }"""
    with pytest.raises(shlo.VerificationError, match="C2"):
        shlo.verify(parse(bad))


# --- the public API --------------------------------------------------------------------------------


def test_run_takes_and_returns_storage_values():
    m = shlo.parse("""func.func @main(%x: tensor<2x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>> {
      %0 = stablehlo.negate %x : (tensor<2x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>
      return %0 : tensor<2x!quant.uniform<i8:f32, 0.25:0>>
    }""")
    x = q.quantize(np.array([1.0, -2.0], np.float32), q.argument_types(m)[0])
    assert x.tolist() == [3, -3]
    (y,) = shlo.run(m, x)
    assert y.dtype == np.int8
    np.testing.assert_array_equal(q.dequantize(y, q.result_types(m)[0]), [-1.0, 2.0])


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")
def test_interpreter_quantized_ops_file():
    from shlo.testing.runner import run_file

    results = run_file(str(CONFORMANCE / "interpret" / "quantized_ops.mlir"))
    assert results and all(r.status == "passed" for r in results), \
        [r.messages for r in results if r.status != "passed"]


def test_element_type_names():
    assert element_type("i8").dtype == np.int8


# --- properties ---------------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_scales = st.floats(1e-3, 10.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(scale=_scales, zp=st.integers(-128, 127),
       data=st.lists(st.integers(-128, 127), min_size=1, max_size=16))
def test_quantize_inverts_dequantize_on_storage_values(scale, zp, data):
    qt = QuantizedType(element_type("i8"), element_type("f32"), (scale,), (zp,))
    x = np.array(data, np.int8)
    np.testing.assert_array_equal(q.quantize(q.dequantize(x, qt), qt), x)


@settings(max_examples=60, deadline=None)
@given(scale=_scales, zp=st.integers(-20, 20),
       data=st.lists(st.floats(-100.0, 100.0, width=32), min_size=1, max_size=16))
def test_dequantize_of_quantize_is_the_nearest_representable_value(scale, zp, data):
    qt = QuantizedType(element_type("i8"), element_type("f32"), (scale,), (zp,))
    x = np.array(data, np.float32)
    back = q.dequantize(q.quantize(x, qt), qt).astype(np.float64)
    s = float(np.float32(scale))
    lo, hi = (-128 - zp) * s, (127 - zp) * s
    clamped = np.clip(x.astype(np.float64), lo, hi)
    assert np.all(np.abs(back - clamped) <= s / 2 * (1 + 1e-5) + 1e-6)


# --- the order of quantize: round-first (default) and zero-point-first ---------------------------


@pytest.fixture
def zero_point_first():
    previous = q.set_quantize_order("zero-point-first")
    yield
    q.set_quantize_order(previous)


_ZP3 = QuantizedType(element_type("i8"), element_type("f32"), (1.0,), (3,))
_TIES = np.array([2.5, 3.5, -0.5, -3.5, 200.0, -200.0, np.nan], np.float32)


def test_quantize_rounds_before_adding_the_zero_point_by_default():
    assert q.quantize_order() == "round-first"
    # round_nearest_even(x) + 3: ties go to the even integer before the odd zero point is added
    np.testing.assert_array_equal(q.quantize(_TIES, _ZP3), [5, 7, 3, -1, 127, -128, 0])


def test_quantize_zero_point_first_rounds_the_sum(zero_point_first):
    # round_nearest_even(x + 3): 5.5 -> 6, 6.5 -> 6, 2.5 -> 2, -0.5 -> 0
    np.testing.assert_array_equal(q.quantize(_TIES, _ZP3), [6, 6, 2, 0, 127, -128, 0])


def test_quantize_order_reaches_the_ops_and_the_cli(tmp_path, capsys, zero_point_first):
    text = """func.func @main(%x: tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:1>> {
      %0 = stablehlo.uniform_quantize %x : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:1>>
      return %0 : tensor<3x!quant.uniform<i8:f32, 0.5:1>>
    }"""
    x = np.array([1.25, 0.75, -0.25], np.float32)  # x / 0.5 = 2.5, 1.5, -0.5
    (r,) = shlo.run(parse(text), x)
    np.testing.assert_array_equal(r, [4, 2, 0])  # round(3.5), round(2.5), round(0.5)
    q.set_quantize_order("round-first")
    (r,) = shlo.run(parse(text), x)
    np.testing.assert_array_equal(r, [3, 3, 1])  # round(2.5)+1, round(1.5)+1, round(-0.5)+1
    from shlo.cli import main

    (tmp_path / "q.mlir").write_text(text)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "r.npz"
    assert main(["run", str(tmp_path / "q.mlir"), str(tmp_path / "x.npy"), "--out", str(out),
                 "--quantize-order", "zero-point-first"]) == 0
    assert q.quantize_order() == "zero-point-first"
    np.testing.assert_array_equal(np.load(out)["result0"], [4, 2, 0])


def test_unknown_quantize_order_is_refused():
    with pytest.raises(ValueError, match="unknown quantize order 'up'"):
        q.set_quantize_order("up")
