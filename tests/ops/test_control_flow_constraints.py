"""Constraints of while, if, case, tuples, optimization_barrier, composite, custom_call and
the async ops (spec "Ops" and upstream's op definitions)."""

import pytest

from constraint_util import assert_verdict, func


def while_(cond_ret="%c : tensor<i1>", body_ret="%x : tensor<i32>") -> str:
    return func("%a: tensor<i32>",
                '  %0 = "stablehlo.while"(%a) ({\n'
                '  ^bb0(%x: tensor<i32>):\n'
                '    %c = stablehlo.compare LT, %x, %x : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
                f'    stablehlo.return {cond_ret}\n'
                '  }, {\n'
                '  ^bb0(%x: tensor<i32>):\n'
                '    %y = stablehlo.convert %x : (tensor<i32>) -> tensor<f32>\n'
                f'    stablehlo.return {body_ret}\n'
                '  }) : (tensor<i32>) -> tensor<i32>')


def if_(t="tensor<f32>", f="tensor<f32>", result="tensor<f32>") -> str:
    return func("%p: tensor<i1>, %a: tensor<f32>, %b: tensor<i32>",
                f'  %0 = "stablehlo.if"(%p) ({{\n'
                f'    stablehlo.return {"%a" if t == "tensor<f32>" else "%b"} : {t}\n'
                f'  }}, {{\n'
                f'    stablehlo.return {"%a" if f == "tensor<f32>" else "%b"} : {f}\n'
                f'  }}) : (tensor<i1>) -> {result}')


CASES = [
    ("while", while_(), None),
    ("while cond", while_(cond_ret="%x : tensor<i32>"),
     "(C1) expect condition block return a zero-ranked tensor of i1"),
    ("while body", while_(body_ret="%y : tensor<f32>"),
     "(C2) expect operands to be compatible with body block return types"),
    ("if", if_(), None),
    ("if branches", if_(f="tensor<i32>"), "(C2) branch 0 and branch 1 have mismatched return types"),
    ("if results", if_(result="tensor<i32>"), "(C3) inferred type(s) 'tensor<f32>'"),
    ("case", func("%i: tensor<i32>, %a: tensor<f32>",
                  '  %0 = "stablehlo.case"(%i) ({\n    stablehlo.return %a : tensor<f32>\n  }, {\n'
                  '    stablehlo.return %a : tensor<f32>\n  }) : (tensor<i32>) -> tensor<f32>'),
     None),
    ("case index rank", func("%i: tensor<1xi32>, %a: tensor<f32>",
                             '  %0 = "stablehlo.case"(%i) ({\n    stablehlo.return %a : '
                             'tensor<f32>\n  }) : (tensor<1xi32>) -> tensor<f32>'),
     "operand should be rank 0 tensor but got rank 1"),
    ("tuple", func("%a: tensor<f32>", '  %0 = "stablehlo.tuple"(%a, %a) : (tensor<f32>, '
                                      'tensor<f32>) -> tuple<tensor<f32>, tensor<f32>>'), None),
    ("tuple type", func("%a: tensor<f32>", '  %0 = "stablehlo.tuple"(%a) : (tensor<f32>) -> '
                                           'tuple<tensor<i32>>'), "(C1) inferred type(s)"),
    ("get_tuple_element", func("%t: tuple<tensor<f32>, tensor<i32>>",
                               '  %0 = "stablehlo.get_tuple_element"(%t) {index = 2 : i32} : '
                               '(tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>'),
     "(C1) index 2 is out of bounds of operand with size 2"),
    ("optimization_barrier", func("%a: tensor<f32>, %t: !stablehlo.token",
                                  "  %0:2 = stablehlo.optimization_barrier %a, %t : tensor<f32>, "
                                  "!stablehlo.token"), None),
    ("composite", "func.func private @dec(%a: tensor<f32>) -> tensor<f32>\n" + func(
        "%a: tensor<f32>", '  %0 = stablehlo.composite "my.op" %a {decomposition = @dec} : '
                           '(tensor<f32>) -> tensor<f32>'), None),
    ("composite name", "func.func private @dec(%a: tensor<f32>) -> tensor<f32>\n" + func(
        "%a: tensor<f32>", '  %0 = stablehlo.composite "myop" %a {decomposition = @dec} : '
                           '(tensor<f32>) -> tensor<f32>'),
     "(C1) name must be a valid namespaced op name"),
    ("composite signature", "func.func private @dec(%a: tensor<f64>) -> tensor<f32>\n" + func(
        "%a: tensor<f32>", '  %0 = stablehlo.composite "my.op" %a {decomposition = @dec} : '
                           '(tensor<f32>) -> tensor<f32>'),
     "(C4) operand at index 0 has type 'tensor<f32>', but decomposition has type 'tensor<f64>'"),
    ("custom_call", func("%a: tensor<2x3xf32>",
                         '  %0 = stablehlo.custom_call @foo(%a) {backend_config = "x"} : '
                         '(tensor<2x3xf32>) -> tensor<2xf32>'), None),
    ("custom_call layouts", func(
        "%a: tensor<2x3xf32>",
        '  %0 = "stablehlo.custom_call"(%a) {call_target_name = "foo", operand_layouts = '
        '[dense<[0, 2]> : tensor<2xindex>], result_layouts = [dense<[0]> : tensor<1xindex>]} : '
        '(tensor<2x3xf32>) -> tensor<2xf32>'),
     "incorrect layout dense<[0, 2]> : tensor<2xindex> for type 'tensor<2x3xf32>', layout must be a permutation of [0, 2)"),
    ("custom_call typed ffi", func(
        "%a: tensor<2x3xf32>",
        '  %0 = "stablehlo.custom_call"(%a) {call_target_name = "foo", api_version = 4 : i32, '
        'backend_config = "x"} : (tensor<2x3xf32>) -> tensor<2xf32>'),
     "backend_config for api_version API_VERSION_TYPED_FFI must be a dictionary attribute"),
    ("async", func("%a: tensor<4xf32>",
                   '  %0 = "stablehlo.async_start"(%a) ({\n'
                   '  ^bb0(%x: tensor<4xf32>):\n'
                   '    %1 = stablehlo.slice %x [0:4] : (tensor<4xf32>) -> tensor<4xf32>\n'
                   '    stablehlo.return %1 : tensor<4xf32>\n'
                   '  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<4xf32>>\n'
                   '  %2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<4xf32>>) -> '
                   'tensor<4xf32>'), None),
    ("async future", func("%a: tensor<4xf32>",
                          '  %0 = "stablehlo.async_start"(%a) ({\n'
                          '  ^bb0(%x: tensor<4xf32>):\n'
                          '    %1 = stablehlo.slice %x [0:4] : (tensor<4xf32>) -> tensor<4xf32>\n'
                          '    stablehlo.return %1 : tensor<4xf32>\n'
                          '  }) : (tensor<4xf32>) -> !stablehlo.future<tensor<5xf32>>'),
     "inferred type(s) '!stablehlo.future<tensor<4xf32>>' are incompatible"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_control_flow_constraints(name, text, expected):
    assert_verdict(text, expected)
