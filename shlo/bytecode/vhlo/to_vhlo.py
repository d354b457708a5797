"""`stablehlo-legalize-to-vhlo`: StableHLO (and func) ops to the VHLO ops of the current
version (upstream `StablehloLegalizeToVhlo.cpp`), in place.

Per op: the name maps to its current VHLO op; VHLO has no default attributes, so the defaults
StableHLO leaves implicit are written out; attributes VHLO splits up (`dimension_numbers`,
`dot_dimension_numbers`, channel handles, ...) are split; every other attribute converts to its
VHLO counterpart (`convertGeneric`), and every type to its VHLO type. Ops of other dialects
fail ("explicitly marked illegal"), unless other dialects are allowed: then they stay, with
`builtin.unrealized_conversion_cast` ops between their builtin-typed values and VHLO values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attributes import (
    ArrayAttr, BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr,
    DenseResourceAttr, DictAttr, EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr,
    StructAttr, SymbolRefAttr, TypeAttr, UnitAttr,
)
from ...errors import Diagnostic, ShloError
from ...ir import Module, Operation, Value
from ...types import IntegerType, TensorType, element_type
from . import attrs as A
from . import types as T
from .text import to_vhlo_type
from .ops import CURRENT_OP, OPS
from .to_version import default_result_accuracy, empty_i64_tensor

__all__ = ["stablehlo_to_vhlo", "to_vhlo_attr", "LegalizeToVhloError"]

_I64 = element_type("i64")
_I1 = element_type("i1")
_F64 = element_type("f64")


class LegalizeToVhloError(ShloError):
    """A StableHLO program that VHLO cannot represent."""


class _Fail(ValueError):
    pass


# --- generic attribute conversion ---------------------------------------------------------------

_ENUMS = {"comparison_direction", "comparison_type", "fft_type", "precision", "rng_algorithm",
          "rng_distribution", "transpose", "result_accuracy_mode"}


def to_vhlo_attr(a: Any, allow_other: bool = False) -> Any:
    """The VHLO attribute of builtin/StableHLO attribute ``a`` (`convertGeneric`)."""
    if isinstance(a, A.VhloAttr):
        return a
    t = type(a)
    if t is DenseElementsAttr or t is DenseResourceAttr:  # (VHLO has no resources: inline)
        return A.VTensorAttr(to_vhlo_type(a.type), a)
    if t is IntegerAttr:
        ty = a.type if a.type is not None else _I64
        if isinstance(ty, IntegerType) and ty.width == 1:
            return A.VBool(bool(a.value))
        return A.VInteger(to_vhlo_type(ty), a.value)
    if t is BoolAttr:
        return A.VBool(a.value)
    if t is StringAttr:
        return A.VString(a.value)
    if t is ArrayAttr:
        return A.VArray(tuple(to_vhlo_attr(x, allow_other) for x in a.values))
    if t is EnumAttr and a.dialect == "stablehlo" and a.enum in _ENUMS:
        return A.VEnum(a.enum + "_v1", a.value)
    if t is DenseArrayAttr:
        et = a.element_type
        if isinstance(et, IntegerType) and et.width in (1, 64) and et.signedness == "signless":
            n = len(a.values)
            dt = np.bool_ if et.width == 1 else np.int64
            data = DenseElementsAttr(TensorType((n,), et), np.array(a.values, dtype=dt))
            return A.VTensorAttr(T.VTensor((n,), T.BOOL if et.width == 1 else T.SI64), data)
        raise _Fail(f"dense array of {et} has no VHLO counterpart")
    if t is DictAttr:
        return A.VDict(tuple((A.VString(k), to_vhlo_attr(v, allow_other)) for k, v in a.items))
    if t is FloatAttr:
        ty = a.type if a.type is not None else _F64
        vt = to_vhlo_type(ty)
        return A.VFloat(vt, A.float_bits(vt, a.value))
    if t is SymbolRefAttr:
        if a.nested:
            raise _Fail(f"nested symbol reference @{a.root} has no VHLO counterpart")
        return A.VString(a.root)
    if t is TypeAttr:
        return A.VTypeAttr(to_vhlo_type(a.type, allow_other))
    if t is StructAttr:
        return _struct(a, allow_other)
    if t is OpaqueAttr and a.text.startswith("#stablehlo.axis_ref"):
        return _axis_ref_text(a.text)
    if t is OpaqueAttr and a.text.startswith("#vhlo"):
        from .text import parse_attr

        return parse_attr(a.text)
    if allow_other and not _is_stablehlo_or_builtin(a):
        return a
    from ...syntax.printer import format_attr

    try:
        text = format_attr(a)
    except TypeError:
        text = repr(a)
    raise _Fail(f"attribute {text} has no VHLO counterpart")


def _is_stablehlo_or_builtin(a: Any) -> bool:
    if isinstance(a, (EnumAttr, StructAttr)):
        return (getattr(a, "dialect", None) or getattr(a, "name", "")).startswith("stablehlo")
    if isinstance(a, OpaqueAttr):
        return a.text.startswith("#stablehlo")
    return isinstance(a, (UnitAttr, ConvDimensionNumbers))


def _struct(a: StructAttr, allow_other: bool) -> Any:
    name = a.name
    if name == "stablehlo.output_operand_alias":
        return A.VOutputOperandAlias(tuple(a.get("output_tuple_indices", ())),
                                     int(a.get("operand_index", 0)),
                                     tuple(a.get("operand_tuple_indices", ())))
    if name == "stablehlo.result_accuracy":
        mode = a.get("mode", EnumAttr("stablehlo", "result_accuracy_mode", "DEFAULT"))
        return A.VResultAccuracy(T.f64_bits(float(a.get("atol", 0.0))),
                                 T.f64_bits(float(a.get("rtol", 0.0))), int(a.get("ulps", 0)),
                                 to_vhlo_attr(mode))
    if name == "stablehlo.axis_ref":
        sub = a.get("sub_axis_info")
        return A.VAxisRef(A.VString(_str(a.get("name"))),
                          None if sub is None else to_vhlo_attr(sub))
    if name == "stablehlo.sub_axis_info":
        return A.VSubAxisInfo(int(a.get("pre_size")), int(a.get("size")))
    if name == "stablehlo.mesh_axis":
        return A.VMeshAxis(A.VString(_str(a.get("name"))), int(a.get("size")))
    if name == "stablehlo.mesh":
        axes = a.get("axes", ArrayAttr(()))
        ids = a.get("device_ids")
        return A.VMesh(A.VArray(tuple(to_vhlo_attr(x) for x in axes)),
                       None if ids is None else to_vhlo_attr(ids))
    if name == "stablehlo.replica_group_mesh_axes":
        mesh = a.get("mesh")
        vmesh = A.VString(mesh.root) if isinstance(mesh, SymbolRefAttr) else to_vhlo_attr(mesh)
        axes = a.get("axes", ArrayAttr(()))
        return A.VReplicaGroupMeshAxes(vmesh, A.VArray(tuple(to_vhlo_attr(x) for x in axes)))
    if allow_other and not name.startswith("stablehlo."):
        return a
    raise _Fail(f"attribute #{name}<...> has no VHLO counterpart here")


def _str(x: Any) -> str:
    return x.value if isinstance(x, StringAttr) else str(x)


def _axis_ref_text(text: str) -> A.VAxisRef:
    """`#stablehlo.axis_ref<name = "x", sub_axis_info = (1)2>` (kept opaque by the parser)."""
    import re

    m = re.fullmatch(r'#stablehlo\.axis_ref<\s*name\s*=\s*"((?:[^"\\]|\\.)*)"\s*'
                     r'(?:,\s*sub_axis_info\s*=\s*\(\s*(-?\d+)\s*\)\s*(-?\d+)\s*)?>', text.strip())
    if not m:
        raise _Fail(f"cannot read {text}")
    from ...syntax.lexer import unescape_string

    name = unescape_string('"' + m.group(1) + '"')
    sub = A.VSubAxisInfo(int(m.group(2)), int(m.group(3))) if m.group(2) else None
    return A.VAxisRef(A.VString(name), sub)


def _si64(v: int) -> A.VInteger:
    return A.VInteger(T.SI64, int(v))


def _i64s(vals: Any) -> A.VTensorAttr:
    vals = tuple(int(v) for v in vals)
    n = len(vals)
    data = DenseElementsAttr(TensorType((n,), _I64), np.array(vals, dtype=np.int64))
    return A.VTensorAttr(T.VTensor((n,), T.SI64), data)


def _i64_matrix(rows: int, cols: int, value: int = 0) -> A.VTensorAttr:
    data = DenseElementsAttr(TensorType((rows, cols), _I64),
                             np.full((rows, cols), value, dtype=np.int64))
    return A.VTensorAttr(T.VTensor((rows, cols), T.SI64), data)


def _bools(vals: Any) -> A.VTensorAttr:
    vals = tuple(bool(v) for v in vals)
    n = len(vals)
    data = DenseElementsAttr(TensorType((n,), _I1), np.array(vals, dtype=np.bool_))
    return A.VTensorAttr(T.VTensor((n,), T.BOOL), data)


_EMPTY_ARRAY = A.VArray(())
_FALSE = A.VBool(False)
_NONE_TYPE = A.VTypeAttr(T.NONE)
_PREC_DEFAULT = A.VEnum("precision_v1", "DEFAULT")
_API = ("API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI")


# --- defaults and special cases -----------------------------------------------------------------


def _n_spatial(op: Operation) -> int:
    dn = op.attr("dimension_numbers")
    if isinstance(dn, ConvDimensionNumbers):
        return len(dn.input_spatial_dimensions)
    raise _Fail("convolution without dimension_numbers")


def _n_window(op: Operation, name: str = "window_dimensions") -> int:
    from ...attributes import ints

    w = op.attr(name)
    if w is None:
        raise _Fail(f"{op.name} without {name}")
    return len(ints(w))


def _defaults(op: Operation, base: str) -> dict[str, Any]:
    """The attributes VHLO needs that the StableHLO op leaves to their defaults (`addDefaults`)."""
    has = op.has_attr
    out: dict[str, Any] = {}
    if base == "func":
        if not has("sym_visibility"):
            out["sym_visibility"] = A.VString("")
        if not has("arg_attrs"):
            out["arg_attrs"] = _EMPTY_ARRAY
        if not has("res_attrs"):
            out["res_attrs"] = _EMPTY_ARRAY
    elif base in ("all_gather", "all_reduce", "reduce_scatter"):
        if not has("channel_handle"):
            out["channel_id"] = _si64(0)
        if not has("use_global_device_ids"):
            out["use_global_device_ids"] = _FALSE
    elif base in ("all_to_all", "collective_permute"):
        if not has("channel_handle"):
            out["channel_id"] = _si64(0)
    elif base == "collective_broadcast":
        if not has("channel_handle"):
            out["channel_id"] = _si64(0)
        if not has("has_dynamic_root"):
            out["has_dynamic_root"] = _FALSE
    elif base == "collective_reduce":
        if not has("channel_handle"):
            out["channel_id"] = _si64(0)
        if not has("use_global_device_ids"):
            out["use_global_device_ids"] = _FALSE
        if not has("has_dynamic_root"):
            out["has_dynamic_root"] = _FALSE
    elif base == "cholesky":
        if not has("lower"):
            out["lower"] = _FALSE
    elif base == "compare":
        if not has("compare_type"):
            out["compare_type"] = A.VEnum("comparison_type_v1", "NOTYPE")
    elif base == "composite":
        if not has("version"):
            out["version"] = _si64(0)
        if not has("composite_attributes"):
            out["composite_attributes"] = A.VDict(())
    elif base in ("convolution", "dynamic_conv"):
        n = _n_spatial(op)
        if not has("window_strides"):
            out["window_strides"] = _i64s([1] * n)
        if base == "convolution" and not has("padding"):
            out["padding"] = _i64_matrix(n, 2)
        if not has("lhs_dilation"):
            out["lhs_dilation"] = _i64s([1] * n)
        if not has("rhs_dilation"):
            out["rhs_dilation"] = _i64s([1] * n)
        if not has("window_reversal"):
            out["window_reversal"] = _bools([False] * n)
        if not has("precision_config"):
            out["precision_config"] = A.VArray((_PREC_DEFAULT, _PREC_DEFAULT))
    elif base == "custom_call":
        if not has("has_side_effect"):
            out["has_side_effect"] = _FALSE
        if not has("backend_config"):
            api = op.attr("api_version")
            typed_ffi = isinstance(api, IntegerAttr) and api.value == 4
            out["backend_config"] = A.VDict(()) if typed_ffi else A.VString("")
        if not has("api_version"):
            out["api_version"] = A.VEnum("api_version_v1", "API_VERSION_ORIGINAL")
        for k in ("called_computations", "operand_layouts", "result_layouts",
                  "output_operand_aliases", "result_tilings"):
            if not has(k):
                out[k] = _EMPTY_ARRAY
    elif base in ("dot_general", "dot"):
        if not has("precision_config"):
            out["precision_config"] = A.VArray((_PREC_DEFAULT, _PREC_DEFAULT))
        if base == "dot_general" and not has("algorithm"):
            for k in ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
                      "lhs_component_count", "rhs_component_count",
                      "num_primitive_operations", "allow_imprecise_accumulation"):
                out[k] = _NONE_TYPE
    elif base in _ACCURACY_OPS:
        if not has("result_accuracy"):
            out["result_accuracy"] = default_result_accuracy()
    elif base == "dynamic_broadcast_in_dim":
        if not has("known_expanding_dimensions"):
            out["known_expanding_dimensions"] = _i64s([])
        if not has("known_nonexpanding_dimensions"):
            out["known_nonexpanding_dimensions"] = _i64s([])
    elif base in ("dynamic_gather", "gather"):
        if not has("indices_are_sorted"):
            out["indices_are_sorted"] = _FALSE
    elif base == "infeed":
        if not has("infeed_config"):
            out["infeed_config"] = A.VString("")
        if not has("layout"):
            out["layout"] = _EMPTY_ARRAY
    elif base == "outfeed":
        if not has("outfeed_config"):
            out["outfeed_config"] = A.VString("")
    elif base in ("recv", "send"):
        if not has("is_host_transfer"):
            out["is_host_transfer"] = _FALSE
        if not has("source_target_pairs"):
            out["source_target_pairs"] = empty_i64_tensor()
    elif base == "reduce_window":
        n = _n_window(op)
        for k in ("window_strides", "base_dilations", "window_dilations"):
            if not has(k):
                out[k] = _i64s([1] * n)
        if not has("padding"):
            out["padding"] = _i64_matrix(n, 2)
    elif base == "scatter":
        if not has("indices_are_sorted"):
            out["indices_are_sorted"] = _FALSE
        if not has("unique_indices"):
            out["unique_indices"] = _FALSE
    elif base == "select_and_scatter":
        n = _n_window(op)
        if not has("window_strides"):
            out["window_strides"] = _i64s([1] * n)
        if not has("padding"):
            out["padding"] = _i64_matrix(n, 2)
    elif base == "sort":
        if not has("dimension"):
            out["dimension"] = _si64(-1)
        if not has("is_stable"):
            out["is_stable"] = _FALSE
    return out


_ACCURACY_OPS = {"cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
                 "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh"}
_CHANNEL_ID_OPS = {"all_gather", "all_reduce", "all_to_all", "collective_permute",
                   "reduce_scatter", "collective_broadcast", "collective_reduce"}
_UNIT_FLAGS = {"use_global_device_ids", "has_dynamic_root"}


def _struct_ints(a: Any, key: str) -> tuple:
    v = a.get(key, ())
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


def _special(base: str, k: str, a: Any, out: dict[str, Any]) -> bool:
    """Convert the attributes VHLO represents differently (`convertSpecial`); False when
    ``k`` is not one of them."""
    if base in _CHANNEL_ID_OPS:
        if k == "channel_handle":
            out["channel_id"] = _si64(_handle(a)[0])
            return True
        if k in _UNIT_FLAGS:
            if isinstance(a, UnitAttr):
                out[k] = A.VBool(True)
            elif isinstance(a, BoolAttr):
                out[k] = A.VBool(a.value)
            else:
                raise _Fail(f"{k} is not a unit attribute")
            return True
    if base in ("recv", "send") and k == "channel_handle":
        h, ty = _handle(a)
        out["channel_id"] = _si64(h)
        out["channel_type"] = _si64(ty)
        return True
    if base in ("convolution", "dynamic_conv") and k == "dimension_numbers":
        if not isinstance(a, ConvDimensionNumbers):
            raise _Fail("dimension_numbers is not #stablehlo.conv")
        for f in ("input_batch_dimension", "input_feature_dimension",
                  "kernel_input_feature_dimension", "kernel_output_feature_dimension",
                  "output_batch_dimension", "output_feature_dimension"):
            out[f] = _si64(getattr(a, f))
        for f in ("input_spatial_dimensions", "kernel_spatial_dimensions",
                  "output_spatial_dimensions"):
            out[f] = _i64s(getattr(a, f))
        return True
    if base == "custom_call" and k == "api_version":
        if isinstance(a, IntegerAttr):
            if not 0 <= a.value < len(_API):
                raise _Fail(f"unknown custom_call api_version {a.value}")
            out[k] = A.VEnum("api_version_v1", _API[a.value])
        elif isinstance(a, EnumAttr):
            out[k] = A.VEnum("api_version_v1", a.value)
        else:
            raise _Fail("api_version is not an integer")
        return True
    if base == "custom_call" and k == "called_computations":
        if not isinstance(a, ArrayAttr):
            raise _Fail("called_computations is not an array")
        out[k] = A.VArray(tuple(_symbol(x) for x in a.values))
        return True
    if base == "dot_general" and k == "dot_dimension_numbers":
        for f in ("lhs_batching_dimensions", "rhs_batching_dimensions",
                  "lhs_contracting_dimensions", "rhs_contracting_dimensions"):
            out[f] = _i64s(_struct_ints(a, f))
        return True
    if base == "dot_general" and k == "algorithm":
        if isinstance(a, TypeAttr) and isinstance(a.type, T.VhloType):
            return True
        out["lhs_precision_type"] = to_vhlo_attr(a.get("lhs_precision_type"))
        out["rhs_precision_type"] = to_vhlo_attr(a.get("rhs_precision_type"))
        out["accumulation_type"] = to_vhlo_attr(a.get("accumulation_type"))
        out["lhs_component_count"] = _si64(a.get("lhs_component_count"))
        out["rhs_component_count"] = _si64(a.get("rhs_component_count"))
        out["num_primitive_operations"] = _si64(a.get("num_primitive_operations"))
        out["allow_imprecise_accumulation"] = A.VBool(bool(a.get(
            "allow_imprecise_accumulation")))
        return True
    if base in ("dynamic_gather", "gather") and k == "dimension_numbers":
        for f in ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                  "start_indices_batching_dims", "start_index_map"):
            out[f] = _i64s(_struct_ints(a, f))
        out["index_vector_dim"] = _si64(a.get("index_vector_dim", 0))
        return True
    if base == "scatter" and k == "scatter_dimension_numbers":
        for f in ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                  "scatter_indices_batching_dims", "scatter_dims_to_operand_dims"):
            out[f] = _i64s(_struct_ints(a, f))
        out["index_vector_dim"] = _si64(a.get("index_vector_dim", 0))
        return True
    if base == "call" and k == "callee":
        out[k] = _symbol(a)
        return True
    return False


def _handle(a: Any) -> tuple[int, int]:
    if isinstance(a, StructAttr) and a.name == "stablehlo.channel_handle":
        return int(a.get("handle", 0)), int(a.get("type", 0))
    raise _Fail("channel_handle is not #stablehlo.channel_handle")


def _symbol(a: Any) -> A.VString:
    if isinstance(a, SymbolRefAttr) and not a.nested:
        return A.VString(a.root)
    raise _Fail("expected a flat symbol reference")


# --- the pass -----------------------------------------------------------------------------------


def _op_base(name: str) -> str:
    return name.split(".", 1)[1]


def _convert_op(op: Operation, target: str, allow_other: bool) -> None:
    base = _op_base(op.name)
    info = OPS[target]
    inherent = set(info.attrs)
    props = _defaults(op, base)
    attrs: dict[str, Any] = {}
    for d in (op.properties, op.attributes):
        for k, a in d.items():
            if _special(base, k, a, props):
                continue
            v = to_vhlo_attr(a, allow_other)
            (props if k in inherent else attrs)[k] = v
    for k in list(props):
        if k not in inherent:
            attrs[k] = props.pop(k)
    missing = [k for k in info.attrs if k not in props]
    if missing:
        raise _Fail(f"missing attribute '{missing[0]}'")
    op.name = target
    op.properties = props
    op.attributes = attrs


def _retype(values: list[Value], allow_other: bool) -> None:
    for v in values:
        v.type = to_vhlo_type(v.type, allow_other)


def stablehlo_to_vhlo(module: Module, allow_other_dialects: bool = False) -> Module:
    """Convert the StableHLO and func ops of ``module`` to VHLO, in place."""
    ops = list(module.op.walk())
    # attribute objects are shared (the parser's and reader's caches), so ops with the same
    # name and attributes convert once, and share their VHLO attributes (which lets the
    # bytecode writer number them by identity); the key's objects are kept alive in the memo
    memo: dict[tuple, tuple] = {}
    for op in ops:
        name = op.name
        if name == "builtin.module" or (allow_other_dialects and _is_other(name)):
            continue
        target = CURRENT_OP.get(name)
        try:
            if target is None:
                raise _Fail(f"{name} has no VHLO counterpart")
            key = (name, tuple((k, id(v)) for k, v in op.properties.items()),
                   tuple((k, id(v)) for k, v in op.attributes.items()))
            hit = memo.get(key)
            if hit is None:
                kept = (op.properties, op.attributes)
                _convert_op(op, target, allow_other_dialects)
                memo[key] = (op.properties, op.attributes, kept)
            else:
                op.name = target
                op.properties = dict(hit[0])
                op.attributes = dict(hit[1])
            _retype(op.results, allow_other_dialects)
            for r in op.regions:
                for b in r.blocks:
                    _retype(b.arguments, allow_other_dialects)
        except (_Fail, T.TypeConversionError, ValueError) as e:
            d = Diagnostic(f"failed to legalize operation '{name}' that was explicitly marked "
                           "illegal", op.location)
            d.notes.append(Diagnostic(str(e), op.location, "note"))
            raise LegalizeToVhloError(d.message, diagnostics=[d],
                                      filename=module.filename) from None
    if allow_other_dialects:
        from .mixed import insert_casts

        insert_casts(module)
    return module


def _is_other(name: str) -> bool:
    return not name.startswith(("stablehlo.", "func.", "vhlo."))
