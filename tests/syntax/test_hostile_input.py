"""Hostile parser input (issue 16's campaign): each case is a ParseError with a location and a
message, never another exception, and printed programs parse back."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.errors import ParseError

BIG = "9" * 5000

_FN = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {{\n{body}\n  return {ret} : tensor<2xf32>\n}}"

CASES = {
    "5000-digit dimension": (
        "func.func @main(%x: tensor<" + BIG + "xf32>) -> tensor<2xf32> {\n"
        "  return %x : tensor<2xf32>\n}", "integer literal of 5000 digits is too long"),
    "5000-digit module attribute": (
        "module attributes {mhlo.num_partitions = " + BIG + " : i32} {}",
        "integer literal of 5000 digits is too long"),
    "5000-digit channel handle": (
        _FN.format(body='  %0 = "stablehlo.all_reduce"(%x) ({\n  ^b(%a: tensor<f32>, %c: tensor<f32>):\n'
                        '    %s = stablehlo.add %a, %c : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n'
                        '  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, channel_handle = '
                        '#stablehlo.channel_handle<handle = ' + BIG + ', type = 0>} : '
                        '(tensor<2xf32>) -> tensor<2xf32>', ret="%0"),
        "integer literal of 5000 digits is too long"),
    "decimal integer for a float": (
        "module attributes {epsilon = 4294967296 : f32} {}",
        "unexpected decimal integer literal for a floating point value"),
    "hex float too wide": (
        "module attributes {epsilon = 0x123456789 : f32} {}",
        "hexadecimal float constant 0x123456789 out of range for type"),
    "dense literal of an opaque type": (
        "module attributes {x = dense<true> : tensor<!a.b>} {}",
        "dense literal of element type !a.b is not supported"),
    "5000-digit quantization scale": (
        "func.func @main(%a: tensor<2x!quant.uniform<i8:f32, " + BIG + ":3>>) -> () { return }",
        "integer literal of 5000 digits is too long"),
    "hex quantization scale wider than f64": (
        "func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0x" + "F" * 300 + ":0>>) -> () "
        "{ return }", "hexadecimal float constant out of range for type"),
    "5000-digit zero point": (
        "func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:" + BIG + ">>) -> () { return }",
        "integer literal of 5000 digits is too long"),
    "5000-digit dims list": (
        _FN.format(body="  %0 = stablehlo.transpose %x, dims = [" + BIG + "] : (tensor<2xf32>) "
                        "-> tensor<2xf32>", ret="%0"), "integer literal of 5000 digits is too long"),
    "float number of partitions": (
        "module attributes {mhlo.num_partitions = 1.5 : i32} {}",
        "floating point value not valid for specified type"),
    "float in raw conv dimension numbers": (
        "module attributes {x = #stablehlo.conv<raw input_batch_dimension = 0, "
        "input_feature_dimension = 1.5, input_spatial_dimensions = [], "
        "kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 1, "
        "kernel_spatial_dimensions = [], output_batch_dimension = 0, output_feature_dimension = 1, "
        "output_spatial_dimensions = []>} {}", "expected integer value"),
    "float in dot dimension numbers": (
        "module attributes {x = #stablehlo.dot<lhs_batching_dimensions = [1.5]>} {}",
        "expected integer value (failed parsing dot dimension numbers)"),
    "unsupported integer width after a space": (
        "func.func @main(%a: tensor<2x i6>) -> () { return }", "unknown element type 'i6'"),
    "5000-digit reduce_precision format": (
        _FN.format(body="  %0 = stablehlo.reduce_precision %x, format = e5m" + BIG + " : tensor<2xf32>",
                   ret="%0"),
        "expected exponent mantissa in format e#m#, saw e5m999"),
}


@pytest.mark.parametrize("name", CASES)
def test_hostile_input_is_a_located_parse_error(name):
    text, message = CASES[name]
    with pytest.raises(ParseError) as e:
        shlo.parse(text)
    assert message in str(e.value)
    assert e.value.diagnostics[0].line >= 1


def test_unknown_op_is_named_once():
    text = _FN.format(body="  %0 = stablehlo.tanhh %x : tensor<2xf32>", ret="%0")
    with pytest.raises(ParseError) as e:
        shlo.parse(text)
    msg = str(e.value)
    assert "custom op 'stablehlo.tanhh' is unknown" in msg and "func.func" not in msg
    assert msg.startswith("<string>:2:8: error: ")


def test_leading_zeros_are_decimal_as_in_mlir():
    m = shlo.parse("module attributes {x = 011 : i32, y = 0x11 : i32, z = [011, 05]} {}")
    assert m.op.attributes["x"].value == 11 and m.op.attributes["y"].value == 17
    assert [a.value for a in m.op.attributes["z"].values] == [11, 5]
    t = _FN.format(body="  %0 = stablehlo.transpose %x, dims = [00] : (tensor<2xf32>) -> "
                        "tensor<2xf32>", ret="%0")
    op = shlo.parse(t).function("main").regions[0].blocks[0].operations[0]
    assert list(op.attr("permutation").values) == [0]
    t = _FN.format(body='  %0 = "stablehlo.all_reduce"(%x) ({\n  ^b(%a: tensor<f32>, %c: tensor<f32>):\n'
                        '    %s = stablehlo.add %a, %c : tensor<f32>\n    stablehlo.return %s : '
                        'tensor<f32>\n  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, '
                        'channel_handle = #stablehlo.channel_handle<handle = 1, type = 06>} : '
                        '(tensor<2xf32>) -> tensor<2xf32>', ret="%0")
    op = shlo.parse(t).function("main").regions[0].blocks[0].operations[0]
    assert "type = 6" in shlo.format(shlo.parse(t)) and op.name == "stablehlo.all_reduce"


def test_load_of_invalid_utf8_is_a_located_parse_error(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_bytes(b"func.func @f() {\xff\n  return\n}\n")
    with pytest.raises(ParseError, match="not UTF-8"):
        shlo.load(str(f))


def test_reduce_precision_with_negative_bits_prints_in_a_form_that_parses_back():
    text = _FN.format(body='  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 1 : i32, '
                           'mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>', ret="%0")
    printed = shlo.format(shlo.parse(text))
    assert "m-1" not in printed
    again = shlo.parse(printed)
    op = again.function("main").regions[0].blocks[0].operations[0]
    assert op.attributes.get("mantissa_bits", op.properties.get("mantissa_bits")).value == -1
    np.testing.assert_equal(shlo.format(again), printed)
