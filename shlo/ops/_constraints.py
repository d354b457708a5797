"""Shared helpers for the ops' verifiers (spec "Ops" sections, constraints C1..Cn).

Each op's ``@verifier`` function lives next to its kernel in its ops module and reports every
violated constraint with ``diag.error(op, "C7", "what is wrong, with the values involved")``.
This module holds what they share:

* **type constraints** in the style of upstream's ODS definitions (:class:`TC`, the constants
  ``TENSOR``, ``FP_TENSOR``, ...) and :func:`signature`, which checks operand/result counts, the
  operand/result types, required attributes and the number of regions, the way upstream's
  generated verifiers do before any op-specific check runs;
* **compatibility** of types in the presence of dynamic dimensions (``?`` is compatible with any
  size), quantization and encodings (:func:`compatible`), and :func:`check_inferred`, which
  compares the result types the spec determines with the written ones;
* the spec's helper functions (``baseline_type``, ``baseline_element_type``, ``is_unique``...),
  attribute readers that never raise, and region helpers.

Everything here is conservative: a helper that cannot tell (unknown attribute spelling, unranked
or opaque types) answers "fine" so that a valid program is never rejected.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..attributes import (
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    StructAttr,
    SymbolRefAttr,
    ints,
)
from ..ir import Block, Operation
from ..types import (
    ComplexType,
    FloatType,
    FunctionType,
    IntegerType,
    OpaqueType,
    QuantizedType,
    TensorType,
    TupleType,
    Type,
    format_type,
)

# The type constraints (the verifiers use them as _c.TENSOR, ...).
from ._type_constraints import (  # noqa: F401
    ANY_TENSOR,
    DIMENSION_TENSOR,
    FP_C_Q_TENSOR,
    FP_C_TENSOR,
    FP_Q_TENSOR,
    FP_TENSOR,
    INDEX,
    INT_FP_C_Q_TENSOR,
    INT_TENSOR,
    PRED_INT_TENSOR,
    PRED_TENSOR,
    QA,
    SI,
    SINT_FP_C_Q_TENSOR,
    TC,
    TENSOR,
    TENSOR_OR_TOKEN,
    TENSOR_QA,
    TENSOR_QA_OR_TOKEN,
    TOKEN,
    UI,
    VALUE,
    B,
    C,
    F,
    I,
    Q,
    bounds_of,
    element_kind,
    is_buffer,
    valid_quantization_dimension,
    valid_quantized,
)

__all__ = [
    "F", "B", "SI", "UI", "I", "C", "Q", "QA", "INDEX", "TC", "element_kind",
    "TENSOR", "TENSOR_QA", "ANY_TENSOR", "FP_TENSOR", "FP_Q_TENSOR", "FP_C_TENSOR",
    "FP_C_Q_TENSOR", "INT_TENSOR", "PRED_TENSOR", "PRED_INT_TENSOR", "INT_FP_C_Q_TENSOR",
    "SINT_FP_C_Q_TENSOR", "TOKEN", "TENSOR_OR_TOKEN", "TENSOR_QA_OR_TOKEN", "VALUE",
    "DIMENSION_TENSOR", "signature", "type_str", "types_str", "dims_str", "compatible",
    "compatible_shapes", "compatible_dims", "compatible_element_types", "check_inferred",
    "baseline_element_type", "baseline_type", "expressed_or_self", "is_unique", "shape_of",
    "rank_of", "elem",
    "region_block", "region_arg_types", "region_return_types", "region_terminator",
    "is_ranked", "is_static", "num_bits", "dim", "valid_quantization_dimension",
    "DYNAMIC_SIZE", "size_str", "quant_params_prefix_equal",
]


# --- formatting -------------------------------------------------------------------------------

# How upstream's messages print an unknown (`?`) size: MLIR's ShapedType::kDynamic.
DYNAMIC_SIZE = -9223372036854775808


def size_of(v: int) -> int | None:
    """A size read from a constant or an attribute: kDynamic is `?` (None), as upstream."""
    return None if v == DYNAMIC_SIZE else v


def size_str(d: int | None) -> str:
    """A dimension size as upstream's messages print it (an unknown one as kDynamic)."""
    return str(DYNAMIC_SIZE if d is None else d)


