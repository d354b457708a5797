"""The verifier: checks a program against the spec, reporting every violation for people.

``verify(module)`` walks the module once and raises :class:`~shlo.errors.VerificationError`
holding one :class:`~shlo.errors.Diagnostic` per violation, in source order, each formatted like
an MLIR diagnostic::

    model.mlir:12:8: error: 'stablehlo.dot_general' op (C10) contracting dimension sizes must
    match: dim(lhs, 1) = 3, dim(rhs, 0) = 4

What is checked:

* **structure** (spec "Programs"): every value is defined before its use and visible where it
  is used (functions are isolated from above, op regions see the enclosing values), every block
  ends with the right terminator (`func.return` in functions, `stablehlo.return` in op regions),
  function bodies match their signatures, `func.return` matches the function's result types,
  `func.call` matches its callee, symbols are defined once and references resolve;
* **types** (spec "Types"): the quantized element type constraints C1-C11, reported where the
  type first appears;
* **ops**: each op's constraints (spec "Ops", C1..Cn) and type inference, by the ``@verifier``
  function its ops module registered next to its kernel (see ``shlo/ops/registry.py``); ops
  beyond the seed spec get at least their arity and types checked there.

The verifier is conservative: what it cannot judge (ops of other dialects, attributes it does not
model), it accepts. A verifier function that fails with a Python exception is a bug in shlo,
raised as :class:`~shlo.errors.InternalError` naming the op (``SHLO_DEBUG=1`` re-raises the
exception itself).

``shlo verify`` is in shlo/cli.py; its ``--verify-diagnostics`` mode, which checks
``// expected-error@+N {{...}}`` annotations like ``mlir-opt -verify-diagnostics``, is in
shlo/testing/diagnostics.py.
"""

from __future__ import annotations

import math
import os
from typing import Any

from .attributes import StringAttr, SymbolRefAttr, TypeAttr, format_attr
from .dtypes import finfo
from .errors import Diagnostic, Diagnostics, InternalError, ParseError, VerificationError
from .ir import Block, Module, Operation, Value
from .registry import FUNCTION_RETURN, TERMINATOR, lookup, names_with
from .types import FloatType, FunctionType, IntegerType, QuantizedType, TensorType, TupleType

__all__ = ["Diagnostics", "verify", "collect", "verify_text"]


# --- the ops shlo knows ---------------------------------------------------------------------------

_CHECKED_DIALECTS = frozenset({"stablehlo", "chlo", "func", "builtin"})


# --- quantized element types (spec "Types", C1-C11) -----------------------------------------------


def _float_range(ft: FloatType) -> tuple[float, float] | None:
    """(smallest positive subnormal, largest finite) of a float type."""
    try:
        info = finfo(ft.dtype)
        return float(info.smallest_subnormal), float(info.max)
    except Exception:
        return None


def quantized_type_problems(qt: QuantizedType) -> list[tuple[str, str]]:
    """The quantized element type constraints (spec "Types": C1-C11) that ``qt`` violates, as
    ``(label, message)`` pairs. C1 and C8 are op-level in upstream (reported by the ops' type
    checks); everything else is reported where the type appears."""
    out: list[tuple[str, str]] = []
    st, et = qt.storage_type, qt.expressed_type
    if not isinstance(st, IntegerType):
        out.append(("C1", f"storage type must be an integer type, got {st}"))
        return out
    if not isinstance(et, FloatType):
        out.append(("C5", f"expressed type must be a floating-point type, got {et}"))
        return out
    smin, smax = qt.min, qt.max
    if qt.storage_min is not None and not st.min <= qt.storage_min <= st.max:
        out.append(("C4", f"illegal storage type minimum: {qt.storage_min} (the range of "
                          f"{st.name} is [{st.min}, {st.max}])"))
    if qt.storage_max is not None and not st.min <= qt.storage_max <= st.max:
        out.append(("C4", f"illegal storage type maximum: {qt.storage_max} (the range of "
                          f"{st.name} is [{st.min}, {st.max}])"))
    if qt.storage_min is not None and qt.storage_max is not None and smin >= smax:
        out.append(("C4", f"storage_min {smin} must be less than storage_max {smax}"))
    rng = _float_range(et)
    for s in qt.scales:
        if not math.isfinite(s):
            out.append(("C7", f"illegal scale: {s:e} (scales must be finite)"))
        elif s <= 0:
            out.append(("C6", f"illegal scale: {s:e} (scales must be positive)"))
        elif rng is not None and not rng[0] <= s <= rng[1]:
            out.append(("C5", f"scale {s:e} out of expressed type range [{rng[0]:e}, "
                              f"{rng[1]:e}] of {et.name}"))
    if len(qt.scales) != len(qt.zero_points):
        out.append(("C10", f"illegal number of scales and zero points: {len(qt.scales)} scales,"
                           f" {len(qt.zero_points)} zero points"))
    qd = qt.quantization_dimension
    if qd is None and len(qt.scales) != 1:
        out.append(("C11", f"a per-tensor quantized type has exactly one scale, got "
                           f"{len(qt.scales)}"))
    if qd is not None and qd < 0:
        out.append(("C12", f"illegal quantized dimension: {qd}"))
    return out


