"""Attribute values (MLIR builtin attributes and the StableHLO dialect attributes) and their text.

Every attribute is an immutable value object; equal attributes compare equal (dense elements
compare by type and bytes). Each prints itself in MLIR syntax (:func:`format_attr`,
``attr.mlir()``); the facts about the dialect attributes' text live here too: the cases of the
enums (:data:`ENUM_CASES`) and the parameter order of `#stablehlo.gather<...>` and its kin
(:func:`canonical_struct_params`). Ops read attributes through small helpers (:func:`ints`,
:func:`int_attr`, ...) so that the older `dense<[1, 2]> : tensor<2xi64>` and the newer
`array<i64: 1, 2>` spellings of the same integer list are interchangeable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .ir import Location, format_location
from .resources import (ELIDED_RESOURCE, ResourceHandle, ResourceUnavailable, elements_from_raw,
                        raw_layout)
from .spelling import escape_string, format_float
from .types import (
    _ELEMENT_TYPES, ComplexType, ElementType, FloatType, IntegerType, QuantizedType, TensorType,
    Type, format_type,
)

__all__ = [
    "Attribute", "DialectAttr", "IntegerAttr", "FloatAttr", "BoolAttr", "StringAttr", "UnitAttr", "ArrayAttr",
    "DenseArrayAttr", "DenseElementsAttr", "TypeAttr", "SymbolRefAttr", "DictAttr", "EnumAttr",
    "StructAttr", "ConvDimensionNumbers", "OpaqueAttr", "ints", "int_or_none",
    "AttributeProblem", "REQUIRED", "int_attr", "ints_attr", "bool_attr", "float_attr",
    "enum_attr", "str_attr", "format_attr", "format_entry", "format_key", "format_symbol",
    "format_struct_params", "format_conv_dims", "format_dense_body", "format_element",
    "HEX_THRESHOLD", "ENUM_CASES", "DOTTED_ENUMS", "STRUCT_ORDER", "canonical_struct_params",
    "DenseResourceAttr",
]


class Attribute:
    """Base of attribute values."""

    __slots__ = ()

    def mlir(self) -> str:
        """This attribute in MLIR syntax (:func:`format_attr`)."""
        return format_attr(self)


class DialectAttr(Attribute):
    """Base of another dialect's modelled attributes (the `sdy` dialect's, in shlo.ops.sdy):
    each prints itself (``format()``, its full `#dialect...` text) and names its dialect."""

    __slots__ = ()
    dialect = "sdy"

    def format(self) -> str:  # pragma: no cover - every subclass has one
        raise NotImplementedError


@dataclass(frozen=True)
class IntegerAttr(Attribute):
    """`42 : i64` (``type`` None means the default `i64`, printed without a type)."""

    value: int
    type: Type | None = None


@dataclass(frozen=True)
class FloatAttr(Attribute):
    """`1.0 : f32` (``type`` None means the default `f64`)."""

    value: float
    type: Type | None = None

    def __eq__(self, other: object) -> bool:  # NaN attributes compare equal to themselves
        return (isinstance(other, FloatAttr) and self.type == other.type
                and np.float64(self.value).tobytes() == np.float64(other.value).tobytes())

    def __hash__(self) -> int:
        return hash((np.float64(self.value).tobytes(), self.type))


@dataclass(frozen=True)
class BoolAttr(Attribute):
    """`true` / `false`."""

    value: bool


@dataclass(frozen=True)
class StringAttr(Attribute):
    """`"text"` (the value is the unescaped string)."""

    value: str


@dataclass(frozen=True)
class UnitAttr(Attribute):
    """A unit attribute: present without a value (`{foo}`)."""


@dataclass(frozen=True)
class ArrayAttr(Attribute):
    """`[a, b, ...]`."""

    values: tuple[Any, ...]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> Any:
        return self.values[i]


@dataclass(frozen=True)
class DenseArrayAttr(Attribute):
    """`array<i64: 1, 2, 3>` (``values`` are Python ints, floats or bools)."""

    element_type: Type
    values: tuple[Any, ...]

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


@dataclass(frozen=True, eq=False)
class DenseElementsAttr(Attribute):
    """`dense<...> : tensor<...>`; ``array`` has the type's shape and storage dtype.

    ``hex`` records whether the source spelled it as a hex string, a printing preference only.
    """

    type: TensorType
    array: np.ndarray
    hex: bool = field(default=False, compare=False)

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, DenseElementsAttr) and self.type == other.type
                and self.array.shape == other.array.shape):
            return False
        one, other_one = _broadcast_one(self.array), _broadcast_one(other.array)
        if one is not None and other_one is not None:  # (two splat views: never materialised)
            return one.tobytes() == other_one.tobytes()
        return self.array.tobytes() == other.array.tobytes()

    def __hash__(self) -> int:
        """From the type and the first and last elements (equal attributes agree on them): no
        copy of the elements, whose splat may be a view of 10^11 of them."""
        a = self.array
        ends = (a.flat[0], a.flat[a.size - 1]) if a.size else ()
        return hash((self.type, b"".join(np.asarray(x).tobytes() for x in ends)))

    @property
    def is_splat(self) -> bool:
        if self.array.size and _broadcast_one(self.array) is not None:
            return True
        a = np.ascontiguousarray(self.array).reshape(-1).view(np.uint8).reshape(self.array.size, -1) \
            if self.array.size else self.array
        return self.array.size > 0 and bool((a == a[:1]).all())


def _broadcast_one(a: np.ndarray) -> np.ndarray | None:
    """The one element a splat view (every stride 0) repeats, as a 1-element array; None for
    other arrays."""
    if a.size and a.ndim and not any(a.strides):
        return a.reshape(-1)[:1] if a.size == 1 else a[(0,) * a.ndim].reshape(1)
    return None


@dataclass(frozen=True)
class TypeAttr(Attribute):
    """A type used as an attribute (`function_type`, `type = tensor<...>`)."""

    type: Type


@dataclass(frozen=True)
class SymbolRefAttr(Attribute):
    """`@name` or `@root::@nested`."""

    root: str
    nested: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.nested[-1] if self.nested else self.root


@dataclass(frozen=True)
class DictAttr(Attribute):
    """`{name = value, ...}` (items keep their source order)."""

    items: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.items:
            if k == key:
                return v
        return default

    def as_dict(self) -> dict[str, Any]:
        return dict(self.items)


@dataclass(frozen=True)
class EnumAttr(Attribute):
    """A dialect enum, e.g. `#stablehlo<comparison_direction LT>`: dialect, enum name, value.

    ``enum`` is the mnemonic (`comparison_direction`, `precision`, `fft_type`, `transpose`,
    `rng_distribution`, `rng_algorithm`, `comparison_type`, `custom_call_api_version`,
    `result_accuracy_mode`, ...) and ``value`` the case (`LT`, `DEFAULT`, ...).
    """

    dialect: str
    enum: str
    value: str


@dataclass(frozen=True)
class StructAttr(Attribute):
    """A dialect attribute with named parameters, e.g. `#stablehlo.gather<offset_dims = [1], ...>`.

    ``name`` is the full mnemonic (`stablehlo.gather`, `stablehlo.scatter`, `stablehlo.dot`,
    `stablehlo.channel_handle`, `stablehlo.result_accuracy`, `stablehlo.output_operand_alias`,
    `stablehlo.dot_algorithm`, ...). Parameter values are Python ints, bools, tuples of ints, or
    Attribute objects; parameters the source omitted are absent (read them with a default).
    """

    name: str
    params: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class ConvDimensionNumbers(Attribute):
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>` with the spec's field names."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]


@dataclass(frozen=True)
class OpaqueAttr(Attribute):
    """An attribute the parser does not model (another dialect's), kept verbatim."""

    text: str


# --- facts about the dialect attributes' text -----------------------------------------------------

ENUM_CASES: dict[str, tuple[str, ...]] = {
    "comparison_direction": ("EQ", "NE", "GE", "GT", "LE", "LT"),
    "comparison_type": ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"),
    "precision": ("DEFAULT", "HIGH", "HIGHEST"),
    "fft_type": ("FFT", "IFFT", "RFFT", "IRFFT"),
    "transpose": ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
    "rng_distribution": ("UNIFORM", "NORMAL"),
    "rng_algorithm": ("DEFAULT", "THREE_FRY", "PHILOX"),
    "custom_call_api_version": ("API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                "API_VERSION_STATUS_RETURNING",
                                "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"),
    "result_accuracy_mode": ("DEFAULT", "HIGHEST", "TOLERANCE"),
}
"""The cases of the StableHLO/CHLO enums, by mnemonic (an unknown case is a parse error, as
upstream)."""

DOTTED_ENUMS: dict[str, tuple[str, str]] = {
    "stablehlo.result_accuracy_mode": ("stablehlo", "result_accuracy_mode"),
}
"""Enums spelled `#dialect.enum<CASE>` rather than `#dialect<enum CASE>`: (dialect, enum)."""

STRUCT_ORDER: dict[str, tuple[str, ...]] = {
    "stablehlo.gather": ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                         "start_indices_batching_dims", "start_index_map", "index_vector_dim"),
    "stablehlo.scatter": ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                          "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
                          "index_vector_dim"),
    "stablehlo.dot": ("lhs_batching_dimensions", "rhs_batching_dimensions",
                      "lhs_contracting_dimensions", "rhs_contracting_dimensions"),
    "chlo.ragged_dot": ("lhs_batching_dimensions", "rhs_batching_dimensions",
                        "lhs_contracting_dimensions", "rhs_contracting_dimensions",
                        "lhs_ragged_dimensions", "rhs_group_dimensions"),
    "stablehlo.result_accuracy": ("atol", "rtol", "ulps", "mode"),
    "stablehlo.channel_handle": ("handle", "type"),
}
"""The parameters of the known dialect attributes, in upstream's order."""
_OMIT_EMPTY = {"stablehlo.gather", "stablehlo.scatter", "stablehlo.dot", "chlo.ragged_dot"}


