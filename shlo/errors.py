"""Errors for people: each carries a source location and formats like an MLIR diagnostic.

``str(error)`` is ``file:line:col: error: message``; the CLI prints exactly that.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from .ir import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, UNKNOWN_LOC

if TYPE_CHECKING:  # pragma: no cover
    from .ir import Operation

__all__ = ["ShloError", "ParseError", "VerificationError", "ExecutionError", "Diagnostic", "Diagnostics",
           "format_location", "runtime_location", "locate"]


def format_location(loc: Location | None, filename: str | None = None) -> str:
    """`file:line:col` for a location, or the file name alone (or `<unknown>`)."""
    flc = loc.file_line_col() if loc is not None else None
    if flc:
        return f"{flc[0]}:{flc[1]}:{flc[2]}"
    return filename or "<unknown>"


@dataclass
class Diagnostic:
    """One message: severity (`error`, `note`, `warning`), location, text, attached notes."""

    message: str
    location: Location = UNKNOWN_LOC
    severity: str = "error"
    notes: list["Diagnostic"] = field(default_factory=list)

    def format(self, filename: str | None = None) -> str:
        where = format_location(self.location, filename)
        head = "" if where == "<unknown>" else f"{where}: "
        lines = [f"{head}{self.severity}: {self.message}"]
        lines += [n.format(filename) for n in self.notes]
        return "\n".join(lines)

    @property
    def line(self) -> int | None:
        flc = self.location.file_line_col()
        return flc[1] if flc else None


class ShloError(Exception):
    """Base of shlo's errors; ``diagnostics`` holds one or more :class:`Diagnostic`."""

    def __init__(self, message: str, location: Location | None = None,
                 diagnostics: list[Diagnostic] | None = None, filename: str | None = None):
        self.diagnostics = diagnostics or [Diagnostic(message, location or UNKNOWN_LOC)]
        self.filename = filename
        super().__init__(message)

    @property
    def location(self) -> Location:
        return self.diagnostics[0].location

    def __str__(self) -> str:
        return "\n".join(d.format(self.filename) for d in self.diagnostics)


class ParseError(ShloError):
    """Malformed program text."""


class VerificationError(ShloError):
    """The program violates one or more constraints of the spec (all are in ``diagnostics``)."""


class ExecutionError(ShloError):
    """Running the program failed (bad arguments, unsupported custom_call, a failed collective)."""


class InternalError(ShloError):
    """A bug in shlo, not in the program: an unexpected exception inside shlo, reported with the
    op and location it happened at (``__cause__`` is the exception)."""

    @classmethod
    def at(cls, op_name: str, location: Location | None, stage: str,
           exc: BaseException) -> "InternalError":
        """The error for ``exc`` raised while ``stage`` (e.g. "verifying") op ``op_name``."""
        return cls(f"internal error while {stage} '{op_name}': {type(exc).__name__}: {exc} "
                   "(a bug in shlo, please report it with the program; SHLO_DEBUG=1 shows the "
                   "traceback)", location)


class Diagnostics:
    """Collects diagnostics; ops' verifiers call :meth:`error`.

    ``diag.error(op, "C7", "message")`` records
    ``'stablehlo.op' op (C7) message`` at the op's location; ``label`` may be empty for checks
    that have no spec label (structure, upstream-only rules); ``op`` None (with a ``location``)
    records a message about no op in particular (a malformed type). ``notes`` are ``(message,
    location)`` pairs (location None means the op's). ``current`` is the op being verified and
    ``symbols`` the module's symbol table, for verifiers that resolve references.
    """

    __slots__ = ("items", "current", "symbols", "symbol_uses")

    def __init__(self, symbols: dict[str, Operation] | None = None) -> None:
        self.items: list[Diagnostic] = []
        self.current: Operation | None = None
        # The module's symbol table (name -> op), for verifiers that resolve references.
        self.symbols = symbols
        # Errors in resolving symbol references of attributes (:meth:`symbol_use_error`).
        self.symbol_uses: list[Diagnostic] = []

    def error(self, op: Operation | None, label: str, message: str,
              notes: Sequence[tuple[str, Location | None]] = (),
              location: Location | None = None) -> None:
        prefix = f"'{op.name}' op " if op is not None else ""
        tag = f"({label}) " if label else ""
        loc = location or (op.location if op is not None else UNKNOWN_LOC)
        d = Diagnostic(prefix + tag + message, loc)
        for text, nloc in notes:
            d.notes.append(Diagnostic(text, nloc or loc, "note"))
        self.items.append(d)

    def symbol_use_error(self, op: Operation, label: str, message: str) -> None:
        """An unresolved symbol reference in an attribute (MLIR's verifySymbolUses): MLIR checks
        symbol uses only once every op verified, so these are reported only when nothing else
        is (the verifier's walk adds them at its end)."""
        before = len(self.items)
        self.error(op, label, message)
        self.symbol_uses.extend(self.items[before:])
        del self.items[before:]

    def __len__(self) -> int:
        return len(self.items)


# --- where a run-time error is: ops whose location is only a name ------------------------------


def _loc_name(loc: Location | None) -> str | None:
    if isinstance(loc, NameLoc):
        return loc.name
    if isinstance(loc, CallSiteLoc):
        return _loc_name(loc.callee)
    if isinstance(loc, FusedLoc):
        return next((n for n in map(_loc_name, loc.locations) if n), None)
    return None


def runtime_location(op: Operation) -> Location:
    """The location a run-time error in ``op`` shows: the op's own when it points into a file;
    when it is only a name (`loc("lu")`, as JAX's debug info writes), the nearest enclosing
    op's file location, with the name kept (`NameLoc("lu", file:line:col)`)."""
    loc = op.location or UNKNOWN_LOC
    if loc.file_line_col():
        return loc
    outer = op.parent.parent.parent if op.parent is not None and op.parent.parent is not None \
        else None
    while outer is not None:
        flc = outer.location.file_line_col() if outer.location is not None else None
        if flc:
            name = _loc_name(loc)
            return NameLoc(name, FileLineColLoc(*flc)) if name else FileLineColLoc(*flc)
        block = outer.parent
        outer = block.parent.parent if block is not None and block.parent is not None else None
    return loc


def locate(error: ShloError, op: Operation) -> ShloError:
    """Give ``error`` (raised while ``op`` ran) the op's location when it has none; when that
    is an enclosing op's, a note says so and names the op's own location."""
    d = error.diagnostics[0]
    if d.location.file_line_col():
        return error
    d.location = runtime_location(op)
    name = _loc_name(op.location)
    if name is not None and not (op.location and op.location.file_line_col()):
        where = "the nearest enclosing op's" if d.location.file_line_col() else "unknown"
        d.notes.append(Diagnostic(f"'{op.name}' is at loc(\"{name}\") (a name, no file): the "
                                  f"location shown is {where}", d.location, "note"))
    return error
