"""`vhlo-legalize-to-stablehlo`: VHLO ops of the current version to StableHLO (upstream
`VhloLegalizeToStablehlo.cpp`), in place.

Per op: the name maps back (`vhlo.add_v1` -> `stablehlo.add`; `vhlo.return_v1` is
`func.return` directly inside a function); the attributes VHLO spells out because it has no
defaults are dropped when they hold the default; attributes VHLO splits up are put back together
(`#stablehlo.conv`, `#stablehlo.gather`, `#stablehlo.dot`, channel handles, ...); integer lists
become `array<i64: ...>`; every other VHLO attribute converts to its builtin or StableHLO
counterpart, and every type to its builtin type. The result is the IR shlo's parser builds from
the same program's text.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attributes import (
    ArrayAttr, BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr,
    EnumAttr, FloatAttr, IntegerAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr, UnitAttr,
)
from ...errors import Diagnostic, ShloError
from ...ir import Module, Operation
from ...types import element_type
from . import attrs as A
from . import types as T
from .text import to_builtin_type
from .ops import STABLEHLO_OP

__all__ = ["vhlo_to_stablehlo", "convert_attr", "LegalizeError", "legalize_parts",
           "place_inherent"]

_I1 = element_type("i1")
_I32 = element_type("i32")
_I64 = element_type("i64")


class LegalizeError(ShloError):
    """A VHLO op or attribute without StableHLO counterpart."""


# --- generic attribute conversion -----------------------------------------------------------

_cache: dict[int, tuple[Any, Any]] = {}


def convert_attr(a: Any) -> Any:
    """The builtin/StableHLO attribute of VHLO attribute ``a`` (`convertGeneric`)."""
    if not isinstance(a, A.VhloAttr):
        return _builtin_container(a)
    hit = _cache.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[1]
    r = _convert(a)
    if len(_cache) > 100_000:
        _cache.clear()
    _cache[id(a)] = (a, r)
    return r


def _builtin_container(a: Any) -> Any:
    t = type(a)
    if t is DictAttr:
        return DictAttr(tuple((k, convert_attr(v)) for k, v in a.items))
    if t is ArrayAttr:
        return ArrayAttr(tuple(convert_attr(v) for v in a.values))
    if t is TypeAttr:
        return TypeAttr(to_builtin_type(a.type))
    return a


_ENUM_NAMES = {
    "comparison_direction_v1": "comparison_direction", "comparison_type_v1": "comparison_type",
    "fft_type_v1": "fft_type", "precision_v1": "precision", "rng_algorithm_v1": "rng_algorithm",
    "rng_distribution_v1": "rng_distribution", "transpose_v1": "transpose",
    "result_accuracy_mode_v1": "result_accuracy_mode",
}


def _convert(a: Any) -> Any:
    t = type(a)
    if t is A.VTensorAttr:
        return a.data
    if t is A.VInteger:
        return IntegerAttr(a.value, to_builtin_type(a.type))
    if t is A.VBool:
        return BoolAttr(a.value)
    if t is A.VString:
        return StringAttr(a.value)
    if t is A.VArray:
        return ArrayAttr(tuple(convert_attr(x) for x in a.values))
    if t is A.VEnum:
        if a.kind == "api_version_v1":
            return IntegerAttr(a.number, _I32)
        return EnumAttr("stablehlo", _ENUM_NAMES[a.kind], a.value)
    if t is A.VTypeAttr:
        return TypeAttr(to_builtin_type(a.value))
    if t is A.VDict:
        items = []
        for k, v in a.items:
            kk = convert_attr(k)
            if not isinstance(kk, StringAttr):
                raise LegalizeError(f"dictionary key {A.attr_text(k)} is not a string")
            items.append((kk.value, convert_attr(v)))
        return DictAttr(tuple(items))
    if t is A.VFloat:
        return FloatAttr(a.value, to_builtin_type(a.type))
    if t is A.VOutputOperandAlias:
        return StructAttr("stablehlo.output_operand_alias", (
            ("output_tuple_indices", a.output_tuple_indices),
            ("operand_index", a.operand_index),
            ("operand_tuple_indices", a.operand_tuple_indices)))
    if t is A.VResultAccuracy:
        from ...syntax.parser import canonical_struct_params

        return StructAttr("stablehlo.result_accuracy", canonical_struct_params(
            "stablehlo.result_accuracy",
            [("atol", T.bits_f64(a.atol_bits)), ("rtol", T.bits_f64(a.rtol_bits)),
             ("ulps", a.ulps), ("mode", convert_attr(a.mode))]))
    if t is A.VTypeExtensions:
        return StructAttr("stablehlo.bounds", (("bounds", a.bounds),))
    if t in (A.VSubAxisInfo, A.VAxisRef, A.VMeshAxis, A.VMesh, A.VReplicaGroupMeshAxes):
        from ...syntax.parser import Parser

        return Parser(_mesh_text(a)).parse_attribute()
    raise LegalizeError(f"attribute {A.attr_text(a)} has no StableHLO counterpart")


def _mesh_text(a: Any) -> str:
    """The StableHLO text of a mesh / axis attribute (read back with shlo's parser)."""
    from ...syntax.lexer import escape_string
    from ...syntax.printer import format_attr

    t = type(a)
    if t is A.VSubAxisInfo:
        return f"({a.pre_size}){a.size}"
    if t is A.VAxisRef:
        s = f"#stablehlo.axis_ref<name = {escape_string(a.name.value)}"
        if a.sub_axis_info is not None:
            s += f", sub_axis_info = {_mesh_text(a.sub_axis_info)}"
        return s + ">"
    if t is A.VMeshAxis:
        return f"#stablehlo.mesh_axis<name = {escape_string(a.name.value)}, size = {a.size}>"
    if t is A.VMesh:
        s = "#stablehlo.mesh<axes = [" + ", ".join(_mesh_text(x) for x in a.axes.values) + "]"
        if a.device_ids is not None:
            s += f", device_ids = {format_attr(convert_attr(a.device_ids))}"
        return s + ">"
    mesh = a.mesh
    m = "@" + mesh.value if isinstance(mesh, A.VString) else _mesh_text(mesh)
    return (f"#stablehlo.replica_group_mesh_axes<mesh = {m}, axes = [" +
            ", ".join(_mesh_text(x) for x in a.axes.values) + "]>")


# --- helpers ----------------------------------------------------------------------------------


def _ints(a: Any) -> tuple[int, ...]:
    if isinstance(a, A.VTensorAttr):
        return tuple(int(x) for x in np.asarray(a.data.array).reshape(-1))
    raise LegalizeError(f"expected an integer tensor, found {A.attr_text(a)}")


def _int(a: Any) -> int:
    if isinstance(a, A.VInteger):
        return a.value
    raise LegalizeError(f"expected an integer, found {A.attr_text(a)}")


def _i64_array(a: Any) -> DenseArrayAttr:
    return DenseArrayAttr(_I64, _ints(a))


def _bool_array(a: Any) -> DenseArrayAttr:
    if isinstance(a, A.VTensorAttr):
        return DenseArrayAttr(_I1, tuple(bool(x) for x in np.asarray(a.data.array).reshape(-1)))
    raise LegalizeError(f"expected a boolean tensor, found {A.attr_text(a)}")


def _symbol(a: Any) -> SymbolRefAttr:
    if isinstance(a, A.VString):
        return SymbolRefAttr(a.value)
    raise LegalizeError(f"expected a symbol name, found {A.attr_text(a)}")


def _is_splat_of(a: Any, value: Any) -> bool:
    if not isinstance(a, A.VTensorAttr):
        return False
    arr = np.asarray(a.data.array).reshape(-1)
    return arr.size > 0 and bool((arr == value).all()) if arr.size else False


def _is(a: Any, cls: type, value: Any) -> bool:
    return type(a) is cls and a.value == value


_DEFAULT_ACCURACY = A.VResultAccuracy(0, 0, 0, A.VEnum("result_accuracy_mode_v1", "DEFAULT"))
_PREC_DEFAULT = A.VEnum("precision_v1", "DEFAULT")
_NOTYPE = A.VEnum("comparison_type_v1", "NOTYPE")
_ORIGINAL = A.VEnum("api_version_v1", "API_VERSION_ORIGINAL")
_EMPTY_ARRAY = A.VArray(())
_EMPTY_DICT = A.VDict(())
_EMPTY_STRING = A.VString("")


def _empty_tensor(a: Any) -> bool:
    return isinstance(a, A.VTensorAttr) and len(a.raw()) == 0


def _splat_array(a: Any, x: Any) -> bool:
    return type(a) is A.VArray and all(v == x for v in a.values)


# Per op: attribute -> predicate "holds the default" (removeDefaults).
_DEFAULTS: dict[str, dict[str, Any]] = {
    "func_v1": {"sym_visibility": lambda a: a == _EMPTY_STRING,
                "arg_attrs": lambda a: a == _EMPTY_ARRAY, "res_attrs": lambda a: a == _EMPTY_ARRAY},
    "cholesky_v1": {"lower": lambda a: _is(a, A.VBool, False)},
    "compare_v1": {"compare_type": lambda a: a == _NOTYPE},
    "composite_v2": {"version": lambda a: _is(a, A.VInteger, 0),
                     "composite_attributes": lambda a: a == _EMPTY_DICT},
    "custom_call_v2": {"has_side_effect": lambda a: _is(a, A.VBool, False),
                       "backend_config": lambda a: a == _EMPTY_STRING or a == _EMPTY_DICT,
                       "api_version": lambda a: a == _ORIGINAL,
                       "called_computations": lambda a: a == _EMPTY_ARRAY,
                       "output_operand_aliases": lambda a: a == _EMPTY_ARRAY,
                       "result_tilings": lambda a: a == _EMPTY_ARRAY},
    "dot_general_v2": {"precision_config": lambda a: _splat_array(a, _PREC_DEFAULT)},
    "dot_v1": {"precision_config": lambda a: _splat_array(a, _PREC_DEFAULT)},
    "dynamic_broadcast_in_dim_v1": {"known_expanding_dimensions": _empty_tensor,
                                    "known_nonexpanding_dimensions": _empty_tensor},
    "dynamic_gather_v2": {"indices_are_sorted": lambda a: _is(a, A.VBool, False)},
    "gather_v2": {"indices_are_sorted": lambda a: _is(a, A.VBool, False)},
    "infeed_v1": {"infeed_config": lambda a: a == _EMPTY_STRING,
                  "layout": lambda a: a == _EMPTY_ARRAY},
    "outfeed_v1": {"outfeed_config": lambda a: a == _EMPTY_STRING},
    "recv_v2": {"is_host_transfer": lambda a: _is(a, A.VBool, False),
                "source_target_pairs": _empty_tensor},
    "send_v2": {"is_host_transfer": lambda a: _is(a, A.VBool, False),
                "source_target_pairs": _empty_tensor},
    "reduce_window_v1": {"window_strides": lambda a: _is_splat_of(a, 1),
                         "base_dilations": lambda a: _is_splat_of(a, 1),
                         "window_dilations": lambda a: _is_splat_of(a, 1),
                         "padding": lambda a: _is_splat_of(a, 0)},
    "scatter_v2": {"indices_are_sorted": lambda a: _is(a, A.VBool, False),
                   "unique_indices": lambda a: _is(a, A.VBool, False)},
    "select_and_scatter_v1": {"window_strides": lambda a: _is_splat_of(a, 1),
                              "padding": lambda a: _is_splat_of(a, 0)},
    "sort_v1": {"dimension": lambda a: _is(a, A.VInteger, -1),
                "is_stable": lambda a: _is(a, A.VBool, False)},
}
for _n in ("all_gather_v2", "all_reduce_v2", "reduce_scatter_v1"):
    _DEFAULTS[_n] = {"channel_id": lambda a: _is(a, A.VInteger, 0),
                     "use_global_device_ids": lambda a: _is(a, A.VBool, False)}
for _n in ("all_to_all_v2", "collective_permute_v1", "collective_broadcast_v1"):
    _DEFAULTS[_n] = {"channel_id": lambda a: _is(a, A.VInteger, 0)}
_DEFAULTS["collective_broadcast_v2"] = {"channel_id": lambda a: _is(a, A.VInteger, 0),
                                        "has_dynamic_root": lambda a: _is(a, A.VBool, False)}
_DEFAULTS["collective_reduce_v1"] = {"channel_id": lambda a: _is(a, A.VInteger, 0),
                                     "use_global_device_ids": lambda a: _is(a, A.VBool, False),
                                     "has_dynamic_root": lambda a: _is(a, A.VBool, False)}
for _n in ("convolution_v1", "dynamic_conv_v2"):
    _DEFAULTS[_n] = {"window_strides": lambda a: _is_splat_of(a, 1),
                     "lhs_dilation": lambda a: _is_splat_of(a, 1),
                     "rhs_dilation": lambda a: _is_splat_of(a, 1),
                     "window_reversal": lambda a: _is_splat_of(a, False),
                     "precision_config": lambda a: _splat_array(a, _PREC_DEFAULT)}
_DEFAULTS["convolution_v1"]["padding"] = lambda a: _is_splat_of(a, 0)
for _n in ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
           "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh"):
    _DEFAULTS[_n + "_v2"] = {"result_accuracy": lambda a: a == _DEFAULT_ACCURACY}

