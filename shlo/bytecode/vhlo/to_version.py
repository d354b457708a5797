"""`vhlo-to-version`: upgrade or downgrade every VHLO op to the versions a target has
(upstream `VhloToVersion.cpp` and `VhloToVersionPatterns.td`).

An op is legal at a target when the target is within the op's [min, max] versions, its
versioned constraints hold, and every attribute and type it uses exists at the target. An
illegal op is rewritten by its upgrade (`*_v1` -> `*_v2`) or downgrade pattern, which may only
apply when the op does not use what the older version cannot express; the result must be legal.
Ops are visited in pre-order and the first one that cannot be made legal fails the conversion
with upstream's messages, plus a note naming what the target lacks and the first version that
has it. The rewrites keep the op's operands, results, regions and discardable attributes: VHLO
variadic operands carry no segment sizes, so `v1` and `v2` differ only in name and attributes.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from ...attributes import DenseElementsAttr
from ...errors import Diagnostic, ShloError
from ...ir import Module, Operation, UNKNOWN_LOC
from ...types import TensorType, element_type
from . import attrs as A
from . import types as T
from .text import to_builtin_type
from .ops import OPS, CONSTRAINED
from .version import CURRENT, Version, validate_target

__all__ = ["convert_to_version", "VersionConversionError", "attr_problem", "type_problem",
           "op_problem", "smallest_version", "empty_i64_tensor", "default_result_accuracy"]

V = Version


class VersionConversionError(ShloError):
    """The program uses something the target version cannot express."""


def empty_i64_tensor() -> A.VTensorAttr:
    t = TensorType((0,), element_type("i64"))
    return A.VTensorAttr(T.VTensor((0,), T.SI64), DenseElementsAttr(t, np.zeros(0, np.int64)))


def default_result_accuracy() -> A.VResultAccuracy:
    return A.VResultAccuracy(0, 0, 0, A.VEnum("result_accuracy_mode_v1", "DEFAULT"))


_NONE_TYPE = A.VTypeAttr(T.NONE)
_FALSE = A.VBool(False)
_EMPTY_ARRAY = A.VArray(())


# --- legality ---------------------------------------------------------------------------------


def _describe(x: Any) -> str:
    if isinstance(x, T.VhloType):
        b = to_builtin_type(x) if isinstance(x, T.VScalar) else None
        from ...syntax.printer import format_type

        extra = f" ({format_type(b)})" if b is not None and not isinstance(b, T.VhloType) \
            and getattr(b, "name", None) else ""
        return f"type {x.name}{extra}"
    return f"attribute {A.attr_text(x)}"


def _version_problem(x: Any, v: Version) -> str | None:
    lo = x.min_version
    if v < lo:
        return f"{_describe(x)} requires StableHLO >= {lo}"
    return None


def attr_problem(a: Any, v: Version) -> str | None:
    """Why attribute ``a`` cannot be written at version ``v`` (None: it can)."""
    if not isinstance(a, A.VhloAttr):
        return None
    p = _version_problem(a, v)
    if p:
        return p
    t = type(a)
    if t is A.VArray:
        for x in a.values:
            p = attr_problem(x, v)
            if p:
                return p
    elif t is A.VDict:
        for k, x in a.items:
            p = attr_problem(k, v) or attr_problem(x, v)
            if p:
                return p
    elif t in (A.VFloat, A.VInteger, A.VTensorAttr):
        return type_problem(a.type, v)
    elif t is A.VTypeAttr:
        return type_problem(a.value, v)
    elif t is A.VResultAccuracy:
        return attr_problem(a.mode, v)
    elif t is A.VAxisRef:
        return attr_problem(a.name, v) or (attr_problem(a.sub_axis_info, v)
                                           if a.sub_axis_info is not None else None)
    elif t is A.VReplicaGroupMeshAxes:
        return attr_problem(a.mesh, v) or attr_problem(a.axes, v)
    return None


# version -> type -> why it cannot be written there (memo: types are few and hash fast)
_TYPE_PROBLEMS: dict[Version, dict[Any, str | None]] = {}


def type_problem(t: Any, v: Version) -> str | None:
    """Why type ``t`` cannot be written at version ``v`` (None: it can)."""
    memo = _TYPE_PROBLEMS.get(v)
    if memo is None:
        memo = _TYPE_PROBLEMS[v] = {}
    try:
        return memo[t]
    except KeyError:
        pass
    except TypeError:  # unhashable: not a VHLO type
        return None
    p = _type_problem(t, v) if isinstance(t, T.VhloType) else None
    if len(memo) < 100_000:
        memo[t] = p
    return p


def _type_problem(t: Any, v: Version) -> str | None:
    p = _version_problem(t, v)
    if p:
        return p
    if isinstance(t, (T.VComplex, T.VUnranked, T.VBuffer)):
        return type_problem(t.element, v)
    if isinstance(t, T.VFunction):
        for x in t.inputs + t.outputs:
            p = type_problem(x, v)
            if p:
                return p
    elif isinstance(t, T.VTensor):
        if t.encoding is not None:
            p = attr_problem(t.encoding, v)
            if p:
                return p
        return type_problem(t.element, v)
    elif isinstance(t, T.VTuple):
        for x in t.types:
            p = type_problem(x, v)
            if p:
                return p
    elif isinstance(t, T.VQuant):
        return type_problem(t.storage, v) or type_problem(t.expressed, v)
    return None


def _element(t: Any) -> Any:
    if isinstance(t, (T.VTensor, T.VUnranked)):
        return t.element
    return t


def _constraint_problem(op: Operation, v: Version) -> str | None:
    name = op.name
    if name == "vhlo.custom_call_v1":
        if v < V(1, 17, 0) and any(isinstance(x.type, T.VFuture) for x in op.operands):
            return "custom_call with future operands requires StableHLO >= 1.17.0"
        if v < V(1, 3, 0):
            if isinstance(op.properties.get("backend_config"), A.VDict):
                return "custom_call with a dictionary backend_config requires StableHLO >= 1.3.0"
            api = op.properties.get("api_version")
            if isinstance(api, A.VEnum) and api.value == "API_VERSION_TYPED_FFI":
                return "custom_call with API_VERSION_TYPED_FFI requires StableHLO >= 1.3.0"
        return None
    if v < V(0, 17, 0):
        for x, r in zip(op.operands, op.results):
            if _element(x.type) != _element(r.type):
                return (f"{name[5:].rsplit('_v', 1)[0]} with operand and result element types "
                        "that differ (promotable types) requires StableHLO >= 0.17.0")
    return None


def op_problem(op: Operation, v: Version) -> str | None:
    """Why ``op`` is not legal at version ``v`` (None: it is)."""
    info = OPS.get(op.name)
    if info is None:
        return None  # another dialect's op (allowed through by stablehlo-legalize-to-vhlo)
    if v < info.min_version:
        return f"op {op.name} requires StableHLO >= {info.min_version}"
    if info.max_version < v:
        return f"op {op.name} exists up to StableHLO {info.max_version}"
    if CURRENT <= v:  # every attribute, type and constraint a reader decodes exists by now
        return None
    if op.name in CONSTRAINED:
        p = _constraint_problem(op, v)
        if p:
            return p
    for d in (op.properties, op.attributes):
        if d:
            for k, a in d.items():
                p = attr_problem(a, v)
                if p:
                    return f"{p} (in '{k}')"
    memo = _TYPE_PROBLEMS.get(v)
    for values in (op.operands, op.results):
        for x in values:
            t = x.type
            p = memo.get(t, 0) if memo is not None else 0
            if p == 0:
                p = type_problem(t, v)
            if p:
                return p
    return None


# --- patterns -----------------------------------------------------------------------------------
# A pattern rewrites the op in place and returns None, or returns why it does not apply.

Pattern = Callable[[Operation], "str | None"]
UPGRADES: dict[str, Pattern] = {}
DOWNGRADES: dict[str, Pattern] = {}


def _rename(op: Operation, name: str, add: dict[str, Any] | None = None,
            drop: tuple[str, ...] = ()) -> None:
    props = {k: v for k, v in op.properties.items() if k not in drop}
    if add:
        props.update(add)
    op.name = name
    op.properties = props


def _is_empty_tensor(a: Any) -> bool:
    return isinstance(a, A.VTensorAttr) and len(a.raw()) == 0


def _simple(v1: str, v2: str, add: dict[str, Any], check: Callable[[Operation], str | None],
            drop: tuple[str, ...] | None = None) -> None:
    """Register v1 -> v2 (adding ``add``) and v2 -> v1 (when ``check`` passes)."""

    def up(op: Operation) -> str | None:
        _rename(op, "vhlo." + v2, add)
        return None

    def down(op: Operation) -> str | None:
        why = check(op)
        if why:
            return why
        _rename(op, "vhlo." + v1, drop=tuple(add) if drop is None else drop)
        return None

    UPGRADES["vhlo." + v1] = up
    DOWNGRADES["vhlo." + v2] = down


def _empty(*names: str, what: str, since: str) -> Callable[[Operation], str | None]:
    def check(op: Operation) -> str | None:
        for n in names:
            if not _is_empty_tensor(op.properties.get(n)):
                return f"{what} requires StableHLO >= {since}"
        return None

    return check


def _single_operand(what: str, since: str, extra: Callable[[Operation], str | None] | None = None
                    ) -> Callable[[Operation], str | None]:
    def check(op: Operation) -> str | None:
        if len(op.operands) != 1:
            return f"{what} with {len(op.operands)} operands requires StableHLO >= {since}"
        return extra(op) if extra is not None else None

    return check


_BATCHING = {"operand_batching_dims": None, "start_indices_batching_dims": None}
_simple("gather_v1", "gather_v2",
        {"operand_batching_dims": empty_i64_tensor(),
         "start_indices_batching_dims": empty_i64_tensor()},
        _empty("operand_batching_dims", "start_indices_batching_dims",
               what="gather with batching dimensions", since="1.1.0"))
_simple("dynamic_gather_v1", "dynamic_gather_v2",
        {"operand_batching_dims": empty_i64_tensor(),
         "start_indices_batching_dims": empty_i64_tensor()},
        _empty("operand_batching_dims", "start_indices_batching_dims",
               what="dynamic_gather with batching dimensions", since="1.1.0"))
_simple("scatter_v1", "scatter_v2",
        {"input_batching_dims": empty_i64_tensor(),
         "scatter_indices_batching_dims": empty_i64_tensor()},
        _empty("input_batching_dims", "scatter_indices_batching_dims",
               what="scatter with batching dimensions", since="1.1.0"))
for _n in ("all_gather", "all_to_all", "all_reduce"):
    _simple(f"{_n}_v1", f"{_n}_v2", {}, _single_operand(_n, "1.5.0"))
_DOT_ALGORITHM = ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
                  "lhs_component_count", "rhs_component_count", "num_primitive_operations",
                  "allow_imprecise_accumulation")


def _dot_check(op: Operation) -> str | None:
    for n in _DOT_ALGORITHM:
        if op.properties.get(n) != _NONE_TYPE:
            return "dot_general with an algorithm requires StableHLO >= 1.6.0"
    return None


_simple("dot_general_v1", "dot_general_v2", {n: _NONE_TYPE for n in _DOT_ALGORITHM}, _dot_check)
_simple("send_v1", "send_v2", {"source_target_pairs": empty_i64_tensor()},
        _empty("source_target_pairs", what="send with source_target_pairs", since="1.12.0"))
_simple("recv_v1", "recv_v2", {"source_target_pairs": empty_i64_tensor()},
        _empty("source_target_pairs", what="recv with source_target_pairs", since="1.12.0"))


def _accuracy_check(name: str) -> Callable[[Operation], str | None]:
    def check(op: Operation) -> str | None:
        if op.properties.get("result_accuracy") != default_result_accuracy():
            since = "1.9.0" if name == "exponential" else "1.10.0"
            return f"{name} with a result_accuracy requires StableHLO >= {since}"
        return None

    return check


for _n in ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
           "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh"):
    _simple(f"{_n}_v1", f"{_n}_v2", {"result_accuracy": default_result_accuracy()},
            _accuracy_check(_n))
_simple("collective_broadcast_v1", "collective_broadcast_v2", {"has_dynamic_root": _FALSE},
        _single_operand("collective_broadcast", "1.20.0",
                        lambda op: None if op.properties.get("has_dynamic_root") == _FALSE else
                        "collective_broadcast with has_dynamic_root requires StableHLO >= "
                        "1.20.0"))


def _composite_check(op: Operation) -> str | None:
    if op.regions:
        return "composite with regions requires StableHLO >= 1.14.0"
    return None


_simple("composite_v1", "composite_v2", {}, _composite_check)
_simple("custom_call_v1", "custom_call_v2", {"result_tilings": _EMPTY_ARRAY},
        lambda op: None if op.properties.get("result_tilings") == _EMPTY_ARRAY else
        "custom_call with result_tilings requires StableHLO >= 1.18.0")


def _dynamic_conv_up(op: Operation) -> str | None:
    _rename(op, "vhlo.dynamic_conv_v2", drop=("padding",))
    return None


def _dynamic_conv_down(op: Operation) -> str | None:
    lhs = op.operands[0].type if op.operands else None
    if not isinstance(lhs, T.VTensor):
        return "dynamic_conv on an unranked operand cannot be written before StableHLO 0.20.0"
    n = len(lhs.shape) - 2
    data = DenseElementsAttr(TensorType((n, 2), element_type("i64")), np.zeros((n, 2), np.int64))
    pad = A.VTensorAttr(T.VTensor((n, 2), T.SI64), data)
    _rename(op, "vhlo.dynamic_conv_v1", {"padding": pad})
    return None


UPGRADES["vhlo.dynamic_conv_v1"] = _dynamic_conv_up
DOWNGRADES["vhlo.dynamic_conv_v2"] = _dynamic_conv_down


# --- the conversion ------------------------------------------------------------------------------


def _legalize(op: Operation, v: Version) -> str | None:
    """Make ``op`` legal at ``v`` in place; the reason when it cannot be."""
    why = op_problem(op, v)
    if why is None:
        return None
    info = OPS[op.name]
    saved = (op.name, op.properties)
    pattern = UPGRADES.get(op.name) if info.max_version < v else \
        DOWNGRADES.get(op.name) if v < info.min_version else None
    if pattern is None:
        return why
    reason = pattern(op)
    if reason is not None:
        op.name, op.properties = saved
        return reason
    again = op_problem(op, v)
    if again is not None:
        op.name, op.properties = saved
        return again
    return None


def current_already(op_names: Iterable[str]) -> bool:
    """Whether a module whose ops are named ``op_names`` is already legal at the current
    version (no op needs an upgrade), so that converting it to CURRENT changes nothing."""
    for name in op_names:
        info = OPS.get(name)
        if info is not None and info.max_version < CURRENT:
            return False
    return True


def convert_to_version(module: Module, target: str | Version,
                       rewritten: list[Operation] | None = None) -> Module:
    """Rewrite the VHLO ops of ``module`` in place for ``target``; raises
    :class:`VersionConversionError` (upstream's messages, and a note saying why) when an op
    cannot be expressed at the target. The ops rewritten are appended to ``rewritten`` (in
    the order upstream rewrites them: the bytecode writer reproduces the use-list orders that
    the rewrites leave)."""
    if isinstance(target, Version):
        v = target
    else:
        try:
            v = validate_target(target)
        except ValueError as e:
            raise VersionConversionError(str(e), module.op.location,
                                         filename=module.filename) from None
    v = v.opset if v != CURRENT else v
    for op in module.op.walk():
        if not op.name.startswith("vhlo."):
            continue
        before = op.name
        try:
            why = _legalize(op, v)
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
            why = f"malformed attribute ({type(e).__name__}: {e})"
        if why is None and rewritten is not None and op.name != before:
            rewritten.append(op)
        if why is not None:
            d = Diagnostic(f"failed to legalize operation '{op.name}' that was explicitly "
                           "marked illegal", op.location)
            d.notes.append(Diagnostic(why, op.location, "note"))
            top = Diagnostic(f"failed to convert VHLO to v{v}", module.op.location)
            raise VersionConversionError(d.message, diagnostics=[d, top],
                                         filename=module.filename)
    return module


def smallest_version(module: Module) -> Version:
    """The smallest StableHLO version that can hold the VHLO program ``module``."""
    from .version import VERSION_LOG, parse_version

    best = CURRENT
    for text in reversed(list(VERSION_LOG)):
        v = parse_version(text)
        assert v is not None
        if _fits(module, v):
            best = v
        else:
            break
    return best


def _fits(module: Module, v: Version) -> bool:
    saved = [(op, op.name, op.properties) for op in module.op.walk()]
    try:
        for op in module.op.walk():
            if op.name.startswith("vhlo.") and _legalize(op, v) is not None:
                return False
        return True
    finally:
        for op, name, props in saved:
            op.name = name
            op.properties = props


_ = (UNKNOWN_LOC, _BATCHING)
