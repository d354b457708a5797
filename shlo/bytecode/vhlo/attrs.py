"""The VHLO dialect's attributes (upstream `VhloAttrs.td`, `VhloEnums.td`): one class per
attribute, with its bytecode code (`VhloBytecode.cpp`), the first version that has it and its
text as MLIR prints it.

Attributes are immutable and hashable (structural equality, hash computed once): the bytecode
writer uniques them as MLIR does. Floats are kept as bit patterns (so -0.0 and NaN payloads
survive and compare exactly). ``refs()`` lists the attributes and types an attribute refers to,
in the order its bytecode encoding writes them (the writer numbers them in that order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attributes import Attribute, DenseElementsAttr
from ...types import FloatType, IntegerType, Type
from .types import SCALARS, VhloType, type_text, VScalar, bits_f64
from .version import Version

__all__ = [
    "VhloAttr", "VArray", "VBool", "VEnum", "VDict", "VFloat", "VInteger", "VOutputOperandAlias",
    "VString", "VTensorAttr", "VTypeAttr", "VTypeExtensions", "VResultAccuracy", "VSubAxisInfo",
    "VAxisRef", "VReplicaGroupMeshAxes", "VMeshAxis", "VMesh", "ENUMS", "attr_text",
    "is_vhlo_attr", "integer_width",
]

V = Version


class VhloAttr(Attribute):
    """Base of VHLO attributes."""

    __slots__ = ("_hash", "_text")
    code: int = -1
    min_version: Version = V(0, 9, 0)
    mnemonic: str = ""

    def _init(self) -> None:
        object.__setattr__(self, "_hash", hash((type(self).__name__,) + self._key()))
        object.__setattr__(self, "_text", None)

    def _key(self) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is type(self) and other._hash == self._hash
                                 and other._key() == self._key())

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    @property
    def text(self) -> str:
        t = self._text
        if t is None:
            t = self._make_text()
            object.__setattr__(self, "_text", t)
        return t

    def _make_text(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text if len(self.text) < 200 else self.text[:200] + "..."

    def refs(self) -> tuple:
        return ()

    def __reduce__(self) -> Any:
        return (type(self), self._key())


def is_vhlo_attr(a: Any) -> bool:
    return isinstance(a, VhloAttr)


def attr_text(a: Any) -> str:
    """The text of a VHLO or builtin attribute."""
    if isinstance(a, VhloAttr):
        return a.text
    from ...syntax.printer import format_attr

    return format_attr(a)


class VArray(VhloAttr):
    __slots__ = ("values",)
    code = 1
    mnemonic = "array_v1"

    def __init__(self, values: tuple) -> None:
        self.values = tuple(values)
        self._init()

    def _key(self) -> tuple:
        return (self.values,)

    def _make_text(self) -> str:
        return "#vhlo.array_v1<[" + ", ".join(attr_text(v) for v in self.values) + "]>"

    def refs(self) -> tuple:
        return self.values

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


class VBool(VhloAttr):
    __slots__ = ("value",)
    code = 2
    mnemonic = "bool_v1"

    def __init__(self, value: bool) -> None:
        self.value = bool(value)
        self._init()

    def _key(self) -> tuple:
        return (self.value,)

    def _make_text(self) -> str:
        return f"#vhlo.bool_v1<{'true' if self.value else 'false'}>"


# kind -> (bytecode code, {case: value}, first version)
ENUMS: dict[str, tuple[int, dict[str, int], Version]] = {
    "comparison_direction_v1": (3, {"EQ": 0, "NE": 1, "GE": 2, "GT": 3, "LE": 4, "LT": 5},
                                V(0, 9, 0)),
    "comparison_type_v1": (4, {"NOTYPE": 0, "FLOAT": 1, "TOTALORDER": 2, "SIGNED": 3,
                               "UNSIGNED": 4}, V(0, 9, 0)),
    "api_version_v1": (5, {"API_VERSION_UNSPECIFIED": 0, "API_VERSION_ORIGINAL": 1,
                           "API_VERSION_STATUS_RETURNING": 2,
                           "API_VERSION_STATUS_RETURNING_UNIFIED": 3,
                           "API_VERSION_TYPED_FFI": 4}, V(0, 9, 0)),
    "fft_type_v1": (7, {"FFT": 0, "IFFT": 1, "RFFT": 2, "IRFFT": 3}, V(0, 9, 0)),
    "precision_v1": (11, {"DEFAULT": 0, "HIGH": 1, "HIGHEST": 2}, V(0, 9, 0)),
    "rng_algorithm_v1": (12, {"DEFAULT": 0, "THREE_FRY": 1, "PHILOX": 2}, V(0, 9, 0)),
    "rng_distribution_v1": (13, {"UNIFORM": 1, "NORMAL": 2}, V(0, 9, 0)),
    "transpose_v1": (16, {"TRANSPOSE_INVALID": 0, "NO_TRANSPOSE": 1, "TRANSPOSE": 2,
                          "ADJOINT": 3}, V(0, 9, 0)),
    "result_accuracy_mode_v1": (19, {"DEFAULT": 0, "HIGHEST": 1, "TOLERANCE": 2}, V(1, 9, 0)),
}
ENUM_BY_CODE: dict[int, tuple[str, dict[int, str]]] = {
    code: (kind, {v: k for k, v in cases.items()}) for kind, (code, cases, _) in ENUMS.items()}


class VEnum(VhloAttr):
    """`#vhlo<comparison_direction_v1 EQ>`: ``kind`` is the mnemonic, ``value`` the case."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: str, value: str) -> None:
        if kind not in ENUMS or value not in ENUMS[kind][1]:
            raise ValueError(f"unknown VHLO enum case {kind} {value}")
        self.kind = kind
        self.value = value
        self._init()

    @property
    def code(self) -> int:  # type: ignore[override]
        return ENUMS[self.kind][0]

    @property
    def min_version(self) -> Version:  # type: ignore[override]
        return ENUMS[self.kind][2]

    @property
    def mnemonic(self) -> str:  # type: ignore[override]
        return self.kind

    @property
    def number(self) -> int:
        return ENUMS[self.kind][1][self.value]

    def _key(self) -> tuple:
        return (self.kind, self.value)

    def _make_text(self) -> str:
        return f"#vhlo<{self.kind} {self.value}>"