# Per op: attributes that become `array<i64: ...>` (or `array<i1: ...>`).
_I64_ARRAYS: dict[str, tuple[str, ...]] = {
    "fft_v1": ("fft_length",), "broadcast_v1": ("broadcast_sizes",),
    "dynamic_slice_v1": ("slice_sizes",), "reverse_v1": ("dimensions",),
    "transpose_v1": ("permutation",),
    "pad_v1": ("edge_padding_low", "edge_padding_high", "interior_padding"),
    "slice_v1": ("start_indices", "limit_indices", "strides"),
    "broadcast_in_dim_v1": ("broadcast_dimensions",),
    "dynamic_broadcast_in_dim_v1": ("broadcast_dimensions", "known_expanding_dimensions",
                                    "known_nonexpanding_dimensions"),
    "select_and_scatter_v1": ("window_dimensions", "window_strides"),
    "reduce_window_v1": ("window_dimensions", "window_strides", "base_dilations",
                         "window_dilations"),
    "map_v1": ("dimensions",), "reduce_v1": ("dimensions",), "gather_v2": ("slice_sizes",),
    "convolution_v1": ("lhs_dilation", "rhs_dilation", "window_strides"),
    "dynamic_conv_v2": ("lhs_dilation", "rhs_dilation", "window_strides"),
}
_CHANNEL_ID_OPS = {"all_gather_v2", "all_reduce_v2", "all_to_all_v2", "collective_permute_v1",
                   "reduce_scatter_v1", "collective_broadcast_v2", "collective_reduce_v1"}
