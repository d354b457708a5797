"""`shlo translate` and `shlo inspect` (`shlo opt` is :mod:`shlo.opt`).

`shlo translate` takes `stablehlo-translate`'s command line::

    shlo translate --serialize --target=1.8.0 [--strip-debuginfo] [--allow-other-dialects] F
    shlo translate --deserialize [--print-stablehlo-version] [--mlir-print-debuginfo] F.mlir.bc
    shlo translate --interpret [--args="[dense<...> : tensor<...>, ...]"] [-split-input-file]
                   [--probe-output-dir=DIR] F.mlir

`shlo inspect F` describes a bytecode file (or program text). Every command reads text or
bytecode (from a file or stdin) and writes to stdout; errors go to stderr as diagnostics, and the
exit code is 1.

Each entry point takes ``(argv, stdin, stdout, stderr)`` with binary stdin/stdout, so that the
RUN-line runner (:mod:`shlo.testing.runlines`) runs them in process.
"""

from __future__ import annotations

import io
import os
import sys
from dataclasses import dataclass
from typing import Any, BinaryIO, Sequence, TextIO

from .errors import ShloError
from .toolio import flag as _flag
from .toolio import guarded
from .toolio import read_input as _read
from .toolio import report as _report
from .toolio import streams as _streams
from .toolio import write_text as _write_text

__all__ = ["translate_main", "inspect_main", "main", "run_exported", "emit_bytecode"]

# --- translate -----------------------------------------------------------------------------------

@dataclass
class _TranslateArgs:
    mode: str | None = None
    file: str | None = None
    target: str = ""
    strip: bool = False
    print_version: bool = False
    allow_other: bool = False
    args: str = ""
    split: bool = False
    probe_dir: str = ""
    output: str | None = None
    print_dense: bool = False
    verify_diagnostics: bool = False
    debuginfo: bool = False
    local_scope: bool = False

def parse_translate(argv: Sequence[str]) -> _TranslateArgs:
    a = _TranslateArgs()
    it = iter(argv)
    for arg in it:
        if not arg.startswith("-") or arg == "-":
            if a.file is not None:
                raise ValueError(f"shlo translate: more than one input file ({a.file}, {arg})")
            a.file = arg
            continue
        k, v = _flag(arg)
        if k in ("deserialize", "serialize", "interpret"):
            a.mode = k
        elif k == "target":
            a.target = v if v is not None else next(it, "")
        elif k == "strip-debuginfo":
            a.strip = True
        elif k == "print-stablehlo-version":
            a.print_version = True
        elif k == "allow-other-dialects":
            a.allow_other = True
        elif k == "args":
            a.args = v if v is not None else next(it, "")
        elif k == "split-input-file":
            a.split = True
        elif k == "probe-output-dir":
            a.probe_dir = v if v is not None else next(it, "")
        elif k in ("o", "output"):
            a.output = v if v is not None else next(it, None)
        elif k == "interpreter-print-dense":
            a.print_dense = True
        elif k == "verify-diagnostics":
            a.verify_diagnostics = True
        elif k == "mlir-print-debuginfo":
            a.debuginfo = True
        elif k == "mlir-print-local-scope":
            a.local_scope = True
        else:
            raise ValueError(f"shlo translate: unknown option '{arg}'")
    if a.mode is None:
        raise ValueError("shlo translate: give one of --serialize, --deserialize, --interpret")
    return a

def translate_main(argv: Sequence[str], stdin: BinaryIO | None = None,
                   stdout: BinaryIO | None = None, stderr: TextIO | None = None) -> int:
    """`stablehlo-translate`'s command line."""
    stdin, stdout, stderr = _streams(stdin, stdout, stderr)
    try:
        a = parse_translate(argv)
        data, name = _read(a.file, stdin)
        out: Any = io.BytesIO() if a.output else stdout
        if a.mode == "serialize":
            rc = _serialize(a, data, name, out)
        elif a.mode == "deserialize":
            rc = _deserialize(a, data, name, out)
        else:
            rc = _interpret(a, data, name, out, stderr)
        if a.output and rc == 0:  # like MLIR's ToolOutputFile: kept only on success
            with open(a.output, "wb") as f:
                f.write(out.getvalue())
        return rc
    except ShloError as e:
        _report(e, stderr)
        return 1
    except (OSError, ValueError) as e:
        stderr.write(f"error: {e}\n")
        return 1

def _load(data: bytes, name: str, keep_vhlo: bool = False) -> Any:
    from .bytecode import load_bytes

    return load_bytes(data, name, keep_vhlo=keep_vhlo)

