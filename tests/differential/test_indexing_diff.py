"""gather, scatter, dynamic_slice and dynamic_update_slice against the upstream interpreter and
XLA: every element type for the data-movement forms (gather, scatter that replaces,
dynamic_slice, dynamic_update_slice; compared bit for bit), the arithmetic scatter bodies
(add, multiply, maximum, minimum) on every numeric type, and start indices of every integer
type, including out-of-range ones (clamped by gather and the dynamic ops; skipped by scatter).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import (
    BITS, EXACT, XLA_NAN_PAYLOAD_TYPES, Batch, Case, params, seed, xfail_params, xla_nan_payload,
)
from shlo.testing.programs import (
    ALL_TYPES, FunctionBuilder, Val, binary_body, random_array, type_str,
)
from shlo.types import element_type

INDEX_TYPES = ["i32", "i64", "ui8", "i8", "ui32", "i16", "ui64", "ui16"]
OPERAND = (5, 4)


def _raw(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    t = element_type(et)
    if t.is_float:
        n = int(np.prod(shape)) * np.dtype(t.dtype).itemsize
        hi = 16 if et == "f4E2M1FN" else 256
        return rng.integers(0, hi, n).astype(np.uint8).view(t.dtype).reshape(shape)
    return random_array(et, shape, rng)


def _small(et: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Small integers (exact sums and products in every type) with signed zeros."""
    t = element_type(et)
    if t.is_bool:
        return rng.integers(0, 2, shape).astype(bool)
    lo = 0 if t.is_unsigned else -2
    vals = rng.integers(lo, 3, shape).astype(np.float64)
    if t.is_integer:
        return vals.astype(np.int64).astype(t.dtype)
    if t.is_complex:
        return (vals + 1j * rng.integers(-2, 3, shape)).astype(t.dtype)
    vals[rng.random(shape) < 0.1] = -0.0
    return vals.astype(t.dtype)


def _gather(fb: FunctionBuilder, operand: Val, idx: Val, result: tuple[int, ...], dims: str,
            sizes: str) -> Val:
    return fb.op1("gather", [operand, idx], result, operand.et,
                  f"dimension_numbers = #stablehlo.gather<{dims}>, "
                  f"slice_sizes = array<i64: {sizes}>, indices_are_sorted = false")


def _scatter(fb: FunctionBuilder, operand: Val, idx: Val, upd: Val, dims: str, body_op: str
             ) -> Val:
    t = type_str((), operand.et)
    if body_op == "set":
        n = fb.fresh("s")
        body = (f"{{\n  ^bb0({n}x: {t}, {n}y: {t}):\n"
                f"    \"stablehlo.return\"({n}y) : ({t}) -> ()\n  }}")
    else:
        body = binary_body(body_op, operand.et, fb)
    return fb.op1("scatter", [operand, idx, upd], operand.shape, operand.et,
                  f"scatter_dimension_numbers = #stablehlo.scatter<{dims}>, "
                  "indices_are_sorted = false, unique_indices = false", regions=body)


ROWS = ("offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1")
WINDOWS = "offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1"
BATCHED = ("offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], "
           "start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2")
SC_ROWS = ("update_window_dims = [1], inserted_window_dims = [0], "
           "scatter_dims_to_operand_dims = [0], index_vector_dim = 1")
SC_WINDOWS = ("update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], "
              "index_vector_dim = 1")


XLA_PARTIAL_OOB = ("XLA skips a whole update window when part of it is out of bounds; the spec "
                   "(and upstream, and shlo) skip only the elements that are")
UPSTREAM_SCATTER_ALIAS = (
    "the upstream interpreter's scatter writes into its operand's buffer: a second scatter of "
    "the same operand in one function sees (and changes) the first one's result")


def _data_cases(et: str) -> list[Case]:
    """Inputs: x (5x4), u (3x4 updates), w (3x2x2 window updates), b (2x5x3 batched operand),
    i1 (3x1 row indices, some out of range), i2 (3x2 window starts), ib (2x3x1), s0, s1 (0-d
    starts), iu (3x1 unique in-range rows)."""
    allow = xla_nan_payload if et in XLA_NAN_PAYLOAD_TYPES else None

    def c(label: str, build: Any) -> Case:
        alone = {"upstream": UPSTREAM_SCATTER_ALIAS} if label.startswith("scatter") else {}
        return Case(label, build, BITS, allow, alone=alone)

    return [
        c("gather_rows", lambda fb, i: _gather(fb, i[0], i[4], (3, 4), ROWS, "1, 4")),
        c("gather_windows", lambda fb, i: _gather(fb, i[0], i[5], (3, 2, 2), WINDOWS, "2, 2")),
        c("gather_batched", lambda fb, i: _gather(fb, i[3], i[6], (2, 3, 3), BATCHED,
                                                  "1, 1, 3")),
        c("dynamic_slice", lambda fb, i: fb.op1("dynamic_slice", [i[0], i[7], i[8]], (2, 3),
                                                i[0].et, "slice_sizes = array<i64: 2, 3>")),
        c("dynamic_update_slice", lambda fb, i: fb.op1(
            "dynamic_update_slice", [i[0], _window(fb, i[2]), i[7], i[8]],
            OPERAND, i[0].et)),
        c("scatter_set_rows", lambda fb, i: _scatter(fb, i[0], i[9], i[1], SC_ROWS, "set")),
        c("scatter_set_windows_oob", lambda fb, i: _scatter(fb, i[0], i[10], i[2], SC_WINDOWS,
                                                            "set")),
        Case("scatter_set_partially_oob", lambda fb, i: _scatter(fb, i[0], i[11], i[2],
                                                                 SC_WINDOWS, "set"), BITS,
             allow, alone={"upstream": UPSTREAM_SCATTER_ALIAS}, skip={"xla": XLA_PARTIAL_OOB}),
    ]


