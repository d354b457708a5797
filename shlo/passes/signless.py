"""stablehlo-convert-to-signless: every signed (`siN`) and unsigned (`uiN`) integer type becomes
the signless `iN` of its width (upstream's StablehloConvertToSignless.cpp, a full conversion
with RemoveSignTypeConverter).

Operand, result, block-argument and function types change, in tensors and in other dialects'
shaped types (`memref<4xui16>`); the values of `stablehlo.constant` / `arith.constant` keep
their bits (`255 : ui8` becomes `-1 : i8`). Quantized types are left alone (their storage type
is not a tensor element type). Casts that become identities vanish under `canonicalize`.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from ..attributes import DenseElementsAttr, IntegerAttr
from ..ir import Module, Operation, Value
from ..types import FunctionType, IntegerType, OpaqueType, TensorType, TupleType, Type
from . import register_pass
from ._rewrite import Rewriter

_SIGNFUL = re.compile(r"(?<=[<,\sx])[su]i(\d+)(?![\w.])")  # an element type in a shape


def signless(t: Type) -> Type:
    """``t`` with its signed/unsigned integers signless (RemoveSignTypeConverter)."""
    if isinstance(t, IntegerType):
        return IntegerType(t.width) if t.signedness != "signless" else t
    if isinstance(t, TensorType):
        et = signless(t.element_type)
        return t if et is t.element_type else TensorType(t.shape, et, t.encoding)  # type: ignore
    if isinstance(t, OpaqueType) and t.text.startswith(("memref<", "vector<")):
        return OpaqueType(_SIGNFUL.sub(r"i\1", t.text))
    if isinstance(t, FunctionType):
        return FunctionType(tuple(map(signless, t.inputs)), tuple(map(signless, t.results)))
    if isinstance(t, TupleType):
        return TupleType(tuple(map(signless, t.types)))
    return t


def _value_attr(attr: Any) -> Any:
    if isinstance(attr, DenseElementsAttr):
        t = signless(attr.type)
        if t == attr.type:
            return attr
        arr = np.asarray(attr.array)
        return DenseElementsAttr(t, arr.astype(t.element_type.dtype))  # type: ignore[union-attr]
    if isinstance(attr, IntegerAttr) and attr.type is not None:
        t = signless(attr.type)
        if t == attr.type:
            return attr
        w = t.width  # type: ignore[attr-defined]
        v = attr.value & ((1 << w) - 1)
        return IntegerAttr(v - (1 << w) if w > 1 and v >= 1 << (w - 1) else v, t)
    return attr


def _pattern(rw: Rewriter, op: Operation) -> Sequence[Value] | None:
    if op.name not in ("stablehlo.constant", "arith.constant"):
        return None
    props = dict(op.properties)
    attrs = dict(op.attributes)
    store = props if "value" in props else attrs
    store["value"] = _value_attr(store.get("value"))
    new = rw.clone(op, properties=props)
    new.attributes = attrs
    return list(new.results)


@register_pass("stablehlo-convert-to-signless")
def convert_to_signless(module: Module, options: dict[str, Any] | None = None) -> Module:
    """Pass to transform the IR to be on signless integers.

    Every siN/uiN type (tensor elements, memrefs, function signatures) becomes iN; constants
    keep their bits."""
    return Rewriter(_pattern, type_map=signless).module(module)