def canonical_struct_params(name: str, params: list[tuple[str, Any]]) -> tuple:
    """Parameters of a known dialect attribute in upstream's order, without the ones upstream
    leaves out (empty dimension lists; zero tolerances of `result_accuracy`). Unknown names or
    duplicate keys are kept as written."""
    order = STRUCT_ORDER.get(name)
    if order is None:
        return tuple(params)
    keys = [k for k, _ in params]
    if len(set(keys)) != len(keys) or any(k not in order for k in keys):
        return tuple(params)
    d = dict(params)
    out = []
    for k in order:
        if k not in d:
            continue
        v = d[k]
        if name in _OMIT_EMPTY and v == ():
            continue
        if k == "index_vector_dim" and v == 0:
            continue
        if name == "stablehlo.result_accuracy" and k != "mode" and v in (0, 0.0) \
                and not (isinstance(v, float) and str(v).startswith("-")):
            continue
        out.append((k, v))
    return tuple(out)


# --- text -----------------------------------------------------------------------------------------

_BARE_ID_RE = re.compile(r"[A-Za-z_][\w$.]*\Z")
_I64 = _ELEMENT_TYPES["i64"]
_F64 = _ELEMENT_TYPES["f64"]
_DOTTED_NAMES = {v: k for k, v in DOTTED_ENUMS.items()}


