"""Transitional: the pretty forms of the ops not yet declared beside their ops (issue 10).

Each entry moves into the ``define(..., syntax=...)`` of its op; the engine is in
:mod:`shlo.syntax.directives`.

Most ops are described declaratively (:data:`FORMATS`) by a list of directives mirroring the
upstream `assemblyFormat` strings of `StablehloOps.td`, `ChloOps.td` and `CheckOps.td`:

* ``("operand",)`` one SSA operand; ``("operands",)`` a comma separated (possibly empty) list;
  ``("operands_comma",)`` operands each followed by `,` (upstream `VariadicOperandWithAttribute`);
* ``("kw", "dim")`` a keyword, ``("p", ",")`` punctuation;
* ``("attr", name, kind)`` an inherent attribute printed by a custom directive (`kind` names the
  spelling: `i64` bare integer, `i64list` `[1, 2]` as `array<i64>`, `enum:comparison_direction`
  bare enum case, `str`, `bool`, `symbol` ...);
* ``("opt", anchor, directives)`` an optional group, printed when attribute ``anchor`` is set;
* ``("attrdict",)`` the remaining attributes `{...}`;
* ``("types", kind)`` the type signature after `:` (`same` = SameOperandsAndResultType,
  `functional` = `(operands) -> results`, `results`, `select`, `tuple`, `pairwise`, `complex`,
  `variadic_same`, `return`, `chlo_unary`, `chlo_binary`, `operand_types`).

Ops with irregular syntax (constant, while, reduce, convolution, dot_general, composite,
func.func, module, ...) have a hand-written parse and print function pair.

Pretty-parsed attributes that are inherent to the op (listed in :data:`INHERENT`, or, for ops
shlo does not know, any name without a `.`) go to ``Operation.properties``, the others to
``Operation.attributes``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..attributes import (
    ArrayAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr,
    EnumAttr, FloatAttr, IntegerAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
    canonical_struct_params, format_conv_dims,
)
from ..ir import Block, Operation, Region, Value
from ..registry import COMMUTATIVE, names_with
from ..types import FunctionType, TensorType, Type, _ELEMENT_TYPES
from .directives import (
    ATTRDICT, COMMA, FAST_CONSTANT, I1, I32, I64, OPERAND, OPERANDS, OPERANDS_COMMA, Format, ParseFn, PrintFn, attr, check_attr_kind, make_declarative, named, opt, p_,
    parse_attrdict, parse_attrdict_kw, parse_int_list, print_types, types, types_functional, types_pairwise, types_same,
)
from .lexer import AT, BARE, INTEGER, PUNCT, VALUE

if TYPE_CHECKING:  # pragma: no cover
    from .parser import Parser
    from .printer import Printer

__all__ = ["PRETTY_PARSERS", "PRETTY_PRINTERS", "FORMATS", "INHERENT", "syntax_of"]

PRETTY_PARSERS: dict[str, ParseFn] = {}
PRETTY_PRINTERS: dict[str, PrintFn] = {}

# Inherent attributes of the ops shlo knows (from the upstream op definitions).
INHERENT: dict[str, frozenset[str]] = {}


def _inherent(names: str, attrs: str = "") -> None:
    s = frozenset(attrs.split())
    for n in names.split():
        INHERENT[n] = s


FORMATS: dict[str, list[tuple]] = {}

_UNARY = ("abs cbrt ceil convert count_leading_zeros cosine exponential exponential_minus_one "
          "floor imag log log_plus_one logistic not negate popcnt real round_nearest_afz "
          "round_nearest_even rsqrt sign sine sqrt tan tanh uniform_quantize uniform_dequantize")
_BINARY = ("add atan2 divide maximum minimum multiply power remainder shift_left "
           "shift_right_arithmetic shift_right_logical subtract and or xor")
for _n in _UNARY.split():
    FORMATS[f"stablehlo.{_n}"] = [OPERAND, ATTRDICT, types("same")]
    INHERENT[f"stablehlo.{_n}"] = frozenset()
for _n in _BINARY.split():
    FORMATS[f"stablehlo.{_n}"] = [OPERAND, COMMA, OPERAND, ATTRDICT, types("same")]
    INHERENT[f"stablehlo.{_n}"] = frozenset()

_FUNCTIONAL_ONLY = ("is_finite bitcast_convert reshape dynamic_reshape dynamic_update_slice "
                    "real_dynamic_slice dynamic_pad compute_reshape_shape cstr_reshapable")
for _n in _FUNCTIONAL_ONLY.split():
    FORMATS[f"stablehlo.{_n}"] = [OPERANDS, ATTRDICT, types("functional")]
    INHERENT[f"stablehlo.{_n}"] = frozenset()

FORMATS.update({
    "stablehlo.complex": [OPERANDS, ATTRDICT, types("complex")],
    "stablehlo.iota": [*named("dim", "iota_dimension", "i64"), ATTRDICT, types("results")],
    "stablehlo.dynamic_iota": [OPERAND, COMMA, *named("dim", "iota_dimension", "i64"), ATTRDICT,
                               types("functional")],
    "stablehlo.create_token": [ATTRDICT, types("results")],
    "stablehlo.replica_id": [ATTRDICT, types("results")],
    "stablehlo.partition_id": [ATTRDICT, types("results")],
    "stablehlo.after_all": [OPERANDS, ATTRDICT, types("variadic_same")],
    "stablehlo.get_tuple_element": [OPERAND, p_("["), attr("index", "i32"), p_("]"), ATTRDICT,
                                    types("functional")],
    "stablehlo.tuple": [OPERANDS, ATTRDICT, types("tuple")],
    "stablehlo.compare": [attr("comparison_direction", "enum:comparison_direction"), COMMA,
                          OPERAND, COMMA, OPERAND,
                          opt("compare_type", COMMA, attr("compare_type", "enum:comparison_type")),
                          ATTRDICT, types("functional")],
    "stablehlo.dynamic_slice": [OPERAND, COMMA, OPERANDS_COMMA,
                                *named("sizes", "slice_sizes", "i64list"), ATTRDICT,
                                types("functional")],
    "stablehlo.broadcast": [OPERAND, COMMA, *named("sizes", "broadcast_sizes", "i64list"),
                            ATTRDICT, types("functional")],
    "stablehlo.broadcast_in_dim": [OPERAND, COMMA,
                                   *named("dims", "broadcast_dimensions", "i64list"), ATTRDICT,
                                   types("functional")],
    "stablehlo.dynamic_broadcast_in_dim": [OPERAND, COMMA, OPERAND, COMMA,
                                           *named("dims", "broadcast_dimensions", "i64list"),
                                           ATTRDICT, types("functional")],
    "stablehlo.cholesky": [OPERAND, opt("lower", COMMA, *named("lower", "lower", "bool")),
                           ATTRDICT, types("same")],
    "stablehlo.clamp": [OPERAND, COMMA, OPERAND, COMMA, OPERAND, ATTRDICT, types("same")],
    "stablehlo.concatenate": [OPERANDS_COMMA, *named("dim", "dimension", "i64"), ATTRDICT,
                              types("functional")],
    "stablehlo.custom_call": [attr("call_target_name", "symbol"), p_("("), OPERANDS, p_(")"),
                              ATTRDICT, types("functional")],
    "stablehlo.einsum": [OPERAND, COMMA, OPERAND, COMMA, *named("config", "einsum_config", "str"),
                         ATTRDICT, types("functional")],
    "stablehlo.unary_einsum": [OPERAND, COMMA, *named("config", "einsum_config", "str"),
                               ATTRDICT, types("functional")],
    "stablehlo.fft": [OPERAND, COMMA, *named("type", "fft_type", "enum:fft_type"), COMMA,
                      *named("length", "fft_length", "i64list"), ATTRDICT, types("functional")],
    "stablehlo.get_dimension_size": [OPERAND, COMMA, *named("dim", "dimension", "i64"), ATTRDICT,
                                     types("functional")],
    "stablehlo.set_dimension_size": [OPERAND, COMMA, OPERAND, COMMA,
                                     *named("dim", "dimension", "i64"), ATTRDICT,
                                     types("functional")],
    "stablehlo.select": [OPERANDS, ATTRDICT, types("select")],
    "stablehlo.reverse": [OPERAND, COMMA, *named("dims", "dimensions", "i64list"), ATTRDICT,
                          types("same")],
    "stablehlo.pad": [OPERAND, COMMA, OPERAND, COMMA,
                      *named("low", "edge_padding_low", "i64list"), COMMA,
                      *named("high", "edge_padding_high", "i64list"), COMMA,
                      *named("interior", "interior_padding", "i64list"), ATTRDICT,
                      types("functional")],
    "stablehlo.trace": [OPERAND, COMMA, attr("tag", "str"), ATTRDICT, types("operand_types")],
    "stablehlo.transpose": [OPERAND, COMMA, *named("dims", "permutation", "i64list"), ATTRDICT,
                            types("functional")],
    "stablehlo.rng": [OPERAND, COMMA, OPERAND, COMMA, OPERAND, COMMA,
                      *named("distribution", "rng_distribution", "enum:rng_distribution"),
                      ATTRDICT, types("functional")],
    "stablehlo.rng_bit_generator": [OPERAND, COMMA,
                                    *named("algorithm", "rng_algorithm", "enum:rng_algorithm"),
                                    ATTRDICT, types("functional")],
    "stablehlo.return": [OPERANDS, ATTRDICT, types("return")],
    # chlo
    "chlo.broadcast_compare": [OPERAND, COMMA, OPERAND, ATTRDICT, types("functional")],
    "chlo.top_k": [p_("("), OPERAND, COMMA, *named("k", "k", "i64"), p_(")"), ATTRDICT,
                   types("chlo_unary")],
    # check / interpreter
    "check.expect_eq_const": [OPERAND, COMMA, attr("value", "dense"), ATTRDICT],
    "check.expect_almost_eq_const": [OPERAND, COMMA, attr("value", "dense"),
                                     opt("tolerance", COMMA, *named("tolerance", "tolerance",
                                                                    "f64")), ATTRDICT],
    "check.expect_eq": [OPERAND, COMMA, OPERAND, ATTRDICT, types("operand_types_same")],
    "check.expect_almost_eq": [OPERAND, COMMA, OPERAND,
                               opt("tolerance", COMMA, *named("tolerance", "tolerance", "f64")),
                               ATTRDICT, types("operand_types_same")],
    "check.expect_close": [OPERAND, COMMA, OPERAND, COMMA,
                           *named("max_ulp_difference", "max_ulp_difference", "ui64"),
                           opt("min_ulp_difference", COMMA,
                               *named("min_ulp_difference", "min_ulp_difference", "ui64")),
                           ATTRDICT, types("operand_types")],
    "check.expect_serialized_eq": [OPERAND, COMMA, *named("probe_id", "probe_id", "str"),
                                   opt("iter", COMMA, *named("iter", "iter", "ui64")),
                                   ATTRDICT, types("operand_types")],
    "interpreter.probe": [OPERAND, COMMA, *named("probe_id", "probe_id", "str"), ATTRDICT,
                          types("same")],
    "interpreter.print": [OPERAND, ATTRDICT, types("operand_types")],
})

_CHLO_UNARY = ("acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc "
               "is_inf is_neg_inf is_pos_inf lgamma sinh square tan")
for _n in _CHLO_UNARY.split():
    FORMATS[f"chlo.{_n}"] = [OPERAND, ATTRDICT, types("chlo_unary")]
    INHERENT[f"chlo.{_n}"] = frozenset()
for _n in ("next_after", "polygamma", "zeta", "mulhi"):
    FORMATS[f"chlo.{_n}"] = [OPERAND, COMMA, OPERAND, ATTRDICT, types("chlo_binary")]
    INHERENT[f"chlo.{_n}"] = frozenset()
_CHLO_BROADCAST = ("add and atan2 complex divide maximum minimum multiply next_after or polygamma "
                   "power remainder shift_left shift_right_arithmetic shift_right_logical "
                   "subtract xor zeta select")
for _n in _CHLO_BROADCAST.split():
    FORMATS[f"chlo.broadcast_{_n}"] = [OPERANDS, ATTRDICT, types("functional")]
    INHERENT[f"chlo.broadcast_{_n}"] = frozenset({"broadcast_dimensions"})

_inherent("stablehlo.complex stablehlo.create_token stablehlo.replica_id stablehlo.partition_id "
          "stablehlo.after_all stablehlo.tuple stablehlo.clamp stablehlo.select "
          "stablehlo.return stablehlo.optimization_barrier stablehlo.while")
_inherent("stablehlo.iota stablehlo.dynamic_iota", "iota_dimension")
_inherent("stablehlo.get_tuple_element", "index")
_inherent("stablehlo.compare", "comparison_direction compare_type")
_inherent("stablehlo.slice", "start_indices limit_indices strides")
_inherent("stablehlo.dynamic_slice", "slice_sizes")
_inherent("stablehlo.broadcast", "broadcast_sizes")
_inherent("stablehlo.broadcast_in_dim", "broadcast_dimensions")
_inherent("stablehlo.dynamic_broadcast_in_dim",
          "broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions")
_inherent("stablehlo.cholesky", "lower")
_inherent("stablehlo.concatenate stablehlo.get_dimension_size stablehlo.set_dimension_size",
          "dimension")
_inherent("stablehlo.custom_call", "call_target_name has_side_effect backend_config api_version "
          "called_computations operand_layouts result_layouts output_operand_aliases")
_inherent("stablehlo.einsum stablehlo.unary_einsum", "einsum_config")
_inherent("stablehlo.fft", "fft_type fft_length")
_inherent("stablehlo.reverse", "dimensions")
_inherent("stablehlo.pad", "edge_padding_low edge_padding_high interior_padding")
_inherent("stablehlo.trace", "tag")
_inherent("stablehlo.transpose", "permutation")
_inherent("stablehlo.rng", "rng_distribution")
_inherent("stablehlo.rng_bit_generator", "rng_algorithm")
_inherent("stablehlo.reduce_precision", "exponent_bits mantissa_bits")
_inherent("stablehlo.reduce", "dimensions")
_inherent("stablehlo.constant", "value")
_inherent("stablehlo.dot", "precision_config")
_inherent("stablehlo.dot_general", "dot_dimension_numbers precision_config algorithm")
_inherent("stablehlo.convolution", "window_strides padding lhs_dilation rhs_dilation "
          "window_reversal dimension_numbers feature_group_count batch_group_count "
          "precision_config")
_inherent("stablehlo.composite", "name composite_attributes decomposition version")
_inherent("chlo.broadcast_compare", "broadcast_dimensions comparison_direction compare_type")
_inherent("chlo.top_k", "k")
_inherent("chlo.constant_like", "value")
_inherent("chlo.scan", "dimension is_reverse is_associative operandSegmentSizes "
          "resultSegmentSizes")
_inherent("interpreter.run_parallel", "programs infeed")
_inherent("check.expect_eq_const", "value")
_inherent("check.expect_almost_eq_const", "value tolerance")
_inherent("check.expect_eq")
_inherent("check.expect_almost_eq", "tolerance")
_inherent("check.expect_close", "min_ulp_difference max_ulp_difference")
_inherent("check.expect_serialized_eq", "probe_id iter")
_inherent("interpreter.probe", "probe_id")
_inherent("interpreter.print")
_inherent("stablehlo.all_gather", "all_gather_dim replica_groups channel_handle "
          "use_global_device_ids")
_inherent("stablehlo.all_reduce", "replica_groups channel_handle use_global_device_ids")
_inherent("stablehlo.reduce_scatter", "scatter_dimension replica_groups channel_handle "
          "use_global_device_ids")
_inherent("stablehlo.all_to_all", "split_dimension concat_dimension split_count replica_groups "
          "channel_handle")
_inherent("stablehlo.collective_broadcast", "replica_groups channel_handle")
_inherent("stablehlo.collective_permute", "source_target_pairs channel_handle")
_inherent("stablehlo.batch_norm_grad stablehlo.batch_norm_inference "
          "stablehlo.batch_norm_training", "epsilon feature_index")
_inherent("stablehlo.triangular_solve", "left_side lower unit_diagonal transpose_a")
_inherent("stablehlo.gather", "dimension_numbers slice_sizes indices_are_sorted")
_inherent("stablehlo.dynamic_gather", "dimension_numbers indices_are_sorted")
_inherent("stablehlo.scatter", "scatter_dimension_numbers indices_are_sorted unique_indices")
_inherent("stablehlo.select_and_scatter", "window_dimensions window_strides padding")
_inherent("stablehlo.reduce_window", "window_dimensions window_strides base_dilations "
          "window_dilations padding")
_inherent("stablehlo.sort", "dimension is_stable")
_inherent("stablehlo.map", "dimensions")
_inherent("stablehlo.infeed", "infeed_config layout")
_inherent("stablehlo.outfeed", "outfeed_config")
_inherent("stablehlo.send", "channel_handle is_host_transfer source_target_pairs")
_inherent("stablehlo.recv", "channel_handle is_host_transfer source_target_pairs")
_inherent("stablehlo.dynamic_conv", "window_strides padding lhs_dilation rhs_dilation "
          "window_reversal dimension_numbers feature_group_count batch_group_count "
          "precision_config")
_inherent("stablehlo.cross-replica-sum", "replica_groups")
_inherent("stablehlo.torch_index_select", "dim batch_dims")
_inherent("stablehlo.if stablehlo.case stablehlo.uniform_quantize stablehlo.uniform_dequantize")
_inherent("chlo.ragged_dot", "ragged_dot_dimension_numbers precision_config")
_inherent("func.func", "sym_name function_type sym_visibility arg_attrs res_attrs no_inline")
_inherent("func.call", "callee arg_attrs res_attrs no_inline")
_inherent("func.return")
_inherent("builtin.module", "sym_name sym_visibility")

for _name, _dirs in FORMATS.items():
    _pf, _prf = make_declarative(_dirs)
    PRETTY_PARSERS[_name] = _pf
    PRETTY_PRINTERS[_name] = _prf
    if not _name.startswith("tosa."):
        INHERENT.setdefault(_name, frozenset(d[1] for d in _dirs if d[0] == "attr"))


def register(name: str, parse_fn: ParseFn, print_fn: PrintFn | None) -> None:
    PRETTY_PARSERS[name] = parse_fn
    if print_fn is not None:
        PRETTY_PRINTERS[name] = print_fn


def syntax_of(name: str) -> Format | None:
    """The pretty form of op ``name`` in the tables of this module (transitional): declarative
    ones keep their directives, and the constant's hand-written pair names its fast-path shape
    (both read by :mod:`shlo.syntax.fastpath`)."""
    pf = PRETTY_PARSERS.get(name)
    if pf is None:
        return None
    dirs = FORMATS.get(name)
    return Format(pf, PRETTY_PRINTERS.get(name), frozenset(),
                  directives=tuple(dirs) if dirs is not None else None,
                  fast=FAST_CONSTANT if pf is _parse_constant else None)


# =================================================================================================
# Hand-written forms
# =================================================================================================

# --- stablehlo.constant -------------------------------------------------------------------------


def _parse_constant(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.v == "(" and p.k == PUNCT:  # `stablehlo.constant() <{value = ...}> : () -> type`
        p._advance()
        p.expect(")")
        if p.v == "<" and p.k == PUNCT:
            p._advance()
            props.update(p.dict_items())
            p.expect(">")
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType) or ft.inputs or len(ft.results) != 1:
            p.error("expected '() -> type'", off, found=False)
        return Operation(name, [], list(ft.results), props, attrs)
    parse_attrdict(p, name, props, attrs)
    off = p.start
    if p.v != "dense":
        value = p.parse_attribute()
    else:
        value = p.dense_attr()
    if not isinstance(value, DenseElementsAttr):
        t = getattr(value, "type", None)
        if t is None:
            p.error("expected a typed elements attribute", off, found=False)
    else:
        t = value.type
    props["value"] = value
    return Operation(name, [], [t], props, attrs)


def _print_constant(pr: "Printer", op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or op.regions or v is None:
        return None
    rt = op.results[0].type
    if isinstance(v, DenseElementsAttr) and v.type == rt:
        d = pr.attr_dict(op, {"value"})
        return f"{d} {pr.attr(v)}"
    # quantized constants (value type differs from result type) print in the generic-like form
    props = "<{value = " + pr.attr(v) + "}>"
    d = pr.attr_dict(op, {"value"})
    return f"(){' ' + props}{d} : () -> {pr.type(rt)}"


register("stablehlo.constant", _parse_constant, _print_constant)

# --- slice --------------------------------------------------------------------------------------


def _parse_slice(p: "Parser", name: str, nres: int, start: int) -> Operation:
    operand = p.operand()
    p.expect("[")
    st: list[int] = []
    lim: list[int] = []
    strd: list[int] = []
    if p.v != "]":
        while True:
            st.append(p.integer())
            p.expect(":")
            lim.append(p.integer())
            if p.accept(":"):
                strd.append(p.integer())
            else:
                strd.append(1)
            if not p.accept(","):
                break
    p.expect("]")
    props = {"start_indices": DenseArrayAttr(I64, tuple(st)),
             "limit_indices": DenseArrayAttr(I64, tuple(lim)),
             "strides": DenseArrayAttr(I64, tuple(strd))}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [operand])
    return Operation(name, [operand], res, props, attrs)


def _print_slice(pr: "Printer", op: Operation) -> str | None:
    names = ("start_indices", "limit_indices", "strides")
    vals = [op.attr(n) for n in names]
    if any(not check_attr_kind(v, "i64list") for v in vals) or len(op.operands) != 1 \
            or op.regions:
        return None
    s, l_, t = (v.values for v in vals)
    if not len(s) == len(l_) == len(t):
        return None
    parts = [f"{a}:{b}" + (f":{c}" if c != 1 else "") for a, b, c in zip(s, l_, t)]
    d = pr.attr_dict(op, set(names))
    return (f" {pr.val(op.operands[0])} [{', '.join(parts)}]{d} : "
            f"{pr.functional([op.operands[0].type], op.result_types)}")


register("stablehlo.slice", _parse_slice, _print_slice)

# --- reduce_precision ---------------------------------------------------------------------------


def _parse_reduce_precision(p: "Parser", name: str, nres: int, start: int) -> Operation:
    operand = p.operand()
    p.expect(",")
    p.keyword("format")
    p.expect("=")
    off = p.start
    em = p.bare()
    import re

    m = re.fullmatch(r"e([0-9]+)m([0-9]+)", em)
    if not m:
        p.error(f"expected exponent mantissa in format e#m#, saw {em}", off, found=False)
    e_, m_ = int(m.group(1)), int(m.group(2))
    if e_ >= 2 ** 31 or m_ >= 2 ** 31:
        p.error("unable to parse exponent or mantissa", off, found=False)
    props: dict[str, Any] = {"exponent_bits": IntegerAttr(e_, I32),
                             "mantissa_bits": IntegerAttr(m_, I32)}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_same(p, [operand])
    return Operation(name, [operand], res, props, attrs)


def _print_reduce_precision(pr: "Printer", op: Operation) -> str | None:
    e_, m_ = op.attr("exponent_bits"), op.attr("mantissa_bits")
    if not (check_attr_kind(e_, "i32") and check_attr_kind(m_, "i32")) \
            or len(op.operands) != 1 or op.regions:
        return None
    d = pr.attr_dict(op, {"exponent_bits", "mantissa_bits"})
    return (f" {pr.val(op.operands[0])}, format = e{e_.value}m{m_.value}{d} : "
            f"{print_types(pr, op, 'same')}")


register("stablehlo.reduce_precision", _parse_reduce_precision, _print_reduce_precision)

# --- dot / dot_general --------------------------------------------------------------------------


def _parse_precision(p: "Parser", name: str) -> ArrayAttr:
    p.expect("[")
    vals: list[Any] = []
    if p.v != "]":
        while True:
            p.check_enum("precision", p.v)
            vals.append(EnumAttr(name.split(".", 1)[0], "precision", p.bare()))
            if not p.accept(","):
                break
    p.expect("]")
    return ArrayAttr(tuple(vals))


def _print_precision(pr: "Printer", a: Any) -> str | None:
    if type(a) is not ArrayAttr or not all(type(x) is EnumAttr and x.enum == "precision"
                                           for x in a.values):
        return None
    return "precision = [" + ", ".join(x.value for x in a.values) + "]"


def _parse_dot(p: "Parser", name: str, nres: int, start: int) -> Operation:
    lhs = p.operand()
    p.expect(",")
    rhs = p.operand()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.accept(","):
        p.keyword("precision")
        p.expect("=")
        props["precision_config"] = _parse_precision(p, name)
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [lhs, rhs])
    return Operation(name, [lhs, rhs], res, props, attrs)


def _print_dot(pr: "Printer", op: Operation) -> str | None:
    if len(op.operands) != 2 or op.regions:
        return None
    s = f" {pr.val(op.operands[0])}, {pr.val(op.operands[1])}"
    pc = op.attr("precision_config")
    if pc is not None:
        t = _print_precision(pr, pc)
        if t is None:
            return None
        s += ", " + t
    d = pr.attr_dict(op, {"precision_config"})
    return f"{s}{d} : {pr.functional(op.operand_types, op.result_types)}"


register("stablehlo.dot", _parse_dot, _print_dot)

_DOT_FIELDS = ("lhs_batching_dimensions", "rhs_batching_dimensions",
               "lhs_contracting_dimensions", "rhs_contracting_dimensions")


def _parse_dot_general(p: "Parser", name: str, nres: int, start: int) -> Operation:
    lhs = p.operand()
    p.expect(",")
    rhs = p.operand()
    p.expect(",")
    params: list[tuple[str, Any]] = []
    lb = rb = ()
    if p.v == "batching_dims":
        p._advance()
        p.expect("=")
        lb = parse_int_list(p)
        p.keyword("x")
        rb = parse_int_list(p)
        p.expect(",")
    p.keyword("contracting_dims")
    p.expect("=")
    lc = parse_int_list(p)
    p.keyword("x")
    rc = parse_int_list(p)
    params += [("lhs_batching_dimensions", lb), ("rhs_batching_dimensions", rb),
               ("lhs_contracting_dimensions", lc), ("rhs_contracting_dimensions", rc)]
    props: dict[str, Any] = {"dot_dimension_numbers": StructAttr(
        "stablehlo.dot", canonical_struct_params("stablehlo.dot", params))}
    attrs: dict[str, Any] = {}
    while p.accept(","):
        if p.v == "precision":
            p._advance()
            p.expect("=")
            props["precision_config"] = _parse_precision(p, name)
        elif p.v == "algorithm":
            p._advance()
            p.expect("=")
            p.expect("<")
            algo = p.struct_params()
            p.expect(">")
            props["algorithm"] = StructAttr("stablehlo.dot_algorithm", tuple(algo))
        else:
            p.error("expected 'precision' or 'algorithm'")
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, [lhs, rhs])
    return Operation(name, [lhs, rhs], res, props, attrs)


def _print_dot_general(pr: "Printer", op: Operation) -> str | None:
    dn = op.attr("dot_dimension_numbers")
    if type(dn) is not StructAttr or dn.name != "stablehlo.dot" or len(op.operands) != 2 \
            or op.regions:
        return None
    if any(k not in _DOT_FIELDS for k, _ in dn.params) or \
            dn.params != canonical_struct_params("stablehlo.dot", list(dn.params)):
        return None
    vals = {k: tuple(v) for k, v in dn.params}
    lb, rb = vals.get("lhs_batching_dimensions", ()), vals.get("rhs_batching_dimensions", ())
    s = f" {pr.val(op.operands[0])}, {pr.val(op.operands[1])}, "
    if lb or rb:
        s += f"batching_dims = {_ilist(lb)} x {_ilist(rb)}, "
    s += (f"contracting_dims = {_ilist(vals.get('lhs_contracting_dimensions', ()))} x "
          f"{_ilist(vals.get('rhs_contracting_dimensions', ()))}")
    pc = op.attr("precision_config")
    if pc is not None:
        t = _print_precision(pr, pc)
        if t is None:
            return None
        s += ", " + t
    algo = op.attr("algorithm")
    if algo is not None:
        if type(algo) is not StructAttr or algo.name != "stablehlo.dot_algorithm":
            return None
        s += ", algorithm = <" + pr.struct_params(algo) + ">"
    d = pr.attr_dict(op, {"dot_dimension_numbers", "precision_config", "algorithm"})
    return f"{s}{d} : {pr.functional(op.operand_types, op.result_types)}"


def _ilist(vals: Any) -> str:
    return "[" + ", ".join(str(int(v)) for v in vals) + "]"


register("stablehlo.dot_general", _parse_dot_general, _print_dot_general)

# --- convolution --------------------------------------------------------------------------------

_WINDOW_KEYS = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}


def _parse_window(p: "Parser", props: dict[str, Any]) -> None:
    p.expect("{")
    if p.v != "}":
        while True:
            key = p.bare()
            if key not in _WINDOW_KEYS:
                p.error(f"unknown window attribute '{key}'", found=False)
            p.expect("=")
            target = _WINDOW_KEYS[key]
            if target in props:
                p.error(f"duplicate '{key}' in window attributes", found=False)
            if key == "pad":
                p.expect("[")
                rows: list[tuple[int, int]] = []
                if p.v != "]":
                    while True:
                        pair = parse_int_list(p)
                        if len(pair) != 2:
                            p.error("expected padding pairs [low, high]", found=False)
                        rows.append(pair)  # type: ignore[arg-type]
                        if not p.accept(","):
                            break
                p.expect("]")
                arr = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
                props[target] = DenseElementsAttr(TensorType((len(rows), 2), I64), arr)
            elif key == "reverse":
                p.expect("[")
                bools: list[bool] = []
                if p.v != "]":
                    while True:
                        if p.v in ("true", "false"):
                            bools.append(p.v == "true")
                            p._advance()
                        elif p.k == INTEGER:
                            bools.append(p.integer() != 0)
                        else:
                            p.error("expected boolean")
                        if not p.accept(","):
                            break
                p.expect("]")
                props[target] = DenseArrayAttr(I1, tuple(bools))
            else:
                props[target] = DenseArrayAttr(I64, parse_int_list(p))
            if not p.accept(","):
                break
    p.expect("}")


def _print_window(pr: "Printer", op: Operation) -> str | None:
    parts = []
    for key, target in _WINDOW_KEYS.items():
        a = op.attr(target)
        if a is None:
            continue
        if key == "pad":
            if type(a) is not DenseElementsAttr or a.type.element_type != I64 \
                    or a.array.ndim != 2 or a.array.shape[1:] != (2,):
                return None
            rows = ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in a.array.tolist())
            parts.append(f"pad = [{rows}]")
        elif key == "reverse":
            if type(a) is not DenseArrayAttr or a.element_type != I1:
                return None
            parts.append("reverse = [" + ", ".join("true" if b else "false"
                                                   for b in a.values) + "]")
        else:
            if not check_attr_kind(a, "i64list"):
                return None
            parts.append(f"{key} = {_ilist(a.values)}")
    return "{" + ", ".join(parts) + "}"


def _parse_convolution(p: "Parser", name: str, nres: int, start: int) -> Operation:
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    p.keyword("dim_numbers")
    p.expect("=")
    props["dimension_numbers"] = p.conv_dims()
    p.expect(",")
    p.keyword("window")
    p.expect("=")
    _parse_window(p, props)
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_convolution(pr: "Printer", op: Operation) -> str | None:
    dn = op.attr("dimension_numbers")
    if type(dn) is not ConvDimensionNumbers or op.regions:
        return None
    dims = format_conv_dims(dn)
    win = _print_window(pr, op)
    if dims is None or win is None:
        return None
    d = pr.attr_dict(op, {"dimension_numbers", *_WINDOW_KEYS.values()})
    ops = ", ".join(pr.val(v) for v in op.operands)
    return (f"({ops}) dim_numbers = {dims}, window = {win}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


register("stablehlo.convolution", _parse_convolution, _print_convolution)

# --- optimization_barrier -----------------------------------------------------------------------


def _parse_optimization_barrier(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    if p.v == "(" and p.k == PUNCT:
        p._advance()
        p.expect(")")
        return Operation(name, [], [], props, attrs)
    operands = p.operand_list()
    if not operands:
        p.error("expected operands or '()'")
    p.expect(":")
    res = types_pairwise(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_optimization_barrier(pr: "Printer", op: Operation) -> str | None:
    if op.regions or op.operand_types != op.result_types:
        return None
    d = pr.attr_dict(op, set())
    if not op.operands:
        return f"{d}()"
    return (f"{d} {', '.join(pr.val(v) for v in op.operands)} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


register("stablehlo.optimization_barrier", _parse_optimization_barrier,
         _print_optimization_barrier)

# --- composite ----------------------------------------------------------------------------------


def _parse_composite(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {"name": StringAttr(p.string())}
    operands = p.operand_list()
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_composite(pr: "Printer", op: Operation) -> str | None:
    n = op.attr("name")
    if type(n) is not StringAttr or op.regions:
        return None
    ops = ", ".join(pr.val(v) for v in op.operands)
    d = pr.attr_dict(op, {"name"})
    return (f" {pr.attr(n)} {ops}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


register("stablehlo.composite", _parse_composite, _print_composite)

# --- while --------------------------------------------------------------------------------------


def _parse_while(p: "Parser", name: str, nres: int, start: int) -> Operation:
    p.expect("(")
    iter_names: list[str] = []
    operands: list[Value] = []
    if p.v != ")":
        while True:
            if p.k != VALUE:
                p.error("expected SSA value name")
            iter_names.append(p.v[1:])
            p._advance()
            p.expect("=")
            operands.append(p.operand())
            if not p.accept(","):
                break
    p.expect(")")
    types_: list[Type] = []
    if operands:
        p.expect(":")
        off = p.start
        types_ = p.type_list()
        p.check_types(operands, types_, off)
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict_kw(p, name, props, attrs)
    p.keyword("cond")
    args = list(zip(iter_names, types_))
    cond = p.parse_region(args)
    p.keyword("do")
    body = p.parse_region(args)
    return Operation(name, operands, types_, props, attrs, [cond, body])


def _print_while(pr: "Printer", op: Operation) -> str | None:
    if len(op.regions) != 2 or any(len(r.blocks) != 1 for r in op.regions):
        return None
    cond, body = op.regions
    cargs, bargs = cond.blocks[0].arguments, body.blocks[0].arguments
    ots = op.operand_types
    if [a.type for a in cargs] != ots or [a.type for a in bargs] != ots \
            or op.result_types != ots:
        return None
    if any(pr.val(a) != pr.val(b) for a, b in zip(cargs, bargs)):
        return None
    pairs = ", ".join(f"{pr.val(a)} = {pr.val(v)}" for a, v in zip(bargs, op.operands))
    s = f"({pairs})"
    if ots:
        s += " : " + ", ".join(pr.type(t) for t in ots)
    d = pr.attr_dict(op, set())
    if d:
        s += " attributes" + d
    ind = pr.indent_str()
    s += f"\n{ind}cond " + pr.region(cond, False) + " do " + pr.region(body, False)
    return s


register("stablehlo.while", _parse_while, _print_while)

# --- reduce -------------------------------------------------------------------------------------


def _parse_reduce(p: "Parser", name: str, nres: int, start: int) -> Operation:
    inputs: list[Value] = []
    inits: list[Value] = []
    while True:
        p.expect("(")
        inputs.append(p.operand())
        p.keyword("init")
        p.expect(":")
        inits.append(p.operand())
        p.expect(")")
        if not p.accept(","):
            break
    operands = inputs + inits
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    dialect = name.split(".", 1)[0]
    if p.v == "applies" and p.k == BARE:
        p._advance()
        inner_off = p.start
        inner = p.bare() if p.k == BARE else p.string()
        if inner.split(".", 1)[0] != dialect or inner not in names_with(COMMUTATIVE):
            p.error(f"expected the inner-op to be a commutative binary-op from the {dialect} "
                    f"dialect, with zero region, producing single result", inner_off,
                    found=False)
        p.keyword("across")
        p.keyword("dimensions")
        p.expect("=")
        props["dimensions"] = DenseArrayAttr(I64, parse_int_list(p))
        parse_attrdict(p, name, props, attrs)
        p.expect(":")
        off = p.start
        ft = p.parse_type()
        if not isinstance(ft, FunctionType) or not ft.inputs:
            p.error("expected function type with inputs", off, found=False)
        p.check_types(operands, ft.inputs, off)
        loc = p.optional_location()
        et = ft.inputs[0]
        et = et.element_type if isinstance(et, TensorType) else et
        st = TensorType((), et)  # type: ignore[arg-type]
        block = Block([st, st])
        inner_op = Operation(inner, list(block.arguments), [st])
        ret = Operation(f"{dialect}.return", [inner_op.results[0]])
        opl = loc if loc is not None else p.location_at(start)
        inner_op.location = ret.location = opl
        block.append(inner_op)
        block.append(ret)
        op = Operation(name, operands, list(ft.results), props, attrs, [Region([block])])
        if loc is not None:
            op.location = loc
            p.__dict__["_reduce_loc"] = loc
        return op
    p.keyword("across")
    p.keyword("dimensions")
    p.expect("=")
    props["dimensions"] = DenseArrayAttr(I64, parse_int_list(p))
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    ft = p.parse_type()
    if not isinstance(ft, FunctionType):
        p.error("expected function type", off, found=False)
    p.check_types(operands, ft.inputs, off)
    p.keyword("reducer")
    lhs: list[tuple[str, Type]] = []
    rhs: list[tuple[str, Type]] = []
    while p.accept("("):
        for side in (lhs, rhs):
            if p.k != VALUE:
                p.error("expected SSA value name")
            n = p.v[1:]
            p._advance()
            p.expect(":")
            t = p.parse_type()
            p.optional_location()
            side.append((n, t))
            if side is lhs:
                p.expect(",")
        p.expect(")")
    region = p.parse_region(lhs + rhs)
    return Operation(name, operands, list(ft.results), props, attrs, [region])


def _reduce_compact(op: Operation) -> str | None:
    """The inner op name when the body is eligible for `applies` (upstream E1-E5)."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    if len(block.operations) != 2 or not op.operands:
        return None
    inner, ret = block.operations
    dialect = op.name.split(".", 1)[0]
    if inner.name.split(".", 1)[0] != dialect or inner.name not in names_with(COMMUTATIVE):
        return None
    if inner.regions or len(inner.results) != 1 or len(inner.operands) != 2 \
            or inner.properties or inner.attributes:
        return None
    t = inner.results[0].type
    if any(v.type != t for v in inner.operands):
        return None
    it = op.operands[0].type
    et = it.element_type if isinstance(it, TensorType) else None
    if t != TensorType((), et):  # type: ignore[arg-type]
        return None
    if list(block.arguments) != list(inner.operands):
        return None
    if ret.name.split(".", 1)[-1] != "return" or list(ret.operands) != list(inner.results):
        return None
    if len(op.operands) != 2:
        return None
    return inner.name


