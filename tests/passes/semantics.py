"""Do the passes preserve what a program computes? Measured on the official corpus.

For each program of ``../shared/conformance/testdata`` whose entry takes no argument: run it,
then inline its calls (so that `@inputs()`/`@expected()` constants reach the ops and the
folds have something to fold), apply the passes, verify, run again, and compare the results
(and the program's own `check.expect_*` verdicts) with the first run.

    python tests/passes/semantics.py [--passes PIPELINE] [--corpus testdata|interpret|math]
                                     [--every N] [FILE...]

``--passes`` is a pipeline as ``shlo opt`` reads it (default: the optimization passes), e.g.
``'stablehlo-compatibility-expander{target=1.0.0}'``. ``--corpus`` picks the programs:
``testdata`` (the default), ``interpret`` (the interpreter's tests, split at `// -----`) or
``math`` (upstream's generated math tests). Prints one line per program that changed and the
totals. Results compare *exact* (same bits, NaNs equal), *close* (floats within 4 ulp-ish: rtol
1e-6 / complex parts alike; upstream's folder computes math functions in double precision and
rounds, where a kernel computes in the element type), *fixed* (results differ, but checks that
failed before the passes pass after them: a more accurate expansion) or *changed*.
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
    status: str  # exact | close | fixed | changed | skipped | error
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


def check_file(path: Path, passes=DEFAULT_PASSES, text: str | None = None,
               label: str = "") -> Outcome:
    """One program: the file at ``path``, or ``text`` (a case of it, named ``path:label``)."""
    import shlo
    from shlo.passes import run_passes
    from shlo.verifier import verify

    start = time.perf_counter()
    try:
        name = str(path.relative_to(CONFORMANCE))
    except ValueError:
        name = str(path)
    out = Outcome(name + (f":{label}" if label else ""), "exact")
    try:
        module = shlo.parse(path.read_text() if text is None else text, str(path))
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
        fixed = []
        for n in names:
            res, checks = _run(after_mod, n)
            if before[n][1] and not checks:
                fixed.append(f"@{n}: {len(before[n][1])} failing check(s) pass now")
                continue
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
        if fixed:
            out.status = "fixed"
            out.detail = "; ".join(fixed)
    except Exception as e:  # report, keep going
        out.status = "error"
        out.detail = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    finally:
        out.seconds = time.perf_counter() - start
    return out


def corpus(every: int = 1, name: str = "testdata") -> list[Path]:
    files = sorted((CONFORMANCE / name).rglob("*.mlir"))
    return files[::every]


def cases(path: Path) -> list[tuple[str, str | None]]:
    """(label, text) of each `// -----` case of ``path`` (one ``("", None)`` when unsplit)."""
    from shlo.syntax.split import SPLIT, split_cases

    text = path.read_text()
    if not SPLIT.search(text):
        return [("", None)]
    return [(f"L{line}", chunk) for line, chunk in split_cases(text) if "func.func" in chunk]


def check_cases(path: Path, passes=DEFAULT_PASSES) -> list[Outcome]:
    """:func:`check_file` on each case of ``path``."""
    return [check_file(path, passes, text, label) for label, text in cases(path)]


def main(argv: list[str]) -> int:
    from shlo.passes import _split_top

    passes = DEFAULT_PASSES
    every = 1
    which = "testdata"
    names = []
    it = iter(argv)
    for a in it:
        if a == "--passes":
            passes = tuple(_split_top(next(it)))
        elif a == "--every":
            every = int(next(it))
        elif a == "--corpus":
            which = next(it)
        else:
            names.append(a)
    files = [Path(n).resolve() for n in names] if names else corpus(every, which)
    counts: dict[str, int] = {}
    ops_b = ops_a = 0
    t0 = time.perf_counter()
    for o in (o for f in files for o in check_cases(f, passes)):
        counts[o.status] = counts.get(o.status, 0) + 1
        ops_b += o.ops_before
        ops_a += o.ops_after
        if o.status in ("changed", "error", "close", "fixed"):
            print(f"{o.status}: {o.path}: {o.detail}", flush=True)
    print(f"passes: {','.join(passes)}")
    print("programs: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
          f" (of {sum(counts.values())}, in {len(files)} files); "
          f"stablehlo/chlo ops {ops_b} -> {ops_a}; {time.perf_counter() - t0:.0f} s")
    return 1 if counts.get("changed") or counts.get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
