"""Every element-wise kernel (and a sum) on narrow floats against its float32 counterpart, in
one process: issue 17's "no narrow-float kernel more than 2x slower than its f32 counterpart".

    python benchmarks/narrow_kernels_bench.py [--n 1000000] [--trials 5] [--rounds 6] [--only OP]

Each program is one op on ``n`` normal-distributed elements, timed through ``shlo.run`` on a
parsed module without verification after ``--warm-up`` seconds of runs, as
``issue17_bench.py`` times shlo (steady state: allocations reuse freed memory), the best of
``--trials`` in each of ``--rounds`` turns: an op's types take turns, so that a slow spell of
this noisy machine does not fall on one cell alone (such spells last seconds, and slow every
kernel bound by its instructions ~1.6x: more, shorter turns make the best of them the
kernel's own speed more often). The float32 row of a conversion is the same conversion
between f64 and f32. Prints a markdown table of microseconds and of ratios to the float32
row.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

TYPES = ["f32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f6E2M3FN", "f4E2M1FN"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
UNARY = ["negate", "abs", "sqrt", "exponential", "tanh"]
OPS = BINARY + ["compare", "select"] + UNARY + ["convert to f32", "convert from f32", "sum"]


def program(op: str, t: str, n: int) -> tuple[str, list[str]]:
    """The text of ``op`` on ``tensor<n x t>`` and its operands' element types."""
    ty = f"tensor<{n}x{t}>"
    if op in BINARY:
        body, args, res = f"stablehlo.{op} %a, %b : {ty}", [t, t], ty
    elif op == "compare":
        body, args, res = f"stablehlo.compare GT, %a, %b : ({ty}, {ty}) -> tensor<{n}xi1>", \
            [t, t], f"tensor<{n}xi1>"
    elif op == "select":
        body = f"stablehlo.select %p, %a, %b : tensor<{n}xi1>, {ty}"
        return (f"func.func @main(%p: tensor<{n}xi1>, %a: {ty}, %b: {ty}) -> {ty} {{\n"
                f"  %0 = {body}\n  return %0 : {ty}\n}}"), ["i1", t, t]
    elif op in UNARY:
        body, args, res = f"stablehlo.{op} %a : {ty}", [t], ty
    elif op == "convert to f32":
        wide = "f64" if t == "f32" else "f32"
        body, args, res = f"stablehlo.convert %a : ({ty}) -> tensor<{n}x{wide}>", [t], \
            f"tensor<{n}x{wide}>"
    elif op == "convert from f32":
        src = "f64" if t == "f32" else "f32"
        body, args, res = f"stablehlo.convert %a : (tensor<{n}x{src}>) -> {ty}", [src], ty
        return (f"func.func @main(%a: tensor<{n}x{src}>) -> {ty} {{\n  %0 = {body}\n"
                f"  return %0 : {ty}\n}}"), args
    else:  # sum
        return (f"func.func @main(%a: {ty}) -> tensor<{t}> {{\n"
                f"  %z = stablehlo.constant dense<0.0> : tensor<{t}>\n"
                f"  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions"
                f" = [0] : ({ty}, tensor<{t}>) -> tensor<{t}>\n  return %0 : tensor<{t}>\n}}"), [t]
    params = ", ".join(f"%{c}: {ty}" for c in "ab"[:len(args)])
    return f"func.func @main({params}) -> {res} {{\n  %0 = {body}\n  return %0 : {res}\n}}", args


def main() -> None:
    import shlo
    from shlo.types import element_type

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--only")
    ap.add_argument("--warm-up", type=float, default=0.15, help="seconds before each turn")
    ap.add_argument("--rounds", type=int, default=6, help="turns of each type")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"n = {a.n}; best of {a.rounds} x {a.trials}; ratio = type / f32\n")
    print("| op | " + " | ".join(TYPES) + " |")
    print("|---|" + "---|" * len(TYPES))
    for op in OPS:
        if a.only and a.only not in op:
            continue
        runs = {}
        for t in TYPES:
            text, types = program(op, t, a.n)
            args = []
            for et in types:
                if et == "i1":
                    args.append(rng.random(a.n) < 0.5)
                    continue
                with np.errstate(over="ignore"):
                    args.append(rng.standard_normal(a.n).astype(np.float32).astype(
                        element_type(et).dtype))
            runs[t] = (shlo.parse(text), args)
        times: dict[str, list[float]] = {t: [] for t in TYPES}
        with np.errstate(all="ignore"):
            for _ in range(a.rounds):  # the types in turn: a slow spell hits more than one
                for t, (module, args) in runs.items():
                    end = time.perf_counter() + a.warm_up  # steady state, as sidebyside.py
                    while time.perf_counter() < end:
                        shlo.run(module, *args, verify=False)
                    for _ in range(a.trials):
                        start = time.perf_counter()
                        shlo.run(module, *args, verify=False)
                        times[t].append(time.perf_counter() - start)
        best = {t: min(v) * 1e6 for t, v in times.items()}
        cells = [f"{best[t]:.0f} us" if t == "f32" else f"{best[t] / best['f32']:.2f}x"
                 for t in TYPES]
        print(f"| {op} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