def _window(fb: FunctionBuilder, w: Val) -> Val:
    """The 2x2 update of dynamic_update_slice: w[0]."""
    s = fb.op1("slice", [w], (1, 2, 2), w.et, "start_indices = array<i64: 0, 0, 0>, "
               "limit_indices = array<i64: 1, 2, 2>, strides = array<i64: 1, 1, 1>")
    return fb.op1("reshape", [s], (2, 2), w.et)


def _indices(it: str, rng: np.random.Generator) -> dict[str, np.ndarray]:
    t = element_type(it)
    dt = t.dtype
    big = min(t.max, 300)
    low = -3 if t.is_signed else 0
    rows = np.array([[1], [big], [low if low < 0 else 3]], np.int64)
    starts = np.array([[0, 1], [4, 3], [low if low < 0 else 2, 2]], np.int64)  # clamped
    batched = rng.integers(0, 5, (2, 3, 1))
    batched[0, 0, 0] = big
    unique = rng.permutation(5)[:3].reshape(3, 1)
    # window scatter starts: in bounds, fully out of bounds (skipped by every engine), in bounds
    sc = np.array([[0, 0], [big, big], [3, 2]], np.int64)
    partial = np.array([[4, 1], [1, 3], [0, 0]], np.int64)  # windows 0 and 1 stick out
    return {"i1": rows.astype(dt), "i2": starts.astype(dt), "ib": batched.astype(dt),
            "s0": np.array(low if low < 0 else 4).astype(dt), "s1": np.array(big).astype(dt),
            "iu": unique.astype(dt), "isc": sc.astype(dt), "ipart": partial.astype(dt)}


def _signed_range_indices(oracle: str, args: list[np.ndarray]) -> list[np.ndarray]:
    """The upstream interpreter reads unsigned index values as signed (ui8 255 becomes -1 and
    clamps to 0); for it, unsigned indices with the top bit set become the largest value
    without it (still out of range, so still clamped to the same place)."""
    if oracle != "upstream":
        return args
    out = []
    for a in args:
        if a.dtype.kind == "u":
            top = np.array(np.iinfo(a.dtype).max >> 1, a.dtype)
            a = np.minimum(a, top)
        out.append(a)
    return out


def data_batch(et: str, it: str) -> Batch:
    rng = np.random.default_rng(seed(f"indexing-{et}-{it}"))
    ix = _indices(it, rng)
    shapes = [(OPERAND, et), ((3, 4), et), ((3, 2, 2), et), ((2, 5, 3), et),
              ((3, 1), it), ((3, 2), it), ((2, 3, 1), it), ((), it), ((), it), ((3, 1), it),
              ((3, 2), it), ((3, 2), it)]
    args = [_raw(et, OPERAND, rng), _raw(et, (3, 4), rng), _raw(et, (3, 2, 2), rng),
            _raw(et, (2, 5, 3), rng), ix["i1"], ix["i2"], ix["ib"], ix["s0"], ix["s1"],
            ix["iu"], ix["isc"], ix["ipart"]]
    return Batch(f"{et}-{it}", shapes, args, _data_cases(et), _signed_range_indices, ftz=False)


# --- arithmetic scatter bodies ---------------------------------------------------------------

BODIES = {"add": "bsufc", "multiply": "bsufc", "maximum": "bsuf", "minimum": "bsuf"}


def _kind(et: str) -> str:
    t = element_type(et)
    return "b" if t.is_bool else "s" if t.is_signed else "u" if t.is_unsigned else \
        "c" if t.is_complex else "f"


def arith_batch(et: str) -> Batch:
    """Scatter with duplicate row indices (updates combine in order) and add/multiply/max/min
    bodies; small integer values keep every order of float accumulation exact."""
    rng = np.random.default_rng(seed(f"scatter-{et}"))
    x, u = _small(et, OPERAND, rng), _small(et, (6, 4), rng)
    idx = np.array([[1], [3], [1], [0], [1], [9]], np.int32)  # duplicates; 9: out of bounds
    cases = []
    for body, kinds in BODIES.items():
        if _kind(et) in kinds and et != "f4E2M1FN":
            cases.append(Case(f"scatter_{body}",
                              lambda fb, i, b=body: _scatter(fb, i[0], i[2], i[1], SC_ROWS, b),
                              EXACT, alone={"upstream": UPSTREAM_SCATTER_ALIAS}))
    return Batch(f"scatter-{et}", [(OPERAND, et), ((6, 4), et), ((6, 1), "i32")], [x, u, idx],
                 cases)


BATCHES = {}
for k, et in enumerate(ALL_TYPES):
    b = data_batch(et, INDEX_TYPES[k % len(INDEX_TYPES)])
    BATCHES[b.key] = b
for et in ALL_TYPES:
    b = arith_batch(et)
    if b.cases:
        BATCHES[b.key] = b


@pytest.mark.parametrize("oracle,key", params(list(BATCHES.values())))
def test_indexing(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BATCHES[key], oracle)


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(BATCHES[key], label, oracle)
