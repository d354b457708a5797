"""The machinery passes share (shlo/passes/_rewrite.py): dead-code elimination."""

from __future__ import annotations

from shlo.passes._rewrite import dead_code_elimination
from shlo.syntax.parser import parse

PROGRAM = """func.func @main(%x: tensor<2xf32>, %p: tensor<i1>, %t: !stablehlo.token) -> tensor<2xf32> {
  %unused = stablehlo.add %x, %x : tensor<2xf32>
  %pure = "stablehlo.if"(%p) ({
    %n = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %n : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %effect = "stablehlo.if"(%p) ({
    %t2 = "stablehlo.outfeed"(%x, %t) : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
    stablehlo.return %x : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %c = stablehlo.constant dense<2> : tensor<1xi64>
  %r = stablehlo.rng %x, %x, %c, distribution = UNIFORM : (tensor<2xf32>, tensor<2xf32>, tensor<1xi64>) -> tensor<2xf32>
  return %x : tensor<2xf32>
}"""


def test_dce_removes_pure_ops_and_keeps_effects_and_state():
    module = dead_code_elimination(parse(PROGRAM))
    ops = module.function("main").regions[0].blocks[0].operations
    names = [op.name for op in ops]
    # the unused add and the `if` with a pure body go; the `if` holding an outfeed, the rng
    # (keyed by its position) and the constant it uses stay
    assert names == ["stablehlo.if", "stablehlo.constant", "stablehlo.rng", "func.return"]
    assert any(o.name == "stablehlo.outfeed" for o in ops[0].walk())
