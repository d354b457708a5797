"""The printer: IR -> text, in the pretty form (as upstream prints it) or the generic form.

:func:`format_module` prints a module, :func:`format_op` one op. Values are named as MLIR names
them: function arguments `%arg0...`, op results numbered `%0, %1...` (a multi-result op is
`%0:2`, its results `%0#0`, `%0#1`), constants `%c`/`%cst`, `while` arguments `%iterArg`,
uniqued with `_N` suffixes; numbering continues into nested regions.

The pretty form of each op comes from its definition (``registry.lookup(name).syntax``); an op
without a pretty form, or whose attributes do not fit it, is printed in the generic form, so
printing never loses information. The generic form (``generic=True``) quotes every op
(`"func.func"`, `"stablehlo.add"`), prints inherent attributes as properties `<{...}>`,
discardable ones as `{...}`, and regions in parentheses; it is accepted by the upstream MLIR
parser.

Types, attributes and locations print themselves (layer 0: :func:`shlo.types.format_type`,
:func:`shlo.attributes.format_attr`, :func:`shlo.ir.format_location`); they are re-exported
here.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from ..attributes import (
    ArrayAttr, DenseArrayAttr, DenseResourceAttr, DictAttr, IntegerAttr, StructAttr, format_attr,
    format_entry, format_key, format_struct_params, format_symbol,
)
from ..resources import ResourceHandle
from ..ir import (
    Block, CallSiteLoc, FusedLoc, Location, Module, NameLoc, Operation, Region, Value,
    format_location,
)
from ..registry import ISOLATED, lookup, names_with
from ..spelling import escape_string, format_float
from ..types import (
    FloatType, IntegerType, TensorType, Type, format_function_type, format_type,
)

__all__ = ["format_module", "format_op", "format_type", "format_attr", "format_location",
           "Printer"]

_SEP = object()  # (separates the parts of a template key)
_MAX_TEMPLATES = 4096


class Printer:
    """Prints ops with MLIR's value naming; pretty forms come from the ops' definitions."""

    def __init__(self, generic: bool = False, debug_info: bool = False) -> None:
        self.isolated = names_with(ISOLATED)
        self.generic = generic
        self.debug_info = debug_info
        # with debug_info and aliases: a mark for each location printed, in the order met
        # (replaced by its `#loc1` alias once all are known: format_module)
        self.loc_marks: dict[Location, str] | None = None
        self.names: dict[Value, str] = {}
        self.block_names: dict[Block, str] = {}
        self.depth = 0
        self.default_dialect: list[str] = ["builtin"]
        self.memo: dict[tuple, tuple] = {}  # op text templates (:meth:`_leaf_text`)
        self.seen: set[tuple] = set()

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
        loc = op.location if self.debug_info else None
        if loc is not None and self.loc_marks is not None:  # (met before the regions' ones)
            mark = self.loc_marks.get(loc)
            if mark is None:
                mark = self.loc_marks[loc] = f"\x00{len(self.loc_marks)}\x00"
        if op.regions or op.successors:
            text = prefix + self._body(op)
        else:
            text = prefix + self._leaf_text(op)
        if loc is not None:
            text += f" loc(#{mark})" if self.loc_marks is not None else \
                " " + format_location(loc)
        return text

    def _body(self, op: Operation) -> str:
        """The op's text after its results' names: the pretty form, else the generic one."""
        body = None
        if not self.generic:
            d = lookup(op.name)
            fn = d.syntax.print if d is not None and d.syntax is not None else None
            if fn is not None:
                self.default_dialect.append(self.region_dialect(op.name))
                try:
                    body = fn(self, op)
                finally:
                    self.default_dialect.pop()
        if body is None:
            return self._generic(op)
        return self._short_name(op.name) + body

    def _leaf_text(self, op: Operation) -> str:
        """:meth:`_body` of an op without regions, through a memo of text templates.

        Such an op's text depends only on its name, its attributes, its operand and result
        types, the default dialect and its operands' names (through :meth:`val`): ops that
        share the first five (the attributes and types as objects, which the parser's memo
        shares) print alike but for the names. The second op of a key is printed twice, with
        its operands' names and with markers in their place; when substituting the names for
        the markers gives the same text, the pieces between the markers are kept and later ops
        of that key are printed by joining them with their operands' names."""
        props = op.properties
        attrs = op.attributes
        operands = op.operands
        k: list[Any] = [op.name, self.default_dialect[-1]]
        if props:
            k += props
            k += map(id, props.values())
        k.append(_SEP)
        if attrs:
            k += attrs
            k += map(id, attrs.values())
        k.append(_SEP)
        for v in operands:
            k.append(id(v.type))
        k.append(_SEP)
        for v in op.results:
            k.append(id(v.type))
        key = tuple(k)
        entry = self.memo.get(key)
        if entry is not None:
            first, order, _ = entry
            if not order:
                return first
            names = self.names
            out = [first]
            for i, piece in order:
                out.append(names.get(operands[i]) or "%<<UNKNOWN SSA VALUE>>")
                out.append(piece)
            return "".join(out)
        text = self._body(op)
        seen = self.seen
        if key not in seen:
            if len(seen) >= _MAX_TEMPLATES:
                seen.clear()
            seen.add(key)
        else:
            self._learn(op, key, text)
        return text

    def _learn(self, op: Operation, key: tuple, text: str) -> None:
        operands = op.operands
        if len(set(map(id, operands))) != len(operands):
            return  # (a value used twice: which use is which operand is not known)
        names = self.names
        saved = [names.get(v) for v in operands]
        for i, v in enumerate(operands):
            names[v] = f"\x00{i}\x00"
        try:
            marked = self._body(op)
        finally:
            for v, n in zip(operands, saved):
                if n is None:
                    del names[v]
                else:
                    names[v] = n
        parts = marked.split("\x00")
        if len(parts) % 2 == 0:
            return
        order = []
        for j in range(1, len(parts), 2):
            i = parts[j]
            if not i.isdigit() or int(i) >= len(operands):
                return
            order.append((int(i), parts[j + 1]))
        out = [parts[0]]
        for i, piece in order:
            out.append(names.get(operands[i]) or "%<<UNKNOWN SSA VALUE>>")
            out.append(piece)
        if "".join(out) != text:
            return
        memo = self.memo
        if len(memo) >= _MAX_TEMPLATES:
            memo.clear()
        # (the entry holds the objects whose ids the key has: no other object can take them)
        keep = (tuple(op.properties.values()), tuple(op.attributes.values()),
                [v.type for v in operands], [v.type for v in op.results])
        memo[key] = (parts[0], tuple(order), keep)

    def region_dialect(self, op_name: str) -> str:
        """The default dialect of the ops in the regions of ``op_name`` (MLIR's
        OpAsmOpInterface): an op isolated from above (`func.func`, `builtin.module`) makes its
        own dialect the default; other ops none."""
        return op_name.partition(".")[0] if op_name in self.isolated else ""

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
            self.default_dialect.append(self.region_dialect(op.name))
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


