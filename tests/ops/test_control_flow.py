"""while, if, case, func.call, tuple ops, optimization_barrier, custom_call, composite."""

import numpy as np
import pytest

import shlo
from shlo.errors import ExecutionError

from harness import run_text


def test_while_sums_to_ten():
    # Spec example of `while`: a loop computing the sum 0+1+...+9 style counter.
    text = """
    func.func @main(%init_i: tensor<i64>, %init_sum: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %ten = stablehlo.constant dense<10> : tensor<i64>
      %results0, %results1 = "stablehlo.while"(%init_i, %init_sum) ({
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %cond = "stablehlo.compare"(%arg0, %ten) {
            comparison_direction = #stablehlo<comparison_direction LT>
          } : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %cond : tensor<i1>
      }, {
        ^bb0(%arg0: tensor<i64>, %arg1: tensor<i64>):
          %new_sum = stablehlo.add %arg1, %one : tensor<i64>
          %new_i = stablehlo.add %arg0, %one : tensor<i64>
          stablehlo.return %new_i, %new_sum : tensor<i64>, tensor<i64>
      }) : (tensor<i64>, tensor<i64>) -> (tensor<i64>, tensor<i64>)
      func.return %results0, %results1 : tensor<i64>, tensor<i64>
    }"""
    i, s = run_text(text, np.int64(0), np.int64(0))
    assert int(i) == 10 and int(s) == 10


def test_while_captures_outer_values_in_nested_regions():
    text = """
    func.func @main(%n: tensor<i32>, %step: tensor<i32>) -> tensor<i32> {
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %r = "stablehlo.while"(%zero) ({
        ^bb0(%a: tensor<i32>):
          %c = stablehlo.compare LT, %a, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %c : tensor<i1>
      }, {
        ^bb0(%a: tensor<i32>):
          %p = stablehlo.compare GT, %step, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %b = "stablehlo.if"(%p) ({
            %s = stablehlo.add %a, %step : tensor<i32>
            stablehlo.return %s : tensor<i32>
          }, {
            stablehlo.return %n : tensor<i32>
          }) : (tensor<i1>) -> tensor<i32>
          stablehlo.return %b : tensor<i32>
      }) : (tensor<i32>) -> tensor<i32>
      func.return %r : tensor<i32>
    }"""
    (r,) = run_text(text, np.int32(7), np.int32(3))
    assert int(r) == 9
    (r,) = run_text(text, np.int32(7), np.int32(0))
    assert int(r) == 7


@pytest.mark.parametrize("index,expected", [(0, 10), (1, 11), (2, 12), (5, 12), (-1, 12)])
def test_case_out_of_range_runs_last_branch(index, expected):
    text = """
    func.func @main(%i: tensor<i32>) -> tensor<i64> {
      %r = "stablehlo.case"(%i) ({
        %c = stablehlo.constant dense<10> : tensor<i64>
        stablehlo.return %c : tensor<i64>
      }, {
        %c = stablehlo.constant dense<11> : tensor<i64>
        stablehlo.return %c : tensor<i64>
      }, {
        %c = stablehlo.constant dense<12> : tensor<i64>
        stablehlo.return %c : tensor<i64>
      }) : (tensor<i32>) -> tensor<i64>
      func.return %r : tensor<i64>
    }"""
    (r,) = run_text(text, np.int32(index))
    assert int(r) == expected


