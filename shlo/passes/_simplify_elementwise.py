"""`stablehlo-aggressive-simplification` patterns of the element-wise ops: constants to the
right of commutative ops, identities (x+0, x*1, x&-1, ...), absorbing elements (x*0, x|-1),
x-x and x^x, compare canonicalization, convert/complex/real/imag round trips and select.

Benefits follow upstream's: a declarative (DRR) pattern counts the ops it matches, the C++
patterns have benefit 1; ties go in upstream's registration order.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..attributes import EnumAttr
from ..ir import Operation, Value
from ..registry import COMMUTATIVE, names_with
from ..types import TensorType
from ._patterns import FoldContext, PatternRewriter, constant_of, dense, pattern

SIMPLIFY = "simplify"

OPTIONS = [FoldContext()]


def set_options(ctx: FoldContext) -> None:
    OPTIONS[0] = ctx


# --- helpers shared by the simplification families ------------------------------------------------


def merge_attrs(src: Operation, dest: Operation | Value | None) -> None:
    """Upstream's mergeDiscardableAttributes: ``src``'s discardable attributes onto ``dest``
    (the op defining it, when a value; nothing for block arguments); ``src`` wins, except that
    `mhlo.frontend_attributes` dictionaries merge keeping ``dest``'s `xla_metadata_payload`."""
    if isinstance(dest, Value):
        dest = dest.owner if isinstance(dest.owner, Operation) else None
    if dest is None or not src.attributes:
        return
    from ..attributes import DictAttr

    merged = dict(dest.attributes)
    for k, v in src.attributes.items():
        old = merged.get(k)
        if k == "mhlo.frontend_attributes" and isinstance(old, DictAttr) and \
                isinstance(v, DictAttr):
            items = dict(old.items)
            for kk, vv in v.items:
                if kk == "xla_metadata_payload" and kk in items:
                    continue
                items[kk] = vv
            merged[k] = DictAttr(tuple(items.items()))
        else:
            merged[k] = v
    dest.attributes = merged


def replace_with_value(op: Operation, rw: PatternRewriter, v: Value, merge: bool = True) -> bool:
    if merge:
        merge_attrs(op, v)
    rw.replace_op(op, [v])
    return True


def replace_with_new(op: Operation, rw: PatternRewriter, name: str, operands: list[Value],
                     properties: dict | None = None, merge: bool = True,
                     result_type=None) -> Operation:
    new = rw.create(name, operands, [result_type or op.results[0].type], properties or {},
                    dict(op.attributes) if merge else {})
    rw.replace_op(op, new.results)
    return new


def const_op(v: Value, name: str = "stablehlo.constant") -> Operation | None:
    """The `stablehlo.constant` op defining ``v`` (upstream's StableHLO_ConstantOp match)."""
    d = v.owner
    return d if isinstance(d, Operation) and d.name == name else None


def splat_value(v: Value, stablehlo_only: bool = False):
    """The splat element of the constant defining ``v`` (None: not a splat constant)."""
    if stablehlo_only and const_op(v) is None:
        return None
    c = constant_of(v)
    if c is None or not c.is_splat:
        return None
    return c.array.reshape(-1)[0], c.type.element_type


def _is(pred: Callable, v: Value, stablehlo_only: bool = False) -> bool:
    s = splat_value(v, stablehlo_only)
    if s is None:
        return False
    x, et = s
    return bool(pred(x, et))


def int_zero(x, et) -> bool:
    return (et.is_integer or et.is_bool) and int(x) == 0


def any_zero(x, et) -> bool:
    return int_zero(x, et) or (et.is_float and float(x) == 0.0)


def int_one(x, et) -> bool:
    return (et.is_integer or et.is_bool) and int(x) == 1


def any_one(x, et) -> bool:
    return int_one(x, et) or (et.is_float and float(x) == 1.0)


def int_all_ones(x, et) -> bool:
    if et.is_bool:
        return bool(x)
    if not et.is_integer:
        return False
    return int(x) == (-1 if et.is_signed or not et.is_unsigned else et.max)


def is_static(t) -> bool:
    return isinstance(t, TensorType) and t.is_static


def iota_dims(dims) -> bool:
    return tuple(dims) == tuple(range(len(dims)))


# --- declarative patterns (upstream's StablehloAggressiveSimplificationPatterns.td order) --------

_COMMUTATIVE_CANON = ("stablehlo.add", "stablehlo.and", "stablehlo.maximum", "stablehlo.minimum",
                      "stablehlo.multiply", "stablehlo.or", "stablehlo.xor")


def _constant_to_rhs(op: Operation, rw: PatternRewriter) -> bool:
    """op(cst, X) -> op(X, cst) for commutative ops."""
    if len(op.operands) != 2 or op.name not in names_with(COMMUTATIVE):
        return False
    lhs, rhs = op.operands
    if const_op(lhs) is None or const_op(rhs) is not None:
        return False
    replace_with_new(op, rw, op.name, [rhs, lhs], dict(op.properties))
    return True