def format_module(module: Module, generic: bool = False, debug_info: bool = False,
                  loc_aliases: bool = False) -> str:
    """The text of a whole module: the pretty form by default, or the generic form. With
    ``debug_info`` every op's location follows it: in place (`--mlir-print-local-scope`), or
    with ``loc_aliases`` as MLIR's `--mlir-print-debuginfo` prints them by default, `loc(#loc3)`
    and the alias definitions after the module."""
    from .._gc import paused_gc

    pr = Printer(generic, debug_info)
    op = module.op
    with paused_gc():  # the names and lines are many long-lived objects, no cycles
        pr.name_values(_wrapper(op))
        if debug_info and loc_aliases:
            pr.loc_marks = {}
        text = pr.op_text(op) + "\n"
    if pr.loc_marks:
        aliases = location_aliases(pr.loc_marks)
        names = {mark: aliases[loc] for loc, mark in pr.loc_marks.items()}
        text = _MARK.sub(lambda m: names[m.group(0)], text)
        text += "".join(f"#{name} = loc({_aliased_loc(loc, aliases)})\n"
                        for loc, name in aliases.items())
    return text + format_resources(op)


# --- location aliases (MLIR's AliasInitializer for `loc(#loc1)`) ---------------------------------


def _sub_locations(loc: Location) -> tuple[Location, ...]:
    if isinstance(loc, NameLoc):
        return (loc.child,) if loc.child is not None else ()
    if isinstance(loc, CallSiteLoc):
        return (loc.callee, loc.caller)
    if isinstance(loc, FusedLoc):
        return tuple(loc.locations)
    return ()


