"""The `shlo` command: run | check | verify | fmt | opt | translate | diff | graph | inspect.

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

from ._malloc import reuse_freed_memory

__all__ = ["main", "format_result"]


def _cmd_fmt(a: argparse.Namespace) -> int:
    from . import format, load

    if a.emit_bytecode or a.target:
        from .translate import emit_bytecode

        return emit_bytecode(load(a.file), a.target, a.output)
    text = format(load(a.file), generic=a.generic, debug_info=a.debuginfo,
                  local_scope=a.local_scope)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _load_args(a: argparse.Namespace, module: Any = None) -> list[Any]:
    """The arguments of `shlo run/diff/graph`: .npy files (or NAME=FILE.npy), --input inline
    values and an --args .npz, in the entry function's argument order when ``module`` is
    known (shlo.interpreter.arrays)."""
    from .interpreter.arrays import entry_arguments

    return entry_arguments(module, a.entry, a.inputs, a.args, getattr(a, "input", None) or [])


def format_result(value: Any, type: Any = None) -> str:
    """A result in the upstream interpreter's style (summarised when large)."""
    from .interpreter.printing import format_value

    return format_value(value, type)


def _cmd_run(a: argparse.Namespace) -> int:
    reuse_freed_memory()
    if a.quantize_order:
        from .quantization import set_quantize_order

        set_quantize_order(a.quantize_order)
    if a.custom_calls:  # modules that register custom-call handlers (docs/custom_calls.md)
        from .ops.custom_call import load_custom_calls

        for source in a.custom_calls:
            load_custom_calls(source)
    from .translate import run_jax_exported

    mpi = _mpi_run(a)  # --engine mpi, or a rank of `mpiexec -n N shlo run`
    if mpi is not None:
        return mpi
    if run_jax_exported(a, _load_args, format_result) is not None:  # jax.export artifacts
        return 0
    from . import load
    from .interpreter.api import run

    module = load(a.file)
    args = _load_args(a, module)
    opts: dict[str, Any] = {}
    if a.replicas is not None:
        opts["replicas"] = a.replicas
    if a.partitions is not None:
        opts["partitions"] = a.partitions
    if a.timeout is not None:
        opts["timeout"] = a.timeout
    if a.max_bytes is not None:
        from .interpreter.limits import parse_bytes

        opts["max_bytes"] = parse_bytes(a.max_bytes)
    if a.time_limit is not None:
        opts["time_limit"] = a.time_limit
    if a.trace or a.profile is not None:
        results = _debug_run(a, module, args, opts)
    else:
        from .progress import RunStatus

        with RunStatus():  # a status line on a terminal when the run takes long
            results = run(module, *args, entry=a.entry, verify=not a.no_verify, **opts)
    return _print_results(a, module, results, True)


def _print_results(a: argparse.Namespace, module: Any, results: list[Any], grid: bool) -> int:
    """Print (or --out save) results; per-process results (a list per process) get a
    `// process (r, p)` header each. With --expected, compare and exit 1 on a mismatch."""
    from .interpreter.arrays import compare_expected, save_results
    from .ir import function_type

    per_process = grid and bool(results) and isinstance(results[0], list)
    if a.out:
        save_results(a.out, results, per_process)
    else:
        types = function_type(module.function(a.entry)).results
        if per_process:
            n_part = a.partitions or _module_int(module, "mhlo.num_partitions")
            for pid, proc in enumerate(results):
                print(f"// process ({pid // n_part}, {pid % n_part})")
                for r, t in zip(proc, types):
                    print(format_result(r, t))
        else:
            for r, t in zip(results, types):
                print(format_result(r, t))
    if getattr(a, "expected", None):
        procs = results if per_process else [results]
        bad = False
        for pid, proc in enumerate(procs):
            for line in compare_expected(proc, a.expected, a.rtol, a.atol):
                where = f"process {pid}: " if per_process else ""
                print(f"// {where}{line}", file=sys.stderr)
                bad = bad or not line.endswith(": ok")
        return 1 if bad else 0
    return 0


