"""stablehlo-check-shape-assertions: `stablehlo.custom_call @shape_assertion` ops are checked
and removed (upstream's StablehloCheckShapeAssertions.cpp).

A shape assertion asserts that its first operand (`assert_what`, a `tensor<i1>`) is true; its
`error_message` may hold `llvm::formatv` specifiers `{0}`, `{1}`, ... replaced by the values of
the other operands (integer scalars). An assertion whose operands are constants and hold is
removed; one that fails is an error with its formatted message; one with a non-constant
operand is an error too. With `enable-shape-assertions=false` every assertion is removed
unchecked.
"""

from __future__ import annotations

import re
from typing import Any

from ..attributes import DictAttr, StringAttr
from ..errors import Diagnostic
from ..ir import Module, Operation
from ..types import IntegerType, TensorType
from . import Option, register_pass
from ._driver import copy_module
from ._rewrite import PassError
from .dynamism import match_ints

SHAPE_ASSERTION = "shape_assertion"
MAX_ERROR_MESSAGE_INPUTS = 32
_ALLOWED_ATTRS = frozenset({"api_version", "backend_config", "call_target_name",
                            "error_message", "has_side_effect"})
_SPEC = re.compile(r"\{\{|\{\s*(\d+)\s*(?:,[^:}]*)?(?::[^}]*)?\}")


def _scalar_int(t: Any, widths: tuple[int, ...]) -> bool:
    return isinstance(t, TensorType) and t.shape == () and \
        isinstance(t.element_type, IntegerType) and t.element_type.signedness == "signless" \
        and t.element_type.width in widths


def _empty_backend_config(op: Operation) -> bool:
    b = op.attr("backend_config")
    return b is None or (isinstance(b, StringAttr) and b.value == "") or \
        (isinstance(b, DictAttr) and not b.items)


def verify_shape_assertion(op: Operation) -> str | None:
    """Why ``op`` is not a well-formed shape assertion (None when it is)."""
    n = len(op.operands)
    if not 1 <= n <= 1 + MAX_ERROR_MESSAGE_INPUTS:
        return f"expects 1 <= size(operands) <= {1 + MAX_ERROR_MESSAGE_INPUTS}"
    if op.results:
        return "expects size(results) = 0"
    for name in (*op.properties, *op.attributes):
        if name not in _ALLOWED_ATTRS:
            return f"{name} is not a supported attribute"
    if not _empty_backend_config(op):
        return "expects an empty backend_config"
    if not _scalar_int(op.operands[0].type, (1,)):
        return "expects assert_what (operand #0) to be a constant of type tensor<i1>"
    for i, v in enumerate(op.operands[1:], 1):
        if not _scalar_int(v.type, (32, 64)):
            return (f"expects error_message_input (operand #{i}) to be a constant of type "
                    "tensor<i32> or tensor<i64>")
    msg = op.attr("error_message")
    if not isinstance(msg, StringAttr):
        return "expects an error_message attribute"
    for m in _SPEC.finditer(msg.value):
        if m.group(1) is not None and not int(m.group(1)) < n - 1:
            return ("expects error_message to contain format specifiers with "
                    f"error_message_input index less than {n - 1}. Found specifier "
                    f"{m.group(0)}")
    return None


def format_error_message(message: str, inputs: list[int]) -> str:
    """``message`` with `{i}` replaced by ``inputs[i]`` (-1 past the end) and `{{` by `{`."""
    if not inputs:
        return message

    def sub(m: re.Match) -> str:
        if m.group(1) is None:
            return "{"
        i = int(m.group(1))
        return str(inputs[i] if i < len(inputs) else -1)

    return _SPEC.sub(sub, message)


def _check(op: Operation) -> str | None:
    """The error of assertion ``op`` (None: it holds)."""
    bad = verify_shape_assertion(op)
    if bad is not None:
        return bad
    what = match_ints(op.operands[0])
    if what is None:
        return "expects static assert_what (operand #0)"
    if what[0] != 0:
        return None
    inputs = []
    for i, v in enumerate(op.operands[1:], 1):
        x = match_ints(v)
        if x is None:
            return f"expects static error_message_input (operand #{i})"
        inputs.append(x[0])
    return format_error_message(op.attr("error_message").value, inputs)


@register_pass("stablehlo-check-shape-assertions", options=[
    Option("enable-shape-assertions", bool, True,
           "Whether shape assertions may generate errors.")])
def check_shape_assertions(module: Module, options: dict[str, Any]) -> Module:
    """Check stablehlo.custom_call @shape_assertion ops.

    An assertion that holds on constants is removed; a failing or non-constant one is an
    error (every one is reported); with enable-shape-assertions=false all are removed."""
    out = copy_module(module)
    enabled = bool(options.get("enable-shape-assertions", True))
    errors: list[Diagnostic] = []
    for op in list(out.walk()):
        if op.name != "stablehlo.custom_call" or op.parent is None:
            continue
        target = op.attr("call_target_name")
        if getattr(target, "value", None) != SHAPE_ASSERTION:
            continue
        err = _check(op) if enabled else None
        if err is not None:
            errors.append(Diagnostic(err, op.location))
            continue
        op.parent.operations.remove(op)
        op.parent = None
    if errors:
        raise PassError(errors[0].message, errors[0].location, diagnostics=errors)
    return out
