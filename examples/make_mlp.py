"""Regenerate examples/mlp.mlir and examples/mlp_input.npy (needs jax; not needed to run them).

A small MLP classifier (64 -> 32 -> 10, relu, softmax) with fixed random weights closed over,
so JAX exports them as constants, as a user's exported model would carry them.
"""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(0)
W1 = rng.normal(0, 0.2, (64, 32)).astype(np.float32)
b1 = rng.normal(0, 0.1, (32,)).astype(np.float32)
W2 = rng.normal(0, 0.2, (32, 10)).astype(np.float32)
b2 = rng.normal(0, 0.1, (10,)).astype(np.float32)


def mlp(x):
    h = jax.nn.relu(x @ W1 + b1)
    return jax.nn.softmax(h @ W2 + b2, axis=-1)


here = Path(__file__).parent
x = rng.normal(0, 1, (2, 64)).astype(np.float32)
(here / "mlp.mlir").write_text(jax.jit(mlp).lower(x).as_text())
np.save(here / "mlp_input.npy", x)
np.save(here / "mlp_expected.npy", np.asarray(mlp(x)))
