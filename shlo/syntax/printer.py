"""The printer: IR -> text, in the pretty form (as upstream prints it) or the generic form.

:func:`format_module` prints a module; :func:`format_type` and :func:`format_attr` print types and
attribute values (``str()`` of types calls :func:`format_type`). Values are named as MLIR names
them: function arguments `%arg0...`, op results numbered `%0, %1...` (a multi-result op is
`%0:2`, its results `%0#0`, `%0#1`), constants `%c`/`%cst`, `while` arguments `%iterArg`,
uniqued with `_N` suffixes; numbering continues into nested regions.

The pretty form of each op comes from :mod:`shlo.syntax.formats`; an op without a pretty form,
or whose attributes do not fit it, is printed in the generic form, so printing never loses
information. The generic form (``generic=True``) quotes every op (`"func.func"`,
`"stablehlo.add"`), prints inherent attributes as properties `<{...}>`, discardable ones as
`{...}`, and regions in parentheses; it is accepted by the upstream MLIR parser.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..attributes import (
    ArrayAttr, BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr,
    EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
    UnitAttr,
)
from ..ir import (
    Block, CallSiteLoc, FileLineColLoc, FusedLoc, Location, Module, NameLoc, OpaqueLoc, Operation,
    Region, UnknownLoc, Value,
)
from ..types import (
    _ELEMENT_TYPES, ComplexType, FloatType, FunctionType, IntegerType, OpaqueType, QuantizedType,
    TensorType, TokenType, TupleType, Type,
)
from ..registry import lookup
from .dense import format_dense_body, format_float
from .lexer import escape_string

__all__ = ["format_module", "format_op", "format_type", "format_attr", "format_location",
           "Printer"]

_BARE_ID_RE = re.compile(r"[A-Za-z_][\w$.]*\Z")
_SYMBOL_RE = re.compile(r"[A-Za-z_][\w$.]*\Z")
_type_cache: dict[Any, str] = {}
_I64 = _ELEMENT_TYPES["i64"]
_F64 = _ELEMENT_TYPES["f64"]


# --- types --------------------------------------------------------------------------------------


def format_type(t: Type) -> str:
    """The text of a type (`tensor<2x?xf32>`, `!quant.uniform<i8:f32, 1.0e-01:-3>`, ...)."""
    try:
        s = _type_cache.get(t)
    except TypeError:
        return _format_type(t)
    if s is None:
        s = _format_type(t)
        if len(_type_cache) < 100_000:
            _type_cache[t] = s
    return s


def _format_type(t: Type) -> str:
    if isinstance(t, TensorType):
        if t.shape is None:
            dims = "*x"
        else:
            dims = "".join(("?" if d is None else str(d)) + "x" for d in t.shape)
        enc = "" if t.encoding is None else ", " + format_attr(t.encoding)
        return f"tensor<{dims}{format_type(t.element_type)}{enc}>"
    if isinstance(t, QuantizedType):
        st = t.storage_type
        s = ("ui" if st.signedness == "unsigned" else "i") + str(st.width)
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


def format_function_type(inputs: list[Type], results: list[Type]) -> str:
    ins = "(" + ", ".join(format_type(t) for t in inputs) + ")"
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return f"{ins} -> {format_type(results[0])}"
    return f"{ins} -> (" + ", ".join(format_type(t) for t in results) + ")"


# --- attributes ---------------------------------------------------------------------------------


def format_symbol(name: str) -> str:
    return "@" + name if _SYMBOL_RE.match(name) else "@" + escape_string(name)


def format_key(name: str) -> str:
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
        if a.dialect == "stablehlo" and a.enum == "result_accuracy_mode":
            return f"#stablehlo.result_accuracy_mode<{a.value}>"
        return f"#{a.dialect}<{a.enum} {a.value}>"
    if t is StructAttr:
        if a.name == "stablehlo.bounds":
            bounds = a.get("bounds", ())
            return "#stablehlo.bounds<" + ", ".join("?" if b is None else str(b)
                                                    for b in bounds) + ">"
        prefix = "#" + a.name if a.name else ""
        return f"{prefix}<{format_struct_params(a)}>"
    if t is ConvDimensionNumbers:
        from .formats import format_conv_dims

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
    raise TypeError(f"cannot print attribute {a!r}")


def format_entry(k: str, v: Any) -> str:
    if type(v) is UnitAttr:
        return format_key(k)
    return f"{format_key(k)} = {format_attr(v)}"


def format_struct_params(a: StructAttr) -> str:
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


# --- locations ----------------------------------------------------------------------------------


def format_location(loc: Location) -> str:
    return f"loc({_loc_inner(loc)})"


def _loc_inner(loc: Location) -> str:
    if isinstance(loc, FileLineColLoc):
        s = f"{escape_string(loc.file)}:{loc.line}:{loc.col}"
        if loc.end_line is not None or loc.end_col is not None:
            s += " to "
            if loc.end_line is not None:
                s += str(loc.end_line)
            if loc.end_col is not None:
                s += f":{loc.end_col}"
        return s
    if isinstance(loc, NameLoc):
        s = escape_string(loc.name)
        if loc.child is not None:
            s += f"({_loc_inner(loc.child)})"
        return s
    if isinstance(loc, CallSiteLoc):
        return f"callsite({_loc_inner(loc.callee)} at {_loc_inner(loc.caller)})"
    if isinstance(loc, FusedLoc):
        meta = f"<{format_attr(loc.metadata)}>" if loc.metadata is not None else ""
        return f"fused{meta}[" + ", ".join(_loc_inner(x) for x in loc.locations) + "]"
    if isinstance(loc, OpaqueLoc):
        return loc.text
    if isinstance(loc, UnknownLoc):
        return "unknown"
    return "unknown"


# --- the op printer -----------------------------------------------------------------------------

_ISOLATED = {"func.func", "builtin.module"}


class Printer:
    """Prints ops with MLIR's value naming; pretty forms come from :mod:`formats`."""

    def __init__(self, generic: bool = False, debug_info: bool = False) -> None:
        self.generic = generic
        self.debug_info = debug_info
        self.names: dict[Value, str] = {}
        self.block_names: dict[Block, str] = {}
        self.depth = 0
        self.default_dialect: list[str] = ["builtin"]

    # --- API used by the formats ---------------------------------------------------------------

    def val(self, v: Value) -> str:
        n = self.names.get(v)
        if n is None:
            return "%<<UNKNOWN SSA VALUE>>"
        return n

    def type(self, t: Type) -> str:
        return format_type(t)

    def attr(self, a: Any) -> str:
        return format_attr(a)

    def attr_entry(self, k: str, v: Any) -> str:
        return format_entry(k, v)

    def float(self, v: float, t: FloatType | None) -> str:
        return format_float(v, t)

    def symbol(self, name: str) -> str:
        return format_symbol(name)

    def struct_params(self, a: StructAttr) -> str:
        return format_struct_params(a)

    def functional(self, ins: list[Type], outs: list[Type]) -> str:
        return format_function_type(ins, outs)

    def indent_str(self) -> str:
        return "  " * self.depth

    def attr_dict(self, op: Operation, elided: set[str]) -> str:
        """` {a = 1, b}` for the op's attributes not in ``elided`` (sorted as MLIR sorts), or
        the empty string."""
        items = [(k, v) for k, v in op.properties.items() if k not in elided]
        items += [(k, v) for k, v in op.attributes.items() if k not in elided]
        if not items:
            return ""
        items.sort(key=lambda kv: kv[0])
        return " {" + ", ".join(format_entry(k, v) for k, v in items) + "}"

    def region(self, region: Region, print_entry_args: bool) -> str:
        """`{` newline, the blocks, `}` at the current indentation."""
        out: list[str] = ["{\n"]
        self._region_body(region, print_entry_args, out)
        out.append(self.indent_str() + "}")
        return "".join(out)

    # --- naming --------------------------------------------------------------------------------

    def name_values(self, root: Operation) -> None:
        """Assign names to every value defined under ``root`` (MLIR's SSANameState rules).

        Pretty form: each region starts from the counters its parent region ended with, names
        used in enclosing regions are taken, hints (`%c`, `%cst`, `%iterArg`...) are uniqued
        with `_N`. Generic form: one global numbering, no hints (as upstream prints it).
        """
        unique_mode = self.generic
        names = self.names
        g_nv = g_na = g_nc = 0
        stack: list[tuple] = [(r, 0, 0, 0, None) for r in root.regions]
        while stack:
            region, nv, na, nc, parent = stack.pop()
            if unique_mode:
                nv, na, nc = g_nv, g_na, g_nc
            used: set[str] = set()
            scope = (used, parent)

            def taken(name: str) -> bool:
                sc = scope
                while sc is not None:
                    if name in sc[0]:
                        return True
                    sc = sc[1]
                return False

            def unique(hint: str) -> str:
                nonlocal nc
                name = hint
                while taken(name):
                    name = f"{hint}_{nc}"
                    nc += 1
                used.add(name)
                return name

            children: list[Region] = []
            arg_hints = None if unique_mode else _block_arg_hints(region)
            for bi, block in enumerate(region.blocks):
                self.block_names[block] = f"^bb{bi}"
                for ai, a in enumerate(block.arguments):
                    if arg_hints is not None and bi == 0:
                        names[a] = "%" + unique(arg_hints[ai])
                    elif bi == 0:
                        names[a] = f"%arg{na}"
                        na += 1
                    else:
                        names[a] = f"%{nv}"
                        nv += 1
                for op in block.operations:
                    res = op.results
                    if res:
                        hints = None if unique_mode else _result_hints(op)
                        if hints is not None:
                            for r, h in zip(res, hints):
                                names[r] = "%" + unique(h)
                        elif len(res) == 1:
                            names[res[0]] = f"%{nv}"
                            nv += 1
                        else:
                            for i, r in enumerate(res):
                                names[r] = f"%{nv}#{i}"
                            nv += 1
                    if op.regions:
                        children.extend(op.regions)
            g_nv, g_na, g_nc = nv, na, nc
            for r in children:
                stack.append((r, nv, na, nc, scope))

    # --- printing ------------------------------------------------------------------------------

    def op_text(self, op: Operation) -> str:
        res = op.results
        prefix = ""
        if res:
            first = self.names.get(res[0], "%<<UNKNOWN>>")
            if len(res) > 1 and "#" in first:
                prefix = first.split("#", 1)[0] + f":{len(res)} = "
            else:
                prefix = ", ".join(self.names.get(r, "%<<UNKNOWN>>") for r in res) + " = "
        body = None
        if not self.generic:
            d = lookup(op.name)
            fn = d.syntax.print if d is not None and d.syntax is not None else None
            if fn is not None:
                self.default_dialect.append(_region_dialect(op.name))
                try:
                    body = fn(self, op)
                finally:
                    self.default_dialect.pop()
        if body is None:
            text = prefix + self._generic(op)
        else:
            text = prefix + self._short_name(op.name) + body
        if self.debug_info and op.location is not None:
            text += " " + format_location(op.location)
        return text

    def _short_name(self, name: str) -> str:
        d = self.default_dialect[-1]
        if d and name.startswith(d) and name[len(d):len(d) + 1] == ".":
            short = name[len(d) + 1:]
            if "." not in short:
                return short
        return name

    def _generic(self, op: Operation) -> str:
        s = escape_string(op.name) + "(" + ", ".join(self.val(v) for v in op.operands) + ")"
        if op.successors:
            s += "[" + ", ".join(self.block_names.get(b, "^bb?") for b in op.successors) + "]"
        props = op.properties
        attrs = op.attributes
        d = lookup(op.name)
        inherent = d.inherent if d is not None else None
        if inherent and attrs and any(k in inherent for k in attrs):
            props = dict(props)
            attrs = dict(attrs)
            for k in list(attrs):
                if k in inherent:
                    props[k] = attrs.pop(k)
        if props:
            items = sorted(props.items(), key=lambda kv: kv[0])
            s += " <{" + ", ".join(format_entry(k, v) for k, v in items) + "}>"
        if op.regions:
            self.default_dialect.append(_region_dialect(op.name))
            parts = []
            for r in op.regions:
                parts.append(self.region(r, True))
            self.default_dialect.pop()
            s += " (" + ", ".join(parts) + ")"
        if attrs:
            items = sorted(attrs.items(), key=lambda kv: kv[0])
            s += " {" + ", ".join(format_entry(k, v) for k, v in items) + "}"
        s += " : " + format_function_type(op.operand_types, op.result_types)
        return s

    def _region_body(self, region: Region, print_entry_args: bool, out: list[str]) -> None:
        self.depth += 1
        ind = self.indent_str()
        outer = "  " * (self.depth - 1)
        multi = len(region.blocks) > 1
        for bi, block in enumerate(region.blocks):
            show = bi > 0 or (print_entry_args and block.arguments) or \
                (self.generic and (block.arguments or not block.operations))
            if show:
                hdr = outer + self.block_names.get(block, f"^bb{bi}")
                if block.arguments:
                    hdr += "(" + ", ".join(f"{self.val(a)}: {format_type(a.type)}"
                                           for a in block.arguments) + ")"
                out.append(hdr + ":\n")
            elif multi and bi == 0 and not block.arguments:
                pass
            for op in block.operations:
                out.append(ind + self.op_text(op) + "\n")
        self.depth -= 1


