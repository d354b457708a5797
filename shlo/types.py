"""StableHLO types (spec section "Types"), their numpy dtypes and their text.

Types are immutable, hashable values; equal types compare equal. Element types are interned
singletons reachable by their textual name through :func:`element_type`. ``str(type)`` is its
MLIR spelling (:func:`format_type`); a tensor's encoding, an attribute, prints itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .dtypes import FLOAT_TYPE_NAMES, element_dtype
from .spelling import format_float

__all__ = [
    "Type", "ElementType", "IntegerType", "FloatType", "ComplexType", "QuantizedType",
    "TensorType", "IndexType", "TokenType", "Token", "TOKEN", "TupleType", "FunctionType", "OpaqueType",
    "element_type", "I1", "I32", "I64", "F32", "F64", "BF16", "F16", "DYNAMIC",
    "storage_dtype", "is_quantized", "tensor", "format_type", "format_function_type",
]

DYNAMIC = None
"""A dynamic dimension (`?`) is stored as ``None`` in :attr:`TensorType.shape`."""


class Type:
    """Base of every type."""

    __slots__ = ()


class ElementType(Type):
    """Base of tensor element types: integers, booleans, floats, complex, quantized."""

    __slots__ = ()
    name: str

    @property
    def dtype(self) -> np.dtype:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return self.name

    # Kind predicates used all over the ops modules.
    is_bool = False
    is_integer = False  # signed or unsigned, not i1
    is_signed = False
    is_unsigned = False
    is_float = False
    is_complex = False
    is_quantized = False


@dataclass(frozen=True, repr=False)
class IntegerType(ElementType):
    """`iN` (signless, treated as signed), `siN` (signed), `uiN` (unsigned); `i1` is boolean."""

    width: int
    signedness: str = "signless"  # "signless" | "signed" | "unsigned"

    @cached_property
    def name(self) -> str:  # type: ignore[override]
        prefix = {"signless": "i", "signed": "si", "unsigned": "ui"}[self.signedness]
        return f"{prefix}{self.width}"

    @cached_property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        if self.width == 1:
            return np.dtype(np.bool_)
        key = ("u" if self.signedness == "unsigned" else "") + f"int{self.width}"
        return element_dtype(key)

    @property
    def is_bool(self) -> bool:  # type: ignore[override]
        return self.width == 1

    @property
    def is_integer(self) -> bool:  # type: ignore[override]
        return self.width != 1

    @property
    def is_signed(self) -> bool:  # type: ignore[override]
        return self.width != 1 and self.signedness != "unsigned"

    @property
    def is_unsigned(self) -> bool:  # type: ignore[override]
        return self.width != 1 and self.signedness == "unsigned"

    @property
    def min(self) -> int:
        return -(1 << (self.width - 1)) if self.is_signed else 0

    @property
    def max(self) -> int:
        if self.width == 1:
            return 1
        return (1 << (self.width - 1)) - 1 if self.is_signed else (1 << self.width) - 1


_FLOAT_WIDTHS = {"bf16": 16, "f16": 16, "tf32": 19, "f32": 32, "f64": 64}


@dataclass(frozen=True, repr=False)
class FloatType(ElementType):
    """A floating-point element type such as `f32`, `bf16` or `f8E4M3FN`."""

    name: str  # type: ignore[misc]

    @cached_property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return element_dtype(self.name)

    is_float = True

    @property
    def width(self) -> int:
        """Bit width of the format (4 for f4E2M1FN, 19 for tf32)."""
        return _FLOAT_WIDTHS.get(self.name) or int(self.name[1])


@dataclass(frozen=True, repr=False)
class ComplexType(ElementType):
    """`complex<f32>` or `complex<f64>`."""

    element: FloatType

    @cached_property
    def name(self) -> str:  # type: ignore[override]
        return f"complex<{self.element.name}>"

    @cached_property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return np.dtype(np.complex64 if self.element.name == "f32" else np.complex128)

    is_complex = True


@dataclass(frozen=True, repr=False)
class QuantizedType(ElementType):
    """`!quant.uniform<storage<:expressed, scales:zero_points>>` (spec "Quantized element types").

    Per-tensor when ``quantization_dimension`` is None (one scale and one zero point), per-axis
    otherwise. ``storage_min``/``storage_max`` default to the storage type's range.
    """

    storage_type: IntegerType
    expressed_type: FloatType
    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    quantization_dimension: int | None = None
    storage_min: int | None = None
    storage_max: int | None = None
    # "ui" for an unsigned storage type spelled `ui8` (MLIR's unsigned integer type) rather than
    # `u8` (MLIR's signless type flagged unsigned): two distinct types, each printed as written.
    storage_spelling: str | None = None

    @cached_property
    def name(self) -> str:  # type: ignore[override]
        return format_type(self)

    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return self.storage_type.dtype

    @property
    def min(self) -> int:
        return self.storage_type.min if self.storage_min is None else self.storage_min

    @property
    def max(self) -> int:
        return self.storage_type.max if self.storage_max is None else self.storage_max

    @property
    def is_per_axis(self) -> bool:
        return self.quantization_dimension is not None

    is_quantized = True


@dataclass(frozen=True, repr=False)
class IndexType(ElementType):
    """`index`: MLIR's target-sized integer, used by shape computations of dynamic ops (held as
    int64 at run time)."""

    name: str = "index"  # type: ignore[misc]

    @property
    def dtype(self) -> np.dtype:  # type: ignore[override]
        return np.dtype(np.int64)

    is_integer = True
    is_signed = True
    width = 64
    min = -(1 << 63)
    max = (1 << 63) - 1


@dataclass(frozen=True)
class TensorType(Type):
    """`tensor<d0 x d1 x ... x element_type [, encoding]>`.

    ``shape`` holds ints, or ``None`` for a dynamic dimension; ``shape is None`` means unranked
    (`tensor<*xf32>`, outside the spec but accepted by the parser). ``encoding`` is any attribute
    (for example `#stablehlo.bounds<?, 5>`) kept as an attribute object.
    """

    shape: tuple[int | None, ...] | None
    element_type: ElementType
    encoding: object = None

    @property
    def rank(self) -> int:
        assert self.shape is not None
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.element_type.dtype

    @property
    def num_elements(self) -> int:
        assert self.is_static
        n = 1
        for d in self.shape:  # type: ignore[union-attr]
            n *= d  # type: ignore[operator]
        return n

    def __str__(self) -> str:
        return format_type(self)


@dataclass(frozen=True)
class TokenType(Type):
    """`!stablehlo.token` (also written `token` in the spec)."""

    def __str__(self) -> str:
        return "!stablehlo.token"


class Token:
    """The run-time value of `!stablehlo.token` (a singleton, :data:`TOKEN`)."""

    _instance: "Token | None" = None

    def __new__(cls) -> "Token":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "token"


TOKEN = Token()


@dataclass(frozen=True)
class TupleType(Type):
    """`tuple<T0, T1, ...>`."""

    types: tuple[Type, ...]

    def __str__(self) -> str:
        return format_type(self)


@dataclass(frozen=True)
class FunctionType(Type):
    """`(inputs) -> results`."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        return format_type(self)


