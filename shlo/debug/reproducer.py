"""A minimal self-checking program for a divergence (`shlo diff --reproducer OUT.mlir`).

The diverging op alone, its captured inputs as constants, and a `check` op holding the
reference's output: `shlo check OUT.mlir` fails on it, and so would upstream's
`stablehlo-translate --interpret` (it uses only stablehlo and check ops). Integer and exact
comparisons use `check.expect_eq_const`; floats `check.expect_close` with the diff's ULP bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attributes import DenseElementsAttr, IntegerAttr
from ..errors import ExecutionError
from ..ir import Block, Module, Operation, Region
from ..types import FloatType, FunctionType, IntegerType, TensorType
from .diff import Pair

__all__ = ["reproducer"]


def _constant(value: Any, t: TensorType) -> Operation:
    arr = np.asarray(value, dtype=t.element_type.dtype if not _quant(t) else None)
    return Operation("stablehlo.constant", [], [t],
                     properties={"value": DenseElementsAttr(t, arr)})


def _quant(t: TensorType) -> bool:
    from ..types import QuantizedType

    return isinstance(t.element_type, QuantizedType)


def reproducer(pair: Pair, source: str = "") -> str:
    """The text of the reproducer for ``pair`` (the first divergence of a diff)."""
    from ..attributes import StringAttr, TypeAttr
    from ..syntax.printer import format_module

    op = pair.a.op
    if pair.a.operands is None:
        raise ExecutionError("the reproducer needs the operands (trace with values=True)")
    k = next(i for i, m in enumerate(pair.metrics) if m.diverged)
    rt = op.results[k].type
    if not isinstance(rt, TensorType) or any(not isinstance(v.type, TensorType)
                                              for v in op.operands):
        raise ExecutionError(f"'{op.name}' has non-tensor operands or results: no reproducer")
    body = Block()
    consts = [body.append(_constant(x, v.type)) for x, v in zip(pair.a.operands, op.operands)]
    saved = [r.parent for r in op.regions]
    clone = Operation(op.name, [c.results[0] for c in consts], [v.type for v in op.results],
                      dict(op.properties), dict(op.attributes), list(op.regions),
                      location=op.location)
    for r, p in zip(op.regions, saved):  # the clone borrowed the regions to print them
        r.parent = p
    body.append(clone)
    expected = np.asarray(pair.expected[k])
    et = rt.element_type
    if isinstance(et, (FloatType,)) and not _quant(rt):
        exp = body.append(_constant(expected.astype(np.float64).astype(et.dtype)
                                    if expected.dtype != et.dtype else expected, rt))
        ulp = max(pair.tolerance.ulp, 0)
        check = Operation("check.expect_close", [clone.results[k], exp.results[0]], [],
                          properties={"max_ulp_difference": IntegerAttr(
                              ulp, IntegerType(64, "unsigned"))})
    else:
        value = expected.astype(et.dtype) if not _quant(rt) and expected.dtype != et.dtype \
            else expected
        check = Operation("check.expect_eq_const", [clone.results[k]], [],
                          properties={"value": DenseElementsAttr(rt, np.asarray(value))})
    body.append(check)
    body.append(Operation("func.return", []))
    func = Operation("func.func", [], [], properties={
        "sym_name": StringAttr("main"), "function_type": TypeAttr(FunctionType((), ()))},
        regions=[Region([body])])
    mod_body = Block(operations=[func])
    module = Module(Operation("builtin.module", [], [], regions=[Region([mod_body])]))
    head = (f"// Reproducer written by `shlo diff`: '{op.name}' at {pair.a.where()}"
            f"{' in ' + source if source else ''}.\n// Its inputs are the values shlo saw; "
            f"the check holds the reference's result {k}:\n// {pair.metrics[k]}\n")
    try:
        return head + format_module(module)
    finally:
        for r, p in zip(op.regions, saved):
            r.parent = p
