"""Issue 17's loop programs (per-op cost inside loop bodies and long chains of tiny ops), timed
on one or two shlo trees and on XLA in one run:

    python benchmarks/loops_bench.py [--before /path/to/other/tree] [--trials 5] [--only S]

The scan RNNs and the MLP training step are lowered by jax (``lax.scan``: three `func.call`s per step, a
`dynamic_slice` of the inputs and a `dynamic_update_slice` of the outputs); the others are
written here. shlo is timed in a child process per tree (alternating program by program), as
the median of ``--trials`` timings, each the best of a few runs; XLA in this process the same
way, execution only (compile excluded, host transfers included). Prints a markdown table.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from programs import while_loop  # noqa: E402

HERE = Path(__file__).resolve().parent


def _rnn(h: int, steps: int = 1000) -> tuple[str, list[np.ndarray]]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(w, u, xs, h0):
        def step(hc, x):
            hn = jnp.tanh(hc @ w + x @ u)
            return hn, hn
        return lax.scan(step, h0, xs)

    r = np.random.default_rng(0)
    args = [(r.standard_normal((h, h)) / np.sqrt(h)).astype(np.float32),
            (r.standard_normal((h, h)) / np.sqrt(h)).astype(np.float32),
            r.standard_normal((steps, h)).astype(np.float32), np.zeros(h, np.float32)]
    return jax.jit(f).lower(*args).as_text(), args


def _matvec(n: int = 16, iterations: int = 1000) -> tuple[str, list[np.ndarray]]:
    m, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    body = [f"      %d = stablehlo.dot_general %a, %v, contracting_dims = [1] x [0] : ({m}, {v}) -> {v}",
            f"      %t = stablehlo.tanh %d : {v}"]
    text = while_program(body, "%t", iterations, v, f"%a: {m}, %x: {v}")
    r = np.random.default_rng(0)
    return text, [(r.standard_normal((n, n)) / 4).astype(np.float32),
                  r.standard_normal(n).astype(np.float32)]


def while_program(body: list[str], result: str, iterations: int, t: str, args: str) -> str:
    """@main(``args``) -> ``t``: a `while` of ``iterations`` over an i32 counter and a value of
    type ``t`` (``%v``, starting from ``%x``), whose body is the lines ``body`` (indented six
    spaces) leaving the next value in ``result``."""
    nl = "\n"
    return f"""func.func @main({args}) -> {t} {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<{iterations}> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, {t}
    cond {{
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
{nl.join(body)}
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, {result} : tensor<i32>, {t}
    }}
  return %r#1 : {t}
}}"""


def _loop_body(ops: int = 64, iterations: int = 1000,
               names: tuple[str, ...] = ("add", "multiply", "subtract", "maximum")
               ) -> tuple[str, list[np.ndarray]]:
    """A `while` whose body is ``ops`` element-wise ops on 16xf32 (``names`` in turn): time /
    (iterations * ops) is the per-op cost inside a loop body."""
    t = "tensor<16xf32>"
    body, prev = [], "%v"
    for k in range(ops):
        body.append(f"      %e{k} = stablehlo.{names[k % len(names)]} {prev}, %y : {t}")
        prev = f"%e{k}"
    text = while_program(body, prev, iterations, t, f"%x: {t}, %y: {t}")
    r = np.random.default_rng(0)
    return text, [r.uniform(0.5, 1.5, 16).astype(np.float32),
                  r.uniform(0.999, 1.001, 16).astype(np.float32)]


def _mlp_train(batch: int = 8, d: int = 64, h: int = 128, c: int = 10,
               lr: float = 0.05) -> tuple[str, list[np.ndarray]]:
    """One SGD step of a 2-layer MLP (tanh, softmax cross-entropy), jax's value_and_grad
    lowered: a straight-line program of small ops (no loop), so its time is per-op cost."""
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = jnp.tanh(x @ w1 + b1) @ w2 + b2
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

    def step(params, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, [p - lr * g for p, g in zip(params, grads)]

    r = np.random.default_rng(0)
    params = [(r.standard_normal((d, h)) / np.sqrt(d)).astype(np.float32),
              np.zeros(h, np.float32),
              (r.standard_normal((h, c)) / np.sqrt(h)).astype(np.float32),
              np.zeros(c, np.float32)]
    x = r.standard_normal((batch, d)).astype(np.float32)
    y = np.eye(c, dtype=np.float32)[r.integers(0, c, batch)]
    return jax.jit(step).lower(params, x, y).as_text(), [*params, x, y]


def _scalar_while(iterations: int = 100_000) -> tuple[str, list[np.ndarray]]:
    p = while_loop(iterations)  # the same program as benchmarks/programs.py's
    return p.text, p.args


def _chain(n: int, shape: str, ops: tuple[str, ...]) -> tuple[str, list[np.ndarray]]:
    t = f"tensor<{shape}f32>"
    lines = [f"func.func @main(%x: {t}, %y: {t}) -> {t} {{"]
    prev = "%x"
    for k in range(n):
        op = ops[k % len(ops)]
        lines.append(f"  %v{k} = stablehlo.{op} {prev}, %y : {t}")
        prev = f"%v{k}"
    lines += [f"  return {prev} : {t}", "}"]
    dims = tuple(int(d) for d in shape.rstrip("x").split("x")) if shape else ()
    r = np.random.default_rng(0)
    return "\n".join(lines), [r.uniform(0.5, 1.5, dims).astype(np.float32),
                              r.uniform(0.999, 1.001, dims).astype(np.float32)]


PROGRAMS: dict[str, Callable[[], tuple[str, list[np.ndarray]]]] = {
    "lax.scan RNN 1000 steps h=64": lambda: _rnn(64),
    "lax.scan RNN 1000 steps h=256": lambda: _rnn(256),
    "while 16x16 mat-vec 1000 iterations": _matvec,
    "scalar while 1e5 iterations": _scalar_while,
    "chain of 10,000 scalar adds": lambda: _chain(10_000, "", ("add",)),
    "chain of 10,000 tiny element-wise ops (16xf32)":
        lambda: _chain(10_000, "16x", ("add", "multiply", "subtract", "maximum")),
    "while 1000 iterations of 64 element-wise ops (16xf32)": _loop_body,
    "MLP training step batch 8 (64-128-10)": _mlp_train,
}


@lru_cache(maxsize=None)
def program(name: str) -> tuple[str, list[np.ndarray]]:
    return PROGRAMS[name]()


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from sidebyside import main

    main(list(PROGRAMS), program, str(Path(__file__).resolve()))