@dataclass(frozen=True)
class OpaqueType(Type):
    """A type of another dialect (`!foo.bar<...>`, `index`, `memref<...>`), kept verbatim."""

    text: str

    def __str__(self) -> str:
        return self.text


def element_type(name: str) -> ElementType:
    """The element type spelled ``name`` (`f32`, `ui8`, `complex<f64>`, ...); KeyError if unknown."""
    return _ELEMENT_TYPES[name]


def _build_element_types() -> dict[str, ElementType]:
    table: dict[str, ElementType] = {}
    for w in (1, 2, 4, 8, 16, 32, 64):
        t = IntegerType(w)
        table[t.name] = t
        if w != 1:
            for s in ("signed", "unsigned"):
                t = IntegerType(w, s)
                table[t.name] = t
    for n in FLOAT_TYPE_NAMES:
        table[n] = FloatType(n)
    for n in ("f32", "f64"):
        t = ComplexType(table[n])  # type: ignore[arg-type]
        table[t.name] = t
    table["index"] = IndexType()
    return table


_ELEMENT_TYPES = _build_element_types()

I1 = _ELEMENT_TYPES["i1"]
I32 = _ELEMENT_TYPES["i32"]
I64 = _ELEMENT_TYPES["i64"]
F16 = _ELEMENT_TYPES["f16"]
BF16 = _ELEMENT_TYPES["bf16"]
F32 = _ELEMENT_TYPES["f32"]
F64 = _ELEMENT_TYPES["f64"]