def _tensors_in(t: Any) -> list[TensorType]:
    """The tensor types a type mentions."""
    if isinstance(t, TensorType):
        return [t]
    if isinstance(t, TupleType):
        return [x for e in t.types for x in _tensors_in(e)]
    if isinstance(t, FunctionType):
        return [x for e in (*t.inputs, *t.results) for x in _tensors_in(e)]
    return []


def _quantized_in(t: Any) -> list[QuantizedType]:
    """The quantized element types a type mentions."""
    if isinstance(t, TensorType):
        et = t.element_type
        return [et] if isinstance(et, QuantizedType) else []
    if isinstance(t, (TupleType,)):
        return [q for e in t.types for q in _quantized_in(e)]
    if isinstance(t, FunctionType):
        return [q for e in (*t.inputs, *t.results) for q in _quantized_in(e)]
    if isinstance(t, QuantizedType):
        return [t]
    return []


# --- the walker -----------------------------------------------------------------------------------


class _Walker:
    """One verification run over a module."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.symbols: dict[str, Operation] = {}
        self.diag = Diagnostics(self.symbols)
        self.visible: set[Value] = set()
        # id(type) -> problems, with the type kept alive so that ids stay unique during the run.
        self._types: dict[int, tuple[Any, bool]] = {}
        self._reported_types: set[Any] = set()
        self.debug = bool(os.environ.get("SHLO_DEBUG"))

    # types ---------------------------------------------------------------------------------------

    def check_type(self, t: Any, where: Operation) -> None:
        """Report the quantized element types of ``t`` that break the spec's type constraints,
        once per type, where the type first appears; and malformed bounds."""
        hit = self._types.get(id(t))
        if hit is not None and hit[0] is t:
            return
        self._types[id(t)] = (t, True)
        for tt in _tensors_in(t):
            if tt.encoding is not None:
                self.check_bounds(tt, where)
        for qt in _quantized_in(t):
            try:
                if qt in self._reported_types:
                    continue
                self._reported_types.add(qt)
            except TypeError:
                pass
            problems = quantized_type_problems(qt)
            if problems:
                from .ops._constraints import type_str

                for label, msg in problems:
                    self.diag.error(None, label, f"{msg} in type '{type_str(qt)}'",
                                    location=where.location)

    def check_bounds(self, t: TensorType, where: Operation) -> None:
        from .ops._constraints import bounds_of

        b = bounds_of(t)
        if b is None or t.shape is None:
            return
        try:
            if t in self._reported_types:
                return
            self._reported_types.add(t)
        except TypeError:
            pass
        if len(b) != len(t.shape):
            self.diag.error(None, "", f"Bounds length is {len(b)}, expected to be equal to "
                                      f"rank({len(t.shape)}) of the tensor",
                            location=where.location)
            return
        for d, (n, bound) in enumerate(zip(t.shape, b)):
            if n is not None and bound is not None:
                self.diag.error(None, "", f"Static dimension {d} cannot have a bound, use "
                                          f"ShapedType::kDynamic to indicate a missing bound",
                                location=where.location)
                return

    # structure -----------------------------------------------------------------------------------

    def run(self) -> list[Diagnostic]:
        top = self.module.op
        if not top.regions or not top.regions[0].blocks:
            return self.diag.items
        self.visit_module_body(top.regions[0].blocks[0])
        if not self.diag.items:
            self.diag.items.extend(self.diag.symbol_uses)
        return self.diag.items

    def visit_module_body(self, body: Block) -> None:
        """A module's body is a symbol table: its symbols are defined once, and references
        inside it resolve there."""
        outer = self.symbols
        symbols: dict[str, Operation] = {}
        for op in body.operations:
            name = op.attr("sym_name")
            if isinstance(name, StringAttr):
                if name.value in symbols:
                    self.diag.error(op, "", f"redefinition of symbol named '{name.value}'",
                                    notes=[("see existing symbol definition here",
                                            symbols[name.value].location)])
                else:
                    symbols[name.value] = op
        self.symbols = self.diag.symbols = symbols
        self.visit_block(body, isolated=True)
        self.symbols = self.diag.symbols = outer

    def visit_block(self, block: Block, isolated: bool = False) -> None:
        outer = self.visible
        if isolated:
            self.visible = set()
        added: list[Value] = []
        visible = self.visible
        owner = block.parent.parent if block.parent is not None else None
        for a in block.arguments:
            visible.add(a)
            added.append(a)
            if owner is not None:
                self.check_type(a.type, owner)
        ops = block.operations
        last = len(ops) - 1
        for i, op in enumerate(ops):
            for k, v in enumerate(op.operands):
                if v not in visible:
                    self._bad_use(op, k, v)
            n_before = len(self.diag.items)
            self.check_op(op, i == last)
            iso = op.name in ("func.func", "builtin.module", "module")
            if op.regions and (iso or len(self.diag.items) == n_before):
                # The ops nested in an invalid op are not verified (as upstream does): their
                # errors would mostly repeat the parent's. Functions are always entered.
                for region in op.regions:
                    for b in region.blocks:
                        if op.name in ("builtin.module", "module"):
                            self.visit_module_body(b)
                        else:
                            self.visit_block(b, isolated=iso)
                    self.check_terminators(op, region)
            for r in op.results:
                visible.add(r)
                added.append(r)
                self.check_type(r.type, op)
        if isolated:
            self.visible = outer
        else:
            for v in added:
                visible.discard(v)

    def _bad_use(self, op: Operation, k: int, v: Value) -> None:
        name = f"%{v.name}" if v.name else "value"
        owner = v.owner
        if isinstance(owner, Operation) and owner.parent is op.parent and owner.parent is not None:
            self.diag.error(op, "", f"operand #{k} ({name}) does not dominate this use: it is "
                                    f"defined later in the block",
                            notes=[("operand defined here", owner.location)])
        else:
            self.diag.error(op, "", f"operand #{k} ({name}) is not visible here: it is defined "
                                    f"in another function or region")

    def check_terminators(self, op: Operation, region: Any) -> None:
        if op.dialect not in _CHECKED_DIALECTS or op.name in ("builtin.module", "module"):
            return
        for b in region.blocks:
            if not b.operations:
                if op.name == "func.func":
                    continue  # declarations have no body; handled by check_func
                self.diag.error(op, "", "empty block: expect at least a terminator")
                continue
            t = b.operations[-1]
            if t.name not in names_with(TERMINATOR):
                what = "a function" if op.name == "func.func" else f"a region of '{op.name}'"
                self.diag.error(op, "", f"block in {what} must end with a terminator "
                                        f"('func.return' or 'stablehlo.return'), found "
                                        f"'{t.name}'", location=t.location)

    def check_op(self, op: Operation, is_last: bool) -> None:
        name = op.name
        if name in names_with(TERMINATOR) and not is_last:
            self.diag.error(op, "", "must be the last operation in the parent block")
        if name == "func.func":
            self.check_func(op)
        elif name in names_with(FUNCTION_RETURN):
            self.check_func_return(op)
        elif name in ("func.call", "call"):
            self.check_call(op)
        elif name == "stablehlo.return":
            self.check_region_return(op)
        d = lookup(name)  # imports the op's module on first use (shlo/registry.py)
        fn = d.verify if d is not None else None
        if fn is None:
            if op.dialect in _CHECKED_DIALECTS and d is None:
                self.diag.error(None, "", f"unregistered operation '{name}' found in dialect "
                                          f"('{op.dialect}')", location=op.location)
            return
        self.diag.current = op
        try:
            fn(op, self.diag)
        except Exception as e:  # a bug in a verifier: say so, never swallow it
            if self.debug:
                raise
            raise InternalError.at(name, op.location, "verifying", e) from e

    # functions -----------------------------------------------------------------------------------

    def check_func(self, op: Operation) -> None:
        ft_attr = op.attr("function_type")
        ft = ft_attr.type if isinstance(ft_attr, TypeAttr) else ft_attr
        if not isinstance(ft, FunctionType):
            self.diag.error(op, "", "requires attribute 'function_type' holding a function type")
            return
        self.check_type(ft, op)
        if not isinstance(op.attr("sym_name"), StringAttr):
            self.diag.error(op, "", "requires attribute 'sym_name'")
        vis = op.attr("sym_visibility")
        if vis is not None and not isinstance(vis, StringAttr):
            self.diag.error(op, "", "requires visibility attribute 'sym_visibility' to be a string "
                                    f"attribute, but got {format_attr(vis)}")
        elif vis is not None and vis.value not in ("public", "private", "nested"):
            self.diag.error(op, "", 'visibility expected to be one of ["public", "private", '
                                    f'"nested"], but got {format_attr(vis)}')
        if not op.regions or not op.regions[0].blocks:
            if not (isinstance(vis, StringAttr) and vis.value in ("private", "nested")):
                self.diag.error(op, "", "symbol declaration cannot have public visibility")
            return
        entry = op.regions[0].blocks[0]
        args = entry.arguments
        if len(args) != len(ft.inputs):
            self.diag.error(op, "", f"entry block must have {len(ft.inputs)} arguments to match "
                                    f"function signature, but has {len(args)}")
            return
        from .ops._constraints import type_str

        for i, (a, t) in enumerate(zip(args, ft.inputs)):
            if a.type != t:
                self.diag.error(op, "", f"type of entry block argument #{i}('{type_str(a.type)}')"
                                        f" must match the type of the corresponding argument in "
                                        f"function signature('{type_str(t)}')")

    def _enclosing_func(self, op: Operation) -> Operation | None:
        b = op.parent
        r = b.parent if b is not None else None
        return r.parent if r is not None else None

    def check_func_return(self, op: Operation) -> None:
        func = self._enclosing_func(op)
        if func is None or func.name != "func.func":
            self.diag.error(op, "", "expects parent op 'func.func'")
            return
        ft_attr = func.attr("function_type")
        ft = ft_attr.type if isinstance(ft_attr, TypeAttr) else ft_attr
        if not isinstance(ft, FunctionType):
            return
        fname = getattr(func.attr("sym_name"), "value", "?")
        if len(op.operands) != len(ft.results):
            self.diag.error(op, "", f"has {len(op.operands)} operands, but enclosing function "
                                    f"(@{fname}) returns {len(ft.results)}")
            return
        from .ops._constraints import type_str

        for i, (v, t) in enumerate(zip(op.operands, ft.results)):
            if v.type != t:
                self.diag.error(op, "", f"type of return operand {i} ('{type_str(v.type)}') "
                                        f"doesn't match function result type ('{type_str(t)}') "
                                        f"in function @{fname}")

    def check_region_return(self, op: Operation) -> None:
        parent = self._enclosing_func(op)
        if parent is None:
            self.diag.error(op, "", "expects to be inside the region of an op")

    def check_call(self, op: Operation) -> None:
        callee = op.attr("callee")
        if isinstance(callee, SymbolRefAttr):
            name = callee.name
        elif isinstance(callee, StringAttr):
            name = callee.value
        else:
            self.diag.error(op, "", "requires a 'callee' symbol reference attribute")
            return
        func = self.symbols.get(name)
        if func is None or func.name != "func.func":
            self.diag.error(op, "", f"'{name}' does not reference a valid function")
            return
        ft_attr = func.attr("function_type")
        ft = ft_attr.type if isinstance(ft_attr, TypeAttr) else ft_attr
        if not isinstance(ft, FunctionType):
            return
        from .ops._constraints import type_str, types_str

        # MLIR's CallOp::verifySymbolUses reports the first mismatch only
        if len(op.operands) != len(ft.inputs):
            self.diag.error(op, "", f"incorrect number of operands for callee: expected "
                                    f"{len(ft.inputs)}, got {len(op.operands)}")
            return
        for i, (v, t) in enumerate(zip(op.operands, ft.inputs)):
            if v.type != t:
                self.diag.error(op, "", f"operand type mismatch: expected operand type "
                                        f"'{type_str(t)}', but provided '{type_str(v.type)}'"
                                        f" for operand number {i}")
                return
        if len(op.results) != len(ft.results):
            self.diag.error(op, "", f"incorrect number of results for callee: expected "
                                    f"{len(ft.results)}, got {len(op.results)}")
        else:
            for i, (r, t) in enumerate(zip(op.results, ft.results)):
                if r.type != t:
                    self.diag.error(op, "", f"result type mismatch at index {i}: op result "
                                            f"types {types_str(op.result_types)}, function "
                                            f"result types {types_str(ft.results)}")
                    return


def collect(module: Module) -> list[Diagnostic]:
    """Every violation in ``module``, in walk order (an empty list for a valid program)."""
    return _Walker(module).run()


def verify(module: Module) -> None:
    """Raise :class:`VerificationError` listing every violation in ``module``."""
    diags = collect(module)
    if diags:
        raise VerificationError(diags[0].message, diagnostics=diags,
                                filename=getattr(module, "filename", None))


def verify_text(text: str, filename: str | None = None) -> list[Diagnostic]:
    """Parse and verify ``text``; parse errors come back as diagnostics too."""
    from .syntax.parser import parse

    try:
        module = parse(text, filename)
    except ParseError as e:
        return list(e.diagnostics)
    return collect(module)