def type_str(t: Any) -> str:
    """A type as upstream prints it (`tensor<2x?xf32>`), quoted by callers as `'...'`."""
    try:
        return format_type(t)
    except TypeError:
        return str(t)


def ints_of(a: Any, default: Any = None) -> Any:
    """An integer list in any spelling as a tuple; ``default`` when absent or malformed."""
    try:
        v = ints(a)
    except (TypeError, ValueError):
        return default
    return default if v is None else v


def types_str(ts: Iterable[Any]) -> str:
    """`'t0', 't1'` as in upstream's "inferred type(s) ..." messages."""
    return ", ".join(f"'{type_str(t)}'" for t in ts)


def dims_str(dims: Iterable[Any]) -> str:
    """`[2, ?, 3]`."""
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


# --- shapes and compatibility -------------------------------------------------------------------


def is_ranked(t: Any) -> bool:
    return isinstance(t, TensorType) and t.shape is not None


def is_static(t: Any) -> bool:
    return isinstance(t, TensorType) and t.shape is not None and None not in t.shape


def shape_of(t: Any) -> tuple[int | None, ...] | None:
    """The shape of a ranked tensor type, else None."""
    return t.shape if isinstance(t, TensorType) else None


def rank_of(t: Any) -> int | None:
    s = shape_of(t)
    return None if s is None else len(s)


def dim(t: Any, i: int) -> int | None:
    """Dimension ``i`` of tensor type ``t`` (None when dynamic, unranked or out of range)."""
    s = shape_of(t)
    if s is None or not -len(s) <= i < len(s):
        return None
    return s[i]


def elem(t: Any) -> Any:
    """The element type of a tensor type (None for other types)."""
    return t.element_type if isinstance(t, TensorType) else None