def _print_reduce(pr: "Printer", op: Operation) -> str | None:
    dims = op.attr("dimensions")
    n = len(op.operands)
    if not check_attr_kind(dims, "i64list") or n % 2 or not n or len(op.regions) != 1 \
            or len(op.regions[0].blocks) != 1:
        return None
    half = n // 2
    block = op.regions[0].blocks[0]
    if len(block.arguments) != n:
        return None
    pairs = ", ".join(f"({pr.val(op.operands[i])} init: {pr.val(op.operands[i + half])})"
                      for i in range(half))
    s = pairs
    compact = _reduce_compact(op)
    if compact is not None:
        s += f" applies {compact}"
    s += f" across dimensions = {_ilist(dims.values)}"
    s += pr.attr_dict(op, {"dimensions"})
    s += " : " + pr.functional(op.operand_types, op.result_types)
    if compact is None:
        args = block.arguments
        red = "".join(f"({pr.val(args[i])}: {pr.type(args[i].type)}, "
                      f"{pr.val(args[i + half])}: {pr.type(args[i + half].type)}) "
                      for i in range(half))
        s += f"\n{pr.indent_str()} reducer{red} " + pr.region(op.regions[0], False)
    return s


register("stablehlo.reduce", _parse_reduce, _print_reduce)