_UNIT_FLAGS = {"use_global_device_ids", "has_dynamic_root"}
_CONV_DIMS = ("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
              "kernel_input_feature_dimension", "kernel_output_feature_dimension",
              "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
              "output_spatial_dimensions")
_GATHER_DIMS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                "start_indices_batching_dims", "start_index_map", "index_vector_dim")
_SCATTER_DIMS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                 "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
                 "index_vector_dim")
_DOT_DIMS = ("lhs_batching_dimensions", "rhs_batching_dimensions",
             "lhs_contracting_dimensions", "rhs_contracting_dimensions")
_DOT_ALGORITHM = ("lhs_precision_type", "rhs_precision_type", "accumulation_type",
                  "lhs_component_count", "rhs_component_count", "num_primitive_operations",
                  "allow_imprecise_accumulation")


def _dims_struct(name: str, keys: tuple[str, ...], props: dict[str, Any]) -> StructAttr:
    from ...syntax.parser import canonical_struct_params

    params = []
    for k in keys:
        a = props.pop(k)
        params.append((k, _int(a) if k == "index_vector_dim" else _ints(a)))
    return StructAttr(name, canonical_struct_params(name, params))


def _implode(base: str, props: dict[str, Any], out: dict[str, Any]) -> None:
    """Put the attributes VHLO splits up back together (`implodeSpecial`)."""
    if base in ("convolution_v1", "dynamic_conv_v2"):
        vals = {k: props.pop(k) for k in _CONV_DIMS}
        out["dimension_numbers"] = ConvDimensionNumbers(**{
            k: (_ints(v) if k.endswith("dimensions") else _int(v)) for k, v in vals.items()})
    elif base == "dot_general_v2":
        out["dot_dimension_numbers"] = _dims_struct("stablehlo.dot", _DOT_DIMS, props)
        alg = [props.pop(k) for k in _DOT_ALGORITHM]
        none = A.VTypeAttr(T.NONE)
        if any(a != none for a in alg):
            if any(a == none for a in alg):
                raise LegalizeError("dot_general: a partial dot algorithm (some fields none)")
            out["algorithm"] = StructAttr("stablehlo.dot_algorithm", (
                ("lhs_precision_type", convert_attr(alg[0])),
                ("rhs_precision_type", convert_attr(alg[1])),
                ("accumulation_type", convert_attr(alg[2])),
                ("lhs_component_count", _int(alg[3])), ("rhs_component_count", _int(alg[4])),
                ("num_primitive_operations", _int(alg[5])),
                ("allow_imprecise_accumulation", bool(alg[6].value))))
    elif base in ("gather_v2", "dynamic_gather_v2"):
        out["dimension_numbers"] = _dims_struct("stablehlo.gather", _GATHER_DIMS, props)
    elif base == "scatter_v2":
        out["scatter_dimension_numbers"] = _dims_struct("stablehlo.scatter", _SCATTER_DIMS,
                                                        props)
    elif base in ("send_v2", "recv_v2"):
        out["channel_handle"] = StructAttr("stablehlo.channel_handle", (
            ("handle", _int(props.pop("channel_id"))), ("type", _int(props.pop("channel_type")))))


