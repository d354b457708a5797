"""The TOSA ops `stablehlo-legalize-to-tosa` emits (upstream's StablehloLegalizeToTosa.pdll/.cpp),
with run kernels that follow the TOSA 1.0 specification's pseudocode (vectorized numpy), so a
legalized program can be run and compared with the StableHLO program it came from.

All are printed in TOSA's assembly format (`tosa.add %a, %b : (A, B) -> R`,
:data:`tosa_format`, also `tosa.rescale`'s) except `tosa.while_loop`, which has its own
(`tosa.while_loop (%it = %init) : (T) -> T {cond} do {body}`). `tosa.const_shape` yields a
`!tosa.shape<N>` (its values at run time: an int64 vector).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..attributes import EnumAttr, ints
from ..errors import Diagnostics
from ..ir import Operation
from ..registry import COMMUTATIVE, ELEMENTWISE, TERMINATOR, Kernel, define, kernel, verifier
from ..syntax.directives import Format, types_functional
from ..syntax.lexer import BARE, PUNCT
from ..types import _ELEMENT_TYPES, TensorType, Type

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext
    from ..syntax.parser import Parser
    from ..syntax.printer import Printer

__all__ = ["TOSA_COMMUTATIVE", "tosa_cast", "tosa_format"]

_I64 = np.dtype(np.int64)


def _parse_tosa_op(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`tosa.rescale %x, ... {rounding_mode = SINGLE_ROUND, ...} : (T...) -> R`: the attr-dict
    spells enum values bare."""
    operands = p.operand_list()
    props: dict[str, Any] = {}
    if p.v == "{" and p.k == PUNCT:
        p._advance()
        while p.v != "}":
            key = p.bare()
            p.expect("=")
            if p.k == BARE and p.v not in ("true", "false", "dense", "array", "unit") \
                    and p.v not in _ELEMENT_TYPES:
                props[key] = EnumAttr("tosa", key, p.bare())
            else:
                props[key] = p.parse_attribute()
            if not p.accept(","):
                break
        p.expect("}")
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, {})


