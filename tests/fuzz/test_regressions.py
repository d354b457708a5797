"""Defects the long campaign found (`python -m tests.fuzz.campaign --seconds 300 --seed 7`),
each reduced to its case: a clean located error where MLIR refuses the input, acceptance where
MLIR accepts it, never a hang or an internal error."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.errors import ParseError, VerificationError
from shlo.testing.runner import run_file


def _conv(out_dims: str) -> str:
    return f"""func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {{
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->{out_dims}, window = {{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}}"""


def test_conv_spatial_dimension_of_2_to_the_64_is_an_error_not_a_hang():
    with pytest.raises(ParseError, match="Expected spatial dimensions 1, 2, 3, 4, 5, 6, 7, 8, 9, "
                                         "10 not specified"):
        shlo.parse(_conv("[b, 0, 18446744073709551616, f]"))


@pytest.mark.parametrize("loc, what", [('"f.py":3:9223372036854775807', "column"),
                                       ('"f.py":4294967296:1', "line")])
def test_location_numbers_are_32_bit(loc, what):
    text = f"""func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {{
  %0 = stablehlo.tanh %a : tensor<2xf32> loc({loc})
  return %0 : tensor<2xf32>
}}"""
    with pytest.raises(ParseError, match=f"expected integer {what} number in FileLineColRange"):
        shlo.parse(text)
    shlo.parse(text.replace(loc, '"f.py":4294967295:4294967295'))


def test_rng_shape_constant_with_kdynamic_reads_as_question_mark():
    shlo.verify(shlo.parse("""func.func @f(%a: tensor<f32>, %b: tensor<f32>) -> tensor<2x3x5xf32> {
  %s = stablehlo.constant dense<[2, 3, -9223372036854775808]> : tensor<3xi64>
  %0 = "stablehlo.rng"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution NORMAL>} : (tensor<f32>, tensor<f32>, tensor<3xi64>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}"""))


def test_set_dimension_size_negative_constant_is_dynamic():
    shlo.verify(shlo.parse("""func.func @f(%a: tensor<4x3xf64>) -> tensor<2x3xf64> {
  %c = stablehlo.constant dense<-3> : tensor<i32>
  %0 = stablehlo.set_dimension_size %a, %c, dim = 0 : (tensor<4x3xf64>, tensor<i32>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}"""))


def test_unsigned_attribute_refuses_a_negative_literal():
    with pytest.raises(ParseError, match="negative integer literal not valid for unsigned"):
        shlo.parse("""func.func @main() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  check.expect_close %0, %0, max_ulp_difference = -1 : tensor<f32>, tensor<f32>
  func.return
}""")


def test_channel_handle_takes_integers():
    text = """func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.all_reduce"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, channel_handle = #stablehlo.channel_handle<handle = HANDLE, type = 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    with pytest.raises(ParseError, match="expected integer value"):
        shlo.parse(text.replace("HANDLE", "inf"))
    with pytest.raises(ParseError, match="expected one of: `handle`, `type` but found 'nope'$"):
        shlo.parse(text.replace("handle = HANDLE", "nope = 1"))
    shlo.verify(shlo.parse(text.replace("HANDLE", "1")))


def test_i32_attribute_reads_signless_as_mlir_and_prints_back():
    text = """func.func @f(%a: tuple<tensor<i32>, tensor<f32>>) -> tensor<i32> {
  %0 = stablehlo.get_tuple_element %a[2147483648] : (tuple<tensor<i32>, tensor<f32>>) -> tensor<i32>
  return %0 : tensor<i32>
}"""
    m = shlo.parse(text)
    generic = shlo.format(m, generic=True)
    assert "index = -2147483648 : i32" in generic
    assert shlo.format(shlo.parse(generic), generic=True) == generic
    with pytest.raises(VerificationError, match="non-negative"):
        shlo.verify(m)
    with pytest.raises(ParseError, match="out of range"):
        shlo.parse(text.replace("2147483648", "4294967296"))


def test_torch_index_select_requires_its_attributes():
    with pytest.raises(VerificationError, match="requires attribute 'batch_dims'"):
        shlo.verify(shlo.parse("""func.func @f(%a: tensor<5x1x5xi32>, %i: tensor<2xi32>) -> tensor<2x1x5xi32> {
  %0 = "stablehlo.torch_index_select"(%a, %i) {dim = 0 : i64} : (tensor<5x1x5xi32>, tensor<2xi32>) -> tensor<2x1x5xi32>
  return %0 : tensor<2x1x5xi32>
}"""))


@pytest.mark.parametrize("literal", ["[-0, 0, 1]", "-0"])
def test_integer_minus_zero_is_out_of_range_as_in_mlir(literal):
    with pytest.raises(ParseError, match="integer constant out of range for type"):
        shlo.parse(f"""func.func @f() -> tensor<3xi64> {{
  %0 = stablehlo.constant dense<{literal}> : tensor<3xi64>
  return %0 : tensor<3xi64>
}}""")


def test_reduce_and_sort_of_zero_size_tensors():
    red = shlo.parse("""func.func @main(%a: tensor<4x0xf32>, %i: tensor<f32>) -> tensor<0xf32> {
  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [0] : (tensor<4x0xf32>, tensor<f32>) -> tensor<0xf32>
  return %0 : tensor<0xf32>
}""")
    assert shlo.run(red, np.zeros((4, 0), np.float32), np.float32(1))[0].shape == (0,)
    srt = shlo.parse("""func.func @main(%a: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %1 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %2 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<0x3xf32>) -> tensor<0x3xf32>
  return %1 : tensor<0x3xf32>
}""")
    assert shlo.run(srt, np.zeros((0, 3), np.float32))[0].shape == (0, 3)


def test_check_skips_function_declarations(tmp_path):
    f = tmp_path / "decl.mlir"
    f.write_text("""func.func private @mesh()
func.func @case() {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  check.expect_eq_const %0, dense<1.0> : tensor<f32>
  func.return
}
""")
    assert [r.status for r in run_file(str(f))] == ["passed"]


def test_set_dimension_size_static_only_when_the_constant_is_the_bound():
    text = """func.func @f(%a: tensor<10xf32>) -> tensor<RESULT> {
  %c = stablehlo.constant dense<SIZE> : tensor<i32>
  %0 = stablehlo.set_dimension_size %a, %c, dim = 0 : (tensor<10xf32>, tensor<i32>) -> tensor<RESULT>
  return %0 : tensor<RESULT>
}"""
    for size, result in (("7", "10xf32"), ("7", "?xf32"), ("10", "10xf32")):
        shlo.verify(shlo.parse(text.replace("SIZE", size).replace("RESULT", result)))
    with pytest.raises(VerificationError):  # 10 == the bound: the result is static 10
        shlo.verify(shlo.parse(text.replace("SIZE", "10").replace("RESULT", "7xf32")))


def test_slice_of_a_dynamic_dimension_takes_its_size_from_the_limits():
    text = """func.func @f(%a: tensor<?xf64>) -> tensor<RESULT> {
  %0 = stablehlo.slice %a [0:LIMIT] : (tensor<?xf64>) -> tensor<RESULT>
  return %0 : tensor<RESULT>
}"""
    shlo.verify(shlo.parse(text.replace("LIMIT", "2").replace("RESULT", "2xf64")))
    shlo.verify(shlo.parse(text.replace("LIMIT", "2").replace("RESULT", "?xf64")))
    with pytest.raises(VerificationError, match="tensor<2147483647xf64>"):
        shlo.verify(shlo.parse(text.replace("LIMIT", "2147483647").replace("RESULT", "2xf64")))


def test_top_k_of_kdynamic_is_question_mark():
    shlo.verify(shlo.parse("""func.func @f(%a: tensor<16x16xf32>) -> (tensor<16x8xf32>, tensor<16x8xi32>) {
  %0:2 = chlo.top_k(%a, k=-9223372036854775808) : tensor<16x16xf32> -> (tensor<16x8xf32>, tensor<16x8xi32>)
  return %0#0, %0#1 : tensor<16x8xf32>, tensor<16x8xi32>
}"""))


@pytest.mark.parametrize("bits", ["0x7FF8000000000000", "0x7FF0000000000000"])
def test_result_accuracy_tolerance_in_hex_reads_back(bits):
    """A NaN or infinite atol (from an artifact) prints as its f64 bits, as MLIR prints it, and
    reads back (it was refused as an integer literal)."""
    text = f"""func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {{
  %0 = "stablehlo.exponential"(%a) {{result_accuracy = #stablehlo.result_accuracy<atol = {bits}, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}}"""
    generic = shlo.format(shlo.parse(text), generic=True)
    assert f"atol = {bits}" in generic
    assert shlo.format(shlo.parse(generic), generic=True) == generic


# --- seed 11 (the long campaign after the function memo and the loop work) ----------------------

_HUGE_SPLATS = """func.func @main() -> tensor<512x1x6400x6400xf32> {
  %a = stablehlo.constant dense<0.000000e+00> : tensor<512x1x6400x6400xf32>
  %b = stablehlo.constant dense<1.000000e+00> : tensor<512x1x6400x6400xf32>
  %c = stablehlo.constant dense<0.000000e+00> : tensor<512x1x6400x6400xf32>
  %0 = stablehlo.add %a, %b : tensor<512x1x6400x6400xf32>
  return %0 : tensor<512x1x6400x6400xf32>
}"""


def test_splats_of_10_to_the_10_elements_are_never_materialised(tmp_path):
    """Hashing, comparing and writing 78 GiB splat constants (the bytecode writer's table of
    attributes hashed every element; its raw data copied them all): MemoryError before."""
    from shlo.cli import main as cli_main

    m = shlo.parse(_HUGE_SPLATS)
    a, b, c = (op.attr("value") for op in m.walk() if op.name == "stablehlo.constant")
    assert a == c and a != b and hash(a) == hash(c) and a.is_splat
    src = tmp_path / "s.mlir"
    src.write_text(_HUGE_SPLATS)
    out = tmp_path / "s.bc"
    assert cli_main(["fmt", "--emit-bytecode", str(src), "-o", str(out)]) == 0
    assert out.stat().st_size < 1000
    assert shlo.format(shlo.load(str(out))) == shlo.format(m)


def test_a_vhlo_struct_attribute_missing_a_parameter_is_an_error(tmp_path, capsys):
    from shlo.cli import main as cli_main

    src = tmp_path / "r.mlir"
    src.write_text("func.func @f() -> () attributes {\n  vhlo.attr = #vhlo.result_accuracy_v1<"
                   "atol = 0.000000e+00, \n = 0.000000e+00, ulps = 0, mode = "
                   "#stablehlo.result_accuracy_mode<DEFAULT>>\n} {\n  return\n}\n")
    assert cli_main(["opt", str(src), "--pass", "canonicalize"]) == 1
    err = capsys.readouterr().err
    assert "expected a parameter 'rtol'" in err and "internal error" not in err


@pytest.mark.parametrize("t", ["f32", "f8E4M3FN", "complex<f32>"])
def test_a_decimal_integer_is_not_a_float_literal(t):
    """MLIR: "unexpected decimal integer literal for a floating point value" (a trailing dot
    makes it a float; hex bit patterns stay allowed)."""
    lit = "(4, 0)" if t.startswith("complex") else "4"
    text = f"""func.func @main() -> tensor<{t}> {{
  %0 = stablehlo.constant dense<{lit}> : tensor<{t}>
  return %0 : tensor<{t}>
}}"""
    with pytest.raises(ParseError, match="unexpected decimal integer literal for a floating "
                                         "point value"):
        shlo.parse(text)
    shlo.parse(text.replace(f"dense<{lit}>",
                            "dense<(4., 0.)>" if t.startswith("complex") else "dense<4.>"))


def test_concatenate_of_quantized_types_keeps_their_parameters():
    """Upstream's SameOperandsAndResultElementType compares zero points too."""
    q17, q5 = "!quant.uniform<i8:f32, 1.0:17>", "!quant.uniform<i8:f32, 1.0:5>"
    text = f"""func.func @main(%a: tensor<1x2x{q17}>, %b: tensor<1x2x{q17}>) -> tensor<2x2x{q5}> {{
  %0 = "stablehlo.concatenate"(%a, %b) {{dimension = 0 : i64}} : (tensor<1x2x{q17}>, tensor<1x2x{q17}>) -> tensor<2x2x{q5}>
  return %0 : tensor<2x2x{q5}>
}}"""
    with pytest.raises(VerificationError, match="requires the same element type for all "
                                                "operands and results"):
        shlo.verify(shlo.parse(text))
    shlo.verify(shlo.parse(text.replace(q5, q17)))


def test_pad_beyond_int64_is_refused():
    """2 + (2^63 - 1) is negative in upstream's int64 arithmetic: refused, as MLIR does (even
    with a dynamic result type, which accepted any size)."""
    text = """func.func @main(%a: tensor<2xf64>, %p: tensor<f64>) -> tensor<?xf64> {
  %0 = stablehlo.pad %a, %p, low = [9223372036854775807], high = [0], interior = [0] : (tensor<2xf64>, tensor<f64>) -> tensor<?xf64>
  return %0 : tensor<?xf64>
}"""
    with pytest.raises(VerificationError, match="Padding result in negative size for dimension "
                                                "0: -9223372036854775807"):
        shlo.verify(shlo.parse(text))
    shlo.verify(shlo.parse(text.replace("9223372036854775807", "7")))
