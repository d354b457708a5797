"""The VHLO dialect's types (upstream `VhloTypes.td`): one class per type, with its bytecode
code (`VhloBytecode.cpp`), the first version that has it, its text (as MLIR prints it) and the
conversion to and from shlo's builtin types (`VhloTypeConverter`).

Types are immutable and hashable (structural equality, hash computed once). Scalar types are
interned singletons (:data:`SCALARS`, by mnemonic). A type from another dialect may appear inside
VHLO types when other dialects are allowed; it is kept as the shlo type it is.
"""

from __future__ import annotations

from typing import Any

from ...types import ElementType, FloatType, OpaqueType, TokenType, Type, element_type
from .version import Version

__all__ = [
    "VhloType", "VScalar", "VComplex", "VFunction", "VTensor", "VUnranked", "VTuple",
    "VFuture", "VQuant", "VQuantPerAxis", "VBuffer", "SCALARS", "scalar",
    "TypeConversionError", "is_vhlo", "type_text", "FLOAT_MNEMONICS",
    "SCALAR_CODES",
]

V = Version


class TypeConversionError(ValueError):
    """A type with no VHLO (or builtin) counterpart."""


class VhloType(Type):
    """Base of VHLO types: ``name`` is the printed text, ``code`` the bytecode code,
    ``min_version`` the first version that has the type."""

    __slots__ = ()
    code: int
    min_version: Version
    mnemonic: str

    def __str__(self) -> str:
        return self.name  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return self.name  # type: ignore[attr-defined]


def is_vhlo(x: Any) -> bool:
    return isinstance(x, VhloType)


def type_text(t: Any) -> str:
    """The text of a VHLO or builtin type."""
    if isinstance(t, VhloType):
        return t.name  # type: ignore[attr-defined]
    from ...syntax.printer import format_type

    return format_type(t)


class VScalar(VhloType):
    """A type without parameters (`!vhlo.f32_v1`, `!vhlo.token_v1`, ...)."""

    __slots__ = ("mnemonic", "code", "min_version", "name", "builtin")

    def __init__(self, mnemonic: str, code: int, min_version: Version, builtin: Any) -> None:
        self.mnemonic = mnemonic
        self.code = code
        self.min_version = min_version
        self.name = f"!vhlo.{mnemonic}"
        self.builtin = builtin

    def __reduce__(self) -> Any:
        return (scalar, (self.mnemonic,))

    def children(self) -> tuple:
        return ()


def _b(name: str) -> ElementType:
    return element_type(name)


_SCALAR_DEFS = [
    # mnemonic, code, min version, builtin counterpart
    ("bool_v1", 0, V(0, 9, 0), _b("i1")),
    ("bf16_v1", 2, V(0, 9, 0), _b("bf16")),
    ("f16_v1", 3, V(0, 9, 0), _b("f16")),
    ("f32_v1", 4, V(0, 9, 0), _b("f32")),
    ("f64_v1", 5, V(0, 9, 0), _b("f64")),
    ("f8E4M3FN_v1", 6, V(0, 9, 0), _b("f8E4M3FN")),
    ("f8E5M2_v1", 7, V(0, 9, 0), _b("f8E5M2")),
    ("index_v1", 9, V(0, 9, 0), _b("index")),
    ("i4_v1", 10, V(0, 9, 0), _b("i4")),
    ("i8_v1", 11, V(0, 9, 0), _b("i8")),
    ("i16_v1", 12, V(0, 9, 0), _b("i16")),
    ("i32_v1", 13, V(0, 9, 0), _b("i32")),
    ("i64_v1", 14, V(0, 9, 0), _b("i64")),
    ("ui4_v1", 15, V(0, 9, 0), _b("ui4")),
    ("ui8_v1", 16, V(0, 9, 0), _b("ui8")),
    ("ui16_v1", 17, V(0, 9, 0), _b("ui16")),
    ("ui32_v1", 18, V(0, 9, 0), _b("ui32")),
    ("ui64_v1", 19, V(0, 9, 0), _b("ui64")),
    ("token_v1", 22, V(0, 9, 0), TokenType()),
    ("witness_v1", 26, V(0, 9, 0), OpaqueType("!shape.witness")),
    ("f8E4M3FNUZ_v1", 27, V(0, 10, 0), _b("f8E4M3FNUZ")),
    ("f8E5M2FNUZ_v1", 28, V(0, 10, 0), _b("f8E5M2FNUZ")),
    ("f8E4M3B11FNUZ_v1", 29, V(0, 11, 0), _b("f8E4M3B11FNUZ")),
    ("i2_v1", 31, V(1, 2, 0), _b("i2")),
    ("ui2_v1", 32, V(1, 2, 0), _b("ui2")),
    ("none_v1", 33, V(1, 6, 0), OpaqueType("none")),
    ("tf31_v1", 34, V(1, 6, 0), _b("tf32")),  # sic: upstream's mnemonic for tf32
    ("f8E4M3_v1", 35, V(1, 7, 0), _b("f8E4M3")),
    ("f8E3M4_v1", 36, V(1, 7, 0), _b("f8E3M4")),
    ("f4E2M1FN_v1", 37, V(1, 8, 0), _b("f4E2M1FN")),
    ("f6E2M3FN_v1", 38, V(1, 8, 0), _b("f6E2M3FN")),
    ("f6E3M2FN_v1", 39, V(1, 8, 0), _b("f6E3M2FN")),
    ("f8E8M0FNU_v1", 40, V(1, 8, 0), _b("f8E8M0FNU")),
]