def _module_int(module: Any, name: str) -> int:
    attr = module.op.attr(name)
    return max(1, int(attr.value)) if attr is not None else 1


def _cmd_check(a: argparse.Namespace) -> int:
    from .testing.runner import main as check_main

    reuse_freed_memory()

    run = None
    if a.engine == "mpi":  # grid cases on MPI ranks
        from functools import partial

        from .testing.mpi_runner import run_paths_mpi

        run = partial(run_paths_mpi, deterministic=a.deterministic)
    if a.jobs is not None and a.jobs < 1:
        raise ValueError(f"shlo check: -j {a.jobs}: the number of workers must be at least 1")
    missing = [p for p in a.paths if not os.path.exists(p)]
    if missing:
        raise ValueError(f"shlo check: no such file or directory: {', '.join(missing)}")
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

    loaded: list[Any] = []

    def load_module() -> Any:
        module = load(a.file)
        if not a.no_verify:
            from .verifier import verify

            verify(module)
        loaded.append(module)
        return module

    def debug_run(module: Any, *args: Any, entry: str, **opts: Any) -> list[Any]:
        return _debug_run(a, module, list(args), opts)  # every rank's events reach rank 0

    return run_ranks(a, load_module, lambda: _load_args(a, loaded[-1] if loaded else None),
                     lambda module, results: _print_results(a, module, results, True),
                     debug_run if a.trace or a.profile is not None else None)


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
                                 strict_messages=not a.loose_messages)
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


