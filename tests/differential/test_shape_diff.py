"""Shape ops (broadcast_in_dim, concatenate, iota, pad, reshape, reverse, slice, transpose,
get_dimension_size) on every element type, against the upstream interpreter and XLA.

Data movement is compared bit for bit (NaN payloads and signed zeros included): one batch per
element type, operands of shape 2x3x4 drawn from every bit pattern of the type.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import (
    BITS, EXACT, XLA_NAN_PAYLOAD_TYPES, Batch, Case, params, seed, xfail_params, xla_nan_payload,
)
from shlo.testing.programs import ALL_TYPES, FunctionBuilder, Val, random_array
from shlo.types import element_type

SHAPE = (2, 3, 4)


def _raw(et: str, rng: np.random.Generator) -> np.ndarray:
    """Every bit pattern is fair for floats (payloads, subnormals); values for the others."""
    t = element_type(et)
    if t.is_float:
        nbytes = np.dtype(t.dtype).itemsize
        hi = 16 if et == "f4E2M1FN" else 256
        return rng.integers(0, hi, int(np.prod(SHAPE)) * nbytes).astype(np.uint8) \
            .view(t.dtype).reshape(SHAPE)
    return random_array(et, SHAPE, rng)


def _scalar(fb: FunctionBuilder, x: Val) -> Val:
    """x[0, 0, 0] as a 0-d tensor (padding values)."""
    s = fb.op1("slice", [x], (1, 1, 1), x.et, "start_indices = array<i64: 0, 0, 0>, "
               "limit_indices = array<i64: 1, 1, 1>, strides = array<i64: 1, 1, 1>")
    return fb.op1("reshape", [s], (), x.et)


def cases(et: str) -> list[Case]:
    def c(label: str, build: Any, tol: Any = BITS) -> Case:
        allow = xla_nan_payload if et in XLA_NAN_PAYLOAD_TYPES else None
        return Case(label, build, tol, allow)

    return [
        c("broadcast_in_dim", lambda fb, i: fb.op1(
            "broadcast_in_dim", [i[0]], (2, 5, 3, 4), i[0].et,
            "broadcast_dimensions = array<i64: 0, 2, 3>")),
        c("broadcast_in_dim_size1", lambda fb, i: fb.op1(
            "broadcast_in_dim", [fb.op1("slice", [i[0]], (1, 3, 1), i[0].et,
                                        "start_indices = array<i64: 1, 0, 2>, limit_indices = "
                                        "array<i64: 2, 3, 3>, strides = array<i64: 1, 1, 1>")],
            (3, 2, 3, 4), i[0].et, "broadcast_dimensions = array<i64: 1, 2, 0>")),
        c("concatenate", lambda fb, i: fb.op1(
            "concatenate", [i[0], i[1], i[0]], (2, 9, 4), i[0].et, "dimension = 1 : i64")),
        c("iota", lambda fb, i: fb.op1("iota", [], (3, 4), i[0].et, "iota_dimension = 1 : i64"),
          EXACT),
        c("pad", lambda fb, i: fb.op1(
            "pad", [i[0], _scalar(fb, i[1])], (3, 5, 6), i[0].et,
            "edge_padding_low = array<i64: 1, 0, -1>, edge_padding_high = array<i64: 0, -2, 0>, "
            "interior_padding = array<i64: 0, 2, 1>")),
        c("reshape", lambda fb, i: fb.op1("reshape", [i[0]], (4, 6), i[0].et)),
        c("reshape_flat", lambda fb, i: fb.op1("reshape", [i[0]], (24,), i[0].et)),
        c("reverse", lambda fb, i: fb.op1("reverse", [i[0]], SHAPE, i[0].et,
                                          "dimensions = array<i64: 0, 2>")),
        c("slice", lambda fb, i: fb.op1(
            "slice", [i[0]], (1, 2, 2), i[0].et, "start_indices = array<i64: 1, 0, 1>, "
            "limit_indices = array<i64: 2, 3, 4>, strides = array<i64: 1, 2, 2>")),
        c("transpose", lambda fb, i: fb.op1("transpose", [i[0]], (4, 2, 3), i[0].et,
                                            "permutation = array<i64: 2, 0, 1>")),
    ]


def batch(et: str) -> Batch:
    rng = np.random.default_rng(seed("shape-" + et))
    cs = [c for c in cases(et) if not (c.label == "iota" and et == "i1")]  # no i1 iota (C1)
    return Batch(et, [(SHAPE, et), (SHAPE, et)], [_raw(et, rng), _raw(et, rng)], cs,
                 ftz=False)


BATCHES = {et: batch(et) for et in ALL_TYPES}


def _size(fb: FunctionBuilder, i: list[Val]) -> Val:
    return fb.op1("get_dimension_size", [i[0]], (), "i32", "dimension = 2 : i64")


BATCHES["get_dimension_size"] = Batch(
    "get_dimension_size", [(SHAPE, "f32")], [np.zeros(SHAPE, np.float32)],
    [Case("get_dimension_size", _size)])


@pytest.mark.parametrize("oracle,key", params(list(BATCHES.values())))
def test_shape_ops(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BATCHES[key], oracle)


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