def _convert_props(base: str, props: dict[str, Any]) -> dict[str, Any]:
    props = dict(props)
    defaults = _DEFAULTS.get(base)
    if defaults:
        for k, pred in defaults.items():
            if k in props and pred(props[k]):
                del props[k]
        if base == "custom_call_v2" and props.get("operand_layouts") == _EMPTY_ARRAY and \
                props.get("result_layouts") == _EMPTY_ARRAY:
            del props["operand_layouts"]
            del props["result_layouts"]
    out: dict[str, Any] = {}
    _implode(base, props, out)
    arrays = _I64_ARRAYS.get(base, ())
    for k, a in props.items():
        if base in _CHANNEL_ID_OPS and k == "channel_id":
            out["channel_handle"] = StructAttr("stablehlo.channel_handle",
                                               (("handle", _int(a)), ("type", 0)))
        elif base in _CHANNEL_ID_OPS and k in _UNIT_FLAGS:
            if not isinstance(a, A.VBool):
                raise LegalizeError(f"{k} is not a boolean")
            if a.value:
                out[k] = UnitAttr()
        elif k in arrays:
            out[k] = _i64_array(a)
        elif k == "window_reversal" and base in ("convolution_v1", "dynamic_conv_v2"):
            out[k] = _bool_array(a)
        elif (k == "called_computations" and base == "custom_call_v2"):
            if not isinstance(a, A.VArray):
                raise LegalizeError("called_computations is not an array")
            out[k] = ArrayAttr(tuple(_symbol(x) for x in a.values))
        elif (k == "decomposition" and base == "composite_v2") or \
                (k == "callee" and base == "call_v1"):
            out[k] = _symbol(a)
        else:
            out[k] = convert_attr(a)
    return out


