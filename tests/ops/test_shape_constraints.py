"""Constraints of the shape ops (spec "Ops": C1..Cn), valid and invalid programs."""

import pytest

from constraint_util import assert_verdict, func

QA1 = "!quant.uniform<i8:f32:1, {0.5:3, 0.25:1}>"

CASES = [
    ("constant", func("", "  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>"), None),
    ("constant type", func("", '  %0 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} :'
                               ' () -> tensor<3xi32>'), "(C1) inferred type(s) 'tensor<i32>'"),
    ("constant dynamic", func("", '  %0 = "stablehlo.constant"() {value = dense<1> : '
                                  'tensor<1xi32>} : () -> tensor<?xi32>'), "result #0 must be"),
    ("iota", func("", "  %0 = stablehlo.iota dim = 1 : tensor<2x3xf32>"), None),
    ("iota dimension", func("", "  %0 = stablehlo.iota dim = 2 : tensor<2x3xf32>"),
     "(C1) iota dimension cannot go beyond the output rank"),
    ("broadcast_in_dim", func("%a: tensor<1x3xf32>",
                              "  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 2] : "
                              "(tensor<1x3xf32>) -> tensor<4x2x3xf32>"), None),
    ("broadcast_in_dim size", func("%a: tensor<1x3xf32>",
                                   "  %0 = stablehlo.broadcast_in_dim %a, dims = [0] : "
                                   "(tensor<1x3xf32>) -> tensor<4x2x3xf32>"),
     "(C2) broadcast_dimensions size (1) does not match operand rank (2)"),
    ("broadcast_in_dim range", func("%a: tensor<3xf32>",
                                    "  %0 = stablehlo.broadcast_in_dim %a, dims = [2] : "
                                    "(tensor<3xf32>) -> tensor<4x3xf32>"),
     "(C3) broadcast_dimensions contains invalid value 2 for result with rank 2"),
    ("broadcast_in_dim unique", func("%a: tensor<3x3xf32>",
                                     "  %0 = stablehlo.broadcast_in_dim %a, dims = [1, 1] : "
                                     "(tensor<3x3xf32>) -> tensor<3x3xf32>"), "(C4)"),
    ("broadcast_in_dim sizes", func("%a: tensor<3xf32>",
                                    "  %0 = stablehlo.broadcast_in_dim %a, dims = [0] : "
                                    "(tensor<3xf32>) -> tensor<4x3xf32>"),
     "(C5) size of operand dimension 0 (3) is not equal to 1 or size of result dimension 0"),
    ("broadcast_in_dim per-axis", func(
        f"%a: tensor<1x2x{QA1}>",
        f"  %0 = stablehlo.broadcast_in_dim %a, dims = [0, 2] : (tensor<1x2x{QA1}>) -> "
        f"tensor<3x2x2x{QA1}>"),
     "(C6) result quantization_dimension 1 not same as broadcast_dimensions[1] = 2"),
    ("concatenate", func("%a: tensor<2x3xf32>, %b: tensor<2x1xf32>",
                         "  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, "
                         "tensor<2x1xf32>) -> tensor<2x4xf32>"), None),
    ("concatenate non-concat dim", func(
        "%a: tensor<2x3xf32>, %b: tensor<3x1xf32>",
        "  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<3x1xf32>) -> "
        "tensor<2x4xf32>"), "(C2) shapes of operand (0) and (1) are not compatible"),
    ("concatenate result", func("%a: tensor<2x3xf32>",
                                "  %0 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<2x3xf32>,"
                                " tensor<2x3xf32>) -> tensor<5x3xf32>"),
     "(C5, C6) inferred type(s) 'tensor<4x3xf32>'"),
    ("pad", func("%a: tensor<2x3xf32>, %p: tensor<f32>",
                 "  %0 = stablehlo.pad %a, %p, low = [1, 0], high = [0, -1], interior = [1, 0] : "
                 "(tensor<2x3xf32>, tensor<f32>) -> tensor<4x2xf32>"), None),
    ("pad interior", func("%a: tensor<2x3xf32>, %p: tensor<f32>",
                          "  %0 = stablehlo.pad %a, %p, low = [0, 0], high = [0, 0], interior = "
                          "[-1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<1x3xf32>"), "(C3)"),
    ("pad element type", func("%a: tensor<2x3xf32>, %p: tensor<i32>",
                              "  %0 = stablehlo.pad %a, %p, low = [0, 0], high = [0, 0], "
                              "interior = [0, 0] : (tensor<2x3xf32>, tensor<i32>) -> "
                              "tensor<2x3xf32>"), "(C1)"),
    ("reshape", func("%a: tensor<2x3xf32>",
                     "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<3x2xf32>"), None),
    ("reshape size", func("%a: tensor<2x3xf32>",
                          "  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>"),
     "(C2) number of output elements (7) doesn't match expected number of elements (6)"),
    ("reverse", func("%a: tensor<2x3xf32>",
                     "  %0 = stablehlo.reverse %a, dims = [1] : tensor<2x3xf32>"), None),
    ("reverse range", func("%a: tensor<2x3xf32>",
                           "  %0 = stablehlo.reverse %a, dims = [2] : tensor<2x3xf32>"), "(C3)"),
    ("slice", func("%a: tensor<5x4xf32>",
                   "  %0 = stablehlo.slice %a [1:5:2, 0:4] : (tensor<5x4xf32>) -> tensor<2x4xf32>"),
     None),
    ("slice limit", func("%a: tensor<5x4xf32>",
                         "  %0 = stablehlo.slice %a [1:6, 0:4] : (tensor<5x4xf32>) -> "
                         "tensor<5x4xf32>"),
     "(C3) limit index 6 is larger than dimension size 5 in dimension 0"),
    ("slice result", func("%a: tensor<5x4xf32>",
                          "  %0 = stablehlo.slice %a [1:5:2, 0:4] : (tensor<5x4xf32>) -> "
                          "tensor<3x4xf32>"), "(C1, C5) inferred type(s) 'tensor<2x4xf32>'"),
    ("transpose", func("%a: tensor<2x3x4xf32>",
                       "  %0 = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> "
                       "tensor<4x2x3xf32>"), None),
    ("transpose permutation", func("%a: tensor<2x3xf32>",
                                   "  %0 = stablehlo.transpose %a, dims = [0, 0] : "
                                   "(tensor<2x3xf32>) -> tensor<2x2xf32>"), "(C2)"),
    ("get_dimension_size", func("%a: tensor<2x3xf32>",
                                "  %0 = stablehlo.get_dimension_size %a, dim = 1 : "
                                "(tensor<2x3xf32>) -> tensor<i32>"), None),
    ("get_dimension_size range", func("%a: tensor<2x3xf32>",
                                      "  %0 = stablehlo.get_dimension_size %a, dim = 2 : "
                                      "(tensor<2x3xf32>) -> tensor<i32>"),
     "(C1) requires dimension attribute in range [0, 2); found (2)"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_shape_constraints(name, text, expected):
    assert_verdict(text, expected)
