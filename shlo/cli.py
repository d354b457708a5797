"""The `shlo` command: run | check | verify | fmt | opt | translate | inspect.

Bad input never shows a Python traceback: errors print as `file:line:col: error: ...` and the
command exits 1. Set SHLO_DEBUG=1 to see tracebacks of internal errors.

Only argparse is imported up front (`shlo --help` stays fast); each command imports what it
needs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

__all__ = ["main", "format_result"]


def _cmd_fmt(a: argparse.Namespace) -> int:
    from . import format, load

    if a.emit_bytecode or a.target:
        from .translate import emit_bytecode

        return emit_bytecode(load(a.file), a.target, a.output)
    text = format(load(a.file), generic=a.generic)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _load_args(a: argparse.Namespace) -> list[Any]:
    import numpy as np

    args: list[Any] = []
    for path in a.inputs:
        args.append(np.load(path, allow_pickle=False))
    if a.args:
        with np.load(a.args, allow_pickle=False) as z:
            keys = sorted(z.files, key=_natural_key)
            args.extend(z[k] for k in keys)
    return args


def _natural_key(name: str) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def format_result(value: Any, type: Any = None) -> str:
    """A result in the upstream interpreter's style (summarised when large)."""
    from .interpreter.printing import format_value

    return format_value(value, type)


def _cmd_run(a: argparse.Namespace) -> int:
    from .translate import run_jax_exported

    mpi = _mpi_run(a)  # --engine mpi, or a rank of `mpiexec -n N shlo run`
    if mpi is not None:
        return mpi
    if run_jax_exported(a, _load_args, format_result) is not None:  # jax.export artifacts
        return 0
    from . import load
    from .interpreter.api import run

    module = load(a.file)
    args = _load_args(a)
    opts: dict[str, Any] = {}
    if a.replicas is not None:
        opts["replicas"] = a.replicas
    if a.partitions is not None:
        opts["partitions"] = a.partitions
    if a.timeout is not None:
        opts["timeout"] = a.timeout
    results = run(module, *args, entry=a.entry, verify=not a.no_verify, **opts)
    return _print_results(a, module, results, "replicas" in opts or "partitions" in opts)


def _print_results(a: argparse.Namespace, module: Any, results: list[Any], grid: bool) -> int:
    import numpy as np

    from .ir import function_type

    if a.out:
        np.savez(a.out, **{f"result{i}": np.asarray(r) for i, r in enumerate(results)
                           if not isinstance(r, tuple)})
        return 0
    types = function_type(module.function(a.entry)).results
    if grid and results and isinstance(results[0], list):  # per-process results
        for pid, proc in enumerate(results):
            print(f"// process {pid}")
            for r, t in zip(proc, types):
                print(format_result(r, t))
    else:
        for r, t in zip(results, types):
            print(format_result(r, t))
    return 0


def _cmd_check(a: argparse.Namespace) -> int:
    from .testing.runner import main as check_main

    run = None
    if a.engine == "mpi":  # grid cases on MPI ranks
        from functools import partial

        from .testing.mpi_runner import run_paths_mpi

        run = partial(run_paths_mpi, deterministic=a.deterministic)
    return check_main(a.paths, jobs=a.jobs, verify=not a.no_verify, timeout=a.timeout,
                      quiet=a.quiet, run=run)


# --- the MPI engine (shlo.interpreter.mpi): --engine, -n, --deterministic --------------------

_ARGV: list[str] = []


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", choices=("threads", "mpi"),
                   help="run process grids as threads of this process (default) or as MPI "
                        "ranks (pip install 'shlo[mpi]'; under mpiexec: mpi)")
    p.add_argument("-n", "--ranks", type=int, dest="ranks",
                   help="with --engine mpi: start mpiexec with this many ranks")
    p.add_argument("--deterministic", action="store_true",
                   help="MPI: fold float reductions in the threaded grid's order (bitwise "
                        "equal to it) instead of MPI's native reductions")


def _mpi_run(a: argparse.Namespace) -> int | None:
    """`shlo run` on the MPI engine: start mpiexec (--engine mpi -n N), or be one rank of an
    MPI job. None: not on the MPI engine."""
    from .interpreter.mpi.world import launched_by_mpiexec

    if a.engine == "threads" or (a.engine is None and not launched_by_mpiexec()):
        return None
    if not launched_by_mpiexec():
        from .interpreter.mpi.launch import relaunch

        n = a.ranks or (a.replicas or 1) * (a.partitions or 1)
        return relaunch(_strip_engine(_ARGV), n)
    from . import load
    from .interpreter.mpi.launch import run_ranks

    def load_module() -> Any:
        module = load(a.file)
        if not a.no_verify:
            from .verifier import verify

            verify(module)
        return module

    return run_ranks(a, load_module, lambda: _load_args(a),
                     lambda module, results: _print_results(a, module, results, True))


def _strip_engine(argv: list[str]) -> list[str]:
    """``argv`` without --engine X and -n/--ranks N (what the ranks are started with)."""
    out, skip = [], False
    for x in argv:
        if skip:
            skip = False
            continue
        if x in ("--engine", "-n", "--ranks"):
            skip = True
            continue
        if x.startswith(("--engine=", "--ranks=")):
            continue
        out.append(x)
    return out