def _remove_noop(op: Operation, rw: PatternRewriter) -> bool:
    """add(X, 0), subtract(X, 0), multiply(X, 1), and(X, -1), or(X, 0), xor(X, 0) -> X."""
    rule = _NOOP[op.name]
    pred, stablehlo_only, merge = rule
    lhs, rhs = op.operands
    if not _is(pred, rhs, stablehlo_only) or lhs.type != op.results[0].type:
        return False
    return replace_with_value(op, rw, lhs, merge)


def _absorb(op: Operation, rw: PatternRewriter) -> bool:
    """and(X, 0) -> 0, multiply(X, 0) -> 0, or(X, -1) -> -1."""
    pred, merge = _ABSORB[op.name]
    rhs = op.operands[1]
    if not _is(pred, rhs, True) or rhs.type != op.results[0].type:
        return False
    return replace_with_value(op, rw, rhs, merge)


def _self_to_zero(op: Operation, rw: PatternRewriter) -> bool:
    """subtract(X, X) -> 0 (static integers), xor(X, X) -> 0 (static)."""
    lhs, rhs = op.operands
    t = lhs.type
    if lhs is not rhs or not is_static(t) or t.element_type.is_quantized:
        return False
    if op.name == "stablehlo.subtract" and not (t.element_type.is_integer or
                                                t.element_type.is_bool):
        return False
    rw.replace_op(op, [rw.constant(dense(0, t))])
    return True


# name -> (predicate on the rhs splat, rhs must be a stablehlo.constant, merge attributes)
_NOOP = {
    "stablehlo.add": (any_zero, False, True),
    "stablehlo.and": (int_all_ones, True, True),
    "stablehlo.multiply": (any_one, True, True),
    "stablehlo.or": (int_zero, True, True),
    "stablehlo.subtract": (any_zero, True, True),
    "stablehlo.xor": (int_zero, False, False),
}
_ABSORB = {
    "stablehlo.and": (int_zero, False),
    "stablehlo.multiply": (int_zero, True),
    "stablehlo.or": (int_all_ones, True),
}

# Registration in upstream's order: per op, its declarative patterns with their benefits.
for _name in ("stablehlo.add", "stablehlo.and"):
    pattern(SIMPLIFY, _name, 2)(_constant_to_rhs)
    if _name == "stablehlo.add":
        pattern(SIMPLIFY, _name, 1)(_remove_noop)
    else:
        pattern(SIMPLIFY, _name, 2)(_absorb)
        pattern(SIMPLIFY, _name, 2)(_remove_noop)


@pattern(SIMPLIFY, "stablehlo.compare", 2)
def compare_bool_identity(op: Operation, rw: PatternRewriter) -> bool:
    """compare(X, false, NE) -> X; compare(X, true, EQ) -> X (booleans)."""
    lhs, rhs = op.operands
    direction = op.attr("comparison_direction")
    d = getattr(direction, "value", None)
    t = rhs.type
    if not isinstance(t, TensorType) or not t.element_type.is_bool or const_op(rhs) is None:
        return False
    if lhs.type != op.results[0].type:
        return False
    if (d == "NE" and _is(int_zero, rhs)) or (d == "EQ" and _is(int_one, rhs)):
        rw.replace_op(op, [lhs])
        return True
    return False


@pattern(SIMPLIFY, "stablehlo.convert", 1)
def convert_noop(op: Operation, rw: PatternRewriter) -> bool:
    """convert(X : T) -> X when the result type is T."""
    if op.operands[0].type != op.results[0].type:
        return False
    return replace_with_value(op, rw, op.operands[0])


