"""shlo: StableHLO in Python. Read, print, verify, run and transform StableHLO programs.

The public API::

    module = shlo.parse(text)            # or shlo.load("model.mlir")
    shlo.verify(module)                  # raises shlo.VerificationError listing every violation
    results = shlo.run(module, x, w)     # numpy arrays in, numpy arrays out
    text = shlo.format(module)           # pretty form; generic=True for the generic form
"""

from __future__ import annotations

from typing import Any

from . import registry as _registry
from .errors import ExecutionError, ParseError, ShloError, VerificationError
from .ir import Module


def _load_ops() -> None:
    from . import ops  # noqa: F401  (importing the ops modules fills the registry)


_registry.set_loader(_load_ops)

__all__ = ["parse", "load", "format", "verify", "run", "Module", "ShloError", "ParseError",
           "VerificationError", "ExecutionError"]
__version__ = "0.1.0"


def parse(text: str | bytes, filename: str | None = None) -> Module:
    """Parse StableHLO text (pretty or generic form) or MLIR bytecode (a portable artifact of
    any version) into a Module; raises ParseError."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        from .bytecode import load_bytes

        return load_bytes(text, filename)
    from .syntax.parser import parse as _parse

    return _parse(text, filename)


def load(path: str) -> Module:
    """Read and parse the file at ``path`` (`-` reads standard input)."""
    import sys

    if path == "-":
        data, name = sys.stdin.buffer.read(), "<stdin>"
    else:
        with open(path, "rb") as f:
            data, name = f.read(), path
    try:
        if data[:4] != b"ML\xefR":  # text, read as before (UTF-8, universal newlines)
            return parse(data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"), name)
    except UnicodeDecodeError:
        pass
    return parse(data, name)  # MLIR bytecode, a jax.export file, or an error saying what it is


def format(module: Module, generic: bool = False) -> str:  # noqa: A001 - the API's name
    """Print a Module: the pretty form as upstream prints it, or the generic form."""
    from .syntax.printer import format_module

    return format_module(module, generic=generic)


def verify(module: Module) -> None:
    """Check every op against the spec's constraints; raises VerificationError listing all."""
    from .verifier import verify as _verify

    _verify(module)


def run(module: Module | str, *args: Any, entry: str = "main", **options: Any) -> list[Any]:
    """Run function ``entry`` on numpy arguments; returns the list of results.

    See :func:`shlo.interpreter.api.run` for the options (verification, feeds, custom calls,
    process grid).
    """
    from .interpreter.api import run as _run

    return _run(module, *args, entry=entry, **options)
