"""The op registry: one :class:`OpDef` per op name, holding everything shlo knows about that op.

An op is declared once, in the ops module that owns it (``shlo/ops/...``), next to its kernel and
its constraints::

    define("stablehlo.cbrt", spec="cbrt", syntax=UNARY, traits={ELEMENTWISE, DOQ})

    @kernel("stablehlo.cbrt")
    def cbrt(op: Operation, ctx: PrepareContext) -> Kernel: ...

    @verifier("stablehlo.cbrt")
    def _verify_cbrt(op: Operation, diag: Diagnostics) -> None: ...

The generic machinery (parser, printer, verifier, interpreter, passes) walks plain IR and asks
the op's definition for what is op-specific; every table of op names is derived from the
definitions (:func:`names_with`, :func:`defined`), never written by hand.

This module is plain data (layer 0): it imports nothing of shlo. The ops modules fill it when
they are imported; :func:`lookup` imports, on first use, only the modules that register the op
asked for, found in an index generated from the eager registry (``shlo/ops/_index.py``; a test
checks it against a full import), and :func:`names_with` answers from that index without
importing. ``shlo/__init__.py`` installs the loader and the index (:func:`set_loader`), so that
a layer below the ops never imports them.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from .errors import Diagnostics
    from .interpreter.evaluator import PrepareContext
    from .ir import Operation
    from .types import Type

__all__ = [
    "OpDef", "Syntax", "define", "kernel", "verifier", "inference", "folder", "lookup", "get",
    "defined", "names_with", "set_loader", "load_extension", "extension_keys", "record_origins",
    "Index", "Kernel", "PrepareFn", "VerifyFn", "InferFn", "FoldFn",
    "ELEMENTWISE", "COMMUTATIVE", "TERMINATOR", "FUNCTION_RETURN", "DOQ", "QUANTIZED_AWARE",
    "QUANTIZED_STORAGE", "DOT_LIKE", "ISOLATED", "SIDE_EFFECTS", "TRAITS",
]

# --- traits ---------------------------------------------------------------------------------------
# What the generic machinery needs to know about an op, beyond its kernel and constraints.

ELEMENTWISE = "elementwise"
"""Applies element by element (spec: "element-wise"); its kernel works on arrays of any shape, so
region bodies made of such ops run over whole arrays of element pairs."""
COMMUTATIVE = "commutative"
"""``op(a, b) = op(b, a)``: a reduction body `return op(arg1, arg0)` is the same as op."""
TERMINATOR = "terminator"
"""Ends a block (`stablehlo.return`, `func.return`, ...)."""
FUNCTION_RETURN = "function_return"
"""The terminator of a function body (`func.return`)."""
DOQ = "dequantize_op_quantize"
"""On quantized tensors the op means `dequantize -> op -> quantize` (spec
`dequantize_op_quantize`); the interpreter and the qdq passes treat it so."""
QUANTIZED_AWARE = "quantized_aware"
"""The kernel handles quantized operands itself (no dequantize-op-quantize wrapping)."""
QUANTIZED_STORAGE = "quantized_storage"
"""On quantized tensors the op only moves storage values (reshape, transpose, slice, ...): its
integer lowering keeps the op, on the storage type."""
DOT_LIKE = "dot_like"
"""A contraction (dot, dot_general, convolution) whose quantized form has its own lowering."""
ISOLATED = "isolated_from_above"
"""Its regions see no value defined outside them (`func.func`, `builtin.module`)."""
SIDE_EFFECTS = "side_effects"
"""Has effects beyond its results (feeds, send/recv, custom calls, checks): never removed as
dead code."""

TRAITS = frozenset({ELEMENTWISE, COMMUTATIVE, TERMINATOR, FUNCTION_RETURN, DOQ, QUANTIZED_AWARE,
                    QUANTIZED_STORAGE, DOT_LIKE, ISOLATED, SIDE_EFFECTS})

# --- the definitions ------------------------------------------------------------------------------

Kernel = Callable[..., Sequence[Any]]
"""The run-time callable a prepare function returns: ``run(*operand_values) -> results``."""
PrepareFn = Callable[["Operation", "PrepareContext"], Kernel]
"""Called once per op occurrence: decodes attributes, fixes static types, compiles regions."""
VerifyFn = Callable[["Operation", "Diagnostics"], None]
"""Reports every violated constraint with ``diag.error(op, "C1", "message")``."""
InferFn = Callable[["Operation", "Diagnostics"], "list[Type] | None"]
"""Type inference: the result types the op's operands, attributes and regions determine (its
results are not read), or None after reporting why they cannot be inferred. The verifier
compares them with the written types; passes that create ops call it to type them."""
FoldFn = Callable[["Operation", Any], "Sequence[Any] | None"]
"""Constant folding: ``fold(op, ctx)`` returns what replaces the op's results (for each result a
Value or a DenseElementsAttr, which becomes a constant), or None to leave the op. ``ctx`` is
the folding pass's :class:`shlo.passes._patterns.FoldContext` (constant operands, options, and
``evaluate`` that runs the op's own kernel on constant operands)."""