@pattern(SIMPLIFY, "stablehlo.complex", 3)
def complex_of_real_imag(op: Operation, rw: PatternRewriter) -> bool:
    """complex(real(X), imag(X)) -> X."""
    re = rw.defining(op.operands[0], "stablehlo.real")
    im = rw.defining(op.operands[1], "stablehlo.imag")
    if re is None or im is None or re.operands[0] is not im.operands[0]:
        return False
    rw.replace_op(op, [re.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.imag", 2)
def imag_of_complex(op: Operation, rw: PatternRewriter) -> bool:
    """imag(complex(R, I)) -> I."""
    c = rw.defining(op.operands[0], "stablehlo.complex")
    if c is None:
        return False
    rw.replace_op(op, [c.operands[1]])
    return True


for _name in ("stablehlo.maximum", "stablehlo.minimum"):
    pattern(SIMPLIFY, _name, 2)(_constant_to_rhs)
pattern(SIMPLIFY, "stablehlo.multiply", 2)(_constant_to_rhs)
pattern(SIMPLIFY, "stablehlo.multiply", 2)(_absorb)
pattern(SIMPLIFY, "stablehlo.multiply", 2)(_remove_noop)
pattern(SIMPLIFY, "stablehlo.or", 2)(_constant_to_rhs)
pattern(SIMPLIFY, "stablehlo.or", 2)(_absorb)
pattern(SIMPLIFY, "stablehlo.or", 2)(_remove_noop)


@pattern(SIMPLIFY, "stablehlo.real", 2)
def real_of_complex(op: Operation, rw: PatternRewriter) -> bool:
    """real(complex(R, I)) -> R."""
    c = rw.defining(op.operands[0], "stablehlo.complex")
    if c is None:
        return False
    rw.replace_op(op, [c.operands[0]])
    return True


@pattern(SIMPLIFY, "stablehlo.select", 2)
def select_not_predicate(op: Operation, rw: PatternRewriter) -> bool:
    """select(not(p), t, f) -> select(p, f, t)."""
    n = rw.defining(op.operands[0], "stablehlo.not")
    if n is None:
        return False
    replace_with_new(op, rw, op.name, [n.operands[0], op.operands[2], op.operands[1]],
                     dict(op.properties))
    return True


@pattern(SIMPLIFY, "stablehlo.select", 3)
def select_broadcast_not_predicate(op: Operation, rw: PatternRewriter) -> bool:
    """select(broadcast(not(p)), t, f) -> select(broadcast(p), f, t) (broadcast used once)."""
    b = rw.defining(op.operands[0], "stablehlo.broadcast_in_dim")
    if b is None or not rw.has_one_use(b.results[0]):
        return False
    n = rw.defining(b.operands[0], "stablehlo.not")
    if n is None:
        return False
    nb = rw.create1("stablehlo.broadcast_in_dim", [n.operands[0]], b.results[0].type,
                    dict(b.properties))
    replace_with_new(op, rw, op.name, [nb, op.operands[2], op.operands[1]],
                     dict(op.properties), merge=False)
    return True


pattern(SIMPLIFY, "stablehlo.subtract", 1)(_self_to_zero)
pattern(SIMPLIFY, "stablehlo.subtract", 2)(_remove_noop)
pattern(SIMPLIFY, "stablehlo.xor", 2)(_constant_to_rhs)
pattern(SIMPLIFY, "stablehlo.xor", 1)(_self_to_zero)
pattern(SIMPLIFY, "stablehlo.xor", 1)(_remove_noop)


# --- C++ patterns ---------------------------------------------------------------------------------

_INVERT = {"EQ": "EQ", "NE": "NE", "GE": "LE", "GT": "LT", "LE": "GE", "LT": "GT"}


@pattern(SIMPLIFY, "stablehlo.compare", 1)
def compare_canon(op: Operation, rw: PatternRewriter) -> bool:
    """Integer compares: compare(X, X) -> true/false; compare(cst, X) -> compare(X, cst) with
    the direction inverted."""
    ct = op.attr("compare_type")
    if not isinstance(ct, EnumAttr) or ct.value not in ("SIGNED", "UNSIGNED"):
        return False
    direction = op.attr("comparison_direction")
    lhs, rhs = op.operands
    t = op.results[0].type
    if lhs is rhs:
        if not is_static(t):
            return False
        value = direction.value in ("EQ", "GE", "LE")
        rw.replace_op(op, [rw.constant(dense(value, t))])
        return True
    if constant_of(lhs) is not None and constant_of(rhs) is None:
        key = "comparison_direction" if "comparison_direction" in op.properties else None
        new_dir = EnumAttr(direction.dialect, direction.enum, _INVERT[direction.value])
        if key:
            op.properties[key] = new_dir
        else:
            op.attributes["comparison_direction"] = new_dir
        rw.set_operands(op, [rhs, lhs])
        return True
    return False


@pattern(SIMPLIFY, "stablehlo.select", 1)
def select_canon(op: Operation, rw: PatternRewriter) -> bool:
    """select(p, X, X) -> X; constant p: a splat picks a side, else with constant sides an
    element-wise constant (within fold-op-element-limit)."""
    pred, on_true, on_false = op.operands
    if on_true is on_false:
        rw.replace_op(op, [on_true])
        return True
    c = constant_of(pred)
    if c is None:
        return False
    if c.is_splat:
        rw.replace_op(op, [on_true if bool(c.array.reshape(-1)[0]) else on_false])
        return True
    if c.array.size > OPTIONS[0].element_limit:
        return False
    a, b = constant_of(on_true), constant_of(on_false)
    t = op.results[0].type
    if a is None or b is None or not is_static(t):
        return False
    rw.replace_op(op, [rw.constant(dense(np.where(c.array.astype(bool), a.array, b.array), t))])
    return True
