"""Wall time of `shlo check` over a testdata folder against the upstream C++ interpreter on the
same files (needs jax for the upstream side).

    python benchmarks/check_bench.py [FOLDER] [--jobs N]

Upstream cannot run the check custom_calls (it aborts the process on custom_call) nor chlo ops,
so each file is given to it with the `custom_call @check.*` lines removed, after the `inline`
and `chlo-legalize-to-stablehlo` passes (as the files' RUN lines do with stablehlo-opt -inline);
only `eval_module` is timed. Files that crash the upstream interpreter are counted, and a fresh
worker continues. Both sides use the same number of worker processes.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "conformance" / "testdata"
CHECK_LINE = re.compile(r"^.*custom_call @check\..*$", re.MULTILINE)


def _upstream_worker(paths: list[str], out: "mp.Queue") -> None:
    sys.path.insert(0, str(ROOT))
    from jaxlib.mlir import ir, passmanager
    from jaxlib.mlir.dialects import stablehlo

    from shlo.testing.oracles import mlir_context

    ctx = mlir_context()
    stablehlo.register_stablehlo_passes()
    for p in paths:
        text = CHECK_LINE.sub("", Path(p).read_text())
        try:
            with ctx:
                m = ir.Module.parse(text)
                passmanager.PassManager.parse(
                    "builtin.module(inline,func.func(chlo-legalize-to-stablehlo))").run(m.operation)
                t0 = time.perf_counter()
                stablehlo.eval_module(m, [])
                out.put((p, "ok", time.perf_counter() - t0))
        except Exception as e:  # noqa: BLE001 - report and go on
            out.put((p, f"error: {type(e).__name__}", 0.0))


def upstream_time(files: list[str], jobs: int) -> tuple[float, int, int, int]:
    """(seconds of evaluation summed over files / jobs, ok, errors, crashes)."""
    ctx = mp.get_context("spawn")
    pending = list(files)
    total, ok, errors, crashes = 0.0, 0, 0, 0
    while pending:
        chunks = [pending[i::jobs] for i in range(jobs)]
        pending = []
        q = ctx.Queue()
        procs = [ctx.Process(target=_upstream_worker, args=(c, q)) for c in chunks if c]
        for pr in procs:
            pr.start()
        done: set[str] = set()
        expected = sum(len(c) for c in chunks)
        while len(done) < expected:
            try:
                p, status, t = q.get(timeout=5)
            except Exception:
                if all(not pr.is_alive() for pr in procs):
                    break
                continue
            done.add(p)
            total += t
            ok += status == "ok"
            errors += status != "ok"
        for pr in procs:
            pr.join()
        for c in chunks:
            rest = [p for p in c if p not in done]
            if rest:  # the worker crashed on rest[0]
                crashes += 1
                pending.extend(rest[1:])
    return total / jobs, ok, errors, crashes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", nargs="?", default=str(DEFAULT))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    files = sorted(str(p) for p in Path(a.folder).glob("*.mlir"))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "shlo", "check", "-q", "-j", str(a.jobs), a.folder],
                       capture_output=True, text=True, cwd=ROOT)
    shlo_s = time.perf_counter() - t0
    print(f"shlo check: {shlo_s:.1f} s wall ({r.stdout.strip().splitlines()[-1]})")
    try:
        import jax  # noqa: F401
    except ImportError:
        print("upstream: jax not installed")
        return
    t0 = time.perf_counter()
    up, ok, errors, crashes = upstream_time(files, a.jobs)
    wall = time.perf_counter() - t0
    print(f"upstream interpreter: {up:.1f} s of evaluation per worker, {wall:.1f} s wall incl. "
          f"parsing and passes ({ok} ran, {errors} rejected, {crashes} crashed the process)")
    print(f"ratio: shlo wall / upstream evaluation = {shlo_s / up:.2f}")


if __name__ == "__main__":
    main()
