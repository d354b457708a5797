"""Per-op cost inside a loop body on small tensors (issue 17 item 2: under 1 µs), op by op:

    python benchmarks/loop_ops_bench.py [--before /path/to/other/tree] [--rounds 3] [ops...]

Each program is a `while` of 300 iterations whose body is 32 of one op on 16xf32 (a binary op
takes the previous result and %y; `compare+select` and `convert` are pairs, counted as two
ops). The CPU time of the process divided by the number of ops, best of 7 runs, is one
measurement; each tree is measured in ``--rounds`` child processes, the trees alternating, and
the table gives the smallest (a process on this shared machine sometimes runs all its work
~1.5x slower: the minimum over processes leaves that out) and every round's value.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loops_bench import while_program  # noqa: E402

T = "tensor<16xf32>"
BINARY = ["add", "multiply", "subtract", "divide", "maximum", "minimum", "power", "remainder",
          "atan2"]
UNARY = ["negate", "abs", "exponential", "log", "tanh", "sqrt", "rsqrt", "logistic", "sine",
         "floor", "sign", "exponential_minus_one", "log_plus_one", "cbrt", "tan"]
OTHER = ["compare+select", "clamp", "convert"]


def _line(op: str, k: int, prev: str) -> list[str]:
    if op in BINARY:
        return [f"      %e{k} = stablehlo.{op} {prev}, %y : {T}"]
    if op in UNARY:
        return [f"      %e{k} = stablehlo.{op} {prev} : {T}"]
    if op == "compare+select":
        return [f"      %p{k} = stablehlo.compare GT, {prev}, %y : ({T}, {T}) -> tensor<16xi1>",
                f"      %e{k} = stablehlo.select %p{k}, {prev}, %y : tensor<16xi1>, {T}"]
    if op == "clamp":
        return [f"      %e{k} = stablehlo.clamp %y, {prev}, %y2 : {T}"]
    if op == "convert":
        return [f"      %c{k} = stablehlo.convert {prev} : ({T}) -> tensor<16xf64>",
                f"      %e{k} = stablehlo.convert %c{k} : (tensor<16xf64>) -> {T}"]
    raise SystemExit(f"unknown op {op}")


def program(op: str, ops: int = 32, iterations: int = 300) -> tuple[str, int]:
    """The loop of ``ops`` ``op``s and the number of ops it runs."""
    body: list[str] = []
    prev = "%v"
    for k in range(ops):
        lines = _line(op, k, prev)
        body += lines
        prev = f"%e{k}"
    text = while_program(body, prev, iterations, T, f"%x: {T}, %y: {T}, %y2: {T}")
    return text, iterations * (len(body))


def child(names: list[str]) -> None:
    import shlo

    r = np.random.default_rng(0)
    x = r.uniform(0.5, 1.5, 16).astype(np.float32)
    y = r.uniform(0.9, 1.1, 16).astype(np.float32)
    out = {}
    for op in names:
        text, n = program(op)
        m = shlo.parse(text)
        with np.errstate(all="ignore"):
            shlo.run(m, x, y, y + 1, verify=False)
            best = min(_cpu(lambda: shlo.run(m, x, y, y + 1, verify=False)) for _ in range(7))
        out[op] = best / n
    print(json.dumps(out))


def _cpu(fn) -> float:  # type: ignore[no-untyped-def]
    c0 = time.process_time()
    fn()
    return time.process_time() - c0


def _times(tree: str, names: list[str]) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, __file__, "--child", *names], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--before")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("ops", nargs="*")
    a = ap.parse_args()
    names = a.ops or BINARY + UNARY + OTHER
    if a.child:
        child(names)
        return
    here = str(Path(__file__).resolve().parent.parent)
    trees = ([("before", a.before)] if a.before else []) + [("after", here)]
    runs: dict[str, list[dict[str, float]]] = {label: [] for label, _ in trees}
    load0 = os.getloadavg()
    for _ in range(a.rounds):
        for label, tree in trees:
            runs[label].append(_times(tree, names))
    load1 = os.getloadavg()
    print(f"load average: {', '.join(f'{v:.1f}' for v in load0)} at the start, "
          f"{', '.join(f'{v:.1f}' for v in load1)} at the end; CPU µs per op, the smallest of "
          f"{a.rounds} processes per tree (each the best of 7 runs; every process's in brackets)\n")
    cols = ["op (16xf32, in a while body)"] + [label for label, _ in trees]
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for op in names:
        cells = [op]
        for label, _ in trees:
            vs = [r[op] * 1e6 for r in runs[label]]
            cells.append(f"{min(vs):.2f} ({', '.join(f'{v:.2f}' for v in vs)})")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
