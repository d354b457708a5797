"""How parsing and printing scale (issue 16 item 3, issue 17): ops/s and MB/s from 10^3 to 10^6
ops, on one or two shlo trees side by side (a script, not a test):

    python benchmarks/parse_scale_bench.py [--before OTHER_TREE] [--after TREE] [--max 1000000]

Programs: an op chain (parse_bench.op_dense_module, the shapes and spellings JAX prints) of
10^3..10^6 ops; modules of 10^3..10^5 small functions called from @main (alike but for their
names, or distinct: each with a constant of its own); when jax is installed,
a JAX export of an unrolled transformer with debug info (`loc(#locN)` on every op); the
conformance corpus's testdata (1,746 files of hex constants). Each is parsed and printed in a
child process per tree (trees alternate program by program); times are CPU time (process time),
the best of a few runs for the small ones; bytes/op is the memory the parsed module holds
(tracemalloc, in a parse of its own). Both trees must print the same text (a digest is
compared).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / ".." / "shared" / "conformance" / "testdata"
JAX_CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / "shlo_parse_scale_jax_{}.mlir"


def functions_module(n: int, distinct: bool = False) -> str:
    """``n`` small private functions, each called once from @main (a chain of calls); alike
    but for their names, or (``distinct``) each adding a constant of its own."""
    t = "tensor<4xf32>"
    out = ["module @many_functions {"]
    for i in range(n):
        first = (f"    %c = stablehlo.constant dense<{i}.5> : {t}\n"
                 f"    %0 = stablehlo.add %arg0, %c : {t}\n") if distinct else \
            f"    %0 = stablehlo.add %arg0, %arg1 : {t}\n"
        out.append(f"  func.func private @f{i}(%arg0: {t}, %arg1: {t}) -> {t} {{\n"
                   f"{first}"
                   f"    %1 = stablehlo.multiply %0, %arg1 : {t}\n"
                   f"    return %1 : {t}\n  }}")
    out.append(f"  func.func public @main(%arg0: {t}, %arg1: {t}) -> {t} {{")
    prev = "%arg0"
    for i in range(n):
        out.append(f"    %{i} = call @f{i}({prev}, %arg1) : ({t}, {t}) -> {t}")
        prev = f"%{i}"
    out.append(f"    return {prev} : {t}\n  }}\n}}\n")
    return "\n".join(out)


def jax_transformer(layers: int) -> str | None:
    """A JAX export (with debug info) of ``layers`` unrolled transformer blocks, cached in a
    temporary file; None without jax."""
    path = Path(str(JAX_CACHE).format(layers))
    if path.exists():
        return path.read_text()
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    sys.path.insert(0, str(HERE))
    from make_programs import transformer_block

    d, f, s = 64, 256, 32
    sd = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)  # noqa: E731
    p = {"g1": sd(d), "b1": sd(d), "wq": sd(d, d), "wk": sd(d, d), "wv": sd(d, d),
         "wo": sd(d, d), "g2": sd(d), "b2": sd(d), "w1": sd(d, f), "w2": sd(f, d)}

    def model(p, x):
        for _ in range(layers):
            x = transformer_block(p, x)
        return x

    text = jax.jit(model).lower(p, sd(s, d)).as_text(debug_info=True)
    path.write_text(text)
    return text


def corpus_text() -> list[tuple[str, str]]:
    if not CORPUS.is_dir():
        return []
    return [(p.name, p.read_text()) for p in sorted(CORPUS.glob("*.mlir"))]


def _best(fn, runs: int) -> tuple[float, object]:
    import gc

    best, out = float("inf"), None
    for _ in range(runs):
        gc.collect()
        t0 = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t0)
    return best, out


def child(kind: str, n: int) -> None:
    """In the child: parse and print program (kind, n) with the shlo on sys.path; print JSON."""
    import gc

    sys.path.insert(0, str(HERE))
    import shlo
    from parse_bench import op_dense_module
    from shlo.syntax.printer import format_module

    shlo.format(shlo.parse(op_dense_module(200)))  # warm up (lazy imports, caches)
    shlo.format(shlo.parse(functions_module(20)))
    if kind == "corpus":
        texts = corpus_text()
        runs = 2
    else:
        text = {"chain": op_dense_module, "functions": functions_module,
                "distinct": lambda n: functions_module(n, distinct=True),
                "jax": jax_transformer}[kind](n)
        texts = [("<bench>", text)]
        runs = 1 if n >= 10 ** 6 or kind == "jax" and n > 100 else 2 if n >= 10 ** 5 else 5
    size = sum(len(t.encode()) for _, t in texts)
    gc.collect()
    t0 = time.process_time()
    mods = [shlo.parse(t, name) for name, t in texts]
    t_parse = time.process_time() - t0
    ops = sum(1 for m in mods for _ in m.walk())
    if runs > 1:
        t, _ = _best(lambda: [shlo.parse(t, name) for name, t in texts], runs - 1)
        t_parse = min(t_parse, t)
    t_print, out = _best(lambda: [format_module(m) for m in mods], runs)
    out_size = sum(len(o.encode()) for o in out)  # type: ignore[union-attr]
    digest = 0
    for o in out:  # type: ignore[union-attr]
        digest = zlib.crc32(o.encode(), digest)
    del mods, out
    gc.collect()
    tracemalloc.start()
    mods = [shlo.parse(t, name) for name, t in texts]
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    print(json.dumps({"ops": ops, "mb": size / 1e6, "out_mb": out_size / 1e6,
                      "parse": t_parse, "print": t_print, "bytes_per_op": held / ops,
                      "digest": digest}))


def run_tree(tree: str, kind: str, n: int) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(n)], env=env,
                         capture_output=True, text=True, cwd=tree)
    if out.returncode:
        raise SystemExit(f"{tree} {kind} {n} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="another shlo tree, timed side by side")
    ap.add_argument("--after", default=str(HERE.parent), help="the tree to time (this one)")
    ap.add_argument("--min", type=int, default=10 ** 3, help="smallest chain (ops)")
    ap.add_argument("--max", type=int, default=10 ** 6, help="largest chain (ops)")
    ap.add_argument("--max-functions", type=int, default=10 ** 5)
    ap.add_argument("--jax-layers", type=int, default=300, help="0: no JAX export")
    ap.add_argument("--only", help="run only programs of this kind")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], int(a.child[1]))
        return
    trees = [("before", a.before), ("after", a.after)] if a.before else [("this", a.after)]
    progs: list[tuple[str, int]] = []
    n = a.min
    while n <= a.max:
        progs.append(("chain", n))
        n *= 10
    n = 1000
    while n <= a.max_functions:
        progs.append(("functions", n))
        progs.append(("distinct", n))
        n *= 10
    if a.jax_layers and jax_transformer(a.jax_layers) is not None:
        progs.append(("jax", a.jax_layers))
    if CORPUS.is_dir():
        progs.append(("corpus", 0))
    if a.only:
        progs = [p for p in progs if p[0] == a.only]
    print("| program | tree | ops | MB | parse s | parse ops/s | parse MB/s | print s | "
          "print ops/s | print MB/s | bytes/op |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind, n in progs:
        label = {"chain": f"chain 10^{len(str(n)) - 1}", "functions": f"{n:,} functions",
                 "distinct": f"{n:,} distinct functions",
                 "jax": f"JAX export, {n} layers", "corpus": "corpus testdata"}[kind]
        digests = set()
        rows = []
        for name, tree in trees:
            r = run_tree(tree, kind, n)
            digests.add(r["digest"])
            rows.append((name, r))
        for name, r in rows:
            print(f"| {label} | {name} | {r['ops']:,} | {r['mb']:.2f} | {r['parse']:.3f} | "
                  f"{r['ops'] / r['parse']:,.0f} | {r['mb'] / r['parse']:.1f} | "
                  f"{r['print']:.3f} | {r['ops'] / r['print']:,.0f} | "
                  f"{r['out_mb'] / r['print']:.1f} | {r['bytes_per_op']:,.0f} |", flush=True)
        if len(rows) == 2:
            (_, b), (_, c) = rows
            print(f"| {label} | after/before | | | {c['parse'] / b['parse']:.2f}x time | | | "
                  f"{c['print'] / b['print']:.2f}x time | | | "
                  f"{c['bytes_per_op'] / max(b['bytes_per_op'], 1):.2f}x |", flush=True)
        if len(digests) > 1:
            print(f"  ** {label}: the trees print different text **", flush=True)


if __name__ == "__main__":
    main()
