"""Do the optimization passes preserve what a program computes? Measured on the official corpus.

For each program of ``../shared/conformance/testdata`` whose entry takes no argument: run it,
then inline its calls (so that `@inputs()`/`@expected()` constants reach the ops and the
folds have something to fold), apply the passes, verify, run again, and compare the results
(and the program's own `check.expect_*` verdicts) with the first run.

    python tests/passes/semantics.py [--passes P1,P2] [--every N] [FILE...]

prints one line per program that changed and the totals. Results compare *exact* (same bits,
NaNs equal), *close* (floats within 4 ulp-ish: rtol 1e-6 / complex parts alike; upstream's
folder computes math functions in double precision and rounds, where a kernel computes in the
element type) or *changed*.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"
DEFAULT_PASSES = ("stablehlo-aggressive-simplification", "stablehlo-aggressive-folder")


@dataclass
class Outcome:
    path: str
    status: str  # exact | close | changed | skipped | error
    detail: str = ""
    ops_before: int = 0
    ops_after: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def inline_calls(module):
    """A copy of ``module`` with every `func.call` replaced by the callee's body."""
    from shlo.passes._rewrite import Rewriter

    funcs = module.functions

    def pattern(rw, op):
        if op.name != "func.call":
            return None
        callee = funcs.get(op.attr("callee").name)
        if callee is None:
            return None
        body = callee.regions[0].blocks[0]
        for a, v in zip(body.arguments, op.operands):
            rw.values[a] = rw.get(v)
        for inner in body.operations[:-1]:
            rw.rewrite(inner)
        return [rw.get(v) for v in body.operations[-1].operands]

    return Rewriter(pattern).module(module)


def _entries(module) -> list[str]:
    from shlo.testing.runner import _entries as entries

    return entries(module)


def _run(module, name):
    from shlo.interpreter.evaluator import PrepareContext, ProcessContext

    process = ProcessContext()
    fn = PrepareContext(module, process).function(name)
    with np.errstate(all="ignore"):
        out = fn()
    return list(out), list(process.check_failures)


def _count(module) -> int:
    return sum(1 for op in module.walk() if op.dialect in ("stablehlo", "chlo"))


def _compare(a, b) -> str:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or \
                len(a) != len(b):
            return "changed"
        worst = "exact"
        for x, y in zip(a, b):
            r = _compare(x, y)
            if r == "changed":
                return r
            if r == "close":
                worst = r
        return worst
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return "exact" if type(a) is type(b) else "changed"
    if a.shape != b.shape or a.dtype != b.dtype:
        return "changed"
    if a.tobytes() == b.tobytes():
        return "exact"
    if a.dtype.kind in "fc" or a.dtype.name in ("bfloat16",) or "float" in a.dtype.name:
        x = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        y = b.astype(x.dtype)
        if np.array_equal(x, y, equal_nan=True):
            return "exact"  # e.g. NaN payloads, -0.0
        if np.allclose(x, y, rtol=1e-6, atol=0, equal_nan=True):
            return "close"
    return "changed"


def check_file(path: Path, passes=DEFAULT_PASSES) -> Outcome:
    import shlo
    from shlo.passes import run_passes
    from shlo.verifier import verify

    start = time.perf_counter()
    out = Outcome(str(path.relative_to(CONFORMANCE)), "exact")
    try:
        module = shlo.parse(path.read_text(), str(path))
        names = _entries(module)
        from shlo.ir import function_type

        if not names or any(function_type(module.functions[n]).inputs for n in names):
            out.status = "skipped"
            out.detail = "entry takes arguments"
            return out
        before = {n: _run(module, n) for n in names}
        flat = inline_calls(module)
        after_mod = run_passes(flat, list(passes))
        verify(after_mod)
        out.ops_before, out.ops_after = _count(flat), _count(after_mod)
        for n in names:
            res, checks = _run(after_mod, n)
            if checks != before[n][1] and not (bool(checks) == bool(before[n][1])):
                out.status = "changed"
                out.detail = f"@{n}: checks {before[n][1][:1]} became {checks[:1]}"
                return out
            c = _compare(before[n][0], res)
            if c == "changed":
                out.status = "changed"
                out.detail = f"@{n}: results differ"
                return out
            if c == "close":
                out.status = "close"
    except Exception as e:  # report, keep going
        out.status = "error"
        out.detail = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    finally:
        out.seconds = time.perf_counter() - start
    return out


def corpus(every: int = 1) -> list[Path]:
    files = sorted((CONFORMANCE / "testdata").rglob("*.mlir"))
    return files[::every]


def main(argv: list[str]) -> int:
    passes = DEFAULT_PASSES
    every = 1
    names = []
    it = iter(argv)
    for a in it:
        if a == "--passes":
            passes = tuple(next(it).split(","))
        elif a == "--every":
            every = int(next(it))
        else:
            names.append(a)
    files = [Path(n).resolve() for n in names] if names else corpus(every)
    counts: dict[str, int] = {}
    ops_b = ops_a = 0
    t0 = time.perf_counter()
    for f in files:
        o = check_file(f, passes)
        counts[o.status] = counts.get(o.status, 0) + 1
        ops_b += o.ops_before
        ops_a += o.ops_after
        if o.status in ("changed", "error", "close"):
            print(f"{o.status}: {o.path}: {o.detail}", flush=True)
    print(f"passes: {','.join(passes)}")
    print("programs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f" (of {len(files)}); stablehlo/chlo ops {ops_b} -> {ops_a}; "
          f"{time.perf_counter() - t0:.0f} s")
    return 1 if counts.get("changed") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