def tensor(shape: tuple[int | None, ...] | list[int], element: ElementType | str) -> TensorType:
    """Shorthand: ``tensor((2, 3), "f32")``."""
    et = element_type(element) if isinstance(element, str) else element
    return TensorType(tuple(shape), et)


def is_quantized(t: Type) -> bool:
    """True for a tensor of quantized elements or a quantized element type."""
    if isinstance(t, TensorType):
        t = t.element_type
    return isinstance(t, QuantizedType)


def storage_dtype(t: TensorType) -> np.dtype:
    """The numpy dtype of a runtime value of type ``t`` (storage type when quantized)."""
    return t.element_type.dtype


def element_type_for_dtype(dtype: np.dtype) -> ElementType:
    """The element type whose run-time dtype is ``dtype`` (signless ints; `i1` for bool)."""
    dtype = np.dtype(dtype)
    for name, t in _ELEMENT_TYPES.items():
        if t.dtype == dtype and not name.startswith("si") and name != "tf32":
            return t
    raise KeyError(f"no StableHLO element type for numpy dtype {dtype}")


# --- text -----------------------------------------------------------------------------------------

_type_cache: dict[Any, str] = {}
# the same by object (hashing a type hashes its fields each time); an entry holds its type, so
# no other object can have its id meanwhile
_type_text_by_id: dict[int, tuple[Type, str]] = {}


def format_type(t: Type) -> str:
    """The text of a type (`tensor<2x?xf32>`, `!quant.uniform<i8:f32, 1.0e-01:-3>`, ...)."""
    e = _type_text_by_id.get(id(t))
    if e is not None and e[0] is t:
        return e[1]
    try:
        s = _type_cache.get(t)
    except TypeError:
        return _format_type(t)
    if s is None:
        s = _format_type(t)
        if len(_type_cache) < 100_000:
            _type_cache[t] = s
    if len(_type_text_by_id) < 100_000:
        _type_text_by_id[id(t)] = (t, s)
    return s


def _format_type(t: Type) -> str:
    if isinstance(t, TensorType):
        if t.shape is None:
            dims = "*x"
        else:
            dims = "".join(("?" if d is None else str(d)) + "x" for d in t.shape)
        enc = "" if t.encoding is None else ", " + _encoding_text(t.encoding)
        return f"tensor<{dims}{format_type(t.element_type)}{enc}>"
    if isinstance(t, QuantizedType):
        st = t.storage_type
        s = (t.storage_spelling or {"unsigned": "u", "signed": "si"}.get(st.signedness, "i")) + \
            str(st.width)  # (as MLIR prints it)
        if (t.storage_min is not None and t.storage_min != st.min) or \
                (t.storage_max is not None and t.storage_max != st.max):
            s += f"<{t.min}:{t.max}>"
        s += ":" + t.expressed_type.name
        if t.quantization_dimension is not None:
            s += f":{t.quantization_dimension}"
        params = [format_float(sc, None, True) + (f":{zp}" if zp else "")
                  for sc, zp in zip(t.scales, t.zero_points)]
        if t.quantization_dimension is not None:
            s += ", {" + ",".join(params) + "}"
        else:
            s += ", " + params[0]
        return f"!quant.uniform<{s}>"
    if isinstance(t, ComplexType):
        return f"complex<{t.element.name}>"
    if isinstance(t, (IntegerType, FloatType)):
        return t.name
    if isinstance(t, TokenType):
        return "!stablehlo.token"
    if isinstance(t, TupleType):
        return "tuple<" + ", ".join(format_type(x) for x in t.types) + ">"
    if isinstance(t, FunctionType):
        return format_function_type(list(t.inputs), list(t.results))
    if isinstance(t, OpaqueType):
        return t.text
    name = getattr(t, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(f"cannot print type {t!r}")


def _encoding_text(encoding: Any) -> str:
    """A tensor encoding is an attribute (:mod:`shlo.attributes`, a layer beside this one): it
    prints itself."""
    mlir = getattr(encoding, "mlir", None)
    if mlir is None:
        raise TypeError(f"cannot print attribute {encoding!r}")
    return mlir()


def format_function_type(inputs: list[Type], results: list[Type]) -> str:
    """`(inputs) -> result` or `(inputs) -> (results)`."""
    ins = "(" + ", ".join(format_type(t) for t in inputs) + ")"
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return f"{ins} -> {format_type(results[0])}"
    return f"{ins} -> (" + ", ".join(format_type(t) for t in results) + ")"