class VDict(VhloAttr):
    """`#vhlo.dict_v1<{k = v, ...}>`: ``items`` are (key attribute, value attribute) pairs."""

    __slots__ = ("items",)
    code = 6
    mnemonic = "dict_v1"

    def __init__(self, items: tuple) -> None:
        self.items = tuple((k, v) for k, v in items)
        self._init()

    def _key(self) -> tuple:
        return (self.items,)

    def _make_text(self) -> str:
        return "#vhlo.dict_v1<{" + ", ".join(f"{attr_text(k)} = {attr_text(v)}"
                                            for k, v in self.items) + "}>"

    def refs(self) -> tuple:
        out: list[Any] = []
        for k, v in self.items:
            out.append(k)
            out.append(v)
        return tuple(out)


_FLOAT_DTYPE_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def float_width(t: Any) -> int:
    """The bit width of the APFloat semantics of VHLO float type ``t``."""
    b = t.builtin if isinstance(t, VScalar) else t
    if isinstance(b, FloatType):
        if b.name == "tf32":
            return 19
        if b.name == "f64":
            return 64
        if b.name in ("f32",):
            return 32
        if b.name in ("f16", "bf16"):
            return 16
        return int(b.name[1])
    raise ValueError(f"not a float type: {type_text(t)}")


def float_value(t: Any, bits: int) -> Any:
    """The numpy scalar of float type ``t`` with bit pattern ``bits``."""
    b = t.builtin if isinstance(t, VScalar) else t
    if b.name == "tf32":
        return np.uint32(bits << 13).view(np.float32)
    dt = b.dtype
    return np.array([bits], dtype=_FLOAT_DTYPE_BITS[dt.itemsize]).view(dt)[0]


