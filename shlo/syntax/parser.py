"""The parser: StableHLO/MLIR text -> IR (:class:`shlo.ir.Module`).

Recursive descent over the lazy lexer of :mod:`shlo.syntax.lexer`. :class:`Parser` is made of
parts, each in its own module, that a person reads whole:

* :mod:`shlo.syntax.cursor`: the current token, errors, SSA scopes;
* :mod:`shlo.syntax.parse_types`: types;
* :mod:`shlo.syntax.parse_attributes`: attributes (dense literals through :mod:`.dense`);
* :mod:`shlo.syntax.parse_locations`: locations;
* this module: ops (the generic form; the pretty forms are the ops' own, found by
  ``registry.lookup(name).syntax``), regions, blocks, SSA values, the module and its aliases;
* :mod:`shlo.syntax.memo`: one-line ops read again from what their first reading built;
* :mod:`shlo.syntax.function_memo`: whole functions likewise.

Ops inside a block are parsed in a loop (never by recursion), so long op chains cost no stack;
nesting (regions, nested literals) is recursive and a pathological depth raises
``ParseError("nesting too deep")``.
"""

from __future__ import annotations

from typing import Any

from ..attributes import (
    ENUM_CASES, DenseElementsAttr, DenseResourceAttr, canonical_struct_params,
)
from ..resources import ResourceHandle
from ..errors import ParseError
from ..ir import Block, FileLineColLoc, Location, Module, Operation, Region, UNKNOWN_LOC, Value
from ..registry import ISOLATED, lookup, names_with
from ..types import FunctionType, Type
from .dense import DenseLiteralError, HexBlob
from .lexer import (BANG, BARE, CARET, EOF, HASH, PUNCT, SKIP_RE, STRING, TOKEN_RE, VALUE,
                    LiteralError)
from .constant_line import constant_line
from .function_memo import learn_function, memo_function
from .memo import learn, memo_ops
from .parse_locations import LocationParser, LocRef

__all__ = ["parse", "Parser", "LocRef", "ENUM_CASES", "canonical_struct_params"]

_MATCH = TOKEN_RE.match


def parse(text: str, filename: str | None = None) -> Module:
    """Parse a whole file (pretty or generic form) into a :class:`Module`; raises ParseError."""
    from .._gc import paused_gc

    p = Parser(text, filename)
    try:
        with paused_gc():
            return p.parse_module()
    except RecursionError:
        raise p.make_error("nesting too deep") from None
    except LiteralError as e:
        raise p.make_error(str(e)) from None


