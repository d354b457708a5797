"""shlo.testing.programs without the oracles (runs without jax): the transport wrapper that
the oracles run computes exactly what ``@core`` computes, for every element type."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.testing.programs import (
    ALL_TYPES, FunctionBuilder, Program, binary_program, from_transport, random_array,
    to_transport, unary_program,
)
from shlo.types import element_type


def _bits(a: np.ndarray) -> bytes:
    a = np.asarray(a)
    if a.dtype.name in ("int2", "int4", "uint2", "uint4"):
        return a.astype(np.int8).tobytes()
    return a.tobytes()


@pytest.mark.parametrize("et", ALL_TYPES)
def test_transport_round_trip(et: str) -> None:
    """to_transport / from_transport keep every value, bit for bit (NaN payloads too)."""
    x = random_array(et, (3, 4), np.random.default_rng(1))
    back = from_transport(to_transport(x, et), et)
    assert back.dtype == x.dtype and back.shape == x.shape
    assert _bits(back) == _bits(x)


@pytest.mark.parametrize("et", ALL_TYPES)
@pytest.mark.parametrize("inline", [True, False])
def test_oracle_wrapper_computes_core(et: str, inline: bool) -> None:
    """shlo running ``@main`` (transport in, core, transport out) on the transport arrays gives
    ``@core``'s results: the wrapper is exact, so oracles compare against @core."""
    fb = FunctionBuilder()
    x, y = fb.arg((2, 3), et), fb.arg((), et)
    r = fb.op1("broadcast_in_dim", [y], (2, 3), et, "broadcast_dimensions = array<i64>")
    t = fb.op1("transpose", [x], (3, 2), et, "permutation = array<i64: 1, 0>")
    ctype = ", compare_type = #stablehlo<comparison_type FLOAT>" \
        if element_type(et).is_float else ""
    eq = fb.op1("compare", [x, r], (2, 3), "i1",
                "comparison_direction = #stablehlo<comparison_direction EQ>" + ctype)
    fb.ret(fb.op1("select", [eq, x, r], (2, 3), et), t, y)
    p = Program(fb)
    rng = np.random.default_rng(2)
    args = [random_array(et, (2, 3), rng), random_array(et, (), rng)]
    core = p.run_shlo(args)
    main = p.decode(shlo.run(p.oracle_text(inline=inline), *p.oracle_args(args)))
    assert [o.shape for o in core] == [(2, 3), (3, 2), ()]
    for c, m in zip(core, main):
        assert m.dtype == c.dtype and _bits(m) == _bits(c)


def test_unary_and_binary_programs() -> None:
    (neg,) = unary_program("negate", "i8", (4,)).run_shlo([np.array([1, -2, 127, -128], np.int8)])
    assert neg.tolist() == [-1, 2, -127, -128]
    (s,) = binary_program("add", "f32", (2,)).run_shlo([np.float32([1, 2]), np.float32([3, 4])])
    assert s.tolist() == [4.0, 6.0]


def test_random_array_specials() -> None:
    """Floats get zeros of both signs, infinities, NaN and subnormals; integers min and max."""
    x = random_array("f32", (64,), np.random.default_rng(0)).astype(np.float64)
    assert np.isnan(x).any() and np.isposinf(x).any() and np.isneginf(x).any()
    assert (np.signbit(x) & (x == 0)).any() and (~np.signbit(x) & (x == 0)).any()
    assert ((np.abs(x) < np.finfo(np.float32).tiny) & (x != 0)).any()
    i = random_array("i16", (64,), np.random.default_rng(0))
    assert i.min() == -32768 and i.max() == 32767