def test_call_tuple_and_get_tuple_element():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %t = stablehlo.tuple %x, %x : tuple<tensor<2xf32>, tensor<2xf32>>
      %a = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
      %b = call @double(%a) : (tensor<2xf32>) -> tensor<2xf32>
      %c:2 = stablehlo.optimization_barrier %b, %a : tensor<2xf32>, tensor<2xf32>
      return %c#0 : tensor<2xf32>
    }
    func.func private @double(%y: tensor<2xf32>) -> tensor<2xf32> {
      %r = stablehlo.add %y, %y : tensor<2xf32>
      return %r : tensor<2xf32>
    }"""
    (r,) = run_text(text, np.array([1.5, -2], dtype=np.float32))
    np.testing.assert_array_equal(r, np.array([3.0, -4.0], dtype=np.float32))
    assert r.dtype == np.float32


def test_custom_call_unknown_target_is_an_error_naming_it():
    text = """
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %r = stablehlo.custom_call @my_op(%x) : (tensor<f32>) -> tensor<f32>
      return %r : tensor<f32>
    }"""
    with pytest.raises(ExecutionError, match="my_op"):
        run_text(text, np.float32(1))


def test_custom_call_user_callable():
    text = """
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %r = stablehlo.custom_call @my_op(%x) : (tensor<3xf32>) -> tensor<3xf32>
      return %r : tensor<3xf32>
    }"""
    (r,) = run_text(text, np.arange(3, dtype=np.float32), custom_calls={"my_op": lambda x: x * 2})
    np.testing.assert_array_equal(r, [0, 2, 4])


def test_composite_runs_its_decomposition():
    text = """
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %r = stablehlo.composite "my.square" %x {decomposition = @square} : (tensor<f32>) -> tensor<f32>
      return %r : tensor<f32>
    }
    func.func private @square(%y: tensor<f32>) -> tensor<f32> {
      %r = stablehlo.multiply %y, %y : tensor<f32>
      return %r : tensor<f32>
    }"""
    (r,) = run_text(text, np.float32(3))
    assert float(r) == 9.0


def test_wrong_argument_shape_is_a_clear_error():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      return %x : tensor<2xf32>
    }"""
    with pytest.raises(ExecutionError, match=r"expected shape \(2\)"):
        run_text(text, np.zeros(3, np.float32))
    with pytest.raises(ExecutionError, match="takes 1 arguments"):
        run_text(text)


def test_error_inside_nested_region_names_the_innermost_op():
    text = """func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.while"(%x) ({
    ^bb0(%a: tensor<f32>):
      %c = stablehlo.compare LT, %a, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %t = stablehlo.not %c : tensor<i1>
      stablehlo.return %t : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>):
      %b = stablehlo.custom_call @boom(%a) : (tensor<f32>) -> tensor<f32>
      stablehlo.return %b : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}"""

    def boom(a):
        raise ValueError("bad value")

    with pytest.raises(ExecutionError) as info:
        shlo.run(shlo.parse(text, "m.mlir"), np.float32(1), verify=False,
                 custom_calls={"boom": boom})
    assert str(info.value).startswith("m.mlir:9:")
    assert "custom_call" in str(info.value) and "bad value" in str(info.value)


# --- control flow inside the bodies of region ops ----------------------------------------------
# reduce, map, sort, reduce_window... apply their body to whole arrays of elements at once
# (_regions.call_body); a body that branches (while, if, case, func.call) runs one element at
# a time instead (CompiledBlock.per_element): its predicate would otherwise be an array.

_ADD_BY_LOOP = """
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %w:2 = stablehlo.while(%i = %c0, %acc = %a) : tensor<i32>, tensor<i32>
     cond {
      %p = stablehlo.compare LT, %i, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %ni = stablehlo.add %i, %one : tensor<i32>
      %nacc = stablehlo.add %acc, %one : tensor<i32>
      stablehlo.return %ni, %nacc : tensor<i32>, tensor<i32>
    }
    stablehlo.return %w#1 : tensor<i32>"""
"""A body computing a + b for b >= 0 by counting b up from 0: the loop's trip count is the
element's own."""


def test_reduce_body_with_a_data_dependent_while():
    text = f"""func.func @main(%x: tensor<4x3xi32>) -> tensor<3xi32> {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %z) across dimensions = [0] : (tensor<4x3xi32>, tensor<i32>) -> tensor<3xi32>
   reducer(%a: tensor<i32>, %b: tensor<i32>) {{{_ADD_BY_LOOP}
  }}
  return %0 : tensor<3xi32>
}}"""
    x = np.arange(1, 13, dtype=np.int32).reshape(4, 3)
    (got,) = run_text(text, x)
    np.testing.assert_array_equal(got, [22, 26, 30])