def _print_tosa_op(pr: Printer, op: Operation) -> str | None:
    if op.regions or op.attributes:
        return None
    items = []
    for k in sorted(op.properties):
        v = op.properties[k]
        if type(v) is EnumAttr and v.dialect == "tosa" and v.enum == k:
            items.append(f"{k} = {v.value}")
        else:
            items.append(pr.attr_entry(k, v))
    d = " {" + ", ".join(items) + "}" if items else ""
    return (f" {', '.join(pr.val(v) for v in op.operands)}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


tosa_format = Format(_parse_tosa_op, _print_tosa_op, frozenset())
"""TOSA's assembly format: `tosa.op %a, %b {attr = ...} : (A, B) -> R` (enum values bare)."""


def _dtype(t: Type) -> np.dtype:
    assert isinstance(t, TensorType), t
    return t.dtype


def _out(op: Operation, fn: Callable[..., Any]) -> Kernel:
    """A kernel computing ``fn(*operands)`` and storing it in the result's element type."""
    dt = _dtype(op.results[0].type)

    def run(*xs: Any) -> list[np.ndarray]:
        with np.errstate(all="ignore"):
            r = fn(*(np.asarray(x) for x in xs))
        return [np.asarray(r).astype(dt, copy=False)]

    return run


def _elementwise(name: str, fn: Callable[..., Any], summary: str, *,
                 commutative: bool = False) -> None:
    traits = {ELEMENTWISE} | ({COMMUTATIVE} if commutative else set())
    define(f"tosa.{name}", traits=traits, inherent="", summary=summary, syntax=tosa_format)
    kernel(f"tosa.{name}")(lambda op, ctx: _out(op, fn))


def _intdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TOSA INTDIV: the quotient rounded toward zero."""
    a, b = a.astype(_I64), b.astype(_I64)
    safe = np.where(b == 0, 1, b)
    q = a // safe
    return np.where(b == 0, 0, q + ((a % safe != 0) & ((a < 0) != (safe < 0))))


def _logical_right_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TOSA LOGICAL_RIGHT_SHIFT: the bits of ``a`` shifted right, zeros shifted in."""
    u = np.dtype(f"u{a.dtype.itemsize}")
    return np.right_shift(a.view(u), b.astype(u)).view(a.dtype)


_elementwise("abs", np.abs, "TOSA's absolute value")
_elementwise("ceil", np.ceil, "TOSA's ceiling")
_elementwise("floor", np.floor, "TOSA's floor")
_elementwise("exp", np.exp, "TOSA's exponential")
_elementwise("log", np.log, "TOSA's natural logarithm")
_elementwise("tanh", np.tanh, "TOSA's hyperbolic tangent")
_elementwise("reciprocal", lambda x: np.reciprocal(x.astype(np.result_type(x, np.float16))),
             "TOSA's reciprocal")
_elementwise("logical_not", np.logical_not, "TOSA's logical not")
_elementwise("add", np.add, "TOSA's addition", commutative=True)
_elementwise("sub", np.subtract, "TOSA's subtraction")
_elementwise("maximum", np.maximum, "TOSA's maximum (NaN propagating)", commutative=True)
_elementwise("minimum", np.minimum, "TOSA's minimum (NaN propagating)", commutative=True)
_elementwise("pow", np.power, "TOSA's power")
_elementwise("intdiv", _intdiv, "TOSA's integer division (rounded toward zero)")
_elementwise("bitwise_and", np.bitwise_and, "TOSA's bitwise and", commutative=True)
_elementwise("bitwise_or", np.bitwise_or, "TOSA's bitwise or", commutative=True)
_elementwise("bitwise_xor", np.bitwise_xor, "TOSA's bitwise xor", commutative=True)
_elementwise("logical_left_shift", lambda a, b: np.left_shift(a, b.astype(a.dtype)),
             "TOSA's left shift")
_elementwise("logical_right_shift", _logical_right_shift, "TOSA's logical right shift")
_elementwise("equal", np.equal, "TOSA's equality", commutative=True)
_elementwise("select", np.where, "TOSA's select (`pred ? on_true : on_false`)")

TOSA_COMMUTATIVE = frozenset({"tosa.add", "tosa.maximum", "tosa.minimum", "tosa.bitwise_and",
                              "tosa.bitwise_or", "tosa.bitwise_xor", "tosa.equal"})
"""The two-operand TOSA ops MLIR marks Commutative (the greedy driver moves constants right)."""


def tosa_cast(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """TOSA CAST: to bool is ``x != 0``; float to integer rounds half to even and saturates
    (NaN to 0); other casts convert (integers wrap)."""
    if dt == np.bool_:
        return x != 0
    if x.dtype.kind == "f" and dt.kind in "iu":
        info = np.iinfo(dt)
        with np.errstate(all="ignore"):
            r = np.clip(np.rint(x.astype(np.float64)), info.min, info.max)
        return np.where(np.isnan(r), 0, r).astype(dt)
    with np.errstate(all="ignore"):
        return x.astype(dt)


define("tosa.cast", traits={ELEMENTWISE}, inherent="", summary="TOSA's cast",
       syntax=tosa_format)


@kernel("tosa.cast")
def _cast(op: Operation, ctx: PrepareContext) -> Kernel:
    dt = _dtype(op.results[0].type)
    return lambda x: [tosa_cast(np.asarray(x), dt)]


define("tosa.negate", traits={ELEMENTWISE}, inherent="", summary="TOSA's negation",
       syntax=tosa_format)


@kernel("tosa.negate")
def _negate(op: Operation, ctx: PrepareContext) -> Kernel:
    """TOSA NEGATE: ``-(x - input1_zp) + output_zp`` (integers wrap; zero points are the
    one-element operands 2 and 3)."""
    dt = _dtype(op.results[0].type)

    def run(x: Any, izp: Any, ozp: Any) -> list[np.ndarray]:
        x = np.asarray(x)
        if x.dtype.kind == "f":
            return [np.negative(x).astype(dt)]
        i = np.asarray(izp).reshape(-1)[0].astype(_I64)
        o = np.asarray(ozp).reshape(-1)[0].astype(_I64)
        with np.errstate(all="ignore"):
            return [(o - (x.astype(_I64) - i)).astype(dt)]

    return run


define("tosa.mul", traits={ELEMENTWISE}, inherent="", summary="TOSA's multiplication",
       syntax=tosa_format)


@kernel("tosa.mul")
def _mul(op: Operation, ctx: PrepareContext) -> Kernel:
    """TOSA MUL: ``a * b``; for i32 with ``shift > 0``, ``(a * b + 2**(shift-1)) >> shift``
    (the shift is the one-element i8 operand 2)."""
    dt = _dtype(op.results[0].type)

    def run(a: Any, b: Any, shift: Any) -> list[np.ndarray]:
        a, b = np.asarray(a), np.asarray(b)
        s = int(np.asarray(shift).reshape(-1)[0])
        with np.errstate(all="ignore"):
            if a.dtype == np.int32 and s > 0:
                r = (a.astype(_I64) * b.astype(_I64) + (1 << (s - 1))) >> s
                return [r.astype(dt)]
            return [np.multiply(a, b).astype(dt)]

    return run


def _shaped(name: str, summary: str) -> None:
    define(f"tosa.{name}", inherent="", summary=summary, syntax=tosa_format)


_shaped("const_shape", "TOSA's constant shape (`!tosa.shape<N>`)")
_shaped("concat", "TOSA's concatenation along `axis`")
_shaped("reshape", "TOSA's reshape to the shape operand")
_shaped("matmul", "TOSA's batched matrix multiplication `[N,H,C] x [N,C,W] -> [N,H,W]`")
_shaped("tile", "TOSA's tiling by the multiples operand")
_shaped("gather", "TOSA's gather `values[N,K,C], indices[N,W] -> [N,W,C]`")
_shaped("reduce_sum", "TOSA's sum along `axis` (kept as size 1)")
_shaped("reduce_max", "TOSA's maximum along `axis` (kept as size 1)")
_shaped("slice", "TOSA's slice at the start operand of the size operand")
_shaped("transpose", "TOSA's transpose by `perms`")


@kernel("tosa.const_shape")
def _const_shape(op: Operation, ctx: PrepareContext) -> Kernel:
    arr = np.asarray(op.attr("values").array, _I64).reshape(-1)
    arr.flags.writeable = False
    return lambda: (arr,)


@kernel("tosa.concat")
def _concat(op: Operation, ctx: PrepareContext) -> Kernel:
    axis = int(op.attr("axis").value)
    return _out(op, lambda *xs: np.concatenate(xs, axis=axis))


@kernel("tosa.reshape")
def _reshape(op: Operation, ctx: PrepareContext) -> Kernel:
    return _out(op, lambda x, shape: x.reshape(tuple(int(d) for d in shape)))


@kernel("tosa.matmul")
def _matmul(op: Operation, ctx: PrepareContext) -> Kernel:
    """TOSA MATMUL: ``out[n,h,w] = sum_c (A[n,h,c] - A_zp) * (B[n,c,w] - B_zp)`` (integers
    accumulate in int64; the zero points are the optional one-element operands 2 and 3)."""
    def fn(a: np.ndarray, b: np.ndarray, *zps: np.ndarray) -> np.ndarray:
        if a.dtype.kind in "iub":
            a, b = a.astype(_I64), b.astype(_I64)
            if zps:
                a = a - zps[0].reshape(-1)[0].astype(_I64)
                b = b - zps[1].reshape(-1)[0].astype(_I64)
        elif a.dtype.itemsize < 4:
            a, b = a.astype(np.float32), b.astype(np.float32)
        return np.matmul(a, b)
    return _out(op, fn)


@kernel("tosa.tile")
def _tile(op: Operation, ctx: PrepareContext) -> Kernel:
    return _out(op, lambda x, multiples: np.tile(x, tuple(int(m) for m in multiples)))


@kernel("tosa.gather")
def _gather(op: Operation, ctx: PrepareContext) -> Kernel:
    """TOSA GATHER: ``out[n,w,c] = values[n, indices[n,w], c]``."""
    return _out(op, lambda v, i: np.take_along_axis(v, i.astype(np.intp)[:, :, None], axis=1))


@kernel("tosa.reduce_sum", "tosa.reduce_max")
def _reduce(op: Operation, ctx: PrepareContext) -> Kernel:
    axis = int(op.attr("axis").value)
    fn = np.sum if op.name == "tosa.reduce_sum" else np.max
    return _out(op, lambda x: fn(x, axis=axis, keepdims=True))


@kernel("tosa.slice")
def _slice(op: Operation, ctx: PrepareContext) -> Kernel:
    def fn(x: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
        return x[tuple(slice(int(s), int(s) + int(n)) for s, n in zip(start, size))]
    return _out(op, fn)


@kernel("tosa.transpose")
def _transpose(op: Operation, ctx: PrepareContext) -> Kernel:
    perms = tuple(ints(op.attr("perms")) or ())
    return _out(op, lambda x: np.transpose(x, perms))


# --- while_loop / yield ------------------------------------------------------------------------


def _parse_yield(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`tosa.yield %a, %b : A, B`."""
    operands = p.operand_list()
    if operands:
        p.expect(":")
        off = p.start
        p.check_types(operands, p.type_list(), off)
    return Operation(name, operands, [], {}, {}, [])


def _print_yield(pr: Printer, op: Operation) -> str | None:
    if op.attributes or op.properties:
        return None
    if not op.operands:
        return ""
    return (f" {', '.join(pr.val(v) for v in op.operands)} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


define("tosa.yield", traits={TERMINATOR}, inherent="", summary="TOSA's region terminator",
       syntax=Format(_parse_yield, _print_yield, frozenset()))


def _parse_while_loop(p: Parser, name: str, nres: int, start: int) -> Operation:
    """`tosa.while_loop (%it = %init, ...) : (T...) -> (R...) {cond} do {body}`."""
    names, operands = p.assignment_list()
    p.expect(":")
    fn = p.parse_type()
    inputs = list(getattr(fn, "inputs", ()))
    results = list(getattr(fn, "results", ()))
    cond = p.parse_region(list(zip(names, inputs)))
    p.keyword("do")
    body = p.parse_region([])
    return Operation(name, operands, results, {}, {}, [cond, body])


def _print_while_loop(pr: Printer, op: Operation) -> str | None:
    if op.attributes or op.properties or len(op.regions) != 2 \
            or any(len(r.blocks) != 1 for r in op.regions):
        return None
    cargs = op.regions[0].blocks[0].arguments
    pairs = ", ".join(f"{pr.val(a)} = {pr.val(v)}" for a, v in zip(cargs, op.operands))
    return (f" ({pairs}) : {pr.functional(op.operand_types, op.result_types)} "
            + pr.region(op.regions[0], False) + " do " + pr.region(op.regions[1], True))


define("tosa.while_loop", inherent="", summary="TOSA's while loop",
       syntax=Format(_parse_while_loop, _print_while_loop, frozenset()))


@kernel("tosa.while_loop")
def _while_loop(op: Operation, ctx: PrepareContext) -> Kernel:
    """Run ``body`` while ``cond`` yields true (TOSA WHILE_LOOP)."""
    cond = ctx.region(op.regions[0]).run
    body = ctx.region(op.regions[1]).run

    def run(*args: Any) -> Sequence[Any]:
        while bool(np.asarray(cond(*args)[0])):
            args = tuple(body(*args))
        return args

    return run


# --- verifiers (the shape rules of the TOSA 1.0 spec; unranked and dynamic sizes pass) ------------

_BROADCASTING = ("add", "sub", "maximum", "minimum", "pow", "intdiv", "bitwise_and",
                 "bitwise_or", "bitwise_xor", "logical_left_shift", "logical_right_shift",
                 "equal", "select", "mul")


def _shape(v: Any) -> tuple | None:
    t = v.type
    return tuple(t.shape) if isinstance(t, TensorType) and t.shape is not None else None


def _known(d: Any) -> bool:
    return d is not None and d >= 0


@verifier(*(f"tosa.{n}" for n in _BROADCASTING))
def _verify_broadcast(op: Operation, diag: Diagnostics) -> None:
    """Operands of the result's rank whose sizes are the result's or 1 (mul's shift operand
    excluded)."""
    tensors = op.operands[:2] if op.name == "tosa.mul" else op.operands
    out = _shape(op.results[0]) if op.results else None
    if out is None:
        return
    for i, v in enumerate(tensors):
        s = _shape(v)
        if s is None:
            continue
        if len(s) != len(out):
            diag.error(op, "", f"operand #{i} has rank {len(s)}, the result {len(out)}")
            return
        if any(_known(a) and _known(b) and a != b and a != 1 for a, b in zip(s, out)):
            diag.error(op, "", f"operand #{i} of shape {s} does not broadcast to {out}")
            return


@verifier(*(f"tosa.{n}" for n in ("abs", "ceil", "floor", "exp", "log", "tanh", "reciprocal",
                                  "logical_not", "cast", "negate")))
def _verify_unary(op: Operation, diag: Diagnostics) -> None:
    s, out = _shape(op.operands[0]), _shape(op.results[0])
    if s is not None and out is not None and (len(s) != len(out) or any(
            _known(a) and _known(b) and a != b for a, b in zip(s, out))):
        diag.error(op, "", f"requires the same shape for input {s} and output {out}")


@verifier("tosa.reshape")
def _verify_reshape(op: Operation, diag: Diagnostics) -> None:
    s, out = _shape(op.operands[0]), _shape(op.results[0])
    if s is None or out is None or not all(map(_known, s + out)):
        return
    if int(np.prod(s)) != int(np.prod(out)):
        diag.error(op, "", f"cannot reshape {int(np.prod(s))} elements into {out}")


@verifier("tosa.concat")
def _verify_concat(op: Operation, diag: Diagnostics) -> None:
    axis = int(getattr(op.attr("axis"), "value", -1))
    out = _shape(op.results[0])
    if out is None:
        return
    if not 0 <= axis < max(len(out), 1):
        diag.error(op, "", f"axis {axis} is out of range for rank {len(out)}")
        return
    sizes = [_shape(v) for v in op.operands]
    if all(s is not None and _known(s[axis]) for s in sizes) and _known(out[axis]) \
            and sum(s[axis] for s in sizes) != out[axis]:  # type: ignore[index]
        diag.error(op, "", f"the inputs' sizes along axis {axis} do not add up to {out[axis]}")


@verifier("tosa.transpose")
def _verify_transpose(op: Operation, diag: Diagnostics) -> None:
    perms = tuple(int(p) for p in ints(op.attr("perms"), ()) or ())
    s, out = _shape(op.operands[0]), _shape(op.results[0])
    if s is None:
        return
    if sorted(perms) != list(range(len(s))):
        diag.error(op, "", f"perms {list(perms)} are not a permutation of rank {len(s)}")
        return
    if out is not None and any(_known(s[p]) and _known(o) and s[p] != o
                               for p, o in zip(perms, out)):
        diag.error(op, "", f"the result shape {out} is not the input's {s} permuted")


@verifier("tosa.matmul")
def _verify_matmul(op: Operation, diag: Diagnostics) -> None:
    a, b = _shape(op.operands[0]), _shape(op.operands[1])
    if a is not None and b is not None:
        if len(a) != 3 or len(b) != 3:
            diag.error(op, "", "expects rank-3 operands [N,H,C] and [N,C,W]")
        elif _known(a[2]) and _known(b[1]) and a[2] != b[1]:
            diag.error(op, "", f"contracting sizes differ: {a[2]} and {b[1]}")