def _region_dialect(op_name: str) -> str:
    """The default dialect of the ops in the regions of ``op_name`` (OpAsmOpInterface)."""
    if op_name == "func.func":
        return "func"
    if op_name == "builtin.module":
        return "builtin"
    return ""


def _block_arg_hints(region: Region) -> list[str] | None:
    op = region.parent
    if op is None:
        return None
    if op.name == "stablehlo.while":
        return ["iterArg"] * len(region.blocks[0].arguments) if region.blocks else None
    if op.name == "chlo.scan" and region.blocks:
        seg = op.attr("operandSegmentSizes")
        if isinstance(seg, DenseArrayAttr) and len(seg.values) == 2:
            n_in, n_carry = seg.values
            if n_in + n_carry == len(region.blocks[0].arguments):
                return ["input"] * n_in + ["carry"] * n_carry
    return None


def _result_hints(op: Operation) -> list[str] | None:
    name = op.name
    if name == "stablehlo.constant":
        t = op.results[0].type
        et = t.element_type if isinstance(t, TensorType) else None
        return ["c" if isinstance(et, IntegerType) else "cst"]
    if name == "stablehlo.rng_bit_generator" and len(op.results) == 2:
        return ["output_state", "output"]
    if name == "tensor.cast":
        return ["cast"]
    if name == "chlo.top_k" and len(op.results) == 2:
        return ["values", "indices"]
    if name == "stablehlo.batch_norm_grad" and len(op.results) == 3:
        return ["grad_operand", "grad_scale", "grad_offset"]
    if name == "stablehlo.batch_norm_training" and len(op.results) == 3:
        return ["output", "batch_mean", "batch_var"]
    if name == "arith.constant":
        v = op.attr("value")
        if isinstance(v, IntegerAttr) and v.type is not None:
            t = format_type(v.type)
            if isinstance(v.type, IntegerType) and v.type.width == 1:
                return ["true" if v.value else "false"]
            return [f"c{v.value}_{t}".replace("-", "m") if t != "index" else f"c{v.value}"
                    .replace("-", "m")]
        return ["cst"]
    return None


def format_op(op: Operation, generic: bool = False) -> str:
    """Print one op (and what it contains) on its own."""
    pr = Printer(generic)
    pr.name_values(_wrapper(op))
    return pr.op_text(op)


def _wrapper(op: Operation) -> Operation:
    w = Operation("builtin.module")
    w.regions = [Region([Block()])]
    w.regions[0].blocks[0].operations.append(op)  # not re-parented: printing only
    return w


def format_module(module: Module, generic: bool = False, debug_info: bool = False) -> str:
    """The text of a whole module: the pretty form by default, or the generic form."""
    pr = Printer(generic, debug_info)
    op = module.op
    pr.name_values(_wrapper(op))
    return pr.op_text(op) + "\n"