# --- chlo.scan ----------------------------------------------------------------------------------


def _parse_scan(p: "Parser", name: str, nres: int, start: int) -> Operation:
    p.expect("(")
    inputs = p.operand_list()
    p.expect(")")
    p.keyword("inits")
    p.expect("(")
    inits = p.operand_list()
    p.expect(")")
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    p.keyword("dimension")
    p.expect("=")
    props["dimension"] = IntegerAttr(p.integer(), I64)
    parse_attrdict_kw(p, name, props, attrs)
    region = p.parse_region()
    p.expect(":")
    operands = inputs + inits
    res = types_functional(p, operands)
    props["operandSegmentSizes"] = DenseArrayAttr(I32, (len(inputs), len(inits)))
    props["resultSegmentSizes"] = DenseArrayAttr(I32, (len(res) - len(inits), len(inits)))
    return Operation(name, operands, res, props, attrs, [region])


def _print_scan(pr: "Printer", op: Operation) -> str | None:
    seg = op.attr("operandSegmentSizes")
    dim = op.attr("dimension")
    if type(seg) is not DenseArrayAttr or len(seg.values) != 2 or len(op.regions) != 1 \
            or not check_attr_kind(dim, "i64"):
        return None
    ni = seg.values[0]
    ins = ", ".join(pr.val(v) for v in op.operands[:ni])
    inits = ", ".join(pr.val(v) for v in op.operands[ni:])
    rseg = op.attr("resultSegmentSizes")
    if rseg is not None and (type(rseg) is not DenseArrayAttr
                             or tuple(rseg.values) != (len(op.results) - len(op.operands) + ni,
                                                       len(op.operands) - ni)):
        return None
    d = pr.attr_dict(op, {"operandSegmentSizes", "resultSegmentSizes", "dimension"})
    s = f"({ins}) inits ({inits}) dimension={dim.value} "
    if d:
        s += " attributes" + d
    s += " " + pr.region(op.regions[0], True)
    s += " : " + pr.functional(op.operand_types, op.result_types)
    return s