def test_reduce_window_body_with_a_data_dependent_while():
    text = f"""func.func @main(%x: tensor<4xi32>) -> tensor<3xi32> {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = "stablehlo.reduce_window"(%x, %z) ({{
   ^bb0(%a: tensor<i32>, %b: tensor<i32>):{_ADD_BY_LOOP}
  }}) {{window_dimensions = array<i64: 2>}} : (tensor<4xi32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}}"""
    (got,) = run_text(text, np.array([1, 2, 3, 4], np.int32))
    np.testing.assert_array_equal(got, [3, 5, 7])


def test_map_body_with_if_and_sort_comparator_with_case():
    """map: |a - b| through an `if` on a > b; sort: descending through a `case` on the
    compare's result."""
    text = """func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %0 = "stablehlo.map"(%x, %y) ({
   ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %r = "stablehlo.if"(%gt) ({
      %d = stablehlo.subtract %a, %b : tensor<i32>
      stablehlo.return %d : tensor<i32>
    }, {
      %d = stablehlo.subtract %b, %a : tensor<i32>
      stablehlo.return %d : tensor<i32>
    }) : (tensor<i1>) -> tensor<i32>
    stablehlo.return %r : tensor<i32>
  }) {dimensions = array<i64: 0>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = "stablehlo.sort"(%x) ({
   ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %k = stablehlo.convert %gt : (tensor<i1>) -> tensor<i32>
    %r = "stablehlo.case"(%k) ({
      %f = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %f : tensor<i1>
    }, {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    }) : (tensor<i32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}"""
    got = run_text(text, np.array([1, 5, 3, 8], np.int32), np.array([4, 2, 3, 1], np.int32))
    np.testing.assert_array_equal(got[0], [3, 3, 0, 7])
    np.testing.assert_array_equal(got[1], [8, 5, 3, 1])


def test_bodies_calling_functions_batch_unless_the_callee_branches():
    """A reduce body calling an element-wise function runs over whole arrays; one calling a
    function that holds a `while` runs per element, and both sum right."""
    from shlo.interpreter.evaluator import PrepareContext

    text = f"""func.func private @plain(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {{
  %s = stablehlo.add %a, %b : tensor<i32>
  return %s : tensor<i32>
}}
func.func private @looping(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {{{_ADD_BY_LOOP.replace("stablehlo.return %w#1", "func.return %w#1")}
}}
func.func @main(%x: tensor<4x3xi32>) -> (tensor<3xi32>, tensor<3xi32>) {{
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %z) across dimensions = [0] : (tensor<4x3xi32>, tensor<i32>) -> tensor<3xi32>
   reducer(%a: tensor<i32>, %b: tensor<i32>) {{
    %r = func.call @plain(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    stablehlo.return %r : tensor<i32>
  }}
  %1 = stablehlo.reduce(%x init: %z) across dimensions = [0] : (tensor<4x3xi32>, tensor<i32>) -> tensor<3xi32>
   reducer(%a: tensor<i32>, %b: tensor<i32>) {{
    %r = func.call @looping(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    stablehlo.return %r : tensor<i32>
  }}
  return %0, %1 : tensor<3xi32>, tensor<3xi32>
}}"""
    x = np.arange(1, 13, dtype=np.int32).reshape(4, 3)
    got = run_text(text, x)
    np.testing.assert_array_equal(got[0], [22, 26, 30])
    np.testing.assert_array_equal(got[1], [22, 26, 30])
    module = shlo.parse(text)
    ctx = PrepareContext(module)
    main = ctx.function("main")
    bodies = [r for rs in main.regions for r in rs]
    assert [b.per_element for b in bodies] == [False, True]