def float_bits(t: Any, value: Any) -> int:
    """The bit pattern of ``value`` in float type ``t``."""
    b = t.builtin if isinstance(t, VScalar) else t
    if b.name == "tf32":
        return int(np.float32(value).view(np.uint32)) >> 13
    dt = b.dtype
    with np.errstate(over="ignore", invalid="ignore"):
        arr = np.array([value]).astype(dt)
    return int(arr.view(_FLOAT_DTYPE_BITS[dt.itemsize])[0])


class VFloat(VhloAttr):
    """`#vhlo.float_v1<1.000000e+00 : !vhlo.f32_v1>`; ``bits`` is the value's bit pattern."""

    __slots__ = ("type", "bits")
    code = 8
    mnemonic = "float_v1"

    def __init__(self, type: Any, bits: int) -> None:
        self.type = type
        self.bits = int(bits)
        self._init()

    def _key(self) -> tuple:
        return (self.type, self.bits)

    @property
    def value(self) -> float:
        return float(float_value(self.type, self.bits))

    def _make_text(self) -> str:
        from ...syntax.dense import format_float

        b = self.type.builtin if isinstance(self.type, VScalar) else self.type
        return f"#vhlo.float_v1<{format_float(float_value(self.type, self.bits), b)} : " \
               f"{type_text(self.type)}>"

    def refs(self) -> tuple:
        return (self.type,)


def integer_width(t: Any) -> int:
    """The APInt width of VHLO integer type ``t`` (index: 64)."""
    b = t.builtin if isinstance(t, VScalar) else t
    if isinstance(b, IntegerType):
        return b.width
    if getattr(b, "name", None) == "index":
        return 64
    raise ValueError(f"not an integer type: {type_text(t)}")


def _is_unsigned(t: Any) -> bool:
    b = t.builtin if isinstance(t, VScalar) else t
    return isinstance(b, IntegerType) and b.signedness == "unsigned"


class VInteger(VhloAttr):
    """`#vhlo.integer_v1<1 : i64>`; ``value`` is the integer (signed unless the type is
    unsigned)."""

    __slots__ = ("type", "value")
    code = 9
    mnemonic = "integer_v1"

    def __init__(self, type: Any, value: int) -> None:
        self.type = type
        self.value = int(value)
        self._init()

    def _key(self) -> tuple:
        return (self.type, self.value)

    def _make_text(self) -> str:
        b = self.type.builtin if isinstance(self.type, VScalar) else self.type
        return f"#vhlo.integer_v1<{self.value} : {type_text(b)}>"

    def refs(self) -> tuple:
        return (self.type,)

    @staticmethod
    def from_bits(type: Any, raw: int) -> "VInteger":
        w = integer_width(type)
        raw &= (1 << w) - 1
        if not _is_unsigned(type) and raw >> (w - 1):
            raw -= 1 << w
        return VInteger(type, raw)

    @property
    def bits(self) -> int:
        return self.value & ((1 << integer_width(self.type)) - 1)


def _dims(ds: tuple) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in ds) + "]"


class VOutputOperandAlias(VhloAttr):
    __slots__ = ("output_tuple_indices", "operand_index", "operand_tuple_indices")
    code = 10
    mnemonic = "output_operand_alias_v1"

    def __init__(self, output_tuple_indices: tuple, operand_index: int,
                 operand_tuple_indices: tuple) -> None:
        self.output_tuple_indices = tuple(output_tuple_indices)
        self.operand_index = int(operand_index)
        self.operand_tuple_indices = tuple(operand_tuple_indices)
        self._init()

    def _key(self) -> tuple:
        return (self.output_tuple_indices, self.operand_index, self.operand_tuple_indices)

    def _make_text(self) -> str:
        return (f"#vhlo.output_operand_alias_v1<outputTupleIndices = "
                f"{_dims(self.output_tuple_indices)}, operandIndex = {self.operand_index}, "
                f"operandTupleIndices = {_dims(self.operand_tuple_indices)}>")


class VString(VhloAttr):
    """`#vhlo.string_v1<"...">`; ``value`` is a str (bytes that are not UTF-8 are kept as
    surrogate escapes, as shlo's parser does)."""

    __slots__ = ("value",)
    code = 14
    mnemonic = "string_v1"

    def __init__(self, value: str) -> None:
        self.value = value
        self._init()

    def _key(self) -> tuple:
        return (self.value,)

    def _make_text(self) -> str:
        from ...syntax.lexer import escape_string

        return f"#vhlo.string_v1<{escape_string(self.value)}>"


