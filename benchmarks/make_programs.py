"""Regenerate benchmarks/programs/*.mlir from JAX (needs jax; running the benchmarks does not).

The weights are function arguments (generated at benchmark time from a fixed seed), so the
stored programs stay small.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

OUT = Path(__file__).parent / "programs"


def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5) * g + b


def transformer_block(p, x, heads=4):
    s, d = x.shape
    h = layer_norm(x, p["g1"], p["b1"])
    q, k, v = (h @ p["wq"], h @ p["wk"], h @ p["wv"])
    split = lambda t: t.reshape(s, heads, d // heads).transpose(1, 0, 2)
    q, k, v = split(q), split(k), split(v)
    att = jax.nn.softmax(q @ k.transpose(0, 2, 1) / np.sqrt(d // heads), axis=-1)
    o = (att @ v).transpose(1, 0, 2).reshape(s, d) @ p["wo"]
    x = x + o
    h = layer_norm(x, p["g2"], p["b2"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def main():
    OUT.mkdir(exist_ok=True)
    f32 = jnp.float32
    sizes = [784, 512, 512, 10]
    params = [(jax.ShapeDtypeStruct((a, b), f32), jax.ShapeDtypeStruct((b,), f32))
              for a, b in zip(sizes, sizes[1:])]
    x = jax.ShapeDtypeStruct((64, 784), f32)
    (OUT / "mlp.mlir").write_text(jax.jit(mlp).lower(params, x).as_text())
    d, f, s = 256, 1024, 128
    sd = lambda *shape: jax.ShapeDtypeStruct(shape, f32)
    p = {"g1": sd(d), "b1": sd(d), "wq": sd(d, d), "wk": sd(d, d), "wv": sd(d, d),
         "wo": sd(d, d), "g2": sd(d), "b2": sd(d), "w1": sd(d, f), "w2": sd(f, d)}
    (OUT / "transformer_block.mlir").write_text(
        jax.jit(transformer_block).lower(p, sd(s, d)).as_text())


if __name__ == "__main__":
    main()
