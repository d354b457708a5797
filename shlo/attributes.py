"""Attribute values (MLIR builtin attributes and the StableHLO dialect attributes).

Every attribute is an immutable value object; equal attributes compare equal (dense elements
compare by type and bytes). Ops read them through small helpers (:func:`ints`, ...) so that the
older `dense<[1, 2]> : tensor<2xi64>` and the newer `array<i64: 1, 2>` spellings of the same
integer list are interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .types import TensorType, Type

__all__ = [
    "Attribute", "IntegerAttr", "FloatAttr", "BoolAttr", "StringAttr", "UnitAttr", "ArrayAttr",
    "DenseArrayAttr", "DenseElementsAttr", "TypeAttr", "SymbolRefAttr", "DictAttr", "EnumAttr",
    "StructAttr", "ConvDimensionNumbers", "OpaqueAttr", "ints", "int_or_none",
    "AttributeProblem", "REQUIRED", "int_attr", "ints_attr", "bool_attr", "float_attr",
    "enum_attr", "str_attr",
]


class Attribute:
    """Base of attribute values."""

    __slots__ = ()


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
        return (isinstance(other, DenseElementsAttr) and self.type == other.type
                and self.array.shape == other.array.shape
                and self.array.tobytes() == other.array.tobytes())

    def __hash__(self) -> int:
        return hash((self.type, self.array.tobytes()))

    @property
    def is_splat(self) -> bool:
        a = self.array.reshape(-1).view(np.uint8).reshape(self.array.size, -1) \
            if self.array.size else self.array
        return self.array.size > 0 and bool((a == a[:1]).all())


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