class _Unbuilt:
    """The parser of a command that is not being run: its options are not built (building every
    command's options was a sixth of `shlo --help`); the command is still listed by name."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


def _command(sub: Any, only: str | None, name: str, **kwargs: Any) -> Any:
    p = sub.add_parser(name, **kwargs)
    return p if only is None or only == name else _Unbuilt()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; with ``only`` (the command being run, or any other word: none), the
    options of that command alone."""
    from . import __version__

    p = argparse.ArgumentParser(prog="shlo", description="StableHLO in Python.")
    p.add_argument("--version", action="version", version=f"shlo {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = _command(sub, only, "run", help="run a function on numpy inputs and print its results")
    r.add_argument("file", help="program text (.mlir), bytecode, or a jax.export artifact; "
                                "- reads stdin")
    r.add_argument("inputs", nargs="*", help="one .npy file per argument, in order, or "
                                             "NAME=FILE.npy for the argument named NAME")
    r.add_argument("--args", help="an .npz of the arguments: keys arr_0, arr_1, ... "
                                  "(np.savez(f, a, b)) or the function's argument names")
    r.add_argument("--input", action="append", default=[], metavar="VALUE",
                   help="an inline argument as IREE writes it: 2x3xf32=1,2,3,4,5,6, f32=0.5, "
                        "@file.npy (repeatable; after the .npy files)")
    r.add_argument("--entry", default="main", help="function to run (default: main)")
    r.add_argument("--out", help="save the results instead of printing them: to this .npz "
                                 "(keys result0...; process{p}.result0... on a grid), or one "
                                 ".npy per result into a directory (an existing one, or a "
                                 "path ending with /)")
    r.add_argument("--expected", metavar="FILE.npz",
                   help="compare the results with these arrays (keys in result order); exit "
                        "1 when one differs")
    r.add_argument("--rtol", type=float, default=1e-6, help="with --expected (default 1e-6)")
    r.add_argument("--atol", type=float, default=0.0, help="with --expected (default 0)")
    r.add_argument("--replicas", type=int, help="number of replicas of the process grid")
    r.add_argument("--partitions", type=int, help="number of partitions of the process grid")
    r.add_argument("--no-verify", action="store_true", help="skip verification")
    r.add_argument("--quantize-order", choices=("round-first", "zero-point-first"),
                   help="quantize as round(x/scale)+zp (default) or round(x/scale+zp), today's "
                        "upstream spec (docs/semantics/quantization.md)")
    r.add_argument("--custom-calls", action="append", default=[], metavar="MODULE",
                   help="a .py file or module name that registers custom-call handlers with "
                        "@shlo.custom_call_target (repeatable; docs/custom_calls.md)")
    r.add_argument("--timeout", type=float, help="seconds a collective or recv waits for "
                                                 "processes still computing (default 10)")
    r.add_argument("--time-limit", type=float, metavar="S",
                   help="stop the run after S seconds, at the op it is computing")
    r.add_argument("--max-bytes", metavar="SIZE",
                   help="refuse values larger than this (8G, 500M, ...; default: physical "
                        "memory; none: no limit)")
    _add_engine_options(r)
    r.set_defaults(fn=_cmd_run)
    _add_debug_options(r)

    c = _command(sub, only, "check", help="run self-checking test files and folders")
    c.add_argument("paths", nargs="+")
    c.add_argument("-j", "--jobs", type=int, help="worker processes (default: cores)")
    c.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    c.add_argument("--no-verify", action="store_true", help="skip verification")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    _add_engine_options(c)
    c.set_defaults(fn=_cmd_check)

    v = _command(sub, only, "verify", help="check programs against the spec's constraints")
    v.add_argument("files", nargs="+")
    v.add_argument("--split-input-file", action="store_true")
    v.add_argument("--verify-diagnostics", action="store_true")
    v.add_argument("--strict-messages", action="store_true",
                   help="check the text of each expected diagnostic (the default, as mlir-opt)")
    v.add_argument("--loose-messages", action="store_true",
                   help="with --verify-diagnostics: match diagnostics by line and severity only")
    v.set_defaults(fn=_cmd_verify)

    f = _command(sub, only, "fmt", help="print a program in pretty (default) or generic form")
    f.add_argument("file")
    f.add_argument("--generic", action="store_true", help="print the generic op form")
    f.add_argument("--mlir-print-debuginfo", dest="debuginfo", action="store_true",
                   help="keep every op's location (loc(#locN) with the aliases at the end)")
    f.add_argument("--mlir-print-local-scope", dest="local_scope", action="store_true",
                   help="with --mlir-print-debuginfo: print locations in place")
    f.add_argument("-o", "--output", help="write to this file instead of stdout")
    f.add_argument("--emit-bytecode", action="store_true",
                   help="write MLIR bytecode (a portable artifact with --target)")
    f.add_argument("--target", help="StableHLO version of the portable artifact (X.Y.Z|current)")
    f.set_defaults(fn=_cmd_fmt)

    # `shlo opt` has stablehlo-opt's command line (shlo.opt parses it; `shlo opt --help`)
    sub.add_parser("opt", add_help=False,
                   help="transform a program with passes: --pass PIPELINE or stablehlo-opt's "
                        "flags (--NAME[=OPTIONS], --split-input-file, ...); --list")
    _add_debug_commands(sub, only)
    for name, text in (("translate", "stablehlo-translate: --serialize --target=V, "
                                     "--deserialize, --interpret"),
                       ("inspect", "describe a portable artifact (or program)")):
        sub.add_parser(name, help=text, add_help=False)
    return p


# --- debugging: run --trace/--profile, diff, graph (shlo.debug; docs/debugging.md) ----------


def _add_debug_options(r: argparse.ArgumentParser) -> None:
    r.add_argument("--trace", metavar="DIR", help="write every op's results to DIR in the "
                   "upstream probe layout (index.csv + probeN.npy; ops.csv describes them)")
    r.add_argument("--trace-ops", help="trace only these ops (comma separated names)")
    r.add_argument("--trace-locations", help="trace only ops whose location matches (regex)")
    r.add_argument("--trace-functions", help="trace only ops of these functions (comma sep.)")
    r.add_argument("--profile", nargs="?", const="", metavar="FILE",
                   help="print the top ops and op kinds by time (to stderr); with FILE, also "
                        "write a Chrome trace-event JSON (Perfetto, chrome://tracing)")


def _split(text: str | None) -> list[str] | None:
    return [x.strip() for x in text.split(",") if x.strip()] if text else None


def _debug_run(a: argparse.Namespace, module: Any, args: list[Any],
               opts: dict[str, Any]) -> list[Any]:
    from .errors import ExecutionError

    if a.profile is not None:
        from .debug.profile import profile

        prof = profile(module, *args, entry=a.entry, verify=not a.no_verify, **opts)
        if prof.error is not None:
            raise prof.error
        sys.stderr.write(prof.table())
        if a.profile:
            prof.write_chrome_trace(a.profile)
            print(f"// chrome trace written to {a.profile}", file=sys.stderr)
        results = prof.results
    if a.trace:
        from .debug.trace import trace

        t = trace(module, *args, entry=a.entry, verify=not a.no_verify, directory=a.trace,
                  ops=_split(a.trace_ops), locations=a.trace_locations,
                  functions=_split(a.trace_functions), **opts)
        print(f"// traced {len(t.events)} op executions to {a.trace}", file=sys.stderr)
        if t.error is not None:
            raise ExecutionError(f"{t.error} (the trace up to the failing op is in "
                                 f"{a.trace})")
        results = t.results
    return results


def _is_program(path: str) -> bool:
    return not path.endswith((".npy", ".npz"))


def _cmd_diff(a: argparse.Namespace) -> int:
    """Exit 1 at a divergence (its diagnostic on stderr), 0 when none."""
    reuse_freed_memory()

    from . import load
    from .debug.diff import diff, parse_mapping
    from .debug.metrics import Tolerance

    progs = [p for p in a.files if _is_program(p)]
    if not progs or len(progs) > 2:
        raise ValueError("shlo diff: give one or two programs (then .npy arguments)")
    a.inputs = [p for p in a.files if not _is_program(p)]
    ma = load(progs[0])
    mb = load(progs[1]) if len(progs) == 2 else None
    args = _load_args(a, ma)
    tol = None
    if a.atol is not None or a.rtol is not None or a.ulp is not None:
        tol = Tolerance(a.atol or 0.0, a.rtol or 0.0, a.ulp or 0)
    mapping = None
    if a.mapping:
        with open(a.mapping, encoding="utf-8") as f:
            mapping = parse_mapping(f.read())
    b_args = None
    if a.b_args:
        from .interpreter.arrays import entry_arguments

        b_args = entry_arguments(mb or ma, a.entry, npz=a.b_args)
    report = diff(ma, *args, b=mb, against=a.against, b_args=b_args, by=a.by, mapping=mapping,
                  tolerance=tol, entry=a.entry)
    if not a.quiet:
        print(report.table(all_ops=a.all))
    first = report.first
    if first is None:
        print(report.message())
        return 0
    print(report.message(), file=sys.stderr)
    if a.reproducer:
        from .debug.reproducer import reproducer

        with open(a.reproducer, "w", encoding="utf-8") as f:
            f.write(reproducer(first, progs[0]))
        print(f"// reproducer written to {a.reproducer} (shlo check fails on it)",
              file=sys.stderr)
    return 1


def _cmd_graph(a: argparse.Namespace) -> int:
    from . import load
    from .debug.graph import graph_html, graph_svg

    module = load(a.file)
    overlay, label = None, ""
    if a.overlay:
        args = _load_args(a, module)
        if a.overlay == "time":
            from .debug.profile import profile

            prof = profile(module, *args, entry=a.entry)
            if prof.error is not None:
                raise prof.error
            overlay = {}
            for e in prof.events:
                overlay[e.key] = overlay.get(e.key, 0.0) + e.self_seconds * 1e3
            label = "self time (ms)"
        elif a.overlay == "range":
            from .debug.trace import trace

            t = trace(module, *args, entry=a.entry)
            if t.error is not None:
                raise t.error
            overlay = {}
            for e in t.events:
                mags = [max(abs(s.min), abs(s.max)) for s in e.summaries if s.min is not None]
                if mags:
                    overlay[e.key] = max(overlay.get(e.key, 0.0), max(mags))
            label = "largest |value|"
        else:
            from .debug.diff import diff

            report = diff(module, *args, against=a.against, entry=a.entry)
            overlay = report.overlay()
            label = f"error against {a.against} (17 + log10 max rel error)"
    out = a.output or "graph.html"
    if out.endswith(".json"):
        from .debug.model_explorer import write_node_data

        if overlay is None:
            from .errors import ShloError

            raise ShloError("graph: a .json output is Model Explorer node data: "
                            "it needs --overlay time|range|error")
        write_node_data(out, module, overlay, label, sum if a.overlay == "time" else max)
        print(f"// wrote {out} (Model Explorer node data)", file=sys.stderr)
        return 0
    text = graph_svg(module, overlay) if out.endswith(".svg") else \
        graph_html(module, overlay, label)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"// wrote {out}", file=sys.stderr)
    return 0


