"""convert between every pair of element types, and bitcast_convert between types of equal or
multiple widths, against the upstream interpreter and XLA.

One batch per source type: the same values converted to every other type. The values include
what the spec leaves to rounding (halfway cases, values between representable ones) and what
it leaves implementation-defined (out-of-range float -> integer, NaN -> integer, inf -> f8
without inf); docs/differential.md lists which engine does what there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")

from difftools import BITS, EXACT, Batch, Case, params, seed, xfail_params
from shlo.testing.programs import ALL_TYPES, random_array
from shlo.types import element_type

N = 48
WIDTH = {t: (1 if t == "i1" else 4 if t == "f4E2M1FN" else
             element_type(t).width if element_type(t).is_integer  # type: ignore[attr-defined]
             else element_type(t).dtype.itemsize * 8) for t in ALL_TYPES}


def _kind(et: str) -> str:
    t = element_type(et)
    return "b" if t.is_bool else "i" if t.is_integer else "c" if t.is_complex else "f"


def _f64(a: np.ndarray) -> np.ndarray:
    return np.real(np.asarray(a)).astype(np.float64)


# --- inputs ----------------------------------------------------------------------------------

FLOAT_VALUES = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.0 + 2.0**-8 + 2.0**-40, 3.75,
                127.5, 128.0, -129.0, 255.5, 256.0, 300.0, -300.0, 448.0, 465.0, 57344.0,
                65504.0, 65520.0, -65536.0, 2.0**31, -2.0**31 - 2048, 2.0**32, 2.0**63,
                -2.0**63, 2.0**64, 1e10, -1e10, 1e-3, 1.1754943508222875e-38,
                2.0**-140, 1e-300, 3.4028234663852886e+38, 1e39, 1e300, np.inf, -np.inf,
                np.nan]


def inputs(src: str, rng: np.random.Generator) -> np.ndarray:
    et = element_type(src)
    dt = et.dtype
    if _kind(src) in "bi":
        return random_array(src, (N,), rng)
    vals = np.array(FLOAT_VALUES, np.float64)
    rest = rng.standard_normal(N) * 10.0 ** rng.integers(-2, 5, N)
    vals = np.concatenate([vals, rest])[:N]
    if _kind(src) == "c":
        part = np.float32 if dt == np.complex64 else np.float64
        with np.errstate(all="ignore"):
            z = np.empty(N, dt)
            z.real, z.imag = vals.astype(part), vals[::-1].astype(part)
        return z
    with np.errstate(all="ignore"):
        # round from f64 once (ml_dtypes goes through f32 and would round twice)
        from shlo.ops._numeric import round_f64_to

        return np.asarray(round_f64_to(vals, dt)).astype(dt)


# --- known divergences -----------------------------------------------------------------------


def _double_rounded(src: str, dst: str) -> Any:
    """XLA converts f64 and i64/u64 (and complex<f64>) to types narrower than f32 through f32,
    rounding twice; shlo and upstream round once (the spec: round to nearest even)."""
    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        if oracle != "xla":
            return np.zeros(np.shape(ours), bool)
        with np.errstate(all="ignore"):
            x = args[0]
            v = np.real(x) if x.dtype.kind == "c" else x
            twice = np.asarray(v).astype(np.float32).astype(ours.dtype)
        same = (twice.astype(np.float64) == _f64(theirs)) | \
            (np.isnan(twice.astype(np.float64)) & np.isnan(_f64(theirs)))
        return same
    return allow


def _f4_special(src: str, dst: str) -> Any:
    """f4E2M1FN has no inf and no NaN: shlo (as XLA and ml_dtypes) saturates overflow to +-6
    and maps NaN to +0 (XLA: -0); upstream's APFloat gives +-0 for both; XLA converts
    f4E2M1FN's largest value +-6 to integers as if it were +-inf."""
    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        x = _f64(args[0])
        with np.errstate(all="ignore"):
            if dst == "f4E2M1FN":
                o, t = np.abs(_f64(ours)), np.abs(_f64(theirs))
                return (~np.isfinite(x) | (np.abs(x) > 6.0)) & np.isin(o, [0.0, 6.0]) & \
                    np.isin(t, [0.0, 6.0])
            return (oracle == "xla") & (np.abs(x) == 6.0)
    return allow


