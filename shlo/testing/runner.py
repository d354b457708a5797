"""Run self-checking StableHLO test files (`shlo check`).

A file is split into cases on lines `// -----` (MLIR's -split-input-file). Each case is parsed,
verified and run; it passes when nothing raised and no check op reported a mismatch. The entry
is `@main` when the case has one, otherwise every function without arguments that no other
function calls. Files run in parallel worker processes, each case under a time limit.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import ShloError
from ..syntax.split import split_cases

__all__ = ["CaseResult", "run_file", "run_paths", "collect_files", "main"]


@dataclass
class CaseResult:
    """The outcome of one case: `passed`, `failed` or `skipped`, with messages."""

    file: str
    line: int
    status: str
    messages: list[str] = field(default_factory=list)
    seconds: float = 0.0


_RUN_ARGS = re.compile(r'^// RUN:(?!.*\bnot\b).*--interpret.*--args="([^"]*)"', re.MULTILINE)


def run_line_args(text: str) -> list | None:
    """Arguments given by the file's `// RUN: ... --interpret --args="[dense<...>, ...]"`."""
    m = _RUN_ARGS.search(text)
    if m is None:
        return None
    from ..syntax.parser import Parser

    attr = Parser(m.group(1)).parse_attribute()
    return [a.array for a in attr]


def _entries(module) -> list[str]:
    funcs = module.functions
    if "main" in funcs:
        return ["main"]
    called: set[str] = set()
    for op in module.walk():
        for key in ("callee", "decomposition"):
            a = op.attr(key)
            if a is not None and hasattr(a, "name"):
                called.add(a.name)
        progs = op.attr("programs")
        if progs is not None:
            for row in progs:
                for p in row:
                    called.add(getattr(p, "name", str(p)))
    # (a declaration, `func.func private @f()` with no body, is not a case: it runs nothing)
    return [n for n, f in funcs.items() if n not in called and f.regions and f.regions[0].blocks]


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):  # pragma: no cover - timing dependent
    raise _Timeout()


def run_case(path: str, line: int, text: str, verify: bool = True,
             timeout: float | None = 120.0, args: list | None = None,
             engine=None) -> CaseResult:
    """Parse, verify and run one case (``engine``: what runs its process grids)."""
    from ..interpreter.evaluator import PrepareContext, ProcessContext
    from ..syntax.parser import parse

    start = time.perf_counter()
    res = CaseResult(path, line, "passed")
    use_alarm = timeout and hasattr(signal, "SIGALRM") and \
        __import__("threading").current_thread() is __import__("threading").main_thread()
    if use_alarm:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        module = parse(text, path)
        if verify:
            from ..verifier import verify as _verify

            _verify(module)
        from ..ir import function_type

        for name in _entries(module):
            nargs = len(function_type(module.functions[name]).inputs)
            if nargs and (args is None or len(args) != nargs):
                res.status = "skipped"
                res.messages.append(f"@{name} takes {nargs} arguments and the file gives none")
                continue
            process = ProcessContext() if engine is None else ProcessContext(engine=engine)
            fn = PrepareContext(module, process).function(name)
            with np.errstate(all="ignore"):
                fn(*(args if nargs else ()))
            res.messages.extend(process.check_failures)
        if res.messages and res.status != "skipped":
            res.status = "failed"
    except _Timeout:
        res.status = "failed"
        res.messages.append(f"{path}:{line}: timed out after {timeout} s")
    except ShloError as e:
        res.status = "failed"
        res.messages.append(str(e))
    except Exception as e:  # an interpreter bug: report it, keep going
        res.status = "failed"
        res.messages.append(f"{path}:{line}: internal error: {type(e).__name__}: {e}")
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    res.seconds = time.perf_counter() - start
    return res