def format_symbol(name: str) -> str:
    """`@name`, quoted when ``name`` is not a bare identifier."""
    return "@" + name if _BARE_ID_RE.match(name) else "@" + escape_string(name)


def format_key(name: str) -> str:
    """An attribute name in a dictionary, quoted when it is not a bare identifier."""
    return name if _BARE_ID_RE.match(name) else escape_string(name)


def format_attr(a: Any, elide: bool = False) -> str:
    """The text of an attribute value. MLIR spells out the default types (`4 : i64`,
    `1.0 : f64`) except inside arrays (``elide``), where `[0, 1]` means i64 elements."""
    t = type(a)
    if t is IntegerAttr:
        if a.type is None or (elide and a.type is _I64):
            return str(a.value) if elide else f"{a.value} : i64"
        if isinstance(a.type, IntegerType) and a.type.width == 1:
            return "true" if a.value else "false"
        return f"{a.value} : {format_type(a.type)}"
    if t is StringAttr:
        return escape_string(a.value)
    if t is BoolAttr:
        return "true" if a.value else "false"
    if t is DenseElementsAttr:
        return f"dense<{format_dense_body(a.array, a.type.element_type)}> : {format_type(a.type)}"
    if t is DenseResourceAttr:
        return f"dense_resource<{format_key(a.key)}> : {format_type(a.type)}"
    if t is DenseArrayAttr:
        et = a.element_type
        if not a.values:
            return f"array<{format_type(et)}>"
        if isinstance(et, IntegerType) and et.width == 1:
            body = ", ".join("true" if v else "false" for v in a.values)
        elif isinstance(et, FloatType):
            body = ", ".join(format_float(v, et) for v in a.values)
        else:
            body = ", ".join(str(int(v)) for v in a.values)
        return f"array<{format_type(et)}: {body}>"
    if t is ArrayAttr:
        return "[" + ", ".join(format_attr(x, True) for x in a.values) + "]"
    if t is DictAttr:
        return "{" + ", ".join(format_entry(k, v) for k, v in a.items) + "}"
    if t is FloatAttr:
        if a.type is None or (elide and a.type is _F64):
            text = format_float(a.value, None, True)
            if elide and not text.startswith(("0x", "-0x")):
                return text  # (a bare hex pattern would read back as an integer)
            return f"{text} : f64"
        return f"{format_float(a.value, a.type)} : {format_type(a.type)}"
    if t is TypeAttr:
        return format_type(a.type)
    if t is SymbolRefAttr:
        return format_symbol(a.root) + "".join("::" + format_symbol(n) for n in a.nested)
    if t is EnumAttr:
        dotted = _DOTTED_NAMES.get((a.dialect, a.enum))
        if dotted is not None:
            return f"#{dotted}<{a.value}>"
        return f"#{a.dialect}<{a.enum} {a.value}>"
    if t is StructAttr:
        if a.name == "stablehlo.bounds":
            bounds = a.get("bounds", ())
            return "#stablehlo.bounds<" + ", ".join("?" if b is None else str(b)
                                                    for b in bounds) + ">"
        prefix = "#" + a.name if a.name else ""
        return f"{prefix}<{format_struct_params(a)}>"
    if t is ConvDimensionNumbers:
        s = format_conv_dims(a)
        if s is not None:
            return f"#stablehlo.conv<{s}>"
        fields = ", ".join(f"{k} = {_struct_value(getattr(a, k))}"
                           for k in a.__dataclass_fields__)
        return f"#stablehlo.conv<raw {fields}>"
    if t is OpaqueAttr:
        return a.text
    if t is UnitAttr:
        return "unit"
    if isinstance(a, Location):
        return format_location(a)
    if isinstance(a, DialectAttr):
        return a.format()
    raise TypeError(f"cannot print attribute {a!r}")