class Syntax(Protocol):
    """An op's pretty (custom assembly) form: a parse/print pair and the attributes it spells."""

    attrs: frozenset[str]

    def parse(self, p: Any, name: str, nres: int, start: int) -> "Operation": ...

    def print(self, pr: Any, op: "Operation") -> str | None: ...


class OpDef:
    """Everything op-specific about one op name.

    ``spec`` names the spec section (the anchor of https://openxla.org/stablehlo/spec, e.g.
    ``"dot_general"``); ``inherent`` the op's inherent attribute names (printed as properties
    `<{...}>` in the generic form; None when not known: then every attribute name without a
    `.` is taken as inherent, as for ops shlo does not know); ``syntax`` its pretty form;
    ``prepare``, ``verify`` and ``infer`` its kernel, constraints and type inference; ``fold``
    its constant folding (what `stablehlo-aggressive-folder` does to it).

    A plain class, not a dataclass: `import shlo` (and `shlo --help`) then imports neither
    dataclasses nor inspect (a fifth of `shlo --help`'s instructions).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.spec: str | None = None
        self.summary = ""
        self.traits: frozenset[str] = frozenset()
        self.inherent: frozenset[str] | None = None
        self.syntax: Syntax | None = None
        self.prepare: PrepareFn | None = None
        self.verify: VerifyFn | None = None
        self.infer: InferFn | None = None
        self.fold: FoldFn | None = None
        self.extra: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"OpDef({self.name!r}, spec={self.spec!r}, traits={sorted(self.traits)})"

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    def has(self, trait: str) -> bool:
        return trait in self.traits


_OPS: dict[str, OpDef] = {}
_by_trait: dict[str, frozenset[str]] = {}
_loader: list[Callable[[], None]] = []
_loaded = [False]
_recording: list[dict[str, set[str]]] = []  # see record_origins


def _def(name: str) -> OpDef:
    d = _OPS.get(name)
    if d is None:
        d = _OPS[name] = OpDef(name)
    if _recording:
        _recording[0].setdefault(name, set()).add(_importing_module())
    return d


def _importing_module() -> str:
    """The module whose import is running the current registration: the innermost frame of
    module-level code (a registration helper called at import time is not the module)."""
    f: Any = sys._getframe(2)
    while f is not None and f.f_code.co_name != "<module>":
        f = f.f_back
    return f.f_globals.get("__name__", "?") if f is not None else "?"


def record_origins() -> dict[str, set[str]]:
    """From now on, note for each registration the module whose import made it: returns the
    dict (op name -> module names) that fills as modules are imported (what generates the
    index, ``python -m shlo.ops._make_index``)."""
    _recording[:] = [{}]
    return _recording[0]


def define(name: str, *, spec: str | None = None, summary: str = "",
           traits: Iterable[str] = (), inherent: Iterable[str] | str | None = None,
           syntax: Syntax | None = None) -> OpDef:
    """Declare op ``name``: its spec section, traits, inherent attributes and pretty syntax.

    ``inherent`` defaults to the attributes the syntax spells. Declaring an op twice is an error
    (each op has one home)."""
    d = _def(name)
    if d.extra.get("defined"):
        raise ValueError(f"op {name} is defined twice")
    unknown = set(traits) - TRAITS
    if unknown:
        raise ValueError(f"unknown traits for {name}: {sorted(unknown)}")
    d.extra["defined"] = True
    d.spec = spec
    d.summary = summary
    d.traits = d.traits | frozenset(traits)
    if isinstance(inherent, str):
        inherent = inherent.split()
    names = frozenset(inherent) if inherent is not None else None
    if syntax is not None:
        d.syntax = syntax
        names = (names or frozenset()) | syntax.attrs
    d.inherent = names
    _by_trait.clear()
    return d


def kernel(*names: str, quantized_aware: bool = False) -> Callable[[PrepareFn], PrepareFn]:
    """Register ``fn`` as the prepare function (the kernel) of the ops ``names``."""

    def register(fn: PrepareFn) -> PrepareFn:
        for n in names:
            d = _def(n)
            if d.prepare is not None:
                raise ValueError(f"op {n} has two kernels")
            d.prepare = fn
            if quantized_aware:
                d.traits = d.traits | {QUANTIZED_AWARE}
        _by_trait.clear()
        return fn

    return register


def verifier(*names: str) -> Callable[[VerifyFn], VerifyFn]:
    """Register ``fn`` as the constraint checker of the ops ``names``."""

    def register(fn: VerifyFn) -> VerifyFn:
        for n in names:
            d = _def(n)
            if d.verify is not None:
                raise ValueError(f"op {n} has two verifiers")
            d.verify = fn
        return fn

    return register


def inference(*names: str) -> Callable[[InferFn], InferFn]:
    """Register ``fn`` as the type inference of the ops ``names``."""

    def register(fn: InferFn) -> InferFn:
        for n in names:
            d = _def(n)
            if d.infer is not None:
                raise ValueError(f"op {n} has two type inference functions")
            d.infer = fn
        return fn

    return register


def folder(*names: str) -> Callable[[FoldFn], FoldFn]:
    """Register ``fn`` as the constant folding of the ops ``names`` (:data:`FoldFn`)."""

    def register(fn: FoldFn) -> FoldFn:
        for n in names:
            d = _def(n)
            if d.fold is not None:
                raise ValueError(f"op {n} has two folders")
            d.fold = fn
        return fn

    return register


# --- queries --------------------------------------------------------------------------------------


class Index:
    """Where the opset's registrations live, generated from the eager registry
    (``shlo/ops/_index.py``): the modules to import for each op name, the op names of each
    trait, and the modules that register other named things (``extensions``: kind -> key ->
    module; custom_call targets, dialect attribute parsers)."""

    def __init__(self, modules: dict[str, tuple[str, ...]], traits: dict[str, frozenset[str]],
                 extensions: dict[str, dict[str, str]]) -> None:
        self.modules = modules
        self.traits = traits
        self.extensions = extensions


_index: list[Index] = []
_index_source: list[Callable[[], Index]] = []
_ready: set[str] = set()  # op names whose modules are imported (or that have none)
_extensions_loaded: set[tuple[str, str]] = set()


def set_loader(fn: Callable[[], None], index: Callable[[], Index] | None = None) -> None:
    """Install the function that imports every ops module and the one that reads the index
    (``shlo/__init__.py`` does). Without an index, the first query imports every module."""
    _loader[:] = [fn]
    _index_source[:] = [index] if index is not None else []
    _index.clear()


def _ensure_loaded() -> None:
    if not _loaded[0] and _loader:
        _loaded[0] = True
        _loader[0]()
        _by_trait.clear()


def _get_index() -> Index | None:
    if not _index and _index_source:
        _index.append(_index_source[0]())
    return _index[0] if _index else None


def _import_all(modules: Iterable[str]) -> bool:
    """Import ``modules``; False when one of them is still being imported (a registration
    made at import time asked for an op of a module that is not done yet)."""
    done = True
    for m in modules:
        mod = importlib.import_module(m)
        spec = getattr(mod, "__spec__", None)
        done = done and not getattr(spec, "_initializing", False)
    return done


def _load(name: str) -> OpDef | None:
    idx = _get_index()
    if idx is None:
        _ensure_loaded()
        _ready.add(name)
    elif _import_all(idx.modules.get(name, ())):
        _ready.add(name)  # an op outside the index (vhlo, unknown) has nothing to import
    return _OPS.get(name)


def lookup(name: str) -> OpDef | None:
    """The definition of op ``name``, or None for an op shlo does not know."""
    if name in _ready:
        return _OPS.get(name)
    return _load(name)


get = lookup


def defined() -> dict[str, OpDef]:
    """Every definition, by op name (read only)."""
    _ensure_loaded()
    idx = _get_index()
    if idx is not None:
        _ready.update(idx.modules)
    return _OPS


def names_with(trait: str) -> frozenset[str]:
    """The names of the ops that have ``trait`` (from the index, and the ops registered so far:
    no module is imported for it)."""
    s = _by_trait.get(trait)
    if s is None:
        idx = _get_index()
        if idx is None:
            _ensure_loaded()
        known = idx.traits.get(trait, frozenset()) if idx is not None else frozenset()
        s = _by_trait[trait] = known | frozenset(
            n for n, d in _OPS.items() if trait in d.traits)
    return s


def load_extension(kind: str, key: str) -> bool:
    """Import the module that registers ``key`` of ``kind`` (``"custom_call_target"``,
    ``"attribute_dialect"``) per the index; False when the index names none."""
    idx = _get_index()
    if idx is None:
        _ensure_loaded()
        return False
    module = idx.extensions.get(kind, {}).get(key)
    if module is None:
        return False
    if (kind, key) not in _extensions_loaded:
        importlib.import_module(module)
        _extensions_loaded.add((kind, key))
    return True


def extension_keys(kind: str) -> list[str]:
    """The keys of ``kind`` the index knows (registered or not yet)."""
    idx = _get_index()
    return sorted(idx.extensions.get(kind, {})) if idx is not None else []