def compatible_dims(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b


def compatible_shapes(a: Sequence[int | None] | None, b: Sequence[int | None] | None) -> bool:
    """Same rank and equal sizes where both are static (unranked is compatible with anything)."""
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is not None and y is not None and x != y:
            return False
    return True



def _bounds_fit(a: Any, b: Any) -> bool:
    """Static sizes of one type do not exceed the bounds of the other's dynamic dimensions."""
    for x, y in ((a, b), (b, a)):
        bx = bounds_of(x)
        if bx is None or y.shape is None or x.shape is None:
            continue
        for d, (bound, size) in enumerate(zip(bx, y.shape)):
            if bound is not None and size is not None and x.shape[d] is None and size > bound:
                return False
    return True


def expressed_or_self(et: Any) -> Any:
    return et.expressed_type if isinstance(et, QuantizedType) else et


def compatible_element_types(a: Any, b: Any) -> bool:
    """Upstream's compatibility of element types: equal, or both quantized with the same storage
    type, storage range and expressed type (scales and zero points may differ). A quantized and
    a non-quantized type are not compatible."""
    if a is b or a == b:
        return True
    qa, qb = isinstance(a, QuantizedType), isinstance(b, QuantizedType)
    if qa != qb:
        return False
    if qa and (a.storage_type != b.storage_type or a.min != b.min or a.max != b.max):
        return False
    return expressed_or_self(a) == expressed_or_self(b)


def compatible(a: Any, b: Any) -> bool:
    """Types compatible for type inference: shapes compatible (`?` matches any size),
    element types compatible; anything else, tuples included, must be equal (upstream's
    `isCompatibleForHloTypeInference` relaxes shaped types only)."""
    if a is b:
        return True
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return compatible_shapes(a.shape, b.shape) and \
            compatible_element_types(a.element_type, b.element_type) and \
            (a.encoding is None and b.encoding is None or _bounds_fit(a, b))
    if isinstance(a, OpaqueType) or isinstance(b, OpaqueType):
        return True  # another dialect's type: nothing to check here
    return a == b


def check_inferred(op: Operation, diag: Any, label: str, inferred: Sequence[Any]) -> bool:
    """Compare the result types the spec determines (``None`` = not determined) with the
    written ones; on a mismatch report both, as upstream does. Returns True when they agree."""
    actual = [v.type for v in op.results]
    ok = len(inferred) == len(actual) and all(
        i is None or compatible(i, a) for i, a in zip(inferred, actual))
    if not ok:
        shown = [i if i is not None else a for i, a in zip(inferred, actual)] + \
            list(inferred[len(actual):])
        diag.error(op, label, f"inferred type(s) {types_str(shown)} are incompatible with "
                              f"return type(s) of operation {types_str(actual)}")
    return ok


def baseline_element_type(et: Any) -> Any:
    """Spec `baseline_element_type`: quantized types without their scales and zero points."""
    if isinstance(et, QuantizedType):
        return ("quant", et.storage_type, et.min, et.max, et.expressed_type,
                et.quantization_dimension)
    return et


def baseline_type(t: Any) -> Any:
    """Spec `baseline_type`: the type with the baseline element type (a comparable key)."""
    if isinstance(t, TensorType):
        return (t.shape, baseline_element_type(t.element_type))
    return t


def num_bits(et: Any) -> int | None:
    """Bit width of an element type (storage width for quantized ones)."""
    if isinstance(et, QuantizedType):
        et = et.storage_type
    if isinstance(et, IntegerType):
        return et.width
    if isinstance(et, FloatType):
        return et.width if et.name != "tf32" else 32
    if isinstance(et, ComplexType):
        return 2 * et.element.width
    return None


def is_unique(xs: Sequence[Any]) -> bool:
    return len(set(xs)) == len(xs)


# --- regions ----------------------------------------------------------------------------------


def region_block(op: Operation, i: int) -> Block | None:
    """The entry block of region ``i`` (None when missing or empty)."""
    if i >= len(op.regions) or not op.regions[i].blocks:
        return None
    return op.regions[i].blocks[0]


def region_arg_types(op: Operation, i: int) -> list[Type] | None:
    b = region_block(op, i)
    return None if b is None else [a.type for a in b.arguments]


def region_terminator(op: Operation, i: int) -> Operation | None:
    b = region_block(op, i)
    if b is None or not b.operations:
        return None
    return b.operations[-1]


def region_return_types(op: Operation, i: int) -> list[Type] | None:
    """Operand types of the terminator of region ``i`` (None when there is none)."""
    t = region_terminator(op, i)
    if t is None or t.name not in ("stablehlo.return", "func.return", "return"):
        return None
    return [v.type for v in t.operands]


# --- the ODS-like signature check -----------------------------------------------------------------

_ATTR_KINDS = {
    "int": (IntegerAttr, int),
    "bool": (BoolAttr, bool, IntegerAttr),
    "str": (StringAttr, str),
    "float": (FloatAttr, float, IntegerAttr),
    "symbol": (SymbolRefAttr, StringAttr, str),
}


def _is_i64(t: Any) -> bool:
    return isinstance(t, IntegerType) and t.width == 64 and t.signedness == "signless"


def _attr_ok(kind: str, a: Any) -> bool:
    if kind == "ints":
        if isinstance(a, DenseArrayAttr):
            return _is_i64(a.element_type)
        return ints_of(a) is not None
    if kind == "i64elements":
        return not isinstance(a, DenseElementsAttr) or _is_i64(a.type.element_type)
    types = _ATTR_KINDS.get(kind)
    return types is None or isinstance(a, types)


_ATTR_DESC = {"int": "64-bit signless integer attribute", "ints": "i64 dense array attribute",
              "i64elements": "64-bit signless integer elements attribute",
              "bool": "bool attribute", "str": "string attribute", "float": "float attribute",
              "symbol": "flat symbol reference attribute"}


def signature(op: Operation, diag: Any, operands: Sequence[Any] = (),
              results: Sequence[Any] | None = None, attrs: dict[str, str] | None = None,
              optional_attrs: dict[str, str] | None = None, regions: int | None = 0,
              label: str = "") -> bool:
    """Check the op's shape against its definition, like upstream's generated verifier.

    ``operands`` and ``results`` are sequences of ``TC`` (one value) or ``(TC, "*")`` (a
    variadic group: several groups share the remaining values equally) or ``(TC, "?")``
    (optional). ``results=None`` skips the result check. ``attrs`` maps required attribute names
    to kinds (`int`, `ints`, `bool`, `str`, `float`, `symbol`, `any`); ``optional_attrs`` the
    same for optional ones. Returns False (after reporting) when the op is malformed, in which
    case the op-specific checks should not run.
    """
    ok = True
    if attrs or optional_attrs:
        props, discardable = op.properties, op.attributes
        for name, kind in (attrs or {}).items():
            a = props.get(name)
            if a is None:
                a = discardable.get(name)
            if a is None:
                diag.error(op, label, f"requires attribute '{name}'")
                ok = False
            elif kind != "any" and not _attr_ok(kind, a):
                diag.error(op, label, f"attribute '{name}' failed to satisfy constraint: "
                                      f"{_ATTR_DESC.get(kind, kind)}")
                ok = False
        for name, kind in (optional_attrs or {}).items():
            if kind == "any":
                continue
            a = props.get(name)
            if a is None:
                a = discardable.get(name)
            if a is not None and not _attr_ok(kind, a):
                diag.error(op, label, f"attribute '{name}' failed to satisfy constraint: "
                                      f"{_ATTR_DESC.get(kind, kind)}")
                ok = False
        if not ok:
            return False
    if not _check_values(op, diag, op.operands, operands, "operand", label):
        ok = False  # like upstream, the results are not judged against wrong operands
    elif results is not None and not _check_values(op, diag, op.results, results, "result",
                                                   label):
        ok = False
    if regions is not None and len(op.regions) != regions:
        diag.error(op, label, f"requires {regions} region{'s' if regions != 1 else ''}, "
                              f"but found {len(op.regions)}")
        ok = False
    return ok


def _check_values(op: Operation, diag: Any, values: Sequence[Any], spec: Sequence[Any],
                  what: str, label: str) -> bool:
    if len(values) == len(spec):  # fast path: one value per single constraint, all accepted
        for v, tc in zip(values, spec):
            if tc.__class__ is not TC:
                break
            t = v.type
            hit = tc._cache.get(id(t))
            if hit is None or hit[0] is not t:
                if not tc.accepts(t):
                    break
            elif not hit[1]:
                break
        else:
            return True
    groups: list[tuple[TC, str]] = [(s, "1") if isinstance(s, TC) else (s[0], s[1])
                                    for s in spec]
    n_single = sum(1 for _, k in groups if k == "1")
    n_var = sum(1 for _, k in groups if k == "*")
    n_opt = sum(1 for _, k in groups if k == "?")
    n = len(values)
    if n_var == 0 and n_opt == 0:
        if n != n_single:
            diag.error(op, label, f"expected {n_single} {what}s, but found {n}")
            return False
        sizes = [1] * n_single
    elif n_var == 0:
        if not n_single <= n <= n_single + n_opt:
            diag.error(op, label, f"expected between {n_single} and {n_single + n_opt} "
                                  f"{what}s, but found {n}")
            return False
        extra = n - n_single
        sizes = []
        for _, k in groups:
            if k == "?":
                sizes.append(1 if extra > 0 else 0)
                extra -= 1 if extra > 0 else 0
            else:
                sizes.append(1)
    else:
        rest = n - n_single
        if rest < 0 or rest % n_var:
            diag.error(op, label, f"expected {n_single} {what}s plus {n_var} equally sized "
                                  f"variadic group(s), but found {n} {what}s")
            return False
        each = rest // n_var
        sizes = [each if k == "*" else 1 for _, k in groups]
    bad: list[tuple[str, str]] = []
    i = 0
    for g, ((tc, kind), size) in enumerate(zip(groups, sizes)):
        for _ in range(size):
            t = values[i].type
            if not tc.accepts(t):
                desc = ("variadic of " if kind == "*" else "") + tc.description
                lab = label or (f"I{g + 1}" if what == "operand" else "")
                bad.append((lab, f"{what} #{i} must be {desc}, but got '{type_str(t)}'"))
            i += 1
    if bad:  # the first as the error (as upstream reports it), the others as notes
        diag.error(op, bad[0][0], bad[0][1],
                   notes=[(f"also: {f'({lab}) ' if lab else ''}{msg}", None)
                          for lab, msg in bad[1:]])
    return not bad


# --- element-wise ops ---------------------------------------------------------------------------


def same_shapes(op: Operation, diag: Any, label: str, types: Sequence[Any] | None = None,
                message: str = "requires the same shape for all operands and results",
                bounds: bool = True) -> bool:
    """All ranked tensor types among ``types`` (default: operands and results) have the same
    rank and, in each dimension, at most one static size (`?` matches any size); with
    ``bounds``, no static size exceeds another type's bound there."""
    if types is None:
        types = [v.type for v in op.operands] + [v.type for v in op.results]
    first = types[0] if types else None
    if all(t is first for t in types):
        return first is None or getattr(first, "encoding", None) is None
    shapes = [t.shape for t in types if isinstance(t, TensorType) and t.shape is not None]
    if not shapes:
        return True
    s0 = shapes[0]
    if all(s == s0 for s in shapes) and all(getattr(t, "encoding", None) is None
                                            for t in types):
        return True
    rank = len(s0)
    ok = all(len(s) == rank for s in shapes)
    if ok:
        for d in range(rank):
            sizes = {s[d] for s in shapes if s[d] is not None}
            if len(sizes) > 1:
                ok = False
                break
    if not ok:
        diag.error(op, label, f"{message}: {', '.join(dims_str(x) for x in shapes)}")
        return False
    if not bounds:
        return True
    ranked = [t for t in types if isinstance(t, TensorType) and t.shape is not None]
    for t in ranked:
        bt = bounds_of(t)
        if bt is None:
            continue
        for u in ranked:
            for d, (bound, size) in enumerate(zip(bt, u.shape)):
                if bound is not None and size is not None and t.shape[d] is None and \
                        size > bound:
                    diag.error(op, label, f"Mismatched dimension size {size} and bound {bound} "
                                          f"in dimension {d}")
                    return False
    return True


def compatible_all(op: Operation, diag: Any, label: str,
                   types: Sequence[Any] | None = None) -> bool:
    """Upstream's CompatibleOperandsAndResultType: same shapes (up to `?`), compatible element
    types (quantized types may differ in scales and zero points only)."""
    if types is None:
        types = [v.type for v in op.operands] + [v.type for v in op.results]
    first = types[0] if types else None
    if all(t is first for t in types) and getattr(first, "encoding", None) is None:
        return True  # one type object throughout (the parser interns types)
    if not same_shapes(op, diag, label, types):
        return False
    ets = [t.element_type for t in types if isinstance(t, TensorType)]
    for e in ets[1:]:
        if not compatible_element_types(ets[0], e):
            diag.error(op, label, "requires compatible types for all operands and results: "
                                  + types_str(types))
            return False
    return True


# --- type equality up to spelling -----------------------------------------------------------------


def _quant_key(q: QuantizedType) -> tuple:
    return (q.storage_type, q.min, q.max, q.expressed_type, tuple(q.scales),
            tuple(q.zero_points), q.quantization_dimension)


def same_element_type(a: Any, b: Any) -> bool:
    """Equal element types; quantized types compare by value (`i8` = `i8<-128:127>`)."""
    if a is b or a == b:
        return True
    if isinstance(a, QuantizedType) and isinstance(b, QuantizedType):
        return _quant_key(a) == _quant_key(b)
    return False


def same_type(a: Any, b: Any) -> bool:
    """Equal types, up to the spelling of quantized storage ranges."""
    if a is b or a == b:
        return True
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.shape == b.shape and same_element_type(a.element_type, b.element_type) and \
            a.encoding == b.encoding
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all(map(same_type, a.types, b.types))
    return False


def quant_params_equal(a: Any, b: Any) -> bool:
    return tuple(a.scales) == tuple(b.scales) and tuple(a.zero_points) == tuple(b.zero_points)


def quant_params_prefix_equal(a: Any, b: Any) -> bool:
    """Upstream's isSameQuantPerAxisScaleZeroPoint, which compares the scales and zero points
    the two types both have (up to the shorter list): checked first, so that its violations
    get upstream's message; :func:`quant_params_equal` (the spec's rule) is checked after."""
    return all(x == y for x, y in zip(a.scales, b.scales)) and \
        all(x == y for x, y in zip(a.zero_points, b.zero_points))


def per_tensor_same_quant(op: Operation, diag: Any, label: str, operand: Any,
                          result: Any) -> bool:
    """C1 of reshape/transpose/broadcast_in_dim for per-tensor quantized types: the element
    types are identical (scale and zero point included)."""
    a, b = operand.element_type, result.element_type
    if isinstance(a, QuantizedType) and isinstance(b, QuantizedType) and \
            a.quantization_dimension is None and b.quantization_dimension is None:
        if not same_element_type(a, b):
            diag.error(op, label, f"expect same quantization scale and zero_point: "
                                  f"{types_str([operand, result])}")
            return False
        return True
    if isinstance(a, QuantizedType) != isinstance(b, QuantizedType) or \
            not isinstance(a, QuantizedType) and not same_element_type(a, b):
        diag.error(op, label, f"expects operand and result to have the same element type: "
                              f"{types_str([operand, result])}")
        return False
    if isinstance(a, QuantizedType):
        if (a.storage_type, a.min, a.max, a.expressed_type) != \
                (b.storage_type, b.min, b.max, b.expressed_type) or \
                (a.quantization_dimension is None) != (b.quantization_dimension is None):
            diag.error(op, label, f"expects operand and result to have the same quantized "
                                  f"storage and expressed types: {types_str([operand, result])}")
            return False
    return True


# --- dimension lists and struct attributes shared by gather, scatter and dot_general ---------
def _disjoint(op: Operation, diag: Any, label: str, a: Sequence[int], b: Sequence[int],
              an: str, bn: str) -> bool:
    seen: set[int] = set()
    for x in list(a) + list(b):
        if x in seen:
            diag.error(op, label, f"has duplicated dimension from {an} and {bn}: {x}")
            return False
        seen.add(x)
    return True


def struct_ints(attr: Any, key: str) -> tuple[int, ...]:
    v = attr.get(key) if isinstance(attr, StructAttr) else None
    r = ints_of(v, None) if v is not None and not isinstance(v, int) else None
    return r if r is not None else ()


def struct_int(attr: Any, key: str, default: int = 0) -> int:
    v = attr.get(key) if isinstance(attr, StructAttr) else None
    if v is None:
        return default
    if isinstance(v, (IntegerAttr, BoolAttr)):
        return int(v.value)
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


# --- symbols --------------------------------------------------------------------------------------


def lookup_function(op: Operation, diag: Any, name: str | None) -> Operation | None:
    """The `func.func` named ``name`` in the module around ``op`` (None when there is none)."""
    if not isinstance(name, str):
        return None
    symbols = getattr(diag, "symbols", None)
    if symbols is None:
        top = op
        while top.parent is not None and top.parent.parent is not None and \
                top.parent.parent.parent is not None:
            top = top.parent.parent.parent
        body = top.parent.operations if top.parent is not None else [top]
        symbols = {}
        for o in body:
            n = o.attr("sym_name")
            if isinstance(n, StringAttr):
                symbols.setdefault(n.value, o)
    f = symbols.get(name)
    return f if f is not None and f.name == "func.func" else None


def function_type_of(func: Operation) -> FunctionType | None:
    a = func.attr("function_type")
    t = getattr(a, "type", a)
    return t if isinstance(t, FunctionType) else None


def constant_ints(value: Any) -> list[int] | None:
    """The integers of a value defined by a constant op (`stablehlo.constant`,
    `arith.constant`), else None: shape operands that are constants can be checked."""
    owner = getattr(value, "owner", None)
    if not isinstance(owner, Operation) or owner.name not in ("stablehlo.constant",
                                                              "arith.constant"):
        return None
    a = owner.attr("value")
    if isinstance(a, DenseElementsAttr):
        try:
            arr = a.array
            n = 1
            for d in (a.type.shape or ()):
                n *= d or 0
            flat = [int(x) for x in arr.reshape(-1).tolist()]
            if len(flat) == 1 and n > 1:  # a splat
                flat = flat * n
            return flat
        except (TypeError, ValueError):
            return None
    return None
