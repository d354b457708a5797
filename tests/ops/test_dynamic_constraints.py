"""Constraints of the dynamic-shape ops (beyond the seed spec), the random ops, the
quantization ops and the chlo ops."""

import pytest

from constraint_util import assert_verdict, func

CASES = [
    ("dynamic_broadcast_in_dim", func("%a: tensor<?x3xf32>, %s: tensor<2xi64>",
                                      "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = "
                                      "[0, 1] : (tensor<?x3xf32>, tensor<2xi64>) -> "
                                      "tensor<?x3xf32>"), None),
    ("dynamic_broadcast_in_dim constant shape", func(
        "%a: tensor<3xf32>",
        "  %s = stablehlo.constant dense<[2, 4]> : tensor<2xi64>\n"
        "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1] : (tensor<3xf32>, "
        "tensor<2xi64>) -> tensor<2x?xf32>"),
     "size of operand dimension 0 (3) is not equal to 1 or value of shape at index 1 (4)"),
    ("dynamic_broadcast_in_dim hints", func(
        "%a: tensor<?xf32>, %s: tensor<2xi64>",
        '  %0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: '
        '1>, known_expanding_dimensions = array<i64: 0>, known_nonexpanding_dimensions = '
        'array<i64: 0>} : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>'),
     "duplicate expansion hint for at least one operand dimension"),
    ("dynamic_reshape", func("%a: tensor<?xf32>, %s: tensor<2xi64>",
                             "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<?xf32>, "
                             "tensor<2xi64>) -> tensor<?x?xf32>"), None),
    ("dynamic_reshape rank", func("%a: tensor<?xf32>, %s: tensor<2xi64>",
                                  "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<?xf32>, "
                                  "tensor<2xi64>) -> tensor<?xf32>"),
     "result should have a rank equal to the number of elements in output_shape"),
    ("dynamic_iota", func("%s: tensor<2xi64>",
                          "  %0 = stablehlo.dynamic_iota %s, dim = 2 : (tensor<2xi64>) -> "
                          "tensor<?x?xf32>"), "iota dimension cannot go beyond the output rank"),
    ("dynamic_pad", func("%a: tensor<?xf32>, %p: tensor<f32>, %l: tensor<2xi64>",
                         "  %0 = stablehlo.dynamic_pad %a, %p, %l, %l, %l : (tensor<?xf32>, "
                         "tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> "
                         "tensor<?xf32>"), "padding operands size (2) must match operand rank (1)"),
    ("dynamic_gather", func(
        "%a: tensor<3x4xf32>, %i: tensor<2x1xi64>, %s: tensor<2xi64>",
        '  %0 = "stablehlo.dynamic_gather"(%a, %i, %s) {dimension_numbers = #stablehlo.gather<'
        'offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim ='
        ' 1>} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x?xf32>'), None),
    ("set_dimension_size", func("%a: tensor<4xf32>, %n: tensor<i32>",
                                '  %0 = "stablehlo.set_dimension_size"(%a, %n) {dimension = 1 : '
                                'i64} : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32>'),
     "requires dimension attribute in range [0, 1); found (1)"),
    ("rng", func("%a: tensor<f32>, %s: tensor<2xi64>",
                 "  %0 = stablehlo.rng %a, %a, %s, distribution = NORMAL : (tensor<f32>, "
                 "tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>"), None),
    ("rng normal ints", func("%a: tensor<i32>, %s: tensor<2xi64>",
                             "  %0 = stablehlo.rng %a, %a, %s, distribution = NORMAL : "
                             "(tensor<i32>, tensor<i32>, tensor<2xi64>) -> tensor<?x?xi32>"),
     "(C2) mu and sigma must be floats"),
    ("rng shape", func("%a: tensor<f32>",
                       "  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>\n"
                       "  %0 = stablehlo.rng %a, %a, %s, distribution = UNIFORM : (tensor<f32>, "
                       "tensor<f32>, tensor<2xi64>) -> tensor<3x2xf32>"),
     "(C3) inferred type(s) 'tensor<2x3xf32>'"),
    ("rng_bit_generator", func("%s: tensor<2xui64>",
                               "  %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : "
                               "(tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)"), None),
    ("rng_bit_generator state", func("%s: tensor<2xui64>",
                                     "  %0:2 = stablehlo.rng_bit_generator %s, algorithm = "
                                     "THREE_FRY : (tensor<2xui64>) -> (tensor<3xui64>, "
                                     "tensor<3xui32>)"),
     "(C1) output state shape must be compatible with initial state shape"),
    ("uniform_quantize", func("%a: tensor<2xf32>",
                              "  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> "
                              "tensor<2x!quant.uniform<i8:f32, 0.5:1>>"), None),
    ("uniform_quantize per-axis dims", func(
        "%a: tensor<2x3xf32>",
        "  %0 = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> "
        "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.5:1}>>"), "result #0 must be"),
    ("uniform_dequantize", func("%a: tensor<2x!quant.uniform<i8:f32, 0.5:1>>",
                                "  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform"
                                "<i8:f32, 0.5:1>>) -> tensor<2xf16>"), "(C2)"),
    ("zero point out of range", func("%a: tensor<2x!quant.uniform<i8:f32, 0.5:300>>",
                                     "  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant."
                                     "uniform<i8:f32, 0.5:300>>) -> tensor<2xf32>"),
     "operand #0 must be"),
    ("chlo unary", func("%a: tensor<2xf32>", "  %0 = chlo.erf %a : tensor<2xf32> -> tensor<2xf32>"),
     None),
    ("chlo unary type", func("%a: tensor<2xi32>",
                             '  %0 = "chlo.erf"(%a) : (tensor<2xi32>) -> tensor<2xi32>'),
     "operand #0 must be"),
    ("chlo broadcast", func("%a: tensor<2x3xf32>, %b: tensor<3xf32>",
                            '  %0 = "chlo.broadcast_add"(%a, %b) : (tensor<2x3xf32>, '
                            'tensor<3xf32>) -> tensor<2x3xf32>'), None),
    ("chlo broadcast shapes", func("%a: tensor<2x3xf32>, %b: tensor<4xf32>",
                                   '  %0 = "chlo.broadcast_add"(%a, %b) : (tensor<2x3xf32>, '
                                   'tensor<4xf32>) -> tensor<2x3xf32>'),
     None),  # shapes that do not broadcast leave the result unknown: MLIR accepts (issue 16)
    ("chlo top_k", func("%a: tensor<2x5xf32>",
                        '  %0:2 = "chlo.top_k"(%a) {k = 8 : i64} : (tensor<2x5xf32>) -> '
                        '(tensor<2x8xf32>, tensor<2x8xi32>)'),
     "operand's last dimension must be at least 8"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_dynamic_random_quantization_chlo_constraints(name, text, expected):
    assert_verdict(text, expected)