class VTensorAttr(VhloAttr):
    """`#vhlo.tensor_v1<dense<...> : tensor<...>>`: ``type`` is the VHLO tensor type, ``data``
    the builtin DenseElementsAttr. Equality and hash are by content (as MLIR uniques)."""

    __slots__ = ("type", "data", "_bytes")
    code = 15
    mnemonic = "tensor_v1"

    def __init__(self, type: Any, data: DenseElementsAttr) -> None:
        self.type = type
        self.data = data
        object.__setattr__(self, "_bytes", None)
        # the hash (over the data) is computed when first needed: reading never needs it
        object.__setattr__(self, "_hash", None)
        object.__setattr__(self, "_text", None)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((type(self).__name__,) + self._key())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is type(self) and hash(other) == hash(self)
                                 and other._key() == self._key())

    def raw(self) -> bytes:
        """The element bytes as MLIR stores them: one element when all are equal."""
        b = self._bytes
        if b is None:
            b = dense_raw(self.data)
            object.__setattr__(self, "_bytes", b)
        return b

    def _key(self) -> tuple:
        return (self.type, self.data.type, self.raw())

    def _make_text(self) -> str:
        from ...syntax.printer import format_attr

        return f"#vhlo.tensor_v1<{format_attr(self.data)}>"

    def refs(self) -> tuple:
        return (self.type,)


def dense_raw(d: DenseElementsAttr) -> bytes:
    """MLIR's raw data of a dense elements attribute: the element bytes (little endian, one
    byte per bool), or a single element when every element is equal (a splat)."""
    arr = d.array
    if arr.size > 1 and not any(arr.strides):  # a splat view: its one element, not 10^11
        arr = arr[(0,) * arr.ndim].reshape(1)
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == ">":
        arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
    n = arr.size
    flat = arr.reshape(-1)
    if n > 1:
        u = flat.view(np.uint8).reshape(n, -1)
        # a splat only if the last element equals the first (cheap) and then all do
        if u[0].tobytes() == u[-1].tobytes() and (u == u[:1]).all():
            return u[0].tobytes()
    return flat.tobytes()


class VTypeAttr(VhloAttr):
    __slots__ = ("value",)
    code = 17
    mnemonic = "type_v1"

    def __init__(self, value: Any) -> None:
        self.value = value
        self._init()

    def _key(self) -> tuple:
        return (self.value,)

    def _make_text(self) -> str:
        return f"#vhlo.type_v1<{type_text(self.value)}>"

    def refs(self) -> tuple:
        return (self.value,)


class VTypeExtensions(VhloAttr):
    __slots__ = ("bounds",)
    code = 18
    mnemonic = "type_extensions_v1"

    def __init__(self, bounds: tuple) -> None:
        self.bounds = tuple(bounds)
        self._init()

    def _key(self) -> tuple:
        return (self.bounds,)

    def _make_text(self) -> str:
        return f"#vhlo.type_extensions_v1<bounds = {_dims(self.bounds)}>"


def _f64_text(bits: int) -> str:
    from ...syntax.dense import format_float
    from ...types import F64

    return format_float(bits_f64(bits), F64)


class VResultAccuracy(VhloAttr):
    """`#vhlo.result_accuracy_v1<atol = ..., rtol = ..., ulps = N, mode = ...>`; the
    tolerances are f64 bit patterns."""

    __slots__ = ("atol_bits", "rtol_bits", "ulps", "mode")
    code = 20
    mnemonic = "result_accuracy_v1"
    min_version = V(1, 9, 0)

    def __init__(self, atol_bits: int, rtol_bits: int, ulps: int, mode: Any) -> None:
        self.atol_bits = int(atol_bits)
        self.rtol_bits = int(rtol_bits)
        self.ulps = int(ulps)
        self.mode = mode
        self._init()

    def _key(self) -> tuple:
        return (self.atol_bits, self.rtol_bits, self.ulps, self.mode)

    def _make_text(self) -> str:
        return (f"#vhlo.result_accuracy_v1<atol = {_f64_text(self.atol_bits)}, rtol = "
                f"{_f64_text(self.rtol_bits)}, ulps = {self.ulps}, mode = "
                f"{attr_text(self.mode)}>")

    def refs(self) -> tuple:
        return (self.mode,)