def _serialize(a: _TranslateArgs, data: bytes, name: str, out: BinaryIO) -> int:
    from .bytecode.portable import serialize_portable_artifact

    module = _load(data, name)
    out.write(serialize_portable_artifact(module, a.target, a.allow_other, a.strip))
    return 0

def _deserialize(a: _TranslateArgs, data: bytes, name: str, out: BinaryIO) -> int:
    from .bytecode.portable import portable_artifact_version
    from .syntax.printer import format_module

    if a.print_version:
        v = portable_artifact_version(data)
        if v is None:
            out.write(b"// Failed parsing StableHLO version from portable artifact\n")
        else:
            out.write(f"// Reading portable artifact with StableHLO version: {v}\n".encode())
    module = _load(data, name)
    if a.strip:
        from .bytecode.vhlo.ir import strip_debuginfo

        strip_debuginfo(module)
    _write_text(out, format_module(module, debug_info=a.debuginfo,
                                    loc_aliases=not a.local_scope))
    return 0

def _interpret(a: _TranslateArgs, data: bytes, name: str, out: BinaryIO, err: TextIO) -> int:
    from .bytecode import is_bytecode

    if is_bytecode(data):
        chunks = [(1, data)]
    else:
        text = data.decode("utf-8", "surrogateescape")
        if a.split:
            from .testing.runner import split_cases

            chunks = list(split_cases(text))  # type: ignore[arg-type]
        else:
            chunks = [(1, text)]  # type: ignore[list-item]
    args = _interpreter_args(a.args)
    status = 0
    for i, (_, chunk) in enumerate(chunks):
        if i:
            out.write(b"// -----\n")
        try:
            module = _load(chunk if isinstance(chunk, bytes) else
                           chunk.encode("utf-8", "surrogateescape"), name)
            _run_main(module, args, a, out)
        except ShloError as e:
            _report(e, err)
            status = 1
    return status

def _interpreter_args(text: str) -> list[Any]:
    if not text:
        return []
    from .attributes import ArrayAttr, DenseElementsAttr
    from .syntax.parser import Parser

    attr = Parser(text).parse_attribute()
    if not isinstance(attr, ArrayAttr) or not all(isinstance(x, DenseElementsAttr)
                                                    for x in attr.values):
        raise ValueError("expected array attribute string for args, i.e. "
                         "--args=[dense<1> : tensor<2xi32>, ...]")
    return [x.array for x in attr.values]

def _run_main(module: Any, args: list[Any], a: _TranslateArgs, out: BinaryIO) -> None:
    from . import ops  # noqa: F401  (load the opset before the interpreter)
    from .interpreter.api import run
    from .interpreter.printing import format_value
    from .ir import function_type
    from .syntax.printer import format_attr

    funcs = module.functions
    entry = "main" if "main" in funcs else next(iter(funcs), None)
    if entry is None:
        return
    results = run(module, *args, entry=entry)
    types = function_type(funcs[entry]).results
    for r, t in zip(results, types):
        if a.print_dense:
            from .attributes import DenseElementsAttr

            _write_text(out, format_attr(DenseElementsAttr(t, r)))
        else:
            _write_text(out, format_value(r, t))
    if a.probe_dir:
        _write_probes(module, a.probe_dir)

def _write_probes(module: Any, directory: str) -> None:
    """The values `interpreter.probe` recorded: one `.npy` per value and an `index.csv`
    (`probe_id,iteration,file`)."""
    import numpy as np

    from .interpreter.api import prepare_entry

    os.makedirs(directory, exist_ok=True)
    cache = module.__dict__.get("_prepared", {})
    lines = []
    for _, (_, process) in cache.items():
        for probe_id, values in getattr(process, "probes", {}).items():
            for i, v in enumerate(values):
                fn = f"{probe_id}_{i}.npy"
                np.save(os.path.join(directory, fn), np.asarray(v))
                lines.append(f"{probe_id},{i},{fn}")
    with open(os.path.join(directory, "index.csv"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))
    _ = prepare_entry

# --- inspect -------------------------------------------------------------------------------------

def inspect_main(argv: Sequence[str], stdin: BinaryIO | None = None,
                 stdout: BinaryIO | None = None, stderr: TextIO | None = None) -> int:
    """`shlo inspect FILE`: what a portable artifact (or program) holds."""
    stdin, stdout, stderr = _streams(stdin, stdout, stderr)
    files = [x for x in argv if not x.startswith("--")] or ["-"]
    try:
        from .bytecode.inspect import describe

        for path in files:
            data, name = _read(path, stdin)
            _write_text(stdout, describe(data, name))
        return 0
    except ShloError as e:
        _report(e, stderr)
        return 1
    except (OSError, ValueError) as e:
        stderr.write(f"error: {e}\n")
        return 1

