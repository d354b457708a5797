"""custom_call (spec "custom_call"): an op whose semantics an implementation defines by target name.

shlo runs the `@check.*` targets of the conformance tests itself (:data:`~shlo.ops.check.
CHECK_TARGETS`) and any target the user registers as a Python callable
(``shlo.run(..., custom_calls={"name": fn})``); any other target is an ExecutionError naming it,
raised when the op runs. The op is SIDE_EFFECTS: a target may have effects (`has_side_effect`),
so it is never removed as dead code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..attributes import ArrayAttr, DictAttr, StringAttr, StructAttr, ints
from ..errors import Diagnostics, ExecutionError
from ..ir import Operation
from ..registry import QUANTIZED_AWARE, SIDE_EFFECTS, Kernel, define, kernel, verifier
from ..syntax.directives import ATTRDICT, OPERANDS, attr, declarative, p_, types
from ..types import TensorType, TupleType, Type
from . import _constraints as _c
from .check import CHECK_TARGETS

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

define("stablehlo.custom_call", spec="custom_call", traits={QUANTIZED_AWARE, SIDE_EFFECTS},
       summary="call an implementation-defined target",
       inherent="call_target_name has_side_effect backend_config api_version "
                "called_computations operand_layouts result_layouts output_operand_aliases",
       syntax=declarative(attr("call_target_name", "symbol"), p_("("), OPERANDS, p_(")"),
                          ATTRDICT, types("functional")))


@kernel("stablehlo.custom_call")
def custom_call(op: Operation, ctx: PrepareContext) -> Kernel:
    """Check targets, or a Python callable the user registered for the target.

    The callable is looked up when the op runs (one preparation serves every run, each with its
    own ``custom_calls``); its results are converted to the result types' dtypes.
    """
    target = op.attr("call_target_name")
    name = target.value if isinstance(target, StringAttr) else str(target)
    if name in CHECK_TARGETS:
        return CHECK_TARGETS[name](op, ctx)
    result_types = [v.type for v in op.results]
    process = ctx.process

    def run(*args: Any) -> Sequence[Any]:
        user = process.custom_calls.get(name)
        if user is None:
            raise ExecutionError(
                f"'stablehlo.custom_call' op: unsupported target @{name}; register a Python "
                f"callable for it (shlo.run(..., custom_calls={{'{name}': fn}}))", op.location)
        out = user(*args)
        if len(result_types) == 1 and not isinstance(out, (tuple, list)):
            out = (out,)
        out = list(out) if out is not None else []
        if len(out) != len(result_types):
            raise ExecutionError(f"custom_call @{name}: the registered callable returned "
                                 f"{len(out)} values, the op has {len(result_types)} results",
                                 op.location)
        return [np.asarray(v, dtype=t.element_type.dtype) if hasattr(t, "element_type")
                else v for v, t in zip(out, result_types)]

    return run


_API_VERSIONS = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _tuple_part(t: Any, indices: Any) -> Any:
    for i in indices:
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            return None
        t = t.types[i]
    return t


def _check_layouts(op: Operation, diag: Diagnostics) -> bool:
    """One permutation per tensor operand/result, for both or neither."""
    ol, rl = op.attr("operand_layouts"), op.attr("result_layouts")
    if (ol is None) != (rl is None):
        diag.error(op, "", "Layout attributes should be specified for either both operands and "
                           "results or none")
        return False
    if ol is None or rl is None:
        return True
    results: list[Type] = op.result_types
    if len(results) == 1 and isinstance(results[0], TupleType):
        results = list(results[0].types)  # a single tuple result: one layout per element
    for what, kinds, layouts in (("operand", op.operand_types, ol), ("result", results, rl)):
        layouts = list(layouts) if isinstance(layouts, (ArrayAttr, tuple, list)) else None
        if layouts is None:
            continue
        if len(layouts) != len(kinds):
            diag.error(op, "", f"Number of {what}s must match the number of {what} layouts, "
                               f"{len(kinds)} != {len(layouts)}")
            return False
        for i, (t, lay) in enumerate(zip(kinds, layouts)):
            if isinstance(t, TupleType):
                diag.error(op, "", "Tuple types are not fully supported with layout "
                                   "constraints yet")
                return False
            try:
                perm = ints(lay)
            except (TypeError, ValueError):
                perm = None
            if perm is None:
                continue
            if not isinstance(t, TensorType):
                if perm:
                    diag.error(op, "", f"Only tensor types can have non-empty layout: {what} "
                                       f"#{i} of type '{_c.type_str(t)}' has layout "
                                       f"{_c.dims_str(perm)}")
                    return False
                continue
            rank = len(t.shape) if t.shape is not None else None
            if rank is not None and sorted(perm) != list(range(rank)):
                diag.error(op, "", f"incorrect layout {_c.dims_str(perm)} for type "
                                   f"'{_c.type_str(t)}', layout must be a permutation "
                                   f"of [0, {rank})")
                return False
    return True


def _check_aliases(op: Operation, diag: Diagnostics) -> None:
    """Output/operand aliases within range and of matching types."""
    aliases = op.attr("output_operand_aliases")
    if not isinstance(aliases, (ArrayAttr, tuple, list)):
        return
    results = op.result_types
    out_type = results[0] if len(results) == 1 else TupleType(tuple(results))
    for a in aliases:
        if not isinstance(a, StructAttr):
            continue
        idx = _c.struct_int(a, "operand_index", 0)
        if not 0 <= idx < len(op.operands):
            diag.error(op, "", f"expects operandIndex in the output_operand_alias attribute "
                               f"to be in range [0, {len(op.operands)}); got: {idx}")
            return
        part = _tuple_part(op.operands[idx].type, _c.struct_ints(a, "operand_tuple_indices"))
        if part is None:
            diag.error(op, "", "operand_tuple_indices in the output_operand_alias attribute "
                               "out of bounds")
            return
        out = _tuple_part(out_type, _c.struct_ints(a, "output_tuple_indices"))
        if out is None:
            diag.error(op, "", "output_tuple_indices in the output_operand_alias attribute "
                               "out of bounds")
            return
        if not _c.same_type(part, out):
            diag.error(op, "", f"shapes mismatch in the output_operand_alias attribute: "
                               f"operand part has type '{_c.type_str(part)}' and output "
                               f"part has type '{_c.type_str(out)}'")
            return


@verifier("stablehlo.custom_call")
def _verify_custom_call(op: Operation, diag: Diagnostics) -> None:
    """Layouts (one permutation per tensor operand/result, for both or neither), output/operand
    aliases within range and of matching types, a backend_config of the kind the api_version
    asks for. (`called_computations` may name functions defined elsewhere: upstream does not
    resolve them, neither does shlo.)"""
    if not _c.signature(op, diag, [(_c.VALUE, "*")], [(_c.VALUE, "*")],
                        attrs={"call_target_name": "str"},
                        optional_attrs={"has_side_effect": "bool"}, regions=None):
        return
    api = op.attr("api_version")
    version = getattr(api, "value", api)
    if isinstance(version, str):
        version = next((k for k, v in _API_VERSIONS.items() if v == version), version)
    cfg = op.attr("backend_config")
    if cfg is not None and isinstance(version, int):
        if version == 4 and not isinstance(cfg, DictAttr):
            diag.error(op, "I4", "backend_config for api_version API_VERSION_TYPED_FFI must be a "
                                 "dictionary attribute")
            return
        if version != 4 and isinstance(cfg, DictAttr):
            diag.error(op, "I4", f"backend_config for api_version "
                                 f"{_API_VERSIONS.get(version, version)} must be a string "
                                 f"attribute")
            return
    if _check_layouts(op, diag):
        _check_aliases(op, diag)