class VSubAxisInfo(VhloAttr):
    __slots__ = ("pre_size", "size")
    code = 21
    mnemonic = "sub_axis_info_v1"
    min_version = V(1, 16, 0)

    def __init__(self, pre_size: int, size: int) -> None:
        self.pre_size = int(pre_size)
        self.size = int(size)
        self._init()

    def _key(self) -> tuple:
        return (self.pre_size, self.size)

    def _make_text(self) -> str:
        return f"#vhlo.sub_axis_info_v1<pre_size = {self.pre_size}, size = {self.size}>"


class VAxisRef(VhloAttr):
    __slots__ = ("name", "sub_axis_info")
    code = 22
    mnemonic = "axis_ref_v1"
    min_version = V(1, 16, 0)

    def __init__(self, name: Any, sub_axis_info: Any = None) -> None:
        self.name = name
        self.sub_axis_info = sub_axis_info
        self._init()

    def _key(self) -> tuple:
        return (self.name, self.sub_axis_info)

    def _make_text(self) -> str:
        s = f"#vhlo.axis_ref_v1<name = {attr_text(self.name)}"
        if self.sub_axis_info is not None:
            s += f", sub_axis_info = {attr_text(self.sub_axis_info)}"
        return s + ">"

    def refs(self) -> tuple:
        return (self.name,) if self.sub_axis_info is None else (self.name, self.sub_axis_info)


class VReplicaGroupMeshAxes(VhloAttr):
    __slots__ = ("mesh", "axes")
    code = 23
    mnemonic = "replica_group_mesh_axes_v1"
    min_version = V(1, 16, 0)

    def __init__(self, mesh: Any, axes: Any) -> None:
        self.mesh = mesh
        self.axes = axes
        self._init()

    def _key(self) -> tuple:
        return (self.mesh, self.axes)

    def _make_text(self) -> str:
        return (f"#vhlo.replica_group_mesh_axes_v1<mesh = {attr_text(self.mesh)}, axes = "
                f"{attr_text(self.axes)}>")

    def refs(self) -> tuple:
        return (self.mesh, self.axes)


class VMeshAxis(VhloAttr):
    __slots__ = ("name", "size")
    code = 24
    mnemonic = "mesh_axis_v1"
    min_version = V(1, 16, 0)

    def __init__(self, name: Any, size: int) -> None:
        self.name = name
        self.size = int(size)
        self._init()

    def _key(self) -> tuple:
        return (self.name, self.size)

    def _make_text(self) -> str:
        return f"#vhlo.mesh_axis_v1<name = {attr_text(self.name)}, size = {self.size}>"

    def refs(self) -> tuple:
        return (self.name,)


class VMesh(VhloAttr):
    __slots__ = ("axes", "device_ids")
    code = 25
    mnemonic = "mesh_v1"
    min_version = V(1, 16, 0)

    def __init__(self, axes: Any, device_ids: Any = None) -> None:
        self.axes = axes
        self.device_ids = device_ids
        self._init()

    def _key(self) -> tuple:
        return (self.axes, self.device_ids)

    def _make_text(self) -> str:
        s = f"#vhlo.mesh_v1<axes = {attr_text(self.axes)}"
        if self.device_ids is not None:
            s += f", device_ids = {attr_text(self.device_ids)}"
        return s + ">"

    def refs(self) -> tuple:
        return (self.axes,) if self.device_ids is None else (self.axes, self.device_ids)


def is_type(x: Any) -> bool:
    return isinstance(x, Type)


def si64(value: int) -> VInteger:
    return VInteger(SCALARS["i64_v1"], value)


def as_vhlo_type(t: Any) -> Any:
    return t if isinstance(t, VhloType) else t