SCALARS: dict[str, VScalar] = {m: VScalar(m, c, v, b) for m, c, v, b in _SCALAR_DEFS}
SCALAR_CODES: dict[int, VScalar] = {s.code: s for s in SCALARS.values()}
FLOAT_MNEMONICS = frozenset(m for m, s in SCALARS.items() if isinstance(s.builtin, FloatType))
_BUILTIN_TO_SCALAR: dict[Any, VScalar] = {s.builtin: s for s in SCALARS.values()}


def scalar(mnemonic: str) -> VScalar:
    return SCALARS[mnemonic]


BOOL = SCALARS["bool_v1"]
TOKEN = SCALARS["token_v1"]
NONE = SCALARS["none_v1"]
SI64 = SCALARS["i64_v1"]


class _Composite(VhloType):
    """Structural equality on ``_key()``; the hash is computed once."""

    __slots__ = ("_hash", "_name")

    def _init(self) -> None:
        object.__setattr__(self, "_hash", hash((type(self).__name__,) + self._key()))
        object.__setattr__(self, "_name", None)

    def _key(self) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is type(self) and other._hash == self._hash
                                 and other._key() == self._key())

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    @property
    def name(self) -> str:
        n = self._name
        if n is None:
            n = self._text()
            object.__setattr__(self, "_name", n)
        return n

    def _text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __reduce__(self) -> Any:
        return (type(self), self._key())


def _dims(shape: tuple) -> str:
    return "".join(("?" if d is None else str(d)) + "x" for d in shape)


class VComplex(_Composite):
    __slots__ = ("element",)
    code = 1
    min_version = V(0, 9, 0)
    mnemonic = "complex_v1"

    def __init__(self, element: Any) -> None:
        self.element = element
        self._init()

    def _key(self) -> tuple:
        return (self.element,)

    def _text(self) -> str:
        return f"!vhlo.complex_v1<{type_text(self.element)}>"

    def children(self) -> tuple:
        return (self.element,)


class VFunction(_Composite):
    __slots__ = ("inputs", "outputs")
    code = 8
    min_version = V(0, 9, 0)
    mnemonic = "func_v1"

    def __init__(self, inputs: tuple, outputs: tuple) -> None:
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self._init()

    def _key(self) -> tuple:
        return (self.inputs, self.outputs)

    def _text(self) -> str:
        ins = ", ".join(type_text(t) for t in self.inputs) if self.inputs else "()"
        outs = ", ".join(type_text(t) for t in self.outputs) if self.outputs else "()"
        return f"!vhlo.func_v1<({ins}) -> {outs}>"

    def children(self) -> tuple:
        return self.inputs + self.outputs


class VTensor(_Composite):
    """`!vhlo.tensor_v1<2x?x!vhlo.f32_v1[, encoding]>`; a dynamic dimension is None."""

    __slots__ = ("shape", "element", "encoding")
    min_version = V(0, 9, 0)
    mnemonic = "tensor_v1"

    def __init__(self, shape: tuple, element: Any, encoding: Any = None) -> None:
        self.shape = tuple(shape)
        self.element = element
        self.encoding = encoding
        self._init()

    @property
    def code(self) -> int:  # type: ignore[override]
        return 21 if self.encoding is not None else 20

    def _key(self) -> tuple:
        return (self.shape, self.element, self.encoding)

    def _text(self) -> str:
        enc = ""
        if self.encoding is not None:
            # a VHLO attribute knows its text; a builtin one is printed by shlo's printer
            text = getattr(self.encoding, "text", None)
            if not isinstance(text, str):
                from ...syntax.printer import format_attr

                text = format_attr(self.encoding)
            enc = ", " + text
        return f"!vhlo.tensor_v1<{_dims(self.shape)}{type_text(self.element)}{enc}>"

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d if d is not None else 0
        return n

    def children(self) -> tuple:
        return (self.element,)


class VUnranked(_Composite):
    __slots__ = ("element",)
    code = 25
    min_version = V(0, 9, 0)
    mnemonic = "unranked_tensor_v1"

    def __init__(self, element: Any) -> None:
        self.element = element
        self._init()

    def _key(self) -> tuple:
        return (self.element,)

    def _text(self) -> str:
        return f"!vhlo.unranked_tensor_v1<{type_text(self.element)}>"

    def children(self) -> tuple:
        return (self.element,)