def format_entry(k: str, v: Any) -> str:
    """`name = value` in an attribute dictionary (`name` alone for a unit attribute)."""
    if type(v) is UnitAttr:
        return format_key(k)
    return f"{format_key(k)} = {format_attr(v)}"


def format_struct_params(a: StructAttr) -> str:
    """The `name = value, ...` inside a dialect attribute's `<...>`."""
    return ", ".join(f"{k} = {_struct_value(v)}" for k, v in a.params)


def _struct_value(v: Any) -> str:
    if v is None:
        return "?"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, float):
        return format_float(v, None, True)
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(_struct_value(x) for x in v) + "]"
    if isinstance(v, str):
        return escape_string(v)
    return format_attr(v)


def format_conv_dims(c: ConvDimensionNumbers) -> str | None:
    """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` (None when the numbers are inconsistent)."""

    def one(batch: int, feat: int, spatial: tuple, b: str, f: str) -> str | None:
        n = 2 + len(spatial)
        items: list[str | None] = [None] * n
        for pos, label in [(batch, b), (feat, f)] + [(d, str(i)) for i, d in enumerate(spatial)]:
            if not 0 <= pos < n or items[pos] is not None:
                return None
            items[pos] = label
        return "[" + ", ".join(items) + "]"  # type: ignore[arg-type]

    a = one(c.input_batch_dimension, c.input_feature_dimension, c.input_spatial_dimensions,
            "b", "f")
    k = one(c.kernel_input_feature_dimension, c.kernel_output_feature_dimension,
            c.kernel_spatial_dimensions, "i", "o")
    o = one(c.output_batch_dimension, c.output_feature_dimension, c.output_spatial_dimensions,
            "b", "f")
    if a is None or k is None or o is None:
        return None
    return f"{a}x{k}->{o}"


# --- the body of a dense elements literal ---------------------------------------------------------

HEX_THRESHOLD = 100
"""Non-splat literals with more elements than this print as hex strings (upstream's default)."""


def format_element(v: Any, et: ElementType) -> str:
    """One element of a dense literal."""
    if isinstance(et, QuantizedType):
        et = et.storage_type
    if isinstance(et, ComplexType):
        comp = et.element
        re_ = np.asarray(v).real.astype(comp.dtype)
        im = np.asarray(v).imag.astype(comp.dtype)
        return f"({format_float(re_[()], comp)},{format_float(im[()], comp)})"
    if isinstance(et, FloatType):
        return format_float(v, et)
    if isinstance(et, IntegerType) and et.width == 1:
        return "true" if v else "false"
    return str(int(v))