register("chlo.scan", _parse_scan, _print_scan)

# --- func.func / func.call / func.return / builtin.module ---------------------------------------


def _parse_func(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.k == BARE and p.v in ("public", "private", "nested"):
        props["sym_visibility"] = StringAttr(p.v)
        p._advance()
    if p.k != AT:
        p.error("expected function name")
    props["sym_name"] = StringAttr(p.symbol_name())
    p.expect("(")
    arg_types: list[Type] = []
    arg_names: list[str] = []
    arg_attrs: list[DictAttr] = []
    named_args: bool | None = None
    if p.v != ")":
        while True:
            if p.k == VALUE:
                if named_args is False:
                    p.error("expected a type (unnamed argument list)")
                named_args = True
                arg_names.append(p.v[1:])
                p._advance()
                p.expect(":")
            else:
                if named_args:
                    p.error("expected SSA identifier")
                named_args = False
            arg_types.append(p.parse_type())
            arg_attrs.append(p.dict_attr() if p.v == "{" and p.k == PUNCT else DictAttr(()))
            p.optional_location()
            if not p.accept(","):
                break
    p.expect(")")
    res_types: list[Type] = []
    res_attrs: list[DictAttr] = []
    if p.accept("->"):
        if p.v == "(" and p.k == PUNCT:
            p._advance()
            if p.v != ")":
                while True:
                    res_types.append(p.parse_type())
                    res_attrs.append(p.dict_attr() if p.v == "{" and p.k == PUNCT
                                     else DictAttr(()))
                    if not p.accept(","):
                        break
            p.expect(")")
        else:
            res_types.append(p.parse_type())
            res_attrs.append(DictAttr(()))
    props["function_type"] = TypeAttr(FunctionType(tuple(arg_types), tuple(res_types)))
    if any(d.items for d in arg_attrs):
        props["arg_attrs"] = ArrayAttr(tuple(arg_attrs))
    if any(d.items for d in res_attrs):
        props["res_attrs"] = ArrayAttr(tuple(res_attrs))
    parse_attrdict_kw(p, name, props, attrs)
    regions: list[Region] = []
    if p.v == "{" and p.k == PUNCT:
        if named_args is False and arg_types:
            p.error("expected named arguments for a function with a body", found=False)
        p.default_dialect.append("func")
        regions.append(p.parse_region(list(zip(arg_names, arg_types))))
        p.default_dialect.pop()
    else:
        regions.append(Region())
    return Operation(name, [], [], props, attrs, regions)


def _print_func(pr: "Printer", op: Operation) -> str | None:
    sym = op.attr("sym_name")
    ft = op.attr("function_type")
    if type(sym) is not StringAttr or type(ft) is not TypeAttr \
            or not isinstance(ft.type, FunctionType) or op.operands or op.results \
            or len(op.regions) != 1:
        return None
    fty = ft.type
    vis = op.attr("sym_visibility")
    if vis is not None and type(vis) is not StringAttr:
        return None
    aa = op.attr("arg_attrs")
    ra = op.attr("res_attrs")
    for a, n in ((aa, len(fty.inputs)), (ra, len(fty.results))):
        if a is not None and (type(a) is not ArrayAttr or len(a) != n
                              or not all(type(d) is DictAttr for d in a.values)):
            return None
    region = op.regions[0]
    body = region.blocks[0] if region.blocks else None
    if body is not None and [x.type for x in body.arguments] != list(fty.inputs):
        return None
    s = " " + (vis.value + " " if vis is not None else "") + pr.symbol(sym.value) + "("
    args = []
    for i, t in enumerate(fty.inputs):
        a = pr.val(body.arguments[i]) + ": " if body is not None else ""
        a += pr.type(t)
        if aa is not None and aa[i].items:
            a += " " + pr.attr(aa[i])
        args.append(a)
    s += ", ".join(args) + ")"
    if fty.results:
        rs = []
        for i, t in enumerate(fty.results):
            r = pr.type(t)
            if ra is not None and ra[i].items:
                r += " " + pr.attr(ra[i])
            rs.append(r)
        if len(rs) == 1 and (ra is None or not ra[0].items) and not isinstance(fty.results[0],
                                                                              FunctionType):
            s += " -> " + rs[0]
        else:
            s += " -> (" + ", ".join(rs) + ")"
    d = pr.attr_dict(op, {"sym_name", "function_type", "sym_visibility", "arg_attrs",
                          "res_attrs"})
    if d:
        s += " attributes" + d
    if body is not None:
        s += " " + pr.region(region, False)
    return s


register("func.func", _parse_func, _print_func)


def _parse_call(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {"callee": p.symbol_ref()}
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


def _print_call(pr: "Printer", op: Operation) -> str | None:
    callee = op.attr("callee")
    if type(callee) is not SymbolRefAttr or op.regions:
        return None
    d = pr.attr_dict(op, {"callee"})
    return (f" {pr.attr(callee)}({', '.join(pr.val(v) for v in op.operands)}){d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


register("func.call", _parse_call, _print_call)


def _parse_return(p: "Parser", name: str, nres: int, start: int) -> Operation:
    operands = p.operand_list()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    if operands:
        p.expect(":")
        off = p.start
        types_ = p.type_list()
        p.check_types(operands, types_, off)
    return Operation(name, operands, [], props, attrs)


def _print_return(pr: "Printer", op: Operation) -> str | None:
    if op.results or op.regions:
        return None
    d = pr.attr_dict(op, set())
    if not op.operands:
        return d
    return (f" {', '.join(pr.val(v) for v in op.operands)}{d} : "
            f"{', '.join(pr.type(t) for t in op.operand_types)}")


register("func.return", _parse_return, _print_return)


def _parse_module(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    if p.k == AT:
        props["sym_name"] = StringAttr(p.symbol_name())
    parse_attrdict_kw(p, name, props, attrs)
    p.default_dialect.append("builtin")
    region = p.parse_region()
    p.default_dialect.pop()
    if not region.blocks:
        region.append(Block())
    return Operation(name, [], [], props, attrs, [region])


def _print_module(pr: "Printer", op: Operation) -> str | None:
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or op.operands or op.results:
        return None
    sym = op.attr("sym_name")
    s = ""
    if sym is not None:
        if type(sym) is not StringAttr:
            return None
        s += " " + pr.symbol(sym.value)
    d = pr.attr_dict(op, {"sym_name"})
    if d:
        s += " attributes" + d
    return s + " " + pr.region(op.regions[0], False)


register("builtin.module", _parse_module, _print_module)


# --- tosa.rescale (its attr-dict spells enum values bare: `rounding_mode = SINGLE_ROUND`) --------


def _parse_tosa_rescale(p: "Parser", name: str, nres: int, start: int) -> Operation:
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


def _print_tosa_rescale(pr: "Printer", op: Operation) -> str | None:
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


register("tosa.rescale", _parse_tosa_rescale, _print_tosa_rescale)


# --- a few ops of other dialects that appear in StableHLO test files ---------------------------


def _parse_arith_constant(p: "Parser", name: str, nres: int, start: int) -> Operation:
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    value = p.parse_attribute()
    t = getattr(value, "type", None)
    if t is None:
        p.error("expected a typed constant value", found=False)
    props["value"] = value
    return Operation(name, [], [t], props, attrs)


def _print_arith_constant(pr: "Printer", op: Operation) -> str | None:
    v = op.attr("value")
    if op.operands or len(op.results) != 1 or getattr(v, "type", None) != op.results[0].type \
            or type(v) not in (DenseElementsAttr, IntegerAttr, FloatAttr):
        return None
    return f"{pr.attr_dict(op, {'value'})} {pr.attr(v)}"


for _n in ("arith.constant", "chlo.constant"):
    register(_n, _parse_arith_constant, _print_arith_constant)
    INHERENT[_n] = frozenset({"value"})


def _parse_cast_to(p: "Parser", name: str, nres: int, start: int) -> Operation:
    operand = p.operand()
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    parse_attrdict(p, name, props, attrs)
    p.expect(":")
    off = p.start
    t = p.parse_type()
    p.check_types([operand], [t], off)
    p.keyword("to")
    return Operation(name, [operand], [p.parse_type()], props, attrs)


def _print_cast_to(pr: "Printer", op: Operation) -> str | None:
    if len(op.operands) != 1 or len(op.results) != 1 or op.regions:
        return None
    return (f" {pr.val(op.operands[0])}{pr.attr_dict(op, set())} : "
            f"{pr.type(op.operands[0].type)} to {pr.type(op.results[0].type)}")


for _n in ("tensor.cast", "builtin.unrealized_conversion_cast"):
    register(_n, _parse_cast_to, _print_cast_to)
    INHERENT[_n] = frozenset()
