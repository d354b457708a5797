"""`shlo check --engine mpi`: the cases that run process grids, on MPI ranks.

A case runs on MPI when it has an `interpreter.run_parallel` op (its `programs` give the
grid) or declares a grid (`mhlo.num_replicas` x `mhlo.num_partitions` > 1); the others run
as usual. Cases are batched by grid size: one `mpiexec -n N` job per size runs all of its
cases in turn (:func:`main`, one rank per process of the grid). Rank 0 prints one JSON line
per case; when a case ends the job (an error, a deadlock, a timeout abort every rank), the
case is failed with the job's message and a new job runs the cases after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import ShloError
from .runner import CaseResult, collect_files, run_case, run_line_args

__all__ = ["grid_size", "run_cases", "main"]

_TAIL = 8  # lines of a dead job's stderr kept in the message


def grid_size(text: str, path: str = "") -> int:
    """The largest process grid a case runs: 0 for none, 1 for a grid of one process."""
    if "run_parallel" not in text and "num_replicas" not in text and \
            "num_partitions" not in text:
        return 0
    from ..attributes import int_attr
    from ..syntax.parser import parse

    try:
        module = parse(text, path)
    except Exception:  # noqa: BLE001 - the case fails where it runs
        return 0
    n = int_attr(module.op, "mhlo.num_replicas", 1) * int_attr(module.op,
                                                               "mhlo.num_partitions", 1)
    n = n if n > 1 else 0
    for op in module.walk():
        if op.name == "interpreter.run_parallel":
            rows = [list(r) for r in (op.attr("programs") or [])]
            if rows and rows[0]:
                n = max(n, len(rows) * len(rows[0]))
    return n


def job_size(n: int, largest: int) -> int:
    """The ranks of the job that runs a grid of ``n`` processes: grids of one or two
    processes share a 2-rank job, larger ones the job of the largest grid (ranks a grid does
    not use wait for the next)."""
    return 2 if n <= 2 else largest


def run_cases(cases: list[tuple[str, int, str]], verify: bool = True,
              timeout: float | None = 120.0, deterministic: bool = False) -> list[CaseResult]:
    """Run ``cases`` (path, line, text) on MPI jobs, batched by grid size (:func:`job_size`)."""
    from ..interpreter.mpi.launch import mpi_command

    sizes = [max(grid_size(text, path), 1) for path, _, text in cases]
    by_size: dict[int, list[int]] = {}
    for i, n in enumerate(sizes):
        by_size.setdefault(job_size(n, max(sizes)), []).append(i)
    results: dict[int, CaseResult] = {}
    with tempfile.TemporaryDirectory(prefix="shlo-mpi-") as tmp:
        for n, todo in sorted(by_size.items()):
            while todo:
                spec = Path(tmp) / f"cases{n}.json"
                spec.write_text(json.dumps([cases[i] for i in todo]))
                cmd = mpi_command(n, ["shlo.testing.mpi_runner", str(spec)]
                                  + ([] if verify else ["--no-verify"])
                                  + (["--deterministic"] if deterministic else []))
                got, message = _job(cmd, len(todo), timeout)
                for k, r in got.items():
                    results[todo[k]] = r
                if len(got) == len(todo):
                    break
                k = len(got)  # the case that ended the job
                path, line, _ = cases[todo[k]]
                results[todo[k]] = CaseResult(path, line, "failed",
                                              [message or f"{path}:{line}: the MPI job ended"])
                todo = todo[k + 1:]
    return [results[i] for i in range(len(cases))]


def _job(cmd: list[str], count: int, timeout: float | None) -> tuple[dict[int, CaseResult],
                                                                      str]:
    """Run one job; the results it printed, and the tail of its stderr if it ended early."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    errors: list[str] = []
    reader = threading.Thread(target=lambda: errors.extend(proc.stderr or []), daemon=True)
    reader.start()
    got: dict[int, CaseResult] = {}
    last = [time.monotonic()]
    killed = [False]

    def watchdog() -> None:  # a case that runs for ever ends the job
        while proc.poll() is None:
            if timeout and time.monotonic() - last[0] > timeout + 10:
                killed[0] = True
                proc.kill()
            time.sleep(0.2)

    threading.Thread(target=watchdog, daemon=True).start()
    assert proc.stdout is not None
    for line in proc.stdout:
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        got[d["i"]] = CaseResult(d["file"], d["line"], d["status"], d["messages"],
                                 d["seconds"])
        last[0] = time.monotonic()
    proc.wait()
    reader.join(2)
    tail = [e.rstrip() for e in errors if e.strip() and not e.startswith(("=====", "BAD TERM",
                                                                             "YOUR APPL",
                                                                             "PID ", "EXIT"))]
    message = "\n".join(tail[-_TAIL:])
    if killed[0]:
        message = f"timed out after {timeout} s (the MPI job was killed)\n" + message
    return got, message