def _nested(flat: list[str], shape: tuple[int, ...]) -> str:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return "[" + ", ".join(flat) + "]"
    step = len(flat) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(flat[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


def _is_splat(arr: np.ndarray) -> bool:
    if arr.size <= 1:
        return arr.size == 1
    if arr.strides and all(s == 0 for s in arr.strides):
        return True
    flat = np.ascontiguousarray(arr).reshape(-1)
    b = flat.view(np.uint8).reshape(flat.size, -1)
    return bool((b == b[0]).all())


def format_dense_body(arr: np.ndarray, et: ElementType, hex_threshold: int = HEX_THRESHOLD) -> str:
    """The text inside `dense<...>` for ``arr`` with element type ``et``, as upstream prints it:
    a splat as one element, more than ``hex_threshold`` elements as a hex string of the raw
    bytes, otherwise nested lists; floats as :func:`shlo.spelling.format_float` spells them
    (NaN/Inf as bit patterns, so payloads and -0.0 survive)."""
    if arr.size == 0:
        # `dense<>`, unless the literal was a splat (kept as a zero-stride view of its value),
        # which upstream keeps printing as a splat: `dense<5> : tensor<0x3xi32>`
        b = arr.base
        while isinstance(b, np.ndarray) and b.size == 0:
            b = b.base
        if isinstance(b, np.ndarray) and b.dtype == arr.dtype:
            return format_element(b.reshape(-1)[0], et)
        return ""
    if _is_splat(arr):
        first = arr.reshape(-1)[0] if arr.ndim else arr[()]
        return format_element(first, et)
    base = et.storage_type if isinstance(et, QuantizedType) else et
    is_bool = isinstance(base, IntegerType) and base.width == 1
    sub_byte = isinstance(base, IntegerType) and base.width in (2, 4) or \
        isinstance(base, FloatType) and base.width < 8 or \
        isinstance(base, FloatType) and base.name == "tf32"
    if arr.size > hex_threshold and not sub_byte:
        data = np.ascontiguousarray(arr).tobytes()
        return '"0x' + data.hex().upper() + '"'
    flat = arr.reshape(-1)
    if isinstance(base, IntegerType) and not is_bool:
        texts = [str(int(x)) for x in flat.astype(np.int64 if base.is_signed or base.width < 64
                                                  else np.uint64).tolist()]
    elif isinstance(base, FloatType):
        texts = [format_float(x, base) for x in flat]
    else:
        texts = [format_element(x, et) for x in flat]
    return _nested(texts, arr.shape)


# --- helpers for reading attributes in ops -------------------------------------------------------


def ints(attr: Any, default: tuple[int, ...] | None = None) -> tuple[int, ...] | None:
    """A list of integers from any of its spellings (array<i64>, dense, [1, 2], tuple)."""
    if attr is None:
        return default
    if isinstance(attr, DenseArrayAttr):
        return tuple(int(v) for v in attr.values)
    if isinstance(attr, DenseElementsAttr):
        return tuple(int(v) for v in attr.array.reshape(-1))
    if isinstance(attr, ArrayAttr):
        return tuple(int(v.value if isinstance(v, (IntegerAttr, BoolAttr)) else v)
                     for v in attr.values)
    if isinstance(attr, (tuple, list)):
        return tuple(int(v) for v in attr)
    raise TypeError(f"not an integer list attribute: {attr!r}")


def int_or_none(attr: Any) -> int | None:
    """An integer attribute's value, or None when absent."""
    if attr is None:
        return None
    if isinstance(attr, (IntegerAttr, BoolAttr)):
        return int(attr.value)
    return int(attr)


# --- reading the attributes of an op (the one home for it) ---------------------------------------
# ``op`` is any object with ``attr(name)`` and ``name`` (an ir.Operation). Each reader returns the
# decoded Python value. When the attribute is absent or malformed it returns ``default`` if one is
# given (verifiers pass ``default=None`` and never raise), and otherwise raises AttributeProblem
# (kernels and passes: the evaluator reports it at the op's location).


class AttributeProblem(ValueError):
    """A required attribute of an op is absent or does not have the expected kind."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


def _problem(op: Any, name: str, a: Any, what: str, default: Any) -> Any:
    if default is not REQUIRED:
        return default
    if a is None:
        raise AttributeProblem(f"'{op.name}' op requires attribute '{name}'")
    raise AttributeProblem(f"'{op.name}' op attribute '{name}' must be {what}")


def int_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """Integer attribute ``name`` (`3 : i64`, `true`, a one-element dense) as an int."""
    a = op.attr(name)
    if isinstance(a, (IntegerAttr, BoolAttr)):
        return int(a.value)
    if isinstance(a, (bool, int)):
        return int(a)
    if isinstance(a, DenseElementsAttr) and a.array.size == 1 and a.array.dtype.kind in "iub":
        return int(a.array.reshape(-1)[0])
    return _problem(op, name, a, "an integer", default)


def ints_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """Integer-list attribute ``name`` in any spelling (`array<i64: 1, 2>`, `dense<[1, 2]>`,
    `[1, 2]`) as a tuple of ints."""
    a = op.attr(name)
    if a is not None:
        try:
            return ints(a)
        except (TypeError, ValueError):
            pass
    return _problem(op, name, a, "a list of integers", default)


def bool_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """Boolean attribute ``name`` (`true`, an integer, or a unit attribute) as a bool."""
    a = op.attr(name)
    if isinstance(a, (BoolAttr, IntegerAttr)):
        return bool(a.value)
    if isinstance(a, bool):
        return a
    if isinstance(a, UnitAttr):
        return True
    return _problem(op, name, a, "a boolean", default)


def float_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """Float attribute ``name`` (`1.0e-3 : f32`, or an integer) as a float."""
    a = op.attr(name)
    if isinstance(a, (FloatAttr, IntegerAttr)):
        return float(a.value)
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return float(a)
    return _problem(op, name, a, "a float", default)


def enum_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """The case of enum attribute ``name`` (`LT` for `#stablehlo<comparison_direction LT>`)."""
    a = op.attr(name)
    if isinstance(a, (EnumAttr, StringAttr)):
        return a.value
    if isinstance(a, StructAttr):  # `#stablehlo<fft_type FFT>` may come as a struct
        v = a.get("value")
        if isinstance(v, str):
            return v
    if isinstance(a, str):
        return a
    return _problem(op, name, a, "an enum case", default)


def str_attr(op: Any, name: str, default: Any = REQUIRED) -> Any:
    """String attribute ``name`` as a str."""
    a = op.attr(name)
    if isinstance(a, StringAttr):
        return a.value
    if isinstance(a, str):
        return a
    return _problem(op, name, a, "a string", default)


# --- dense resources: `dense_resource<key> : tensor<...>` -----------------------------------------

class DenseResourceAttr(DenseElementsAttr):
    """`dense_resource<key> : tensor<...>`: a dense elements attribute whose data is a resource
    blob (torch-mlir's weights). Text and bytecode read it alike; ``array`` is a view of the
    blob's bytes, made on first use. It is a DenseElementsAttr everywhere an op reads one;
    equal to another when type, key and data agree (never to an inline `dense<...>`)."""

    def __init__(self, type: TensorType, handle: ResourceHandle) -> None:  # noqa: A002
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "handle", handle)

    handle: ResourceHandle

    @property
    def key(self) -> str:
        return self.handle.key

    @property  # type: ignore[override]
    def array(self) -> np.ndarray:
        cached = self.__dict__.get("_array")
        if cached is None:
            blob = self.handle.blob
            if blob is None:
                why = ("its data was elided when the program was printed (MLIR's "
                       "--mlir-elide-resource-strings-if-larger): export it again without that"
                       if self.key == ELIDED_RESOURCE else
                       "the program's `{-# dialect_resources #-}` section does not define it "
                       "(MLIR leaves blobs out when printing with a resource size limit)")
                raise ResourceUnavailable(f"dense_resource<{self.key}> has no data: {why}")
            try:
                cached = elements_from_raw(self.type, blob.data())
            except ValueError as e:
                raise ValueError(f"dense_resource<{self.key}>: {e}") from None
            object.__setattr__(self, "_array", cached)
        return cached

    def problem(self) -> str | None:
        """Why the blob cannot hold this attribute's elements (sizes only, nothing decoded)."""
        blob = self.handle.blob
        if blob is None:
            return None
        try:
            raw_layout(self.type, blob.nbytes)
        except ValueError as e:
            return f"dense_resource<{self.key}>: {e}"
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DenseResourceAttr):
            return False
        if self.type != other.type or self.key != other.key:
            return False
        a, b = self.handle.blob, other.handle.blob
        return a is b or (a is not None and b is not None
                          and bytes(a.data()) == bytes(b.data()))

    def __hash__(self) -> int:
        return hash((self.type, self.key))

    def __repr__(self) -> str:
        return f"DenseResourceAttr({self.key!r}, {format_type(self.type)})"
