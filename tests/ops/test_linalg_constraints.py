"""Constraints of dot_general, dot, convolution, cholesky, triangular_solve, fft and the
batch_norm ops (spec "Ops")."""

import pytest

from constraint_util import assert_verdict, func


def dot_general(dims: str, lhs="tensor<2x3xf32>", rhs="tensor<3x4xf32>",
                result="tensor<2x4xf32>", extra="") -> str:
    return func(f"%a: {lhs}, %b: {rhs}",
                f'  %0 = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = '
                f'#stablehlo.dot<{dims}>{extra}}} : ({lhs}, {rhs}) -> {result}')


MATMUL = "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]"


def conv(window: str, lhs="tensor<1x8x8x3xf32>", rhs="tensor<3x3x3x4xf32>",
         result="tensor<1x8x8x4xf32>", groups="batch_group_count = 1 : i64, "
                                              "feature_group_count = 1 : i64") -> str:
    return func(f"%a: {lhs}, %k: {rhs}",
                f"  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->"
                f"[b, 0, 1, f], window = {{{window}}} {{{groups}}} : ({lhs}, {rhs}) -> {result}")


QI8 = "!quant.uniform<i8:f32, 0.5:0>"

CASES = [
    ("dot_general", dot_general(MATMUL), None),
    ("dot_general mixed types", dot_general(MATMUL, lhs="tensor<2x3xbf16>"), None),
    ("dot_general contracting count", dot_general("lhs_contracting_dimensions = [1], "
                                                  "rhs_contracting_dimensions = []"),
     "(C2) lhs and rhs should have the same number of contracting dimensions"),
    ("dot_general range", dot_general("lhs_contracting_dimensions = [2], "
                                      "rhs_contracting_dimensions = [0]"),
     "(C6) lhs_contracting_dimensions value: 2 is out of range: [0, 2)"),
    ("dot_general sizes", dot_general(MATMUL, rhs="tensor<4x4xf32>"),
     "(C10) contracting dimension sizes must match for lhs/rhs"),
    ("dot_general result", dot_general(MATMUL, result="tensor<4x2xf32>"),
     "(C12) inferred shape '[2, 4]' is incompatible with return type of operation"),
    ("dot_general precision", dot_general(MATMUL, extra=", precision_config = ["
                                          "#stablehlo<precision DEFAULT>, #stablehlo<precision "
                                          "DEFAULT>, #stablehlo<precision DEFAULT>]"),
     "(C11) expects precision config to be empty or have <= 2 elements"),
    ("dot_general quantized zero point", dot_general(
        MATMUL, lhs=f"tensor<2x3x{QI8}>", rhs="tensor<3x4x!quant.uniform<i8:f32, 0.5:2>>",
        result="tensor<2x4x!quant.uniform<i32:f32, 0.25:0>>"), "(C17) Zero point of rhs should be 0"),
    ("dot_general hybrid", dot_general(MATMUL, rhs=f"tensor<3x4x{QI8}>"), None),
    ("dot_general algorithm", dot_general(
        MATMUL, extra=", algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, "
        "rhs_precision_type = f32, accumulation_type = i8, lhs_component_count = 1, "
        "rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = "
        "false>"), "(C24) dot algorithm not known to be supported on any hardware"),
    ("dot", func("%a: tensor<2x3xf32>, %b: tensor<3xf32>",
                 '  %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> '
                 'tensor<2xf32>'), None),
    ("dot rank", func("%a: tensor<2x3x4xf32>, %b: tensor<4xf32>",
                      '  %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3x4xf32>, tensor<4xf32>) -> '
                      'tensor<2x3xf32>'), "expected both lhs/rhs ranks to be either 1 or 2"),
    ("convolution", conv("stride = [1, 1], pad = [[1, 1], [1, 1]]"), None),
    ("convolution strided", conv("stride = [2, 2], pad = [[1, 1], [1, 1]]",
                                 result="tensor<1x4x4x4xf32>"), None),
    ("convolution result", conv("stride = [1, 1]", result="tensor<1x8x8x4xf32>"),
     "(C25, C26) inferred shape '[1, 6, 6, 4]' is incompatible"),
    ("convolution stride", conv("stride = [0, 1], pad = [[1, 1], [1, 1]]"),
     "(C2, C3) expects window to have positive stride for 0-th window dimension"),
    ("convolution feature group", conv("stride = [1, 1], pad = [[1, 1], [1, 1]]",
                                       groups="batch_group_count = 1 : i64, "
                                              "feature_group_count = 2 : i64"),
     "(C11) expects input feature dimension (3) to be a multiple of feature_group_count"),
    ("convolution element types", conv("stride = [1, 1], pad = [[1, 1], [1, 1]]",
                                       rhs="tensor<3x3x3x4xf16>"),
     "(C27) expects lhs and rhs to have compatible element type"),
    ("cholesky", func("%a: tensor<3x3xf32>",
                      '  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> '
                      'tensor<3x3xf32>'), None),
    ("cholesky square", func("%a: tensor<3x2xf32>",
                             '  %0 = "stablehlo.cholesky"(%a) : (tensor<3x2xf32>) -> '
                             'tensor<3x2xf32>'), "(C3) minor dimensions of 'a' must have equal size"),
    ("triangular_solve", func(
        "%a: tensor<4x4xf32>, %b: tensor<4x3xf32>",
        '  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, '
        'transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : '
        '(tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>'), None),
    ("triangular_solve side", func(
        "%a: tensor<4x4xf32>, %b: tensor<4x3xf32>",
        '  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true, '
        'transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : '
        '(tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>'),
     "(C3) shared dimension of operands 'a' and 'b' must be compatible"),
    ("fft rfft", func("%a: tensor<3x8xf32>",
                      "  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<3x8xf32>) -> "
                      "tensor<3x5xcomplex<f32>>"), None),
    ("fft rfft result", func("%a: tensor<3x8xf32>",
                             "  %0 = stablehlo.fft %a, type = RFFT, length = [8] : "
                             "(tensor<3x8xf32>) -> tensor<3x8xcomplex<f32>>"),
     "(C2, C5) inferred type(s) 'tensor<3x5xcomplex<f32>>'"),
    ("fft complex input", func("%a: tensor<3x8xf32>",
                               "  %0 = stablehlo.fft %a, type = FFT, length = [8] : "
                               "(tensor<3x8xf32>) -> tensor<3x8xf32>"),
     "(C2) FFT/IFFT/IRFFT take a complex tensor as input"),
    ("fft length", func("%a: tensor<3x8xcomplex<f32>>",
                        "  %0 = stablehlo.fft %a, type = FFT, length = [1, 2, 3, 8] : "
                        "(tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>"),
     "(C3) rank must be between 1 and 3, but got 4."),
    ("batch_norm_inference", func(
        "%a: tensor<2x3xf32>, %s: tensor<3xf32>",
        '  %0 = "stablehlo.batch_norm_inference"(%a, %s, %s, %s, %s) {epsilon = 0.001 : f32, '
        'feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, '
        'tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>'), None),
    ("batch_norm_inference features", func(
        "%a: tensor<2x3xf32>, %s: tensor<3xf32>",
        '  %0 = "stablehlo.batch_norm_inference"(%a, %s, %s, %s, %s) {epsilon = 0.001 : f32, '
        'feature_index = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, '
        'tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>'),
     "(C5) expects the size of single-dimensional operands to be compatible with feature count"),
    ("batch_norm_training index", func(
        "%a: tensor<2x3xf32>, %s: tensor<3xf32>",
        '  %0:3 = "stablehlo.batch_norm_training"(%a, %s, %s) {epsilon = 0.001 : f32, '
        'feature_index = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> '
        '(tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)'),
     "(C1) expects featureIndex to be smaller than the rank of multi-dimensional operands"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_linalg_constraints(name, text, expected):
    assert_verdict(text, expected)


def test_quantized_dot_storage_ranges_may_differ():
    """C14 of dot_general (C29 of convolution) asks storage_type(lhs) = storage_type(rhs):
    i8 and i8<-127:127> are one storage type (upstream's pass tests use the pair), i8 and i16
    are not."""
    import shlo
    from shlo.errors import ShloError

    text = """func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32, 2.0:3>>,
                 %b: tensor<2x2x!quant.uniform<RHS:f32, 3.0>>)
    -> tensor<2x2x!quant.uniform<i32:f32, 6.0>> {
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<
      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}
    : (tensor<2x2x!quant.uniform<i8:f32, 2.0:3>>, tensor<2x2x!quant.uniform<RHS:f32, 3.0>>)
    -> tensor<2x2x!quant.uniform<i32:f32, 6.0>>
  return %0 : tensor<2x2x!quant.uniform<i32:f32, 6.0>>
}
"""
    shlo.verify(shlo.parse(text.replace("RHS", "i8<-127:127>")))
    with pytest.raises(ShloError, match="mismatched lhs and rhs quantization storage types"):
        shlo.verify(shlo.parse(text.replace("RHS", "i16")))