def _add_debug_commands(sub: Any, only: str | None = None) -> None:
    d = _command(sub, only, "diff", help="find the first op where two executions diverge")
    d.add_argument("files", nargs="+", help="A.mlir [B.mlir] then one .npy per argument")
    d.add_argument("--args", help="an .npz holding the arguments (in name order)")
    d.add_argument("--b-args", help="an .npz of other arguments for the reference run")
    d.add_argument("--against", default="shlo",
                   choices=("shlo", "xla", "upstream", "iree", "f64"),
                   help="the reference engine (default shlo; f64: shlo at f64)")
    d.add_argument("--by", default="auto", choices=("auto", "order", "location", "name"),
                   help="how ops of two programs are matched")
    d.add_argument("--mapping", help="a file mapping A's locations/names to B's")
    d.add_argument("--atol", type=float)
    d.add_argument("--rtol", type=float, help="relative to the tensor's largest |value|")
    d.add_argument("--ulp", type=int, help="ULP distance allowed")
    d.add_argument("--reproducer", metavar="OUT.mlir",
                   help="write the diverging op alone as a self-checking program")
    d.add_argument("--entry", default="main")
    d.add_argument("--all", action="store_true", help="show every op in the table")
    d.add_argument("-q", "--quiet", action="store_true", help="only the verdict")
    d.set_defaults(fn=_cmd_diff)

    g = _command(sub, only, "graph", help="draw the program's dataflow (standalone HTML or SVG)")
    g.add_argument("file")
    g.add_argument("inputs", nargs="*", help="one .npy per argument (for an overlay)")
    g.add_argument("-o", "--output", help="OUT.html, OUT.svg, or OUT.json (the overlay as Model Explorer node data; "
                   "default graph.html)")
    g.add_argument("--args", help="an .npz holding the arguments")
    g.add_argument("--overlay", choices=("time", "range", "error"),
                   help="colour ops by self time, value range, or error --against an engine")
    g.add_argument("--against", default="xla", choices=("xla", "upstream", "f64"))
    g.add_argument("--entry", default="main")
    g.set_defaults(fn=_cmd_graph)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "opt":
        from .opt import main as opt_main

        sys.stdout.flush()
        return opt_main(argv[1:])  # stablehlo-opt's command line (and --pass)
    if argv and argv[0] in ("translate", "inspect"):
        from .translate import main as translate_main

        return translate_main(argv)  # stablehlo-translate's command line
    _ARGV[:] = argv
    args = build_parser(argv[0] if argv else "").parse_args(argv)
    from .errors import ShloError

    try:
        return args.fn(args)
    except ShloError as e:
        print(str(e), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `shlo run ... | head`: the reader left; end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # (so that the exit's flush does not fail again)
        return 0
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