def allow_for(src: str, dst: str) -> Any:
    fns = []
    if element_type(dst).is_float and WIDTH[dst] < 32 and (
            src in ("f64", "complex<f64>") or (_kind(src) == "i" and WIDTH[src] == 64)):
        fns.append(_double_rounded(src, dst))
    if "f4E2M1FN" in (src, dst):
        fns.append(_f4_special(src, dst))
    if not fns:
        return None

    def allow(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
        mask = np.zeros(np.shape(ours), bool)
        for fn in fns:
            mask |= fn(oracle, args, ours, theirs)
        return mask
    return allow


# --- convert ---------------------------------------------------------------------------------


def _convert(dst: str) -> Any:
    return lambda fb, ins: fb.op1("convert", [ins[0]], ins[0].shape, dst)


def convert_batch(src: str) -> Batch:
    rng = np.random.default_rng(seed("convert-" + src))
    x = inputs(src, rng)
    cases = []
    for dst in ALL_TYPES:
        if dst == src:
            continue
        cases.append(Case(f"to_{dst}", _convert(dst), EXACT, allow_for(src, dst)))
    return Batch(f"convert_{src}", [((N,), src)], [x], cases)


CONVERT = {src: convert_batch(src) for src in ALL_TYPES}


@pytest.mark.parametrize("oracle,key", params(list(CONVERT.values())))
def test_convert(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(CONVERT[key.removeprefix("convert_")], oracle)


# --- bitcast_convert -------------------------------------------------------------------------

BITCAST_TYPES = [t for t in ALL_TYPES if t != "i1" and _kind(t) != "c"]


def _bitcast(src: str, dst: str) -> Any:
    ratio = WIDTH[src] // WIDTH[dst] if WIDTH[src] >= WIDTH[dst] else 0

    def build(fb: Any, ins: list) -> Any:
        x = ins[0]
        if ratio >= 2:      # one wide element -> `ratio` narrow ones (innermost dimension)
            return fb.op1("bitcast_convert", [x], x.shape + (ratio,), dst)
        if ratio == 1:
            return fb.op1("bitcast_convert", [x], x.shape, dst)
        k = WIDTH[dst] // WIDTH[src]  # `k` narrow elements -> one wide one
        n = x.shape[0] // k
        r = fb.op1("reshape", [x], (n, k), src)
        return fb.op1("bitcast_convert", [r], (n,), dst)
    return build


def bitcast_batch(src: str) -> Batch:
    rng = np.random.default_rng(seed("bitcast-" + src))
    dt = element_type(src).dtype
    if _kind(src) == "f":
        # every bit pattern is fair: draw raw bits (NaN payloads, both NaN signs, subnormals)
        nbytes = np.dtype(dt).itemsize
        if src == "f4E2M1FN":
            x = rng.integers(0, 16, N).astype(np.uint8).view(dt)
        else:
            x = rng.integers(0, 256, N * nbytes).astype(np.uint8).view(dt)
    else:
        x = random_array(src, (N,), rng)
    cases = []
    for dst in BITCAST_TYPES:
        if dst == src:
            continue
        w, v = WIDTH[src], WIDTH[dst]
        if (w % v and v % w) or max(w, v) // min(w, v) > 8:
            continue
        if w != v and 4 in (w, v) and max(w, v) > 8:
            continue  # keep sub-byte bitcasts to i8 <-> 2 x i4 (and 2-bit to 4/8-bit)
        if w != v and 2 in (w, v) and max(w, v) > 8:
            continue
        cases.append(Case(f"to_{dst}", _bitcast(src, dst), BITS))
    return Batch(f"bitcast_{src}", [((N,), src)], [x], cases, ftz=False)


BITCAST = {src: bitcast_batch(src) for src in BITCAST_TYPES}


@pytest.mark.parametrize("oracle,key", params(list(BITCAST.values())))
def test_bitcast_convert(runner: Any, oracle: str, key: str) -> None:
    runner.check_batch(BITCAST[key.removeprefix("bitcast_")], oracle)


ALL_BATCHES = {b.key: b for b in [*CONVERT.values(), *BITCAST.values()]}


@pytest.mark.parametrize("oracle,key,label", xfail_params(list(ALL_BATCHES.values())))
def test_known_shlo_bugs(runner: Any, oracle: str, key: str, label: str) -> None:
    runner.check(ALL_BATCHES[key], label, oracle)