class Parser(LocationParser):
    """State of one parse: lexer position, SSA scopes, aliases, caches."""

    def __init__(self, text: str, filename: str | None = None) -> None:
        self.attr_aliases: dict[str, Any] = {}
        self.type_aliases: dict[str, Type] = {}
        self.loc_aliases: dict[str, Location] = {}
        self.alias_order: dict[str, Any] = {}
        self.has_loc_refs = False
        self.default_dialect = ["builtin"]
        self.type_cache: dict[str, Type] = {}
        self.sig_cache: dict[str, FunctionType] = {}
        self.const_cache: dict[tuple[str, str], DenseElementsAttr] = {}  # (constant_line's)
        self.block_labels: list[dict[str, Block]] = []
        self.resources: dict[str, ResourceHandle] = {}
        self.resource_uses: list[tuple[DenseResourceAttr, int]] = []
        self.memo: dict[str, dict[str, tuple]] = {}  # dialect -> line template -> reading
        self.locrefs: dict[str, LocRef] = {}  # (one per alias: the lines of .memo share them)
        self.operands_read: list[tuple[int, str, Value]] | None = None
        self.memo_miss: tuple[int, Any] | None = None  # (memo_ops's last miss, for learn)
        self.function_memo: dict[str, dict[str, tuple]] = {}  # dialect -> function text -> op
        self.function_memo_size = 0  # (characters of the texts it keeps)
        self.function_miss: tuple | None = None  # (memo_function's last miss)
        super().__init__(text, filename)

    _memo_ops = memo_ops  # (a method: ``self._memo_ops(block)``)
    _memo_function = memo_function
    _constant_line = constant_line

    # --- op names ---------------------------------------------------------------------------------

    def qualify(self, short: str) -> str:
        """The full name of an op written without its dialect: an op isolated from above
        (`module`, `func`) is found anywhere, as older MLIR wrote them; any other is in the
        default dialect of the enclosing region (`return` in a `func.func` is `func.return`)."""
        for full in names_with(ISOLATED):
            if full.partition(".")[2] == short:
                return full
        return f"{self.default_dialect[-1]}.{short}"

    def region_dialect(self, op_name: str) -> str:
        """The default dialect inside the regions of ``op_name`` (MLIR's OpAsmOpInterface): an
        op isolated from above makes its own dialect the default; other ops keep the
        enclosing one."""
        if op_name in names_with(ISOLATED):
            return op_name.partition(".")[0]
        return self.default_dialect[-1]

    # --- SSA values -----------------------------------------------------------------------------

    def operand(self) -> Value:
        """The value named by the current VALUE token (which is consumed)."""
        if self.k != VALUE:
            self.error("expected SSA operand")
        val = self.values.get(self.v[1:])
        if val is None:
            val = self._lookup_slow(self.v)
        elif type(val) is list:
            val = val[0]
        if self.operands_read is not None:
            self.operands_read.append((self.start, self.v, val))
        self._advance()
        return val

    def assignment_list(self) -> tuple[list[str], list[Value]]:
        """MLIR's `parseAssignmentList`: `(%name = %value, ...)`, the names (without `%`) the
        region arguments will take and the values assigned to them."""
        self.expect("(")
        names: list[str] = []
        values: list[Value] = []
        while self.v != ")":
            if self.k != VALUE:
                self.error("expected SSA value name")
            names.append(self.v[1:])
            self._advance()
            self.expect("=")
            values.append(self.operand())
            if not self.accept(","):
                break
        self.expect(")")
        return names, values

    def _lookup_slow(self, tok: str) -> Value:
        name, _, idx = tok[1:].partition("#")
        val = self.values.get(name)
        if val is None:
            self.error(f"use of undeclared SSA value name '{tok}'", found=False)
        if not idx:
            return val[0] if type(val) is list else val
        i = int(idx)
        group = val if type(val) is list else [val]
        if i >= len(group):
            self.error(f"result number {i} of '%{name}' is out of range (it has {len(group)})",
                       found=False)
        return group[i]

    def operand_list(self, close: str | None = None) -> list[Value]:
        """`%a, %b, ...` (possibly empty when ``close`` is the next token)."""
        ops: list[Value] = []
        if self.k != VALUE:
            return ops
        while True:
            ops.append(self.operand())
            if self.v != "," or not self._value_follows():
                return ops
            self._advance()

    def _value_follows(self) -> bool:
        m = _MATCH(self.text, self.pos)
        return m.lastindex == VALUE

    def check_types(self, operands: list[Value], types: tuple | list, offset: int) -> None:
        if len(operands) != len(types):
            self.error(f"{len(operands)} operands present, but expected {len(types)}", offset,
                       found=False)
        for v, t in zip(operands, types):
            vt = v.type
            if vt is not t and vt != t:
                self.error(f"use of value '%{v.name}' expects different type than prior uses: "
                           f"'{t}' vs '{vt}'", offset, found=False)

    # --- operations -----------------------------------------------------------------------------

    def parse_ops(self, block: Block) -> None:
        """Ops of a block, up to `}`, a block label or the end of input (a loop, no recursion).

        A line holding one op whose template the memo knows (`%3 = stablehlo.add %1, %2 :
        tensor<4xf32>` after an earlier `%0 = stablehlo.add %a, %b : tensor<4xf32>`) is read
        by :func:`memo.memo_ops`, a one-off `%c = stablehlo.constant dense<...> : tensor<...>`
        line by :func:`constant_line.constant_line`; any other op is read by the general
        recursive-descent path, and the memo learns its line's template (:func:`memo.learn`)."""
        ops = block.operations
        memo = self._memo_ops
        const = self._constant_line
        function = self._memo_function
        while True:
            k = self.k
            if k == VALUE or k == BARE or k == STRING:
                if memo(block) or k == VALUE and const(block):
                    continue
                if k == BARE and self.v == "func.func" and function(block):
                    continue
                start = self.start
                read: list[tuple[int, str, Value]] = []
                self.operands_read = read
                op = self.parse_operation()
                self.operands_read = None
                learn(self, op, start, read)
                if self.function_miss is not None:
                    learn_function(self, op, start)
            elif k == PUNCT and self.v == "}" or k == CARET or k == EOF:
                return
            else:
                op = self.parse_operation()
            op.parent = block
            ops.append(op)

    def parse_operation(self) -> Operation:
        start = self.start
        names: list[tuple[str, int]] | None = None
        if self.k == VALUE:
            names = []
            while True:
                name = self.v[1:]
                if "#" in name:
                    self.error("result name cannot contain '#'", found=False)
                self._advance()
                count = 1
                if self.v == ":":
                    self._advance()
                    count = self.integer()
                    if count < 1:
                        self.error("expected a positive result count", found=False)
                names.append((name, count))
                if self.v != ",":
                    break
                self._advance()
                if self.k != VALUE:
                    self.error("expected SSA value name")
            self.expect("=")
        nres = sum(c for _, c in names) if names else 0
        if self.k == STRING:
            op = self.parse_generic_op()
        elif self.k == BARE:
            op = self.parse_custom_op(nres)
        else:
            self.error("expected operation name")
        if self.v == "loc" and self.k == BARE:
            op.location = self.parse_location()
        elif op.location is UNKNOWN_LOC:  # (a pretty form may read the location itself, as
            op.location = self.location_at(start)  # reduce's `applies` form does)
        if names:
            results = op.results
            if nres != len(results):
                self.error(f"operation defines {len(results)} results but was provided {nres} "
                           f"to bind", start, found=False)
            i = 0
            for name, count in names:
                if count == 1:
                    r = results[i]
                    r.name = name
                    self.define(name, r, start)
                else:
                    group = results[i:i + count]
                    for r in group:
                        r.name = name
                    self.define(name, group, start)
                i += count
        elif op.results:
            # results without names (legal in MLIR only when unused); give them hidden names
            pass
        return op

    def parse_custom_op(self, nres: int) -> Operation:
        name = self.v
        if "." not in name:
            name = self.qualify(name)
        d = lookup(name)
        handler = d.syntax.parse if d is not None and d.syntax is not None else None
        if handler is None:
            e = self.make_error(f"custom op '{name}' is unknown (use the generic form "
                                f"\"{name}\"(...) for ops shlo does not know)")
            e.custom_op_prefixed = True  # type: ignore[attr-defined]  (not by the enclosing op)
            raise e
        start = self.start
        self._advance()
        try:
            return handler(self, name, nres, start)
        except ParseError as e:
            if not getattr(e, "custom_op_prefixed", False):
                d = e.diagnostics[0]
                d.message = f"custom op '{name}' {d.message}"
                e.args = (d.message,)
                e.custom_op_prefixed = True  # type: ignore[attr-defined]
            raise

    def parse_generic_op(self) -> Operation:
        name = self.string()
        self.expect("(", "to start the operand list")
        operands: list[Value] = []
        if self.v != ")":
            operands.append(self.operand())
            while self.accept(","):
                operands.append(self.operand())
        self.expect(")", "to end the operand list")
        successors: list[Block] = []
        if self.v == "[":
            self._advance()
            while True:
                successors.append(self.block_ref())
                if not self.accept(","):
                    break
            self.expect("]")
        props: dict[str, Any] = {}
        offsets: list[tuple[str, int]] = []
        if self.v == "<" and self.k == PUNCT:
            self._advance()
            props = dict(self.dict_items(offsets))
            self.expect(">", "to end the properties")
        regions: list[Region] = []
        if self.v == "(" and self.k == PUNCT:
            self._advance()
            dialect = self.region_dialect(name)
            self.default_dialect.append(dialect)
            while True:
                regions.append(self.parse_region())
                if not self.accept(","):
                    break
            self.default_dialect.pop()
            self.expect(")", "to end the region list")
        attrs: dict[str, Any] = {}
        if self.v == "{" and self.k == PUNCT:
            attrs = dict(self.dict_items(offsets))
        self.expect(":", "followed by the op's function type")
        ft_off = self.start
        ft = self.parse_type()
        if not isinstance(ft, FunctionType):
            self.error("expected function type", ft_off, found=False)
        self.check_types(operands, ft.inputs, ft_off)
        op = Operation(name, operands, list(ft.results), props, attrs, regions, successors)
        if offsets:
            op.attr_locations = {n: self.location_at(o) for n, o in offsets}
        return op

    def block_ref(self) -> Block:
        if self.k != CARET:
            self.error("expected block name")
        label = self.v
        self._advance()
        labels = self.block_labels[-1] if self.block_labels else {}
        b = labels.get(label)
        if b is None:
            b = Block(label=label[1:])
            labels[label] = b
        return b

    # --- regions and blocks ---------------------------------------------------------------------

    def parse_region(self, entry_args: list[tuple[str, Type]] | None = None) -> Region:
        """`{ ops }` or `{ ^bb0(args): ops ^bb1: ... }`; ``entry_args`` names the entry block's
        arguments when the op's pretty form declares them outside the region."""
        self.expect("{")
        region = Region()
        self.push_scope()
        self.block_labels.append({})
        if self.v == "}" and not entry_args:
            self._advance()
            if entry_args is not None:
                region.append(Block())
            self.block_labels.pop()
            self.pop_scope()
            return region
        block = Block()
        if entry_args:
            for name, t in entry_args:
                a = block.add_argument(t, name)
                self.define(name, a)
        if self.k == CARET:
            if entry_args:
                self.error("invalid block name in region with named arguments", found=False)
            block = self._block_header()
        region.append(block)
        self.parse_ops(block)
        while self.k == CARET:
            block = self._block_header()
            region.append(block)
            self.parse_ops(block)
        self.expect("}", "to end the region")
        self.block_labels.pop()
        self.pop_scope()
        return region

    def _block_header(self) -> Block:
        label = self.v
        labels = self.block_labels[-1]
        block = labels.get(label)
        if block is None:
            block = Block(label=label[1:])
            labels[label] = block
        self._advance()
        if self.accept("("):
            if self.v != ")":
                while True:
                    if self.k != VALUE:
                        self.error("expected SSA value name")
                    name = self.v[1:]
                    off = self.start
                    self._advance()
                    self.expect(":")
                    t = self.parse_type()
                    self.optional_location()
                    a = block.add_argument(t, name)
                    self.define(name, a, off)
                    if not self.accept(","):
                        break
            self.expect(")")
        self.expect(":", "after the block header")
        return block

    # --- top level ------------------------------------------------------------------------------

    def parse_module(self) -> Module:
        top = Block()
        while self.k != EOF:
            k = self.k
            if (k == HASH or k == BANG) and self.next_is_eq():
                self._alias_definition()
            elif self.v == "{-#":
                self._file_metadata()
            elif k == BARE and self.v == "func.func" and self._memo_function(top):
                continue
            else:
                start = self.start
                op = self.parse_operation()
                op.parent = top
                top.operations.append(op)
                if self.function_miss is not None:
                    learn_function(self, op, start)
        ops = top.operations
        if len(ops) == 1 and ops[0].name == "builtin.module":
            mod_op = ops[0]
            mod_op.parent = None
        else:
            mod_op = Operation("builtin.module", regions=[Region([top])],
                               location=self.location_at(0))
        module = Module(mod_op, self.filename, dict(self.alias_order))
        if self.has_loc_refs:
            self._resolve_locations(module)
        for attr, off in self.resource_uses:
            problem = attr.problem()
            if problem is not None:
                self.error(problem, off, found=False)
        return module

    def _alias_definition(self) -> None:
        name = self.v
        start = self.start
        is_type = self.k == BANG
        self._advance()
        self.expect("=")
        self.memo.clear()  # (lines and functions read before may read differently now)
        self.function_memo.clear()
        if is_type:
            if name in self.type_aliases:
                self.error(f"redefinition of type alias id '{name[1:]}'", start, found=False)
            t = self.parse_type()
            self.type_aliases[name] = t
            self.alias_order[name] = t
            return
        if name in self.attr_aliases or name in self.loc_aliases:
            self.error(f"redefinition of attribute alias id '{name[1:]}'", start, found=False)
        if self.v == "loc" and self.k == BARE:
            loc = self.parse_location()
            self.loc_aliases[name] = loc
            self.alias_order[name] = loc
            return
        a = self.parse_attribute()
        self.attr_aliases[name] = a
        self.alias_order[name] = a

    def _file_metadata(self) -> None:
        """`{-# dialect_resources: {builtin: {key: "0x...", ...}}, external_resources: {...} #-}`.

        The builtin group's blobs fill the handles of `dense_resource<key>` (:class:`HexBlob`:
        located here, decoded on first use, so a 433 MB file is not copied); other dialects'
        groups and `external_resources` are skipped."""
        self.expect("{-#")
        text = self.text
        while not text.startswith("#-}", self.start):  # (the lexer reads `#-` as an alias)
            section = self.bare()
            self.expect(":")
            self.expect("{")
            while self.v != "}":
                group = self.bare()
                self.expect(":")
                if section == "dialect_resources" and group == "builtin":
                    self._builtin_resources()
                else:
                    self._skip_braces()
                if not self.accept(","):
                    break
            self.expect("}", "to end the resource section")
            if not self.accept(","):
                break
        if not text.startswith("#-}", self.start):
            self.error("expected '#-}' to end the file metadata")
        self.reset(self.start + 3)

    def _builtin_resources(self) -> None:
        self.expect("{")
        seen: set[str] = set()
        while self.v != "}":
            off = self.start
            key = self.string() if self.k == STRING else self.bare()
            if key in seen:
                self.error(f"duplicate resource key '{key}'", off, found=False)
            seen.add(key)
            if self.v != ":":
                self.error("expected ':'")
            # Raw from here: lexing the blob as a string token would scan it all (300 MB).
            start = SKIP_RE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if not self.text.startswith('"0x', start):
                self.error("expected a hex string blob `\"0x...\"` for builtin resource "
                           f"'{key}'", found=False)
            end = self.text.find('"', start + 1) + 1
            if end <= 0:
                self.error("unterminated resource blob", start, found=False)
            try:
                blob = HexBlob(self.text, start, end)
            except DenseLiteralError as e:
                self.error(f"resource '{key}': {e}", start, found=False)
            handle = self.resources.get(key)
            if handle is not None:
                handle.blob = blob
            self.reset(end)
            if not self.accept(","):
                break
        self.expect("}", "to end the builtin resources")

    def _skip_braces(self) -> None:
        """Skip a balanced `{...}` (a resource group shlo does not read)."""
        self.expect("{")
        depth = 1
        while depth:
            if self.k == EOF:
                self.error("unterminated resource group")
            if self.k == PUNCT and self.v in ("{", "}"):
                depth += 1 if self.v == "{" else -1
            self._advance()

    def _resolve_locations(self, module: Module) -> None:
        memo: dict[str, Location] = {}
        for name, loc in list(module.aliases.items()):
            if isinstance(loc, Location):
                module.aliases[name] = self.resolve_location(loc, memo)
        for op in module.walk():
            loc = op.location
            t = type(loc)
            if t is LocRef:  # (most: JAX's `loc(#loc3)`)
                got = memo.get(loc.name)
                op.location = got if got is not None else self.resolve_location(loc, memo)
            elif t is not FileLineColLoc and loc is not UNKNOWN_LOC:
                op.location = self.resolve_location(loc, memo)


# Known dialect attributes: parameter order and the parameters upstream omits when empty/zero.