def _cmd_verify(a: argparse.Namespace) -> int:
    """Without --verify-diagnostics: print every diagnostic to stderr, exit 1 when there is
    one (with --split-input-file, a last line `N passed, N failed` over the chunks)."""
    if a.verify_diagnostics:
        from .testing.diagnostics import main as check_diagnostics

        return check_diagnostics(a.files, split=a.split_input_file,
                                 strict_messages=a.strict_messages)
    from .syntax.split import read_source, source_name, split_cases
    from .verifier import verify_text

    bad = chunks = 0
    for path in a.files:
        text = read_source(path)
        for _, chunk in split_cases(text) if a.split_input_file else [(1, text)]:
            chunks += 1
            diags = verify_text(chunk, source_name(path))
            if diags:
                bad += 1
                for d in diags:
                    print(d.format(path), file=sys.stderr)
    if a.split_input_file:
        print(f"{chunks - bad} passed, {bad} failed")
    return 1 if bad else 0


def _cmd_opt(a: argparse.Namespace) -> int:
    from . import format, load
    from .passes import run_passes

    if a.list:
        from .passes import describe

        print(describe())
        return 0
    if not a.file:
        raise ValueError("shlo opt: no input file")
    module = load(a.file)
    for spec in a.passes:  # each --pass is a pipeline string (commas, options, nesting)
        module = run_passes(module, spec)
    text = format(module, generic=a.generic)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shlo", description="StableHLO in Python.")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a function on numpy inputs and print its results")
    r.add_argument("file", help="program text (.mlir), bytecode, or a jax.export artifact; "
                                "- reads stdin")
    r.add_argument("inputs", nargs="*", help="one .npy file per argument")
    r.add_argument("--args", help="an .npz holding the arguments (in name order)")
    r.add_argument("--entry", default="main", help="function to run (default: main)")
    r.add_argument("--out", help="save the results to this .npz instead of printing them")
    r.add_argument("--replicas", type=int, help="number of replicas of the process grid")
    r.add_argument("--partitions", type=int, help="number of partitions of the process grid")
    r.add_argument("--no-verify", action="store_true", help="skip verification")
    r.add_argument("--timeout", type=float, help="seconds a collective or recv waits for "
                                                 "processes still computing (default 10)")
    _add_engine_options(r)
    r.set_defaults(fn=_cmd_run)

    c = sub.add_parser("check", help="run self-checking test files and folders")
    c.add_argument("paths", nargs="+")
    c.add_argument("-j", "--jobs", type=int, help="worker processes (default: cores)")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    c.add_argument("--no-verify", action="store_true", help="skip verification")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _add_engine_options(c)
    c.set_defaults(fn=_cmd_check)

    v = sub.add_parser("verify", help="check programs against the spec's constraints")
    v.add_argument("files", nargs="+")
    v.add_argument("--split-input-file", action="store_true")
    v.add_argument("--verify-diagnostics", action="store_true")
    v.add_argument("--strict-messages", action="store_true")
    v.set_defaults(fn=_cmd_verify)

    f = sub.add_parser("fmt", help="print a program in pretty (default) or generic form")
    f.add_argument("file")
    f.add_argument("--generic", action="store_true", help="print the generic op form")
    f.add_argument("-o", "--output", help="write to this file instead of stdout")
    f.add_argument("--emit-bytecode", action="store_true",
                   help="write MLIR bytecode (a portable artifact with --target)")
    f.add_argument("--target", help="StableHLO version of the portable artifact (X.Y.Z|current)")
    f.set_defaults(fn=_cmd_fmt)

    o = sub.add_parser("opt", help="transform a program with passes")
    o.add_argument("file", nargs="?")
    o.add_argument("--pass", dest="passes", action="append", default=[],
                   help="a pass pipeline: names, comma separated, with {options} (repeatable)")
    o.add_argument("--list", action="store_true", help="list the registered passes")
    o.add_argument("--generic", action="store_true")
    o.set_defaults(fn=_cmd_opt)

    for name, text in (("translate", "stablehlo-translate: --serialize --target=V, "
                                     "--deserialize, --interpret"),
                       ("inspect", "describe a portable artifact (or program)")):
        sub.add_parser(name, help=text, add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in ("translate", "inspect") or (argv[0] == "opt" and _upstream(argv))):
        from .translate import main as translate_main

        return translate_main(argv)  # stablehlo-translate / stablehlo-opt command lines
    _ARGV[:] = argv
    args = build_parser().parse_args(argv)
    from .errors import ShloError

    try:
        return args.fn(args)
    except ShloError as e:
        print(str(e), file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in shlo: say so briefly
        if os.environ.get("SHLO_DEBUG"):
            raise
        print(f"internal error: {type(e).__name__}: {e} (set SHLO_DEBUG=1 for a traceback)",
              file=sys.stderr)
        return 2


def _upstream(argv: list[str]) -> bool:
    from .translate import is_upstream_opt

    return is_upstream_opt(argv[1:])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