# --- the pass -----------------------------------------------------------------------------------


def _retype(op: Operation) -> None:
    for v in op.results:
        v.type = to_builtin_type(v.type)
    for r in op.regions:
        for b in r.blocks:
            for v in b.arguments:
                v.type = to_builtin_type(v.type)


def vhlo_to_stablehlo(module: Module) -> Module:
    """Convert the (current-version) VHLO ops of ``module`` to StableHLO, in place."""
    casts = False
    memo: dict[tuple[Any, ...], tuple[dict[str, Any], dict[str, Any]]] = {}
    for op in module.op.walk():
        if op.name == "builtin.unrealized_conversion_cast":
            casts = True
        name = op.name
        if not name.startswith("vhlo."):
            _retype(op)
            if op.attributes:
                op.attributes = {k: convert_attr(v) for k, v in op.attributes.items()}
            continue
        target = STABLEHLO_OP.get(name)
        if target is None:
            d = Diagnostic(f"failed to legalize operation '{name}' that was explicitly marked "
                           "illegal", op.location)
            d.notes.append(Diagnostic(f"{name} is not an op of the current VHLO version "
                                      "(upgrade it with vhlo-to-version first)", op.location,
                                      "note"))
            raise LegalizeError(d.message, diagnostics=[d], filename=module.filename)
        base = name[5:]
        try:
            if op.properties:
                # attribute objects are shared (one per attribute-table entry), so ops with the
                # same properties convert once; the key keeps the originals alive
                key = (base, tuple((k, id(v)) for k, v in op.properties.items()))
                hit = memo.get(key)
                if hit is None:
                    hit = memo[key] = (_convert_props(base, op.properties), op.properties)
                op.properties = dict(hit[0])
            if op.attributes:
                op.attributes = {k: convert_attr(v) for k, v in op.attributes.items()}
            _retype(op)
        except (LegalizeError, T.TypeConversionError, ValueError) as e:
            d = Diagnostic(f"failed to legalize operation '{name}': {e}", op.location)
            raise LegalizeError(d.message, diagnostics=[d], filename=module.filename) from None
        except (KeyError, TypeError, AttributeError, IndexError) as e:
            # an attribute of the wrong kind (only a corrupt input gets past the VHLO checks)
            d = Diagnostic(f"failed to legalize operation '{name}': malformed attribute "
                           f"({type(e).__name__}: {e})", op.location)
            raise LegalizeError(d.message, diagnostics=[d], filename=module.filename) from None
        if base == "return_v1" and op.parent is not None and op.parent.parent is not None and \
                op.parent.parent.parent is not None and \
                op.parent.parent.parent.name in ("vhlo.func_v1", "func.func"):
            op.name = "func.return"
        else:
            op.name = target
            if op.properties:
                op.properties, op.attributes = place_inherent(target, op.properties,
                                                              op.attributes)
    if casts:
        from .mixed import remove_casts

        remove_casts(module)
    return module