def main(argv: Sequence[str], stdin: BinaryIO | None = None, stdout: BinaryIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Dispatch `translate` and `inspect` command lines; a failure that is a bug in shlo is
    reported in one line (SHLO_DEBUG=1 shows the traceback)."""
    cmd, rest = argv[0], list(argv[1:])
    fn = {"translate": translate_main, "inspect": inspect_main}[cmd]
    return guarded(fn, rest, stdin, stdout, stderr)

def emit_bytecode(module: Any, target: str | None, output: str | None) -> int:
    """`shlo fmt --emit-bytecode [--target V]`: the module as MLIR bytecode (a portable
    artifact for StableHLO V when a target is given)."""
    from .bytecode.portable import serialize_portable_artifact
    from .bytecode.writer import write_bytecode

    if target:
        data = serialize_portable_artifact(module, target)
    else:
        data = write_bytecode(module, producer="shlo")
    if output:
        with open(output, "wb") as f:
            f.write(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    return 0

def run_jax_exported(a: Any, load_args: Any, format_result: Any) -> int | None:
    """`shlo run model.jax_exported ARGS`: run a serialized `jax.export.Exported` with its
    calling convention and print (or save) the results; None when the file is not one."""
    if a.file == "-":
        return None
    with open(a.file, "rb") as f:
        data = f.read()
    # an artifact embeds a bytecode module: text (UTF-8, where 0xEF starts a 3-byte sequence)
    # never holds its magic, so a text program costs no import of the reader
    if data[:4] == b"ML\xefR" or b"ML\xefR" not in data:
        return None
    from .bytecode.jax_export import is_jax_exported, load_exported

    if not is_jax_exported(data):
        return None
    import numpy as np

    module, exp = load_exported(data, a.file)
    results = run_exported((module, exp), *load_args(a), verify=not a.no_verify)
    if a.out:
        np.savez(a.out, **{f"result{i}": np.asarray(r) for i, r in enumerate(results)})
        return 0
    from .ir import function_type

    types = function_type(module.function("main")).results[len(exp.ordered_effects):]
    for r, t in zip(results, types):
        print(format_result(r, t))
    return 0

def run_exported(data: Any, *args: Any, platform: str = "cpu", **options: Any) -> list[Any]:
    """Run a serialized `jax.export.Exported` (bytes, or a `load_exported` result) on numpy
    arguments, with jax's module calling convention: the platform index (when exported for
    several platforms), one token per ordered effect, then the arguments the module keeps
    (``args`` may be all of the function's flattened arguments or only those). Returns the
    results without the effect tokens."""
    import numpy as np

    from . import ops  # noqa: F401  (load the opset before the interpreter)
    from .bytecode.jax_export import load_exported
    from .errors import ExecutionError
    from .interpreter.api import run
    from .ir import function_type
    from .types import TOKEN, TokenType

    module, e = load_exported(bytes(data)) if isinstance(data, (bytes, bytearray)) else data
    main = module.functions.get("main")
    if main is None:
        raise ExecutionError("the exported module has no @main")
    inputs = list(function_type(main).inputs)
    call: list[Any] = []
    if len(e.platforms) > 1:
        if platform not in e.platforms:
            raise ExecutionError(f"exported for platforms {e.platforms}, not '{platform}'")
        call.append(np.asarray(e.platforms.index(platform),
                               dtype=inputs[0].element_type.dtype))
    n_tokens = len(e.ordered_effects)
    call += [TOKEN] * n_tokens
    args_l = list(args)
    kept = e.module_kept_var_idx
    if len(args_l) == len(e.in_avals) and len(kept) != len(e.in_avals):
        args_l = [args_l[i] for i in kept]
    if len(args_l) != len(inputs) - len(call):
        raise ExecutionError(f"the exported function takes {len(e.in_avals)} arguments "
                             f"({len(kept)} used by the module), got {len(args_l)}")
    call += args_l
    for i, (v, t) in enumerate(zip(call, inputs)):
        if isinstance(t, TokenType) and v is not TOKEN:
            raise ExecutionError(f"argument {i} of @main must be a token")
    results = run(module, *call, entry="main", **options)
    return results[n_tokens:]
