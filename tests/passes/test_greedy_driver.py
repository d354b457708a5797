"""The pattern-rewrite machinery (shlo/passes/_patterns.py, _driver.py): the greedy driver's
fixed point, its iteration and rewrite bounds, regions, constant uniquing/hoisting and dead
code; every expectation is worked out by hand from MLIR's GreedyPatternRewriteDriver rules."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.attributes import IntegerAttr
from shlo.passes import PassError, run_passes
from shlo.passes._driver import (
    GreedyConfig,
    apply_patterns,
    apply_to_module,
    copy_module,
)
from shlo.passes._patterns import Pattern, constant_of, has_effects
from shlo.types import element_type


def func_ops(module, name="main"):
    return [op.name for op in module.function(name).regions[0].blocks[0].operations]


def drop_add_zero(op, rw):
    """add(x, 0) -> x: the test pattern most tests use."""
    c = constant_of(op.operands[1])
    if c is None or c.array.any():
        return False
    rw.replace_op(op, [op.operands[0]])
    return True


ADD_ZERO = [Pattern("stablehlo.add", drop_add_zero)]


CHAIN = """func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
  %z = stablehlo.constant dense<0> : tensor<2xi32>
  %0 = stablehlo.add %a, %z : tensor<2xi32>
  %1 = stablehlo.add %0, %z : tensor<2xi32>
  %2 = stablehlo.add %1, %z : tensor<2xi32>
  return %2 : tensor<2xi32>
}"""


def test_fixed_point_removes_a_chain_and_the_dead_constant():
    m = shlo.parse(CHAIN)
    out = apply_to_module(m, ADD_ZERO)
    assert func_ops(out) == ["func.return"]  # the three adds, then the unused constant
    ret = out.function("main").regions[0].blocks[0].operations[-1]
    assert ret.operands[0] is out.function("main").regions[0].blocks[0].arguments[0]
    assert func_ops(m) == ["stablehlo.constant"] + ["stablehlo.add"] * 3 + ["func.return"]


def test_converges_in_one_iteration_when_the_worklist_does_the_work():
    """Bottom-up: %2, %1, %0 are each rewritten when popped; the second iteration changes
    nothing, so two iterations suffice (max_iterations=2 converges, 1 does not)."""
    f = copy_module(shlo.parse(CHAIN)).function("main")
    assert apply_patterns(f, ADD_ZERO, GreedyConfig(max_iterations=2))
    f = copy_module(shlo.parse(CHAIN)).function("main")
    assert not apply_patterns(f, ADD_ZERO, GreedyConfig(max_iterations=1))


def test_iteration_bound_and_divergence_error():
    calls = []

    def flip(op, rw):  # always "changes" the op: never converges
        calls.append(op.name)
        op.attributes["flip"] = IntegerAttr(len(calls), element_type("i64"))
        rw.modified(op)
        return True

    pats = [Pattern("stablehlo.negate", flip)]
    m = shlo.parse("""func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.negate %a : tensor<f32>
      return %0 : tensor<f32>
    }""")
    f = copy_module(m).function("main")
    # max_num_rewrites=1: one rewrite per iteration, 3 iterations
    assert not apply_patterns(f, pats, GreedyConfig(max_iterations=3, max_num_rewrites=1))
    assert len(calls) == 3
    with pytest.raises(PassError, match="did not converge on function @main within 4"):
        apply_to_module(m, pats, GreedyConfig(max_iterations=4, max_num_rewrites=1))
    # canonicalize fails only with test-convergence: the one pattern there converges
    assert run_passes(m, ["canonicalize{test-convergence=true}"]) is not m


def test_patterns_apply_inside_regions_and_constants_hoist_to_the_entry():
    """A while body's add(x, 0) goes; the body's constant is uniqued with the equal one of the
    function (MLIR's OperationFolder: one constant per value in the isolated region)."""
    m = shlo.parse("""func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
      %z = stablehlo.constant dense<0> : tensor<2xi32>
      %0 = stablehlo.while(%it = %a) : tensor<2xi32>
      cond {
        %t = stablehlo.constant dense<false> : tensor<i1>
        stablehlo.return %t : tensor<i1>
      } do {
        %z2 = stablehlo.constant dense<0> : tensor<2xi32>
        %s = stablehlo.add %it, %z2 : tensor<2xi32>
        stablehlo.return %s : tensor<2xi32>
      }
      return %0 : tensor<2xi32>
    }""")
    out = apply_to_module(m, ADD_ZERO)
    body = out.function("main").regions[0].blocks[0]
    # %t hoisted before everything (moved to the front), %z dead and erased
    assert [op.name for op in body.operations] == ["stablehlo.constant", "stablehlo.while",
                                                   "func.return"]
    w = body.operations[1]
    assert [op.name for op in w.regions[1].blocks[0].operations] == ["stablehlo.return"]
    assert w.regions[0].blocks[0].operations[0].operands[0] is body.operations[0].results[0]


def test_constant_order_and_uniquing():
    """Constants keep their order when contiguous at the front; a later equal one is replaced
    by the first; one after other ops moves to the front."""
    m = shlo.parse("""func.func @main(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>) {
      %c1 = stablehlo.constant dense<1> : tensor<i32>
      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %0 = stablehlo.add %a, %c1 : tensor<i32>
      %c3 = stablehlo.constant dense<3> : tensor<i32>
      %c1b = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %0, %c1b : tensor<i32>
      %2 = stablehlo.add %1, %c3 : tensor<i32>
      return %0, %2, %c2 : tensor<i32>, tensor<i32>, tensor<i32>
    }""")
    out = apply_to_module(m, [])
    body = out.function("main").regions[0].blocks[0]
    consts = [int(op.attr("value").array) for op in body.operations
              if op.name == "stablehlo.constant"]
    assert consts == [3, 1, 2]
    adds = [op for op in body.operations if op.name == "stablehlo.add"]
    assert adds[0].operands[1] is adds[1].operands[1]  # %c1b became %c1


def test_dead_code_keeps_side_effects():
    m = shlo.parse("""func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.negate %a : tensor<f32>
      %1 = stablehlo.custom_call @keep(%a) {has_side_effect = true} : (tensor<f32>) -> tensor<f32>
      %2 = stablehlo.custom_call @pure(%a) : (tensor<f32>) -> tensor<f32>
      %3 = "test.unknown"(%a) : (tensor<f32>) -> tensor<f32>
      return %a : tensor<f32>
    }""")
    out = apply_to_module(m, [])
    assert func_ops(out) == ["stablehlo.custom_call", "test.unknown", "func.return"]
    assert has_effects(out.function("main").regions[0].blocks[0].operations[0])


def test_new_and_changed_ops_are_revisited():
    """A rewrite that turns negate(negate(x)) into x makes its user's add(x, 0) visible; the
    driver revisits the users of replaced values in the same iteration."""
    def double_negate(op, rw):
        inner = rw.defining(op.operands[0], "stablehlo.negate")
        if inner is None:
            return False
        rw.replace_op(op, [inner.operands[0]])
        return True

    m = shlo.parse("""func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
      %z = stablehlo.constant dense<0> : tensor<2xi32>
      %0 = stablehlo.negate %a : tensor<2xi32>
      %1 = stablehlo.negate %0 : tensor<2xi32>
      %2 = stablehlo.add %1, %z : tensor<2xi32>
      return %2 : tensor<2xi32>
    }""")
    pats = ADD_ZERO + [Pattern("stablehlo.negate", double_negate)]
    f = copy_module(m).function("main")
    assert apply_patterns(f, pats, GreedyConfig(max_iterations=2))
    assert [op.name for op in f.regions[0].blocks[0].operations] == ["func.return"]


def test_benefit_orders_patterns():
    seen = []

    def make(tag, result):
        def fn(op, rw):
            seen.append(tag)
            return False
        return fn

    m = shlo.parse("""func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.negate %a : tensor<f32>
      return %0 : tensor<f32>
    }""")
    pats = [Pattern("stablehlo.negate", make("low", False), 1),
            Pattern(None, make("any-high", False), 3),
            Pattern("stablehlo.negate", make("high", False), 3),
            Pattern(None, make("any-low", False), 1)]
    apply_patterns(copy_module(m).function("main"), pats, GreedyConfig(max_iterations=1))
    # func.return first (bottom-up), then negate: op-specific wins ties
    assert seen[:2] == ["any-high", "any-low"]
    assert seen[2:] == ["high", "any-high", "low", "any-low"]


def test_folded_program_computes_the_same():
    m = shlo.parse("""func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %c = stablehlo.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
      %d = stablehlo.constant dense<0.5> : tensor<3xf32>
      %0 = stablehlo.multiply %c, %d : tensor<3xf32>
      %1 = stablehlo.add %0, %a : tensor<3xf32>
      return %1 : tensor<3xf32>
    }""")
    out = run_passes(m, ["stablehlo-target-independent-optimization"])
    assert func_ops(out) == ["stablehlo.constant", "stablehlo.add", "func.return"]
    a = np.array([1, 1, 1], np.float32)
    np.testing.assert_array_equal(shlo.run(out, a)[0], shlo.run(m, a)[0])