def place_inherent(target: str, props: dict[str, Any],
                   attributes: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Where shlo's parser puts the converted attributes of a ``target`` op: inherent ones (as
    its op definition knows them) are properties, the others plain attributes."""
    inherent = _inherent(target)
    if inherent is None or any(k not in inherent for k in props):
        kept = {k: v for k, v in props.items() if inherent is not None and k in inherent}
        rest = {k: v for k, v in props.items() if k not in kept}
        return kept, {**rest, **attributes}
    return props, attributes


def legalize_parts(name: str, props: dict[str, Any], attributes: dict[str, Any],
                   in_func: bool) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The StableHLO name, properties and attributes of a current-version VHLO op ``name``
    with these (VHLO) properties and attributes; ``in_func``: the op lies directly in a
    function's body (`vhlo.return_v1` is then `func.return`). What :func:`vhlo_to_stablehlo`
    does per op, for the bytecode reader (which converts ops as it reads them); raises
    LegalizeError (or a malformed attribute's KeyError, TypeError, ...)."""
    target = STABLEHLO_OP.get(name)
    if target is None:
        raise LegalizeError(f"{name} is not an op of the current VHLO version")
    base = name[5:]
    props = _convert_props(base, props) if props else {}
    attributes = {k: convert_attr(v) for k, v in attributes.items()} if attributes else {}
    if base == "return_v1" and in_func:
        return "func.return", props, attributes
    if props:
        props, attributes = place_inherent(target, props, attributes)
    return target, props, attributes


_INHERENT: dict[str, Any] = {}


def _inherent(name: str) -> Any:
    if name not in _INHERENT:
        from ...registry import lookup

        d = lookup(name)
        _INHERENT[name] = d.inherent if d is not None else None
    return _INHERENT[name]


_ = (DenseElementsAttr,)
