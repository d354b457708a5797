"""The builder the chlo decompositions write with: ops typed by their own type inference,
constants shaped like a value (upstream's `getConstantLike`, i.e. a `chlo.constant_like` lowered
at once), and chlo ops created inside a decomposition lowered in place (as the dialect
conversion legalizes the ops a pattern creates, before the ops created after them).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...attributes import DenseElementsAttr, EnumAttr, IntegerAttr
from ...errors import Diagnostics
from ...ir import Operation, Value
from ...ops._type_constraints import bounds_of
from ...registry import ELEMENTWISE, lookup
from ...types import ComplexType, ElementType, IndexType, TensorType, Type, element_type
from .._rewrite import PassError, Rewriter, const_attr, i64_array

__all__ = ["Builder", "Lowering", "LOWERINGS", "lowering", "NotLowered", "float_info"]

I64, I32, I1 = element_type("i64"), element_type("i32"), element_type("i1")
INDEX = IndexType()


class NotLowered(Exception):
    """A pattern does not apply (upstream's `notifyMatchFailure`): the pass reports 'failed to
    legalize operation' for the op, after the ``warnings`` the pattern emitted."""

    def __init__(self, message: str, warnings: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.warnings = list(warnings)


Lowering = Callable[["Builder", Operation, Sequence[Value]], Sequence[Value]]
LOWERINGS: dict[str, Lowering] = {}
"""chlo op name -> its decomposition: ``fn(builder, op, operands) -> replacement values``."""


def lowering(*names: str) -> Callable[[Lowering], Lowering]:
    def deco(fn: Lowering) -> Lowering:
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return deco


def tensor(v: Value) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None:
        raise NotLowered(f"expected a ranked tensor, got {t}")
    return t


def float_info(et: ElementType) -> Any:
    """finfo of a float element type (numpy's or ml_dtypes')."""
    import ml_dtypes

    return ml_dtypes.finfo(et.dtype)


class Builder:
    """Emits ops through ``rw`` at the position of the chlo op being rewritten."""

    def __init__(self, rw: Rewriter) -> None:
        self.rw = rw

    # --- generic ops ---------------------------------------------------------------------------

    def emit(self, name: str, operands: Sequence[Value], props: dict[str, Any] | None = None,
             results: Sequence[Type] | None = None, regions: Sequence[Any] = ()) -> Operation:
        """Append op ``name`` (``stablehlo.`` when no dialect is given); its result types come
        from its type inference unless ``results`` gives them."""
        if "." not in name:
            name = "stablehlo." + name
        props = dict(props or {})
        if results is None:
            d = lookup(name)
            if d is None or d.infer is None:
                raise PassError(f"internal: {name} has no type inference; give its result type")
            probe = Operation(name, list(operands), [], props, {}, list(regions))
            diag = Diagnostics()
            inferred = d.infer(probe, diag)
            for r in probe.regions:  # give the regions back to the op that keeps them
                r.parent = None
            if inferred is None:
                msg = "; ".join(str(x.message) for x in diag.items) or "no result type"
                raise PassError(f"internal: cannot infer the type of {name}: {msg}")
            results = inferred
        return self.rw.emit(name, list(operands), list(results), props, regions=list(regions))

    def op(self, name: str, *operands: Value, result: Type | None = None, **props: Any) -> Value:
        return self.emit(name, operands, props, None if result is None else [result]).results[0]

    # --- element-wise shorthands ---------------------------------------------------------------

    def add(self, a: Value, b: Value) -> Value:
        return self.op("add", a, b)

    def sub(self, a: Value, b: Value) -> Value:
        return self.op("subtract", a, b)

    def mul(self, a: Value, b: Value) -> Value:
        return self.op("multiply", a, b)

    def div(self, a: Value, b: Value) -> Value:
        return self.op("divide", a, b)

    def cmp(self, direction: str, a: Value, b: Value) -> Value:
        return self.op("compare", a, b, comparison_direction=EnumAttr(
            "stablehlo", "comparison_direction", direction))

    def select(self, p: Value, a: Value, b: Value) -> Value:
        return self.op("select", p, a, b)

    def convert(self, v: Value, et: ElementType) -> Value:
        t = tensor(v)
        return self.op("convert", v, result=TensorType(t.shape, et, t.encoding))

    def bitcast(self, v: Value, et: ElementType) -> Value:
        t = tensor(v)
        return self.op("bitcast_convert", v, result=TensorType(t.shape, et, t.encoding))

    def reshape(self, v: Value, shape: Sequence[int | None], et: ElementType | None = None
                ) -> Value:
        et = et or tensor(v).element_type
        return self.op("reshape", v, result=TensorType(tuple(shape), et))

    def scalar(self, value: Any, et: ElementType) -> Value:
        """`stablehlo.constant dense<value> : tensor<et>`."""
        return self.constant(np.asarray(_value_for(value, et)), et, ())

    def constant(self, values: Any, et: ElementType, shape: Sequence[int]) -> Value:
        attr = const_attr(values, et, shape)
        if attr.array.shape != tuple(shape):  # (const_attr's ascontiguousarray makes 0-d 1-d)
            attr = DenseElementsAttr(attr.type, attr.array.reshape(tuple(shape)))
        return self.emit("constant", [], {"value": attr}, [attr.type]).results[0]

    def dim_size(self, v: Value, d: int) -> Value:
        return self.op("get_dimension_size", v, result=TensorType((), I32),
                       dimension=IntegerAttr(d, I64))

    def shape_of(self, v: Value) -> Value:
        return self.op("shape.shape_of", v, result=TensorType((tensor(v).rank,), INDEX))

    def concat(self, parts: Sequence[Value], dim: int = 0) -> Value:
        return self.emit("concatenate", parts, {"dimension": IntegerAttr(dim, I64)}).results[0]

    # --- constants like a value (chlo.constant_like, lowered) ----------------------------------

    def like(self, value: Any, v: Value) -> Value:
        """A constant of ``value`` with the type of ``v`` (upstream's getConstantLike: a
        `chlo.constant_like`, here lowered at once with :meth:`splat_like`)."""
        et = tensor(v).element_type
        return self.splat_like(_value_for(value, et), et, v)

    def splat_like(self, value: Any, et: ElementType, v: Value) -> Value:
        """`chlo.constant_like(v) {value}` lowered: a constant of the static shape; for a
        bounded-dynamic shape a scalar, broadcast to the bounds, then `set_dimension_size` from
        ``v``'s sizes; for an unbounded one a scalar broadcast to `shape.shape_of v`."""
        t = tensor(v)
        if t.is_static:
            return self.constant(np.asarray(value), et, t.shape)
        bounds = bounds_of(t)
        if bounds is not None and all(s is not None or b is not None
                                      for s, b in zip(t.shape, bounds)):
            c = self.scalar(value, et)
            padded = tuple(s if s is not None else b for s, b in zip(t.shape, bounds))
            out = self.op("broadcast_in_dim", c, result=TensorType(padded, et),
                          broadcast_dimensions=i64_array(()))
            for d, s in enumerate(t.shape):
                if s is None:
                    size = self.dim_size(v, d)
                    out = self.set_dim_size(out, size, d)
            return out
        c = self.scalar(value, et)
        return self.op("dynamic_broadcast_in_dim", c, self.shape_of(v),
                       result=TensorType(t.shape, et), broadcast_dimensions=i64_array(()))

    def set_dim_size(self, v: Value, size: Value, d: int) -> Value:
        t = tensor(v)
        shape = list(t.shape)
        bounds = list(bounds_of(t) or [None] * len(shape))
        if shape[d] is not None:
            bounds[d] = shape[d]
        shape[d] = None
        from ...attributes import StructAttr

        enc = StructAttr("stablehlo.bounds", (("bounds", tuple(bounds)),))
        return self.op("set_dimension_size", v, size, result=TensorType(tuple(shape),
                                                                         t.element_type, enc),
                       dimension=IntegerAttr(d, I64))

    # --- chlo ops inside decompositions --------------------------------------------------------

    def chlo(self, name: str, *operands: Value, props: dict[str, Any] | None = None
             ) -> Sequence[Value]:
        """Create `chlo.<name>` and lower it in place (its decomposition is emitted here)."""
        full = name if name.startswith("chlo.") else "chlo." + name
        fn = LOWERINGS.get(full)
        if fn is None:
            raise PassError(f"internal: no decomposition of {full}")
        probe = self.emit_probe(full, operands, props or {})
        return fn(self, probe, list(operands))

    def emit_probe(self, name: str, operands: Sequence[Value], props: dict[str, Any]
                   ) -> Operation:
        """A detached op (not in the output) that a nested lowering reads its operands,
        attributes and result types from."""
        d = lookup(name)
        probe = Operation(name, list(operands), [], props, {}, location=self.rw.loc)
        inferred = d.infer(probe, Diagnostics()) if d is not None and d.infer else None
        if inferred is None and d is not None and d.has(ELEMENTWISE) and operands:
            inferred = [operands[0].type]  # (`_asin_acos_kernel` declares no inference)
        if inferred is None:
            raise PassError(f"internal: cannot infer the type of {name}")
        return Operation(name, list(operands), inferred, props, {}, location=self.rw.loc)

    def chlo1(self, name: str, *operands: Value) -> Value:
        return self.chlo(name, *operands)[0]

    # --- precision: materializeWithUpcast -------------------------------------------------------

    def with_upcast(self, operands: Sequence[Value], fn: Callable[..., Value],
                    min_width: int = 32) -> Value:
        """Run ``fn`` on the operands converted to f32 when their float type is narrower,
        converting the result back (upstream's materializeWithUpcast)."""
        et = tensor(operands[0]).element_type
        narrow = et.is_float and et.width < min_width
        if narrow:
            f32 = element_type("f32")
            operands = [self.convert(v, f32) for v in operands]
        out = fn(*operands)
        return self.convert(out, et) if narrow else out


def _value_for(value: Any, et: ElementType) -> Any:
    """``value`` as a scalar of element type ``et`` (APFloat/APInt semantics: a float rounded
    to nearest, an integer wrapped to the width, complex with a zero imaginary part)."""
    if isinstance(et, ComplexType):
        return np.asarray(complex(value), et.dtype)
    dt = et.dtype
    if et.is_float:
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(np.float64(value)).astype(dt)
    if dt == np.bool_:
        return np.asarray(bool(value))
    info = np.iinfo(dt) if dt.kind in "iu" else None
    v = int(value)
    if info is not None:
        bits = info.bits
        v &= (1 << bits) - 1
        if info.min < 0 and v >= 1 << (bits - 1):
            v -= 1 << bits
    return np.asarray(v).astype(dt)
