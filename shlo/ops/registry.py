"""The op registry: each op's definition is registered once, by name, from its ops module.

An op module declares, for each op it owns:

* a **kernel** (``@kernel("stablehlo.add")``): a *prepare* function called once per op
  occurrence with the :class:`~shlo.ir.Operation` and the
  :class:`~shlo.interpreter.evaluator.PrepareContext`. It decodes attributes, fixes static
  types, compiles regions (``ctx.region(op.regions[0])``) and returns the run-time callable
  ``run(*operand_values) -> sequence of result values``. Run-time values are numpy arrays of the
  element type's dtype (0-d arrays for 0-d tensors, never numpy scalars), quantized tensors are
  arrays of storage values, tokens are :data:`TOKEN`, tuples are Python tuples.
  Kernels of element-wise ops must work on arrays of any shape (not only the static one): region
  bodies are evaluated over whole arrays of element pairs (ARCHITECTURE.md, principle 3).
* a **verifier** (``@verifier("stablehlo.add")``): ``verify(op, diag)`` reports each violated
  constraint with ``diag.error(op, "C1", "message")``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext
    from ..ir import Operation

__all__ = ["OpDef", "OPS", "kernel", "verifier", "lookup", "TOKEN", "Token", "Kernel"]

Kernel = Callable[..., Sequence[Any]]
PrepareFn = Callable[["Operation", "PrepareContext"], Kernel]
VerifyFn = Callable[["Operation", Any], None]


class Token:
    """The run-time value of `!stablehlo.token` (a singleton)."""

    _instance: "Token | None" = None

    def __new__(cls) -> "Token":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "token"


TOKEN = Token()


@dataclass
class OpDef:
    """What shlo knows about one op name."""

    name: str
    prepare: PrepareFn | None = None
    verify: VerifyFn | None = None
    # True when the kernel handles quantized operands itself; otherwise a quantized occurrence
    # is evaluated as dequantize -> float kernel -> quantize (spec `dequantize_op_quantize`).
    quantized_aware: bool = False


OPS: dict[str, OpDef] = {}


def _def(name: str) -> OpDef:
    d = OPS.get(name)
    if d is None:
        d = OPS[name] = OpDef(name)
    return d


def kernel(*names: str, quantized_aware: bool = False) -> Callable[[PrepareFn], PrepareFn]:
    """Register ``fn`` as the prepare function of the ops ``names``."""

    def register(fn: PrepareFn) -> PrepareFn:
        for n in names:
            d = _def(n)
            d.prepare = fn
            d.quantized_aware = quantized_aware
        return fn

    return register


def verifier(*names: str) -> Callable[[VerifyFn], VerifyFn]:
    """Register ``fn`` as the constraint checker of the ops ``names``."""

    def register(fn: VerifyFn) -> VerifyFn:
        for n in names:
            _def(n).verify = fn
        return fn

    return register


def lookup(name: str) -> OpDef | None:
    """The definition of op ``name`` (loading every ops module on first use)."""
    _load_all()
    return OPS.get(name)


_loaded = False


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    from .. import ops as pkg

    for m in pkgutil.iter_modules(pkg.__path__):
        if m.name != "registry":
            importlib.import_module(f"{pkg.__name__}.{m.name}")