class VTuple(_Composite):
    __slots__ = ("types",)
    code = 23
    min_version = V(0, 9, 0)
    mnemonic = "tuple_v1"

    def __init__(self, types: tuple) -> None:
        self.types = tuple(types)
        self._init()

    def _key(self) -> tuple:
        return (self.types,)

    def _text(self) -> str:
        return "!vhlo.tuple_v1<" + ", ".join(type_text(t) for t in self.types) + ">"

    def children(self) -> tuple:
        return self.types


class VFuture(_Composite):
    __slots__ = ("types",)
    code = 42
    min_version = V(1, 15, 0)
    mnemonic = "future_v1"

    def __init__(self, types: tuple) -> None:
        self.types = tuple(types)
        self._init()

    def _key(self) -> tuple:
        return (self.types,)

    def _text(self) -> str:
        return "!vhlo.future_v1<" + ", ".join(type_text(t) for t in self.types) + ">"

    def children(self) -> tuple:
        return self.types


def _float_text(bits: int) -> str:
    from ...syntax.dense import format_float
    import numpy as np

    return format_float(float(np.uint64(bits).view(np.float64)), element_type("f64"))


def f64_bits(x: float) -> int:
    import struct

    return struct.unpack("<Q", struct.pack("<d", x))[0]


def bits_f64(b: int) -> float:
    import struct

    return struct.unpack("<d", struct.pack("<Q", b & 0xFFFFFFFFFFFFFFFF))[0]


class VQuant(_Composite):
    """`!vhlo.quant_v1<storage:expressed, scale:zero_point, min:max, flags>`; the scale is kept
    as the bits of an f64."""

    __slots__ = ("flags", "storage", "expressed", "scale_bits", "zero_point", "storage_min",
                 "storage_max")
    code = 24
    min_version = V(0, 9, 0)
    mnemonic = "quant_v1"

    def __init__(self, flags: int, storage: Any, expressed: Any, scale_bits: int,
                 zero_point: int, storage_min: int, storage_max: int) -> None:
        self.flags = flags
        self.storage = storage
        self.expressed = expressed
        self.scale_bits = scale_bits
        self.zero_point = zero_point
        self.storage_min = storage_min
        self.storage_max = storage_max
        self._init()

    def _key(self) -> tuple:
        return (self.flags, self.storage, self.expressed, self.scale_bits, self.zero_point,
                self.storage_min, self.storage_max)

    def _text(self) -> str:
        return (f"!vhlo.quant_v1<{type_text(self.storage)}:{type_text(self.expressed)}, "
                f"{_float_text(self.scale_bits)}:{self.zero_point}, "
                f"{self.storage_min}:{self.storage_max}, {self.flags}>")

    def children(self) -> tuple:
        return (self.storage, self.expressed)


class VQuantPerAxis(_Composite):
    __slots__ = ("flags", "storage", "expressed", "quantized_dimension", "scale_bits",
                 "zero_points", "storage_min", "storage_max")
    code = 30
    min_version = V(0, 18, 0)
    mnemonic = "quant_per_axis_v1"

    def __init__(self, flags: int, storage: Any, expressed: Any, quantized_dimension: int,
                 scale_bits: tuple, zero_points: tuple, storage_min: int,
                 storage_max: int) -> None:
        self.flags = flags
        self.storage = storage
        self.expressed = expressed
        self.quantized_dimension = quantized_dimension
        self.scale_bits = tuple(scale_bits)
        self.zero_points = tuple(zero_points)
        self.storage_min = storage_min
        self.storage_max = storage_max
        self._init()

    def _key(self) -> tuple:
        return (self.flags, self.storage, self.expressed, self.quantized_dimension,
                self.scale_bits, self.zero_points, self.storage_min, self.storage_max)

    def _text(self) -> str:
        scales = ", ".join(_float_text(b) for b in self.scale_bits)
        zps = ", ".join(str(z) for z in self.zero_points)
        return (f"!vhlo.quant_per_axis_v1<{type_text(self.storage)}:{type_text(self.expressed)}"
                f", {self.quantized_dimension}, [{scales}], [{zps}], "
                f"{self.storage_min}:{self.storage_max}, {self.flags}>")

    def children(self) -> tuple:
        return (self.storage, self.expressed)


class VBuffer(_Composite):
    __slots__ = ("shape", "element")
    code = 41
    min_version = V(1, 13, 0)
    mnemonic = "buffer_v1"

    def __init__(self, shape: tuple, element: Any) -> None:
        self.shape = tuple(shape)
        self.element = element
        self._init()

    def _key(self) -> tuple:
        return (self.shape, self.element)

    def _text(self) -> str:
        return f"!vhlo.buffer_v1<{_dims(self.shape)}{type_text(self.element)}>"

    def children(self) -> tuple:
        return (self.element,)