def run_file(path: str, verify: bool = True, timeout: float | None = 120.0) -> list[CaseResult]:
    """Run every case of the file at ``path``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        return [CaseResult(path, 0, "failed", [f"{path}: error: cannot read: {e}"])]
    try:
        args = run_line_args(text)
    except ShloError:
        args = None
    return [run_case(path, line, chunk, verify, timeout, args)
            for line, chunk in split_cases(text)]


def collect_files(paths: Iterable[str]) -> list[str]:
    """Every `.mlir` file under the given files and folders, sorted."""
    out: list[str] = []
    for p in paths:
        q = Path(p)
        if q.is_dir():
            out.extend(str(f) for f in sorted(q.rglob("*.mlir")))
        else:
            out.append(str(q))
    return out


def _work(args: tuple[str, bool, float | None]) -> list[CaseResult]:
    return run_file(*args)


def _init_worker() -> None:
    """One BLAS thread per worker process: with a worker per core, more threads oversubscribe
    the cores, and OpenBLAS threads spinning for a core slow matmuls down a hundredfold."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        pass


def run_paths(paths: Iterable[str], jobs: int | None = None, verify: bool = True,
              timeout: float | None = 120.0, progress: bool = False) -> list[CaseResult]:
    """Run every case of every file, files in parallel over ``jobs`` worker processes."""
    files = collect_files(paths)
    jobs = jobs or min(len(files), os.cpu_count() or 1) or 1
    results: list[CaseResult] = []
    work = [(f, verify, timeout) for f in files]
    if jobs <= 1 or len(files) <= 1:
        it: Iterable[list[CaseResult]] = map(_work, work)
        pool = None
    else:
        import multiprocessing as mp

        pool = mp.get_context("fork").Pool(jobs, initializer=_init_worker)
        # Largest files first keeps the workers evenly loaded.
        order = sorted(range(len(work)), key=lambda i: -_size(work[i][0]))
        it = pool.imap_unordered(_work, [work[i] for i in order], chunksize=1)
    from ..progress import bar

    failed = 0
    try:
        with bar(len(files), "shlo check", "file", show=progress) as b:
            for file_results in it:
                results.extend(file_results)
                failed += sum(r.status == "failed" for r in file_results)
                b.update(1)
                b.set_postfix_str(f"{len(results)} cases, {failed} failed")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    results.sort(key=lambda r: (r.file, r.line))
    return results


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def summary_line(results: list[CaseResult]) -> str:
    passed = sum(r.status == "passed" for r in results)
    failed = sum(r.status == "failed" for r in results)
    skipped = sum(r.status == "skipped" for r in results)
    line = f"{passed} passed, {failed} failed"
    return line + (f", {skipped} skipped" if skipped else "")


def main(paths: list[str], jobs: int | None = None, verify: bool = True,
         timeout: float | None = 120.0, quiet: bool = False, run=None) -> int:
    """`shlo check`: one line per failure on stderr (as every error of the CLI), then the
    skip reasons and a last line `N passed, N failed` on stdout.
    ``run``: what runs the cases, as :func:`run_paths` (`--engine mpi`:
    :func:`shlo.testing.mpi_runner.run_paths_mpi`)."""
    from ..progress import enabled

    progress = enabled(quiet)
    results = (run or run_paths)(paths, jobs=jobs, verify=verify, timeout=timeout,
                                 progress=progress)
    skipped: dict[str, int] = {}
    for r in results:
        if r.status == "skipped":
            for m in r.messages:
                reason = re.sub(r"@\S+", "@F", m)
                skipped[reason] = skipped.get(reason, 0) + 1
        if r.status == "failed":
            for m in r.messages or [f"{r.file}:{r.line}: failed"]:
                first, *rest = m.splitlines() or [""]
                print(first if first.startswith(r.file) else f"{r.file}:{r.line}: {first}",
                      file=sys.stderr)
                for extra in rest[:3]:
                    print("    " + extra, file=sys.stderr)
    for reason, n in sorted(skipped.items()):
        print(f"skipped {n}: {reason}")
    print(summary_line(results))
    return 1 if any(r.status == "failed" for r in results) else 0

