"""The op-test harness itself (tests/harness.py): its type conventions and its checks."""

from __future__ import annotations

import numpy as np
import pytest

from shlo.attributes import DenseArrayAttr, EnumAttr
from shlo.errors import VerificationError
from shlo.types import I64, TensorType, element_type, tensor

from harness import body, build_op, prepare_op, run1, run_op, run_text, type_of


def test_operand_types_from_arrays_and_from_names():
    assert type_of(np.zeros((2, 3), np.uint8)) == tensor((2, 3), "ui8")
    assert type_of(np.zeros((2,), bool), dynamic=True) == TensorType((None,), element_type("i1"))
    # names convert the operands and type them with the broadcast shape
    out = run1("stablehlo.add", [[1, 2], 3], "i8")
    assert out.dtype == np.int8 and out.tolist() == [4, 5]
    # the result defaults to the last operand's type; a name gives the broadcast shape
    out = run1("stablehlo.compare", [np.array([1.0, 2.0]), np.array([2.0, 2.0])], None, "i1",
               comparison_direction=EnumAttr("stablehlo", "comparison_direction", "LT"))
    assert out.tolist() == [True, False]


def test_build_op_puts_the_op_in_a_function():
    op = build_op("stablehlo.negate", ["f32"], None, (4,))
    func = op.parent.parent.parent
    assert func.name == "func.func" and func.attr("sym_name").value == "main"
    assert [v.type for v in op.operands] == [tensor((4,), "f32")]
    assert op.parent.operations[-1].name == "func.return"


def test_verify_checks_the_op_first():
    x = np.zeros((2,), np.float32)
    with pytest.raises(VerificationError, match=r"'stablehlo.add' op \(C1\)"):
        run_op("stablehlo.add", [x, x], results=tensor((3,), "f32"), verify=True)
    with pytest.raises(VerificationError):
        prepare_op("stablehlo.add", ["f32", "f32"], tensor((3,), "f32"), (2,), verify=True)


def test_result_types_are_checked_and_not_catchable_as_exceptions():
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(pytest.fail.Exception, match="shape"):
        try:
            run1("stablehlo.reverse", [x], results=tensor((5,), "i32"),
                 dimensions=DenseArrayAttr(I64, (0,)))
        except Exception:  # a test expecting the op to raise must not see the harness's check
            pytest.fail("the harness's check was an Exception")


def test_regions_and_text():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    out = run1("stablehlo.reduce", [x, np.int64(0)], results=tensor((2,), "i64"),
               regions=[body("stablehlo.add", "i64")], dimensions=DenseArrayAttr(I64, (1,)),
               verify=True)
    assert out.tolist() == [3, 12]
    (r,) = run_text("func.func @main(%a: tensor<i32>) -> tensor<i32> {\n"
                    "  func.return %a : tensor<i32>\n}", np.int32(7), verify=True)
    assert r.shape == () and int(r) == 7
