"""Float add-reductions over an outer (strided) dimension: blocked, not sequential.

numpy's ``add.reduce`` over a strided axis adds whole rows one after another; shlo sums blocks of
32 and then the block sums pairwise (``_regions.blocked_sum``; docs/semantics/reduction.md,
"Float sums"). The error bound stated there is checked against exact sums (math.fsum).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import shlo
from shlo.ops import _regions

REDUCE = """func.func @main(%x: tensor<{n}x{m}x{t}>) -> tensor<{m}x{t}> {{
  %z = stablehlo.constant dense<{init}> : tensor<{t}>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{n}x{m}x{t}>, tensor<{t}>) -> tensor<{m}x{t}>
  return %0 : tensor<{m}x{t}>
}}"""


def _run(x: np.ndarray, t: str, init: str = "0.0") -> np.ndarray:
    m = shlo.parse(REDUCE.format(n=x.shape[0], m=x.shape[1], t=t, init=init))
    return np.asarray(shlo.run(m, x)[0])


def test_issue_example_is_accurate() -> None:
    """16384x32 f32 of 0.1 over dimension 0: 1638.4 within 1e-6 relative (sequential: 1638.147)."""
    r = _run(np.full((16384, 32), 0.1, np.float32), "f32")
    assert np.all(np.abs(r.astype(np.float64) - 1638.4) / 1638.4 < 1e-6)


def _bound(n: int, u: float) -> float:
    """docs/semantics/reduction.md: (31 + 20 + max(0, ceil(log2(n / 4096)))) u sum|x|."""
    return (51 + max(0, math.ceil(math.log2(max(n, 1) / 4096)))) * u


@pytest.mark.parametrize("n", [33, 100, 4097, 50000])
@pytest.mark.parametrize("t,dt,u", [("f32", np.float32, 2.0 ** -24), ("f64", np.float64, 2.0 ** -53)])
def test_error_within_bound(n: int, t: str, dt, u: float) -> None:
    x = np.random.default_rng(n).standard_normal((n, 5)).astype(dt) * 10.0 ** np.arange(5)
    r = _run(x.astype(dt), t)
    for j in range(5):
        col = x[:, j].astype(np.float64)
        exact = math.fsum(col)
        assert abs(float(r[j]) - exact) <= _bound(n, u) * float(np.sum(np.abs(col))) + 1e-300


def test_blocked_matches_exact_small_integers() -> None:
    """Sums of small integers are exact in any order: blocked == contiguous pairwise == exact."""
    x = np.random.default_rng(1).integers(-1000, 1000, (10000, 7)).astype(np.float32)
    r = _run(x, "f32")
    np.testing.assert_array_equal(r, x.astype(np.int64).sum(axis=0).astype(np.float32))
    np.testing.assert_array_equal(_regions.blocked_sum(x.T), np.add.reduce(np.ascontiguousarray(x.T), axis=-1))


def test_special_values() -> None:
    n = 1000
    x = np.zeros((n, 6), np.float32)
    x[:, 0] = -0.0          # all -0: +0 (numpy's add.reduce starts from +0, on any layout)
    x[5, 1] = np.inf        # inf
    x[7, 2], x[900, 2] = np.inf, -np.inf  # inf + -inf: NaN
    x[999, 3] = np.nan      # NaN in the tail block
    x[:, 4] = np.float32(3e38)  # overflows to inf
    x[:, 5] = -1.0
    r = _run(x, "f32", init="-0.0")
    assert r[0] == 0
    contiguous = np.float32(-0.0) + np.add.reduce(np.ascontiguousarray(x[:, 0]))
    assert np.signbit(r[0]) == np.signbit(contiguous)
    assert r[1] == np.inf and np.isnan(r[2]) and np.isnan(r[3]) and r[4] == np.inf
    assert r[5] == -n
    r0 = _run(x, "f32", init="0.0")
    assert r0[0] == 0 and not np.signbit(r0[0])


def test_contiguous_axis_unchanged() -> None:
    """Over the last (contiguous) axis, the result is numpy's pairwise sum as before."""
    x = np.random.default_rng(2).standard_normal((3, 10000)).astype(np.float32)
    t = """func.func @main(%x: tensor<3x10000xf32>) -> tensor<3xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<3x10000xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    r = shlo.run(shlo.parse(t), x)[0]
    np.testing.assert_array_equal(r, np.float32(0) + np.add.reduce(x, axis=-1))


@pytest.mark.parametrize("t", ["f8E5M2", "f8E4M3FN", "bf16"])
def test_ml_dtypes_floats_sum_pairwise(t: str) -> None:
    """Every ml_dtypes float sums by the pairwise tree, f8E5M2 too (kind 'f' from ml_dtypes 0.7
    on): 100 ones give 96 in both f8 formats (the tree's partial sums rounded to their 2-3
    mantissa bits) and 100 in bf16. Summed one after another in f8E5M2 they stop at 8, since
    8 + 1 rounds to 8."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    got = _run(np.ones((100, 1), dt), t)
    assert float(got[0]) == (100.0 if t == "bf16" else 96.0)
