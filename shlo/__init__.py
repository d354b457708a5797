"""shlo: StableHLO in Python. Read, print, verify, run and transform StableHLO programs.

The public API::

    module = shlo.parse(text)            # or shlo.load("model.mlir")
    shlo.verify(module)                  # raises shlo.VerificationError listing every violation
    results = shlo.run(module, x, w)     # numpy arrays in, numpy arrays out
    text = shlo.format(module)           # pretty form; generic=True for the generic form

`import shlo` is light (it imports no numpy): each function imports what it needs when it is
first called, and the error classes and ``Module`` are loaded on first use (PEP 562), so that
`shlo --help` starts fast. Submodules (``shlo.quantization``, ``shlo.passes``, ...) load on first
attribute access too.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import registry as _registry

if TYPE_CHECKING:  # pragma: no cover
    from .errors import ExecutionError, ParseError, ShloError, VerificationError
    from .ir import Module


def _load_ops() -> None:
    from .ops import load_all

    load_all()


def _ops_index() -> _registry.Index:
    from .ops import index

    return index()


_registry.set_loader(_load_ops, _ops_index)

__all__ = ["parse", "load", "format", "verify", "run", "Module", "ShloError", "ParseError",
           "VerificationError", "ExecutionError", "InternalError", "custom_call_target",
           "CustomCall"]
__version__ = "0.1.0"

_ERRORS = ("ShloError", "ParseError", "VerificationError", "ExecutionError", "InternalError")


def __getattr__(name: str) -> Any:
    """``Module`` and the error classes on first use; a submodule on first access."""
    if name == "Module":
        from .ir import Module as value
    elif name in ("custom_call_target", "CustomCall"):  # custom-call handlers
        from .ops import custom_call

        value = getattr(custom_call, name)
    elif name in _ERRORS:
        from . import errors

        value = getattr(errors, name)
    elif name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def parse(text: str | bytes, filename: str | None = None) -> Module:
    """Parse StableHLO text (pretty or generic form) or MLIR bytecode (a portable artifact of
    any version) into a Module; raises ParseError."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        from .bytecode import load_bytes

        return load_bytes(text, filename)
    from .syntax.parser import parse as _parse

    return _parse(text, filename)


def load(program: Any) -> Module:
    """Read a program: a path (str or os.PathLike; `-` reads standard input), program text,
    bytes (MLIR bytecode), a ``jax.stages.Lowered``, an MLIR ``ir.Module`` or a
    ``jax.export.Exported`` (see :func:`shlo.interpreter.api.as_module` for the rule that
    tells a path from text: a str naming an existing file, with no newline and no `{`)."""
    if program == "-":
        from .syntax.split import read_program

        return parse(read_program("-"), "<stdin>")
    from .interpreter.api import as_module

    return as_module(program)


def format(module: Module, generic: bool = False, debug_info: bool = False,  # noqa: A001
           local_scope: bool = False) -> str:
    """Print a Module: the pretty form as upstream prints it, or the generic form. With
    ``debug_info`` every op keeps its location, as `--mlir-print-debuginfo` prints them
    (`loc(#loc3)` and the `#loc3 = loc(...)` aliases after the module), or in place with
    ``local_scope`` (`--mlir-print-local-scope`)."""
    from .syntax.printer import format_module

    return format_module(module, generic=generic, debug_info=debug_info,
                         loc_aliases=debug_info and not local_scope)


def verify(module: Any) -> Module:
    """Check every op against the spec's constraints; raises VerificationError listing all.
    ``module`` may be anything :func:`load` reads; the (verified) Module is returned."""
    from .ir import Module as _Module
    from .verifier import verify as _verify

    if not isinstance(module, _Module):  # the interpreter's loader; not imported for a Module
        from .interpreter.api import as_module

        module = as_module(module)
    _verify(module)
    return module


def run(module: Any, *args: Any, entry: str = "main", **options: Any) -> list[Any]:
    """Run function ``entry`` on numpy arguments; returns the list of results. ``module`` may
    be anything :func:`load` reads (a Module, a path, text, bytes, a jitted function's
    ``jax.stages.Lowered``, an MLIR ``ir.Module``, a ``jax.export.Exported``).

    See :func:`shlo.interpreter.api.run` for the options (verification, feeds, custom calls,
    process grid).
    """
    from .interpreter.api import run as _run

    return _run(module, *args, entry=entry, **options)
