"""Constraints of reduce, reduce_window, select_and_scatter, map and sort (spec "Ops")."""

import pytest

from constraint_util import assert_verdict, func


def reduce(dims="1", arg="tensor<f32>", result="tensor<4xf32>", init="tensor<f32>") -> str:
    return func(
        f"%a: tensor<4x6xf32>, %i: {init}",
        f'  %0 = "stablehlo.reduce"(%a, %i) ({{\n'
        f'  ^bb0(%x: {arg}, %y: {arg}):\n'
        f'    %1 = stablehlo.add %x, %y : {arg}\n'
        f'    stablehlo.return %1 : {arg}\n'
        f'  }}) {{dimensions = array<i64: {dims}>}} : (tensor<4x6xf32>, {init}) -> {result}')


def reduce_window(attrs: str, result="tensor<2x6xf32>") -> str:
    return func(
        "%a: tensor<4x6xf32>, %i: tensor<f32>",
        f'  %0 = "stablehlo.reduce_window"(%a, %i) ({{\n'
        f'  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
        f'    %1 = stablehlo.maximum %x, %y : tensor<f32>\n'
        f'    stablehlo.return %1 : tensor<f32>\n'
        f'  }}) {{{attrs}}} : (tensor<4x6xf32>, tensor<f32>) -> {result}')


def select_and_scatter(source="tensor<2x6xf32>", select_arg="tensor<f32>",
                       strides="2, 1") -> str:
    return func(
        f"%a: tensor<4x6xf32>, %s: {source}, %i: tensor<f32>",
        f'  %0 = "stablehlo.select_and_scatter"(%a, %s, %i) ({{\n'
        f'  ^bb0(%x: {select_arg}, %y: {select_arg}):\n'
        f'    %1 = stablehlo.compare GE, %x, %y : ({select_arg}, {select_arg}) -> tensor<i1>\n'
        f'    stablehlo.return %1 : tensor<i1>\n'
        f'  }}, {{\n'
        f'  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
        f'    %1 = stablehlo.add %x, %y : tensor<f32>\n'
        f'    stablehlo.return %1 : tensor<f32>\n'
        f'  }}) {{window_dimensions = array<i64: 2, 1>, window_strides = array<i64: {strides}>}} '
        f': (tensor<4x6xf32>, {source}, tensor<f32>) -> tensor<4x6xf32>')


def sort(dimension="0", arg="tensor<f32>", ret="tensor<i1>") -> str:
    return func(
        "%a: tensor<4x3xf32>",
        f'  %0 = "stablehlo.sort"(%a) ({{\n'
        f'  ^bb0(%x: {arg}, %y: {arg}):\n'
        f'    %1 = "stablehlo.compare"(%x, %y) {{comparison_direction = '
        f'#stablehlo<comparison_direction GT>}} : ({arg}, {arg}) -> {ret}\n'
        f'    stablehlo.return %1 : {ret}\n'
        f'  }}) {{dimension = {dimension} : i64}} : (tensor<4x3xf32>) -> tensor<4x3xf32>')


CASES = [
    ("reduce", reduce(), None),
    ("reduce promotable", reduce(arg="tensor<f64>", result="tensor<4xf64>"), None),
    ("reduce dimension", reduce(dims="2"),
     "(C4) Out-of-bounds dimension 2, expected to be in range [0, 2)"),
    ("reduce unique", reduce(dims="1, 1", result="tensor<4xf32>"), "(C5)"),
    ("reduce result", reduce(result="tensor<6xf32>"),
     "(C7, C8) inferred type(s) 'tensor<4xf32>' are incompatible"),
    ("reduce body types", reduce(arg="tensor<i32>", result="tensor<4xi32>"),
     "(C6) The element-type of reduction-region's result type at index 0 is expected to be "
     "promotable"),
    ("reduce_window", reduce_window("window_dimensions = array<i64: 2, 1>, window_strides = "
                                    "array<i64: 2, 1>"), None),
    ("reduce_window padded", reduce_window("window_dimensions = array<i64: 2, 1>, window_strides "
                                           "= array<i64: 2, 1>, padding = dense<[[1, 1], [0, 0]]>"
                                           " : tensor<2x2xi64>", "tensor<3x6xf32>"), None),
    ("reduce_window dims size", reduce_window("window_dimensions = array<i64: 2>"),
     "(C4) expects window-dimensions size == input rank"),
    ("reduce_window stride", reduce_window("window_dimensions = array<i64: 2, 1>, window_strides "
                                           "= array<i64: 0, 1>"),
     "(C6, C7) expects window to have positive stride for 0-th window dimension"),
    ("reduce_window padding shape", reduce_window("window_dimensions = array<i64: 2, 1>, padding ="
                                                  " dense<[1, 1]> : tensor<2xi64>"),
     "(C12) expects the shape of padding-attribute to be {N, 2}, but got {2}."),
    ("reduce_window result", reduce_window("window_dimensions = array<i64: 2, 1>"),
     "(C14, C15, C16) inferred type(s) 'tensor<3x6xf32>'"),
    ("select_and_scatter", select_and_scatter(), None),
    ("select_and_scatter source", select_and_scatter(source="tensor<3x6xf32>"),
     "(C1, C2) expects source-type to be 'tensor<2x6xf32>'"),
    ("select_and_scatter select", select_and_scatter(select_arg="tensor<i32>"),
     "(C9) expects the type of select-region's parameter at index 0 to be 'tensor<f32>'"),
    ("map", func("%a: tensor<4xf32>",
                 '  %0 = "stablehlo.map"(%a, %a) ({\n'
                 '  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
                 '    %1 = stablehlo.add %x, %y : tensor<f32>\n'
                 '    stablehlo.return %1 : tensor<f32>\n'
                 '  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> '
                 'tensor<4xf32>'), None),
    ("map arity", func("%a: tensor<4xf32>",
                       '  %0 = "stablehlo.map"(%a) ({\n'
                       '  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
                       '    stablehlo.return %x : tensor<f32>\n'
                       '  }) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>'),
     "(C4) expects number of operands to match the arity of map computation, but got: 1 and 2"),
    ("map dimensions", func("%a: tensor<4xf32>",
                            '  %0 = "stablehlo.map"(%a) ({\n'
                            '  ^bb0(%x: tensor<f32>):\n'
                            '    stablehlo.return %x : tensor<f32>\n'
                            '  }) {dimensions = array<i64: 1>} : (tensor<4xf32>) -> '
                            'tensor<4xf32>'), "(C3)"),
    ("sort", sort(), None),
    ("sort negative dimension", sort("-1"), None),
    ("sort dimension", sort("2"), "(C4) dimension attribute value must be in range [-2, 2)"),
    ("sort comparator", sort(arg="tensor<i32>"),
     "(C5) comparator block argument #0 should be of type 'tensor<f32>'"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_reduction_constraints(name, text, expected):
    assert_verdict(text, expected)
