"""The fast paths for narrow floats give the careful path's bits exactly.

* Unary functions of the <= 16-bit float types are lookup tables of the careful kernel: checked
  here on *every* bit pattern against the careful computation written out independently
  (float64, then the round-to-odd rounding), NaN payloads included.
* Binary ops of the one-byte formats are 256 x 256 tables: checked on every pair.
* The direct float64 -> narrow cast replaces round-to-odd only where the self-test passes; it
  is checked here on values next to ties and on random values.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from shlo.ops import _numeric
from shlo.ops.elementwise import _tables
from harness import run_op

SIXTEEN = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}
BYTE = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2,
        "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
        "f8E4M3B11FNUZ": ml_dtypes.float8_e4m3b11fnuz}
if hasattr(ml_dtypes, "float4_e2m1fn"):
    BYTE["f4E2M1FN"] = ml_dtypes.float4_e2m1fn
    BYTE["f6E2M3FN"] = ml_dtypes.float6_e2m3fn

UNARY = {
    "tanh": np.tanh, "exponential": np.exp, "log": np.log, "sine": np.sin, "cosine": np.cos,
    "tan": np.tan, "exponential_minus_one": np.expm1, "log_plus_one": np.log1p,
    "logistic": lambda x: 1.0 / (1.0 + np.exp(-x)), "cbrt": np.cbrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sqrt": np.sqrt,
}


def _careful(fn, x: np.ndarray, dt) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _numeric._round_f64_careful(fn(x.astype(np.float64)), np.dtype(dt))


def _bits(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    return x.view(np.uint8 if x.dtype.itemsize == 1 else np.uint16)


def _all(dt) -> np.ndarray:
    n = 1 << (8 * np.dtype(dt).itemsize)
    return np.arange(n, dtype=np.uint32).astype(_bits(np.zeros(1, dt)).dtype).view(dt)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("tname", sorted(SIXTEEN) + ["f8E4M3FN", "f8E5M2"])
def test_unary_tables_equal_careful_on_every_value(name: str, tname: str) -> None:
    dt = {**SIXTEEN, **BYTE}[tname]
    x = _all(dt)
    (got,) = run_op(f"stablehlo.{name}", [x], [tname], [tname], quiet=True)
    want = _careful(UNARY[name], x, dt)
    assert got.dtype == np.dtype(dt)
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_unary_table_on_scalars_and_strided_views() -> None:
    x = _all(np.float16)[::-7]
    (got,) = run_op("stablehlo.tanh", [x], ["f16"], ["f16"], quiet=True)
    np.testing.assert_array_equal(_bits(got), _bits(_careful(np.tanh, x, np.float16)))
    (s,) = run_op("stablehlo.exponential", [np.float16(-0.0)], ["f16"], ["f16"], quiet=True)
    assert np.asarray(s).shape == () and float(s) == 1.0


@pytest.mark.parametrize("name,fn", [("add", np.add), ("subtract", np.subtract),
                                     ("multiply", np.multiply), ("divide", np.divide),
                                     ("remainder", np.fmod), ("power", np.power),
                                     ("atan2", np.arctan2)])
@pytest.mark.parametrize("tname", sorted(BYTE))
def test_binary_byte_tables_equal_careful_on_every_pair(name: str, fn, tname: str) -> None:
    dt = BYTE[tname]
    v = _all(dt)
    x, y = np.repeat(v, 256), np.tile(v, 256)
    (got,) = run_op(f"stablehlo.{name}", [x, y], [tname, tname], [tname], quiet=True)
    with np.errstate(all="ignore"):
        if name in ("power", "atan2"):  # compute wider, round once
            want = _numeric._round_f64_careful(fn(x.astype(np.float64), y.astype(np.float64)), np.dtype(dt))
        else:  # exact rounding of the float32 result (float32 has >= 2p+2 bits)
            want = fn(x.astype(np.float32), y.astype(np.float32)).astype(dt)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(want)[~nan])
    assert np.isnan(got.astype(np.float32))[nan].all()


@pytest.mark.parametrize("tname", sorted(SIXTEEN) + sorted(BYTE))
def test_direct_cast_equals_round_to_odd_near_ties(tname: str) -> None:
    dt = np.dtype({**SIXTEEN, **BYTE}[tname])
    x = np.r_[_numeric._near_ties(dt),
              np.random.default_rng(0).standard_normal(20000) * float(ml_dtypes.finfo(dt).max) / 3]
    got = _numeric.round_f64_to(x, dt)
    np.testing.assert_array_equal(_bits(got), _bits(_numeric._round_f64_careful(x, dt)))


def test_double_rounding_case() -> None:
    """1 + 2^-8 + 2^-40 rounds to 1.0078125 in bf16 (once), not 1.0 (twice, through f32)."""
    x = np.array([1 + 2.0 ** -8 + 2.0 ** -40])
    assert float(_numeric.round_f64_to(x, ml_dtypes.bfloat16)[0]) == 1.0078125


def test_table_eligibility() -> None:
    assert _tables.table_eligible(np.float16) and _tables.table_eligible(ml_dtypes.bfloat16)
    assert not _tables.table_eligible(np.float32)
    assert not _tables.table_eligible(ml_dtypes.bfloat16, max_bytes=1)
