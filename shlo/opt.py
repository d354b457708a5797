"""`shlo opt`: transform a program with passes, on `stablehlo-opt`'s command line.

The flags are those of MLIR's ``MlirOptMain`` that upstream's tests use, so that a RUN line
runs with `stablehlo-opt` replaced by `shlo opt`; shlo's own `--pass PIPELINE` works too::

    shlo opt [FILE|-] [--pass PIPELINE]... [--NAME[=OPTIONS]]... [--pass-pipeline=PIPELINE]
             [--split-input-file[=MARKER]] [--verify-diagnostics] [-verify-each]
             [--mlir-very-unsafe-disable-verifier-on-parsing]
             [--mlir-print-op-generic|--generic] [--mlir-print-debuginfo]
             [--mlir-print-local-scope] [--allow-unregistered-dialect] [-emit-bytecode]
             [-o FILE] [--list]

* a registered pass is a flag, one or two dashes, its options after `=` (space separated, as
  MLIR's: `--stablehlo-aggressive-simplification=fold-op-element-limit=100`,
  `--vhlo-to-version='target=1.0.0'`); `--pass` / `--pass-pipeline` / `-p` take a pipeline
  (`builtin.module(func.func(canonicalize{test-convergence}))`); passes run in the order given;
* `--split-input-file[=MARKER]`: each `// -----` chunk is its own program (the outputs joined by
  `// -----`, or `--output-split-marker=M`);
* `--verify-diagnostics`: the `expected-error/warning/remark` annotations must match what is
  reported (shlo.testing.diagnostics), and nothing else may be;
* the input is verified after parsing, as MLIR's parser does (its errors are diagnostics, and
  `--verify-diagnostics` matches them); `--mlir-very-unsafe-disable-verifier-on-parsing` skips
  that, as in MLIR;
* `-verify-each`: the module is also verified after each pass (MLIR's default; shlo verifies
  after passes only when asked);
* `--mlir-print-debuginfo`: op locations printed, as `loc(#loc1)` with the aliases
  (`#loc1 = loc(...)`) after the module, or in place with `--mlir-print-local-scope`;
  `--strip-debuginfo` is the pass of that name;
* `-emit-bytecode`: MLIR bytecode instead of text; `-o FILE`: written there (kept only on
  success, as MLIR's ToolOutputFile);
* `--list`: every registered pass, its one-line description and options.

Input is text or bytecode (a file, or stdin without one); errors go to stderr as diagnostics
and the exit code is 1. Each entry point takes ``(argv, stdin, stdout, stderr)`` with binary
stdin/stdout, so that :func:`lit_tools` runs them in process for the RUN-line runner
(:mod:`shlo.testing.runlines`).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Sequence, TextIO

from .errors import ShloError
from .toolio import flag as _flag
from .toolio import guarded, streams
from .toolio import read_input as _read

__all__ = ["opt_main", "main", "parse_opt", "OptArgs", "elide_defaults", "lit_tools"]

USAGE = __doc__.split("::", 1)[1].split("\nInput is text", 1)[0].strip("\n")

# flags of MlirOptMain shlo accepts and that change nothing here
_IGNORED = {"allow-unregistered-dialect", "mlir-disable-threading", "mlir-pretty-debuginfo",
            "no-implicit-module", "show-dialects", "mlir-print-value-users",
            "mlir-print-unique-ssa-ids"}


@dataclass
class OptArgs:
    """A parsed `shlo opt` command line."""

    file: str | None = None
    pipeline: list[str] = field(default_factory=list)  # pipeline strings, in order
    generic: bool = False
    emit_bytecode: bool = False
    split: str | None = None  # the chunk marker with --split-input-file
    output_marker: str = "// -----"  # what joins the chunks' outputs
    verify_diagnostics: bool = False
    verify_input: bool = True  # (MLIR's parser verifies)
    verify_each: bool = False
    debuginfo: bool = False
    local_scope: bool = False
    output: str | None = None
    debug_only: str = ""
    list: bool = False
    help: bool = False


def _bool(v: str | None) -> bool:
    return v is None or v.lower() in ("true", "1", "")


def parse_opt(argv: Sequence[str]) -> OptArgs:
    """The `shlo opt` command line; ValueError for a flag that is neither a stablehlo-opt flag
    shlo honours nor a registered pass."""
    from .passes import PASSES, _load

    _load()
    a = OptArgs()
    it = iter(argv)
    for arg in it:
        if not arg.startswith("-") or arg == "-":
            if a.file is not None:
                raise ValueError(f"shlo opt: more than one input file ({a.file}, {arg})")
            a.file = arg
            continue
        k, v = _flag(arg)
        if k in ("pass", "pass-pipeline", "p"):
            a.pipeline.append(v if v is not None else next(it, ""))
        elif k in ("mlir-print-op-generic", "generic"):
            a.generic = _bool(v)
        elif k == "emit-bytecode":
            a.emit_bytecode = _bool(v)
        elif k == "split-input-file":
            a.split = v or "// -----"
        elif k == "output-split-marker":
            a.output_marker = v if v is not None else next(it, "")
        elif k == "verify-diagnostics":
            a.verify_diagnostics = True
        elif k == "verify-each":
            a.verify_each = _bool(v)
        elif k == "mlir-very-unsafe-disable-verifier-on-parsing":
            a.verify_input = not _bool(v)
        elif k == "mlir-print-debuginfo":
            a.debuginfo = _bool(v)
        elif k == "mlir-print-local-scope":
            a.local_scope = _bool(v)
        elif k in ("o", "output"):
            a.output = v if v is not None else next(it, None)
        elif k == "debug-only":
            a.debug_only = v or ""
        elif k == "list":
            a.list = True
        elif k in ("help", "h"):
            a.help = True
        elif k in _IGNORED:
            pass
        elif k in PASSES:
            a.pipeline.append(k if not v else f"{k}{{{v}}}")
        else:
            raise ValueError(f"shlo opt: unknown option '{arg}' (not a registered pass or a "
                             "supported stablehlo-opt flag; `shlo opt --list` lists the passes)")
    return a


def opt_main(argv: Sequence[str], stdin: BinaryIO | None = None,
             stdout: BinaryIO | None = None, stderr: TextIO | None = None) -> int:
    """`shlo opt ARGV` (without the `opt`)."""
    stdin, stdout, stderr = streams(stdin, stdout, stderr)
    try:
        a = parse_opt(argv)
        if a.help or a.list:
            from .passes import describe

            text = ("usage:\n" + USAGE + "\n") if a.help else describe() + "\n"
            stdout.write(text.encode())
            return 0
        data, name = _read(a.file, stdin)
        out: Any = io.BytesIO() if a.output else stdout
        rc = _run(a, data, name, out, stderr)
        if a.output and rc == 0:
            with open(a.output, "wb") as f:
                f.write(out.getvalue())
        stdout.flush()
        return rc
    except ShloError as e:
        stderr.write(str(e).rstrip("\n") + "\n")
        return 1
    except (OSError, ValueError) as e:
        stderr.write(f"error: {e}\n")
        return 1


def main(argv: Sequence[str], stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
         stderr: TextIO | None = None) -> int:
    """:func:`opt_main`, a failure that is a bug in shlo reported in one line (SHLO_DEBUG=1
    shows the traceback)."""
    return guarded(opt_main, argv, stdin, stdout, stderr)


def _chunks(a: OptArgs, data: bytes) -> list[tuple[int, bytes | str]]:
    from .bytecode import is_bytecode

    if is_bytecode(data):
        return [(1, data)]
    text = data.decode("utf-8", "surrogateescape")
    if a.split is None:
        return [(1, text)]
    from .syntax.split import split_cases

    if a.split == "// -----":
        return list(split_cases(text))
    out, line, pos = [], 1, 0  # another marker: the same rule (line numbers kept)
    for m in re.finditer(rf"^{re.escape(a.split)}\s*$", text, re.MULTILINE):
        chunk = text[pos:m.start()]
        out.append((line, "\n" * (line - 1) + chunk))
        line += chunk.count("\n") + 1
        pos = m.end()
    return out + [(line, "\n" * (line - 1) + text[pos:])]


def _verify(module: Any) -> None:
    from . import ops  # noqa: F401  (the op definitions the verifier checks against)
    from .verifier import verify

    verify(module)


def _run(a: OptArgs, data: bytes, name: str, out: BinaryIO, err: TextIO) -> int:
    from .bytecode import load_bytes
    from .passes import run_passes

    after = (lambda _name, m: _verify(m)) if a.verify_each else None
    status = 0
    texts: list[bytes] = []
    for first, chunk in _chunks(a, data):
        expectations = _expectations(chunk) if a.verify_diagnostics else None
        diags: list[Any] = []
        module = None
        implicit = None
        try:
            raw = chunk if isinstance(chunk, bytes) else chunk.encode("utf-8", "surrogateescape")
            module = load_bytes(raw, name, keep_vhlo=True)
            implicit = _implicit_module_loc(module, chunk)
            if a.verify_input:
                _verify(module)
            for spec in a.pipeline:
                module = run_passes(module, spec, after)
        except ShloError as e:
            diags = list(e.diagnostics)
            module = None
            if expectations is None:
                err.write(str(e).rstrip("\n") + "\n")
                status = 1
        if expectations is not None:
            from .testing.diagnostics import match_diagnostics

            problems = match_diagnostics(expectations, diags, name, True, first, implicit)
            for p in problems:
                err.write(p + "\n")
            if problems:
                status = 1
        if module is not None:
            texts.append(_emit(module, a, err))
    if texts:
        if a.emit_bytecode:
            out.write(texts[0])
        else:
            out.write((a.output_marker + "\n").encode().join(texts))
    return status


def _emit(module: Any, a: OptArgs, err: TextIO) -> bytes:
    from .bytecode.vhlo.ir import textualize
    from .syntax.printer import format_module

    if a.emit_bytecode:
        from .bytecode.vhlo.version import CURRENT
        from .bytecode.writer import write_bytecode

        trace = err if "vhlo-bytecode" in a.debug_only.split(",") else None
        return write_bytecode(module, producer=f"StableHLO_v{CURRENT}", trace=trace)
    textualize(module)
    elide_defaults(module, as_printed=True, generic=a.generic)
    text = format_module(module, generic=a.generic, debug_info=a.debuginfo,
                         loc_aliases=not a.local_scope)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8", "surrogateescape")


# --- default-valued attributes -----------------------------------------------------------------

# StableHLO's default-valued attributes (ODS `DefaultValuedOptionalAttr`/`DefaultValuedStrAttr`):
# an op's custom printer leaves them out when they hold the default (the generic form prints
# them), so stablehlo-opt does too.
_DEFAULT_VALUED: dict[str, dict[str, Any]] = {}


def _defaults_table() -> dict[str, dict[str, Any]]:
    if _DEFAULT_VALUED:
        return _DEFAULT_VALUED
    from .attributes import (
        ArrayAttr, BoolAttr, DictAttr, EnumAttr, IntegerAttr, StringAttr, StructAttr,
    )
    from .types import element_type

    false = BoolAttr(False)
    accuracy = StructAttr("stablehlo.result_accuracy", (
        ("mode", EnumAttr("stablehlo", "result_accuracy_mode", "DEFAULT")),))
    for op in ("cbrt", "cosine", "exponential", "exponential_minus_one", "log",
               "log_plus_one", "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh"):
        _DEFAULT_VALUED["stablehlo." + op] = {"result_accuracy": accuracy}
    i32 = element_type("i32")
    _DEFAULT_VALUED.update({
        "stablehlo.infeed": {"infeed_config": StringAttr("")},
        "stablehlo.outfeed": {"outfeed_config": StringAttr("")},
        "stablehlo.send": {"is_host_transfer": false},
        "stablehlo.recv": {"is_host_transfer": false},
        "stablehlo.cholesky": {"lower": false},
        "stablehlo.composite": {"composite_attributes": DictAttr(()),
                                "version": IntegerAttr(0, i32)},
        "stablehlo.custom_call": {"has_side_effect": false, "api_version": IntegerAttr(1, i32),
                                  "called_computations": ArrayAttr(()),
                                  "output_operand_aliases": ArrayAttr(())},
        "stablehlo.gather": {"indices_are_sorted": false},
        "stablehlo.dynamic_gather": {"indices_are_sorted": false},
        "stablehlo.scatter": {"indices_are_sorted": false, "unique_indices": false},
        "stablehlo.sort": {"dimension": IntegerAttr(-1, element_type("i64")),
                           "is_stable": false},
    })
    return _DEFAULT_VALUED


def elide_defaults(module: Any, as_printed: bool = False, generic: bool = False) -> Any:
    """Drop the StableHLO attributes that hold their ODS default, in place. ``as_printed``:
    only from the ops that print in their pretty form (MLIR's custom printers elide them; the
    generic form, of every op with ``generic`` and of the ops without a pretty form, keeps
    them)."""
    from .registry import lookup

    table = _defaults_table()
    for op in module.walk():
        defaults = table.get(op.name)
        if not defaults:
            continue
        if as_printed:
            d = lookup(op.name)
            if generic or d is None or d.syntax is None:
                continue
        for attrs in (op.properties, op.attributes):
            for k in [k for k, v in attrs.items() if k in defaults and _same(v, defaults[k])]:
                del attrs[k]
    return module


def _same(a: Any, b: Any) -> bool:
    from .attributes import IntegerAttr

    if isinstance(a, IntegerAttr) and isinstance(b, IntegerAttr):
        return a.value == b.value
    return a == b


# --- -verify-diagnostics -----------------------------------------------------------------------


def _expectations(chunk: bytes | str) -> list[Any]:
    from .testing.diagnostics import parse_expectations

    if isinstance(chunk, bytes):
        return []
    return parse_expectations(chunk)


def _implicit_module_loc(module: Any, chunk: bytes | str) -> Any:
    """The location of the module op when the text has no `module` (MLIR's implicit module has
    no line: annotations point at it with an offset above the first line)."""
    if isinstance(chunk, bytes):
        return None
    loc = module.op.location
    flc = loc.file_line_col() if loc is not None else None
    if flc is None:
        return loc
    lines = chunk.split("\n")
    line = lines[flc[1] - 1] if 0 < flc[1] <= len(lines) else ""
    return None if line[max(0, flc[2] - 1):].lstrip().startswith("module") else loc


# --- the tools of upstream's RUN lines ---------------------------------------------------------


def lit_tools() -> dict[str, Any]:
    """The tools of :mod:`shlo.testing.runlines` for upstream RUN lines, run in process:
    `stablehlo-opt` -> `shlo opt`, `stablehlo-translate` -> `shlo translate`, and `shlo`."""
    from .testing.runlines import Unsupported
    from .translate import parse_translate
    from .translate import main as translate_main

    def wrap(fn: Any, check: Any = None) -> Any:
        def tool(argv: Sequence[str], stdin: bytes) -> tuple[int, bytes, str]:
            if check is not None:
                try:
                    check(list(argv))
                except ValueError as e:
                    raise Unsupported(str(e)) from None
            out = io.BytesIO()
            err = io.StringIO()
            rc = fn(list(argv), io.BytesIO(stdin), out, err)
            return rc, out.getvalue(), err.getvalue()

        return tool

    def shlo_cli(argv: Sequence[str], stdin: BinaryIO, stdout: BinaryIO, stderr: TextIO) -> int:
        if argv and argv[0] == "opt":
            return main(list(argv[1:]), stdin, stdout, stderr)
        if argv and argv[0] in ("translate", "inspect"):
            return translate_main(list(argv), stdin, stdout, stderr)
        raise Unsupported(f"`shlo {' '.join(argv[:1])}` does not run in process here")

    return {
        "stablehlo-translate": wrap(lambda a, i, o, e: translate_main(["translate", *a], i, o, e),
                                    parse_translate),
        "stablehlo-opt": wrap(main, parse_opt),
        "shlo": wrap(shlo_cli),
    }