_MARK = re.compile("\x00[0-9]+\x00")


def location_aliases(printed: Iterable[Location]) -> dict[Location, str]:
    """The alias of each location ``printed`` (the ops' locations as the printer met them: an
    op's before those of its regions; not those of ops a pretty form leaves out, as reduce's
    `applies` form does its body) and of the locations they nest, in MLIR's order: met in that
    order (a location before the ones it nests), then ordered (stably) by nesting depth, the
    innermost first, and named `loc`, `loc1`, `loc2`..."""
    order: dict[Location, int] = {}  # location -> depth, in the order met

    def visit(loc: Location) -> int:
        if loc in order:
            return order[loc]
        order[loc] = 0
        depth = 1 + max((visit(c) for c in _sub_locations(loc)), default=0)
        order[loc] = depth
        return depth

    for loc in printed:
        visit(loc)
    ranked = sorted(order, key=lambda loc: order[loc])  # stable: the order met on ties
    return {loc: "loc" if i == 0 else f"loc{i}" for i, loc in enumerate(ranked)}


def _aliased_loc(loc: Location, aliases: dict[Location, str]) -> str:
    """The inside of `loc(...)` for an alias definition: nested locations by their alias."""

    def sub(x: Location) -> str:
        name = aliases.get(x)
        return f"#{name}" if name else format_location(x)[4:-1]

    if isinstance(loc, NameLoc):
        return escape_string(loc.name) + (f"({sub(loc.child)})" if loc.child is not None else "")
    if isinstance(loc, CallSiteLoc):
        return f"callsite({sub(loc.callee)} at {sub(loc.caller)})"
    if isinstance(loc, FusedLoc):
        meta = f"<{loc.metadata.mlir()}>" if loc.metadata is not None else ""
        return f"fused{meta}[" + ", ".join(sub(x) for x in loc.locations) + "]"
    return format_location(loc)[4:-1]


# --- the `{-# dialect_resources #-}` section of dense_resource blobs --------------------------------


def _resource_handles(root: Operation) -> dict[str, ResourceHandle]:
    """The handles of the `dense_resource` attributes under ``root`` that have data, by key, in
    order of first use (an op's attributes last to first, as a stack of them pops them)."""
    found: dict[str, ResourceHandle] = {}
    stack: list[Any] = []
    holders = (DenseResourceAttr, ArrayAttr, DictAttr)
    for op in root.walk():
        for d in (op.attributes, op.properties):
            if d:
                for a in reversed(d.values()):
                    if type(a) not in holders:
                        continue
                    stack.append(a)
                    while stack:
                        a = stack.pop()
                        t = type(a)
                        if t is DenseResourceAttr:
                            if a.handle.blob is not None:
                                found.setdefault(a.key, a.handle)
                        elif t is ArrayAttr:
                            stack.extend(a.values)
                        elif t is DictAttr:
                            stack.extend(v for _, v in a.items)
    return found


def format_resources(root: Operation) -> str:
    """The file metadata section MLIR prints after a module whose attributes use resources:
    `{-# dialect_resources: {builtin: {key: "0x..."}} #-}` (empty when there are none)."""
    handles = _resource_handles(root)
    if not handles:
        return ""
    entries = ",\n".join(f"      {format_key(k)}: {h.blob.hex()}"  # type: ignore[union-attr]
                         for k, h in handles.items())
    return ("\n{-#\n  dialect_resources: {\n    builtin: {\n" + entries
            + "\n    }\n  }\n#-}\n")
