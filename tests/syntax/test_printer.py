"""Printer unit tests: the exact text upstream prints, and round trips of hand-written IR."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

import shlo
from shlo.attributes import DenseElementsAttr
from shlo.syntax.equivalence import first_difference
from shlo.syntax.printer import format_attr, format_type
from shlo.types import TensorType, element_type


def pretty(text: str) -> str:
    return shlo.format(shlo.parse(textwrap.dedent(text)))


def body_lines(text: str) -> list[str]:
    """The printed ops of the single function (without module/func lines)."""
    lines = pretty(text).splitlines()
    return [ln.strip() for ln in lines[2:-2]]


def test_module_layout_and_value_names():
    out = pretty("""
        module @jit_main attributes {mhlo.num_partitions = 1 : i32} {
          func.func public @main(%x: tensor<2xf32> {jax.arg_info = "x"}) -> (tensor<2xf32> {jax.result_info = ""}) {
            %a = stablehlo.constant dense<1.0> : tensor<f32>
            %b = stablehlo.constant dense<2> : tensor<i32>
            %c = stablehlo.constant dense<3> : tensor<i32>
            %r = "stablehlo.add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
            return %r : tensor<2xf32>
          }
        }""")
    assert out == textwrap.dedent("""\
        module @jit_main attributes {mhlo.num_partitions = 1 : i32} {
          func.func public @main(%arg0: tensor<2xf32> {jax.arg_info = "x"}) -> (tensor<2xf32> {jax.result_info = ""}) {
            %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
            %c = stablehlo.constant dense<2> : tensor<i32>
            %c_0 = stablehlo.constant dense<3> : tensor<i32>
            %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
            return %0 : tensor<2xf32>
          }
        }
        """)


@pytest.mark.parametrize("generic, expected", [
    ('%0 = "stablehlo.abs"(%arg0) : (tensor<2xi32>) -> tensor<2xi32>',
     "%0 = stablehlo.abs %arg0 : tensor<2xi32>"),
    ('%0 = "stablehlo.convert"(%arg0) : (tensor<2xi32>) -> tensor<2xf32>',
     "%0 = stablehlo.convert %arg0 : (tensor<2xi32>) -> tensor<2xf32>"),
    ('%0 = "stablehlo.compare"(%arg0, %arg0) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>',
     "%0 = stablehlo.compare LT, %arg0, %arg0 : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>"),
    ('%0 = "stablehlo.compare"(%arg0, %arg0) {compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>',
     "%0 = stablehlo.compare GE, %arg0, %arg0, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>"),
    ('%0 = "stablehlo.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 1>} : (tensor<2xi32>) -> tensor<3x2xi32>',
     "%0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<2xi32>) -> tensor<3x2xi32>"),
    ('%0 = "stablehlo.slice"(%arg0) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 2>} : (tensor<2xi32>) -> tensor<1xi32>',
     "%0 = stablehlo.slice %arg0 [0:2:2] : (tensor<2xi32>) -> tensor<1xi32>"),
    ('%0 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<4xi32>',
     "%0 = stablehlo.iota dim = 0 : tensor<4xi32>"),
    ('%0 = "stablehlo.concatenate"(%arg0, %arg0) {dimension = 0 : i64} : (tensor<2xi32>, tensor<2xi32>) -> tensor<4xi32>',
     "%0 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<2xi32>, tensor<2xi32>) -> tensor<4xi32>"),
    ('%0 = "stablehlo.select"(%arg1, %arg0, %arg0) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>',
     "%0 = stablehlo.select %arg1, %arg0, %arg0 : tensor<2xi1>, tensor<2xi32>"),
    ('%0 = "stablehlo.transpose"(%arg0) {permutation = array<i64: 0>} : (tensor<2xi32>) -> tensor<2xi32>',
     "%0 = stablehlo.transpose %arg0, dims = [0] : (tensor<2xi32>) -> tensor<2xi32>"),
    ('%0 = "stablehlo.custom_call"(%arg0) {call_target_name = "foo-bar", has_side_effect = true} : (tensor<2xi32>) -> tensor<2xi32>',
     '%0 = stablehlo.custom_call @"foo-bar"(%arg0) {has_side_effect = true} : (tensor<2xi32>) -> tensor<2xi32>'),
    ('%0 = "stablehlo.get_tuple_element"(%arg2) {index = 0 : i32} : (tuple<tensor<2xi32>>) -> tensor<2xi32>',
     "%0 = stablehlo.get_tuple_element %arg2[0] : (tuple<tensor<2xi32>>) -> tensor<2xi32>"),
    ('%0 = "stablehlo.reduce_precision"(%arg0) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2xi32>) -> tensor<2xi32>',
     "%0 = stablehlo.reduce_precision %arg0, format = e5m10 : tensor<2xi32>"),
    ('%0 = "stablehlo.dot_general"(%arg0, %arg0) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGH>]} : (tensor<2xi32>, tensor<2xi32>) -> tensor<i32>',
     "%0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, HIGH] : (tensor<2xi32>, tensor<2xi32>) -> tensor<i32>"),
    ('%0 = "stablehlo.gather"(%arg0, %arg0) {dimension_numbers = #stablehlo.gather<start_index_map = [0], offset_dims = [], index_vector_dim = 1, collapsed_slice_dims = [0]>, slice_sizes = array<i64: 1>} : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>',
     '%0 = "stablehlo.gather"(%arg0, %arg0) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>'),
    ('"check.expect_eq_const"(%arg0) {value = dense<[1, 2]> : tensor<2xi32>} : (tensor<2xi32>) -> ()',
     "check.expect_eq_const %arg0, dense<[1, 2]> : tensor<2xi32>"),
])
def test_pretty_forms_as_upstream_prints_them(generic, expected):
    text = ("func.func @main(%arg0: tensor<2xi32>, %arg1: tensor<2xi1>, "
            "%arg2: tuple<tensor<2xi32>>) {\n  " + generic + "\n  return\n}")
    assert body_lines(text)[0] == expected


def test_convolution_and_reduce_forms():
    lines = body_lines("""
        func.func @main(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>, %c: tensor<f32>) {
          %0 = "stablehlo.convolution"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>, window_strides = array<i64: 2, 1>, window_reversal = array<i1: false, true>} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>
          %1 = "stablehlo.reduce"(%x, %c) ({
          ^bb0(%a: tensor<f32>, %b: tensor<f32>):
            %m = stablehlo.maximum %a, %b : tensor<f32>
            stablehlo.return %m : tensor<f32>
          }) {dimensions = array<i64: 1, 2>} : (tensor<1x4x4x1xf32>, tensor<f32>) -> tensor<1x1xf32>
          return
        }""")
    assert lines[0] == (
        "%0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->"
        "[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 0]], reverse = [false, "
        "true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : "
        "(tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>")
    assert lines[1] == ("%1 = stablehlo.reduce(%arg0 init: %arg2) applies stablehlo.maximum "
                        "across dimensions = [1, 2] : (tensor<1x4x4x1xf32>, tensor<f32>) -> "
                        "tensor<1x1xf32>")


def test_while_and_non_compact_reduce_layout():
    out = pretty("""
        func.func @main(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
          %0 = "stablehlo.while"(%c) ({
          ^bb0(%i: tensor<f32>):
            %p = stablehlo.compare LT, %i, %i : (tensor<f32>, tensor<f32>) -> tensor<i1>
            stablehlo.return %p : tensor<i1>
          }, {
          ^bb0(%i: tensor<f32>):
            %r = stablehlo.reduce(%x init: %i) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
             reducer(%a: tensor<f32>, %b: tensor<f32>) {
              %s = stablehlo.add %b, %a : tensor<f32>
              stablehlo.return %s : tensor<f32>
            }
            stablehlo.return %r : tensor<f32>
          }) : (tensor<f32>) -> tensor<f32>
          return %0 : tensor<f32>
        }""")
    assert out == textwrap.dedent("""\
        module {
          func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> tensor<f32> {
            %0 = stablehlo.while(%iterArg = %arg1) : tensor<f32>
            cond {
              %1 = stablehlo.compare  LT, %iterArg, %iterArg : (tensor<f32>, tensor<f32>) -> tensor<i1>
              stablehlo.return %1 : tensor<i1>
            } do {
              %1 = stablehlo.reduce(%arg0 init: %iterArg) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
               reducer(%arg2: tensor<f32>, %arg3: tensor<f32>)  {
                %2 = stablehlo.add %arg3, %arg2 : tensor<f32>
                stablehlo.return %2 : tensor<f32>
              }
              stablehlo.return %1 : tensor<f32>
            }
            return %0 : tensor<f32>
          }
        }
        """).replace("compare  LT", "compare LT")


def test_generic_form():
    m = shlo.parse("""func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}""")
    assert shlo.format(m, generic=True) == textwrap.dedent("""\
        "builtin.module"() ({
          "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "main"}> ({
          ^bb0(%arg0: tensor<2xf32>):
            %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2xf32>
            "func.return"(%0) : (tensor<2xf32>) -> ()
          }) : () -> ()
        }) : () -> ()
        """)


def test_ops_that_do_not_fit_their_pretty_form_print_generic():
    # dims given as a dense elements attribute (old spelling) cannot use `dims = [...]`
    lines = body_lines("""
        func.func @main(%a: tensor<2xf32>) {
          %0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = dense<0> : tensor<1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
          return
        }""")
    assert lines[0].startswith('%0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions '
                               '= dense<0> : tensor<1xi64>}>')


def test_float_spelling_matches_upstream():
    t = TensorType((7,), element_type("f32"))
    arr = np.array([1.0, 0.1, -23.808477, 3.2691625e18, np.nan, -np.inf, -0.0], np.float32)
    assert format_attr(DenseElementsAttr(t, arr)) == (
        "dense<[1.000000e+00, 1.000000e-01, -23.8084774, 3.26916253E+18, 0x7FC00000, 0xFF800000, "
        "-0.000000e+00]> : tensor<7xf32>")
    t64 = TensorType((2,), element_type("f64"))
    arr = np.array([-1.300025009986248E-8, 0.67679527440947607])
    assert format_attr(DenseElementsAttr(t64, arr)) == (
        "dense<[-1.300025009986248E-8, 0.67679527440947607]> : tensor<2xf64>")


def test_large_constants_print_as_hex_and_round_trip():
    t = TensorType((200,), element_type("f32"))
    arr = np.arange(200, dtype=np.float32)
    arr[3] = np.float32("nan")
    arr.view(np.uint32)[5] = 0x7FC00123  # NaN payload
    text = format_attr(DenseElementsAttr(t, arr))
    assert text.startswith('dense<"0x000000000000803F') and text.endswith('"> : tensor<200xf32>')
    m = shlo.parse(f'"t.op"() {{v = {text}}} : () -> ()')
    assert m.body.operations[0].attributes["v"].array.tobytes() == arr.tobytes()


def test_types_print():
    assert format_type(TensorType((None, 3), element_type("bf16"))) == "tensor<?x3xbf16>"
    assert str(TensorType((), element_type("complex<f64>"))) == "tensor<complex<f64>>"


def test_location_printing_with_debug_info():
    from shlo.syntax.printer import format_module

    m = shlo.parse('func.func @f() {\n  return loc("x.py":3:4)\n} loc(unknown)\n')
    out = format_module(m, debug_info=True)
    assert 'return loc("x.py":3:4)' in out


def test_print_parse_print_is_idempotent_and_ir_preserving():
    text = """
    func.func @main(%x: tensor<3xf32>, %t: !stablehlo.token) -> (tensor<3xf32>, !stablehlo.token) {
      %0 = stablehlo.constant dense<[1.0, 2.5, 0x7FC00001]> : tensor<3xf32>
      %1 = stablehlo.custom_call @foo(%x, %0) {backend_config = "\\00\\FF", api_version = 2 : i32} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      %2 = stablehlo.after_all %t, %t : !stablehlo.token
      %3:2 = "stablehlo.sort"(%x, %1) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
        %p = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      }) {dimension = 0 : i64, is_stable = true} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
      return %3#1, %2 : tensor<3xf32>, !stablehlo.token
    }"""
    m1 = shlo.parse(text)
    p1 = shlo.format(m1)
    m2 = shlo.parse(p1)
    assert first_difference(m1, m2) is None
    assert shlo.format(m2) == p1
    g = shlo.format(m1, generic=True)
    assert first_difference(m1, shlo.parse(g)) is None


def test_location_aliases_are_those_printed():
    """A pretty form that leaves its body out (reduce's `applies`) leaves its ops' locations
    out too: no alias for them (MLIR's alias collection goes through the printer likewise), so
    printing what was printed gives the same text."""
    text = """module {
  func.func @f(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%x: tensor<f32>, %y: tensor<f32>)  {
      %s = stablehlo.add %x, %y : tensor<f32> loc("inner.py":7:1)
      stablehlo.return %s : tensor<f32> loc("inner.py":8:1)
    } loc("outer.py":1:1)
    return %0 : tensor<f32> loc("outer.py":2:1)
  } loc("outer.py":3:1)
} loc("outer.py":4:1)
"""
    once = shlo.format(shlo.parse(text, "r.mlir"), debug_info=True)
    assert "applies stablehlo.add" in once and "inner.py" not in once
    assert once.endswith('#loc = loc("outer.py":4:1)\n#loc1 = loc("outer.py":3:1)\n'
                         '#loc2 = loc("outer.py":1:1)\n#loc3 = loc("outer.py":2:1)\n')
    assert shlo.format(shlo.parse(once, "r.mlir"), debug_info=True) == once
