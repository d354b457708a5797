"""Constraints of the element-wise ops (spec "Ops": C1..Cn), valid and invalid programs."""

import pytest

from constraint_util import assert_verdict, func

Q = "!quant.uniform<i8:f32, 0.5:3>"
QA = "!quant.uniform<i8:f32:0, {0.5:3, 0.25:1}>"

CASES = [
    # unary, same type
    ("sine", func("%a: tensor<2xf32>", "  %0 = stablehlo.sine %a : tensor<2xf32>"), None),
    ("sine int", func("%a: tensor<2xi32>", "  %0 = stablehlo.sine %a : tensor<2xi32>"),
     "(I1) operand #0 must be ranked tensor of"),
    ("sine per-tensor quantized", func(f"%a: tensor<2x{Q}>",
                                       f"  %0 = stablehlo.sine %a : tensor<2x{Q}>"), None),
    ("sine per-axis quantized", func(f"%a: tensor<2x{QA}>",
                                     f"  %0 = stablehlo.sine %a : tensor<2x{QA}>"),
     "operand #0 must be ranked tensor of"),
    ("cosine result shape", func("%a: tensor<2xf32>",
                                 '  %0 = "stablehlo.cosine"(%a) : (tensor<2xf32>) -> tensor<3xf32>'),
     "(C1) requires the same shape for all operands and results"),
    ("floor complex", func("%a: tensor<2xcomplex<f32>>",
                           "  %0 = stablehlo.floor %a : tensor<2xcomplex<f32>>"),
     "operand #0 must be"),
    ("popcnt", func("%a: tensor<2xi8>", "  %0 = stablehlo.popcnt %a : tensor<2xi8>"), None),
    ("not float", func("%a: tensor<2xf32>", "  %0 = stablehlo.not %a : tensor<2xf32>"),
     "operand #0 must be"),
    ("negate unsigned", func("%a: tensor<2xui8>", "  %0 = stablehlo.negate %a : tensor<2xui8>"),
     None),
    ("sign unsigned", func("%a: tensor<2xui8>", "  %0 = stablehlo.sign %a : tensor<2xui8>"),
     "operand #0 must be"),
    ("result accuracy highest", func(
        "%a: tensor<2xf32>",
        '  %0 = "stablehlo.exponential"(%a) {result_accuracy = #stablehlo.result_accuracy<'
        'atol = 1.0, rtol = 0.0, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} '
        ': (tensor<2xf32>) -> tensor<2xf32>'),
     "Invalid tolerances for ResultAccuracyAttr with mode HIGHEST"),
    # binary
    ("add dynamic", func("%a: tensor<?xf32>, %b: tensor<2xf32>",
                         '  %0 = "stablehlo.add"(%a, %b) : (tensor<?xf32>, tensor<2xf32>) -> '
                         'tensor<2xf32>'), None),
    ("add element types", func("%a: tensor<2xf32>, %b: tensor<2xf16>",
                               '  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf16>) '
                               '-> tensor<2xf32>'),
     "(C1) op requires the same element type for all operands and results"),
    ("add quantized and float", func(f"%a: tensor<2x{Q}>",
                                     f'  %0 = "stablehlo.add"(%a, %a) : (tensor<2x{Q}>, '
                                     f'tensor<2x{Q}>) -> tensor<2xf32>'),
     "(C2) expects all operands and results to be either quantized or non-quantized"),
    ("add per-axis dims", func(
        "%a: tensor<2x2x!quant.uniform<i8:f32:0, {1.0:1, 1.0:1}>>",
        '  %0 = "stablehlo.add"(%a, %a) : (tensor<2x2x!quant.uniform<i8:f32:0, {1.0:1, 1.0:1}>>,'
        ' tensor<2x2x!quant.uniform<i8:f32:0, {1.0:1, 1.0:1}>>) -> '
        'tensor<2x2x!quant.uniform<i8:f32:1, {1.0:1, 1.0:1}>>'),
     "(C6) quantization_dimension of lhs and result are not same"),
    ("subtract bool", func("%a: tensor<2xi1>", "  %0 = stablehlo.subtract %a, %a : tensor<2xi1>"),
     "operand #0 must be"),
    ("and int to float result", func(
        "%a: tensor<2xi32>",
        '  %0 = "stablehlo.and"(%a, %a) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xf32>'),
     "(C1) requires compatible types"),
    ("shift float", func("%a: tensor<2xf32>",
                         "  %0 = stablehlo.shift_left %a, %a : tensor<2xf32>"),
     "operand #0 must be"),
    # special
    ("abs complex", func("%a: tensor<2xcomplex<f32>>",
                         '  %0 = "stablehlo.abs"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>'),
     None),
    ("abs complex wrong width", func(
        "%a: tensor<2xcomplex<f32>>",
        '  %0 = "stablehlo.abs"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xf64>'),
     "(C1, C2) inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of "
     "operation 'tensor<2xf64>'"),
    ("imag", func("%a: tensor<2xcomplex<f64>>",
                  '  %0 = "stablehlo.imag"(%a) : (tensor<2xcomplex<f64>>) -> tensor<2xf32>'),
     "inferred type(s) 'tensor<2xf64>'"),
    ("complex", func("%a: tensor<2xf32>",
                     '  %0 = "stablehlo.complex"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> '
                     'tensor<2xcomplex<f32>>'), None),
    ("complex wrong", func("%a: tensor<2xf32>",
                           '  %0 = "stablehlo.complex"(%a, %a) : (tensor<2xf32>, tensor<2xf32>)'
                           ' -> tensor<2xcomplex<f64>>'), "(C2, C3) inferred type(s)"),
    ("complex f16", func("%a: tensor<2xf16>",
                         '  %0 = "stablehlo.complex"(%a, %a) : (tensor<2xf16>, tensor<2xf16>) '
                         '-> tensor<2xcomplex<f32>>'), "operand #0 must be"),
    ("is_finite", func("%a: tensor<2xf32>",
                       "  %0 = stablehlo.is_finite %a : (tensor<2xf32>) -> tensor<2xi1>"), None),
    ("is_finite shape", func("%a: tensor<2xf32>",
                             "  %0 = stablehlo.is_finite %a : (tensor<2xf32>) -> tensor<3xi1>"),
     "(C1)"),
    ("compare", func("%a: tensor<2xf32>",
                     "  %0 = stablehlo.compare LT, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> "
                     "tensor<2xi1>"), None),
    ("compare element types", func(
        "%a: tensor<2xf32>, %b: tensor<2xi32>",
        "  %0 = stablehlo.compare LT, %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xi1>"),
     "(C1) requires compatible element types for lhs and rhs"),
    ("compare shape", func("%a: tensor<2xf32>",
                           "  %0 = stablehlo.compare LT, %a, %a : (tensor<2xf32>, tensor<2xf32>)"
                           " -> tensor<3xi1>"), "(C2)"),
    ("select scalar pred", func("%p: tensor<i1>, %a: tensor<2xf32>",
                                "  %0 = stablehlo.select %p, %a, %a : tensor<i1>, tensor<2xf32>"),
     None),
    ("select pred shape", func("%p: tensor<3xi1>, %a: tensor<2xf32>",
                               '  %0 = "stablehlo.select"(%p, %a, %a) : (tensor<3xi1>, '
                               'tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>'), "(C1)"),
    ("select branches", func("%p: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xi32>",
                             '  %0 = "stablehlo.select"(%p, %a, %b) : (tensor<i1>, '
                             'tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>'),
     "(C2) requires compatible types for non-predicate operands"),
    ("clamp scalar bounds", func("%m: tensor<f32>, %a: tensor<2xf32>",
                                 "  %0 = stablehlo.clamp %m, %a, %m : (tensor<f32>, tensor<2xf32>, "
                                 "tensor<f32>) -> tensor<2xf32>"), None),
    ("clamp max shape", func("%m: tensor<f32>, %a: tensor<2xf32>, %x: tensor<3xf32>",
                             "  %0 = stablehlo.clamp %m, %a, %x : (tensor<f32>, tensor<2xf32>, "
                             "tensor<3xf32>) -> tensor<2xf32>"),
     "(C2) max shape [3] is not scalar and is not compatible to operand shape [2]"),
    ("convert", func("%a: tensor<2xf32>",
                     "  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xi8>"), None),
    ("convert shape", func("%a: tensor<2xf32>",
                           "  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<3xi8>"),
     "(C1)"),
    ("bitcast wider", func("%a: tensor<2x2xf32>",
                           "  %0 = stablehlo.bitcast_convert %a : (tensor<2x2xf32>) -> "
                           "tensor<2xf64>"), None),
    ("bitcast widths", func("%a: tensor<2x4xf32>",
                            "  %0 = stablehlo.bitcast_convert %a : (tensor<2x4xf32>) -> "
                            "tensor<2xf64>"), "(C1) requires compatible bit widths"),
    ("bitcast complex", func("%a: tensor<2xf64>",
                             "  %0 = stablehlo.bitcast_convert %a : (tensor<2xf64>) -> "
                             "tensor<2xcomplex<f32>>"),
     "(C2) cannot convert between real and complex types"),
    ("reduce_precision", func("%a: tensor<2xf32>",
                              "  %0 = stablehlo.reduce_precision %a, format = e5m2 : "
                              "tensor<2xf32>"), None),
    ("reduce_precision exponent", func(
        "%a: tensor<2xf32>",
        '  %0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 0 : i32, mantissa_bits = 2 : '
        'i32} : (tensor<2xf32>) -> tensor<2xf32>'), "(C2)"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_elementwise_constraints(name, text, expected):
    assert_verdict(text, expected)