def run_paths_mpi(paths: list[str], jobs: int | None = None, verify: bool = True,
                  timeout: float | None = 120.0, progress: bool = False,
                  deterministic: bool = False) -> list[CaseResult]:  # noqa: ARG001 (jobs)
    """Every case of every file: grid cases on MPI (:func:`run_cases`), the others in this
    process."""
    from ..syntax.split import split_cases

    grid: list[tuple[str, int, str]] = []
    results: list[CaseResult] = []
    for f in collect_files(paths):
        try:
            text = Path(f).read_text(encoding="utf-8")
        except OSError as e:
            results.append(CaseResult(f, 0, "failed", [f"{f}: error: cannot read: {e}"]))
            continue
        try:
            args = run_line_args(text)
        except ShloError:
            args = None
        for line, chunk in split_cases(text):
            if grid_size(chunk, f) > 0:
                grid.append((f, line, chunk))
            else:
                results.append(run_case(f, line, chunk, verify, timeout, args))
    results.extend(run_cases(grid, verify, timeout, deterministic))
    if progress:
        sys.stderr.write(f"{len(grid)} cases on MPI ranks\n")
    results.sort(key=lambda r: (r.file, r.line))
    return results


def run_grid_case(path: str, line: int, text: str, verify: bool, engine: Any) -> CaseResult:
    """A case whose module declares a grid: each entry on every process of it (rank 0)."""
    from ..attributes import int_attr
    from ..interpreter.evaluator import PrepareContext, ProcessContext
    from ..ir import function_type
    from ..syntax.parser import parse
    from .runner import _entries

    start = time.perf_counter()
    res = CaseResult(path, line, "passed")
    try:
        module = parse(text, path)
        if verify:
            from ..verifier import verify as _verify

            _verify(module)
        r = int_attr(module.op, "mhlo.num_replicas", 1)
        p = int_attr(module.op, "mhlo.num_partitions", 1)
        for name in _entries(module):
            if function_type(module.functions[name]).inputs:
                res.status = "skipped"
                res.messages.append(f"@{name} takes arguments and the file gives none")
                continue
            root = PrepareContext(module, ProcessContext(engine=engine))
            engine.run_programs(root, [name] * (r * p), r, p, [[] for _ in range(r * p)])
            res.messages.extend(str(m) for m in root.process.check_failures)
        if res.messages and res.status != "skipped":
            res.status = "failed"
    except ShloError as e:
        res.status = "failed"
        res.messages.append(str(e))
    res.seconds = time.perf_counter() - start
    return res


def main(argv: list[str] | None = None) -> int:
    """One rank of a batch job: ``python -m shlo.testing.mpi_runner CASES.json``."""
    from ..interpreter.mpi.engine import MPIEngine, serve, stop_workers
    from ..interpreter.mpi.world import world
    from ..syntax.parser import parse

    args = list(sys.argv[1:] if argv is None else argv)
    cases = json.loads(Path(args[0]).read_text())
    verify = "--no-verify" not in args
    deterministic = "--deterministic" in args
    w = world()
    if w.rank != 0:
        memo: dict[int, Any] = {}

        def module_for(i: int) -> Any:
            if i not in memo:
                memo.clear()
                path, _, text = cases[i]
                memo[i] = parse(text, path)
            return memo[i]

        serve(module_for)
        return 0
    try:
        for i, (path, line, text) in enumerate(cases):
            try:
                rl = run_line_args(Path(path).read_text(encoding="utf-8"))
            except Exception:  # noqa: BLE001
                rl = None
            engine = MPIEngine(deterministic, module_key=i)
            if "run_parallel" in text:
                r = run_case(path, line, text, verify, None, rl, engine=engine)
            else:
                r = run_grid_case(path, line, text, verify, engine)
            print(json.dumps({"i": i, "file": r.file, "line": r.line, "status": r.status,
                              "messages": [str(m) for m in r.messages],
                              "seconds": r.seconds}), flush=True)
    finally:
        stop_workers()
    return 0


if __name__ == "__main__":  # pragma: no cover - run by mpiexec
    sys.exit(main())
