"""Error metrics between two values of one op: what `shlo diff` reports per op.

:func:`compare` gives a :class:`Metrics` (max abs/rel error, ULP distance, SQNR in dB, NaN/inf
mismatches); :class:`Tolerance` decides whether they diverge. Quantized values are compared
dequantized (:func:`real_value`), so a float program and its quantized version compare op by op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dtypes import finfo, is_ml_float, is_sub_byte_int
from ..ops.check import ulp_distance
from ..types import ComplexType, FloatType, QuantizedType, TensorType, Type

__all__ = ["Metrics", "Tolerance", "compare", "real_value"]


def real_value(value: Any, type: Type | None) -> np.ndarray:
    """The value as numbers: quantized storage dequantized (by the type's scales and zero
    points), ml_dtypes floats widened to f32, sub-byte ints to int8."""
    a = np.asarray(value)
    if isinstance(type, TensorType) and isinstance(type.element_type, QuantizedType):
        from ..ops.quantization import Dequantizer

        return Dequantizer(type.element_type, len(a.shape))(a)
    if is_ml_float(a.dtype):
        return a.astype(np.float32)
    if is_sub_byte_int(a.dtype):
        return a.astype(np.int8)
    return a


@dataclass(frozen=True)
class Tolerance:
    """An element agrees when ``|a - e| <= atol + rtol * max|e|`` (the scale of the whole
    tensor, so cancellation near zero is not a divergence) or when its ULP distance (in the
    actual value's float type) is at most ``ulp``. NaN/inf mismatches always diverge; integers
    and booleans must be equal (within ``atol``)."""

    atol: float = 0.0
    rtol: float = 0.0
    ulp: int = 0

    def __str__(self) -> str:
        parts = [f"atol {self.atol:g}"] if self.atol else []
        parts += [f"rtol {self.rtol:g}"] if self.rtol else []
        parts += [f"{self.ulp} ulp"] if self.ulp else []
        return ", ".join(parts) or "exact"


@dataclass(frozen=True)
class Metrics:
    """How far ``actual`` is from ``expected``: over all elements, ``max_abs`` and ``max_rel``
    (relative to |expected|, where nonzero), ``max_ulp`` (None for non-floats), ``sqnr_db``
    (10 log10 of signal power over error power; inf when equal), NaN and inf mismatches, the
    number of elements that disagree under the tolerance, and the index of the worst one."""

    max_abs: float
    max_rel: float
    max_ulp: float | None
    sqnr_db: float
    nan_mismatch: int
    inf_mismatch: int
    bad: int
    size: int
    worst: tuple[int, ...] | None = None
    note: str = ""

    @property
    def diverged(self) -> bool:
        return self.bad > 0 or bool(self.note)

    def __str__(self) -> str:
        if self.note:
            return self.note
        ulp = "" if self.max_ulp is None else f", {_num(self.max_ulp)} ulp"
        s = (f"max abs error {self.max_abs:.6g}, max rel {self.max_rel:.3g}{ulp}, "
             f"SQNR {_num(self.sqnr_db, '.1f')} dB")
        if self.nan_mismatch or self.inf_mismatch:
            s += f", {self.nan_mismatch} NaN and {self.inf_mismatch} inf mismatches"
        if self.bad:
            s += f"; {self.bad} of {self.size} elements differ"
            if self.worst is not None:
                s += f" (worst at [{', '.join(map(str, self.worst))}])"
        return s


def _num(x: float, spec: str = "g") -> str:
    return "inf" if math.isinf(x) else format(x, spec)


def _float_type(t: Type | None, a: np.ndarray) -> FloatType | None:
    et = t.element_type if isinstance(t, TensorType) else None
    if isinstance(et, FloatType):
        return et
    if a.dtype == np.float32:
        return FloatType("f32")
    if a.dtype == np.float64:
        return FloatType("f64")
    if a.dtype == np.float16:
        return FloatType("f16")
    return None


def compare(actual: Any, expected: Any, type: Type | None = None,
            expected_type: Type | None = None, tolerance: Tolerance = Tolerance()) -> Metrics:
    """The :class:`Metrics` of ``actual`` (of static type ``type``) against ``expected`` (of
    ``expected_type``, default the same)."""
    if isinstance(actual, tuple) or isinstance(expected, tuple):
        same = repr(actual) == repr(expected)
        return Metrics(0.0, 0.0, None, math.inf, 0, 0, 0 if same else 1, 1,
                       note="" if same else "tuple values differ")
    raw_a, raw_e = np.asarray(actual), np.asarray(expected)
    a = real_value(raw_a, type)
    e = real_value(raw_e, expected_type if expected_type is not None else type)
    if a.shape != e.shape:
        return Metrics(math.inf, math.inf, None, -math.inf, 0, 0, a.size, a.size,
                       note=f"shapes differ: {a.shape} vs {e.shape}")
    if a.size == 0:
        return Metrics(0.0, 0.0, None, math.inf, 0, 0, 0, 0)
    with np.errstate(all="ignore"):
        return _compare(raw_a, raw_e, a, e, type, tolerance)


def _compare(raw_a: np.ndarray, raw_e: np.ndarray, a: np.ndarray, e: np.ndarray,
             type: Type | None, tolerance: Tolerance) -> Metrics:
    complex_ = a.dtype.kind == "c" or e.dtype.kind == "c"
    wa = a.astype(np.complex128 if complex_ else np.float64)
    we = e.astype(np.complex128 if complex_ else np.float64)
    nan_a, nan_e = np.isnan(wa), np.isnan(we)
    inf_a, inf_e = np.isinf(wa), np.isinf(we)
    nan_mis = int((nan_a != nan_e).sum())
    inf_mis = int(((inf_a != inf_e) | (inf_a & inf_e & (wa != we))).sum())
    special = nan_a | nan_e | inf_a | inf_e
    err = np.where(special, 0.0, np.abs(wa - we))
    mag = np.where(special, 0.0, np.abs(we))
    max_abs = float(err.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(mag > 0, err / np.where(mag > 0, mag, 1.0), np.where(err > 0, np.inf, 0))
    max_rel = float(rel.max())
    signal, noise = float((mag ** 2).sum()), float((err ** 2).sum())
    sqnr = math.inf if noise == 0 else (-math.inf if signal == 0 else
                                        10 * math.log10(signal / noise))
    ulp: np.ndarray | None = None
    ft = _float_type(type, raw_a) if not complex_ and a.dtype.kind == "f" and \
        not isinstance(getattr(type, "element_type", None), QuantizedType) else None
    if ft is not None and ft.width >= 8:
        dt = raw_a.dtype
        try:
            rounded = np.asarray(e, dtype=np.float64).astype(dt)
            ulp = ulp_distance(np.ascontiguousarray(raw_a), np.ascontiguousarray(rounded), ft)
        except (TypeError, ValueError):
            ulp = None
    scale = float(mag.max())
    ok = err <= tolerance.atol + tolerance.rtol * scale
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        ok = err <= tolerance.atol
    elif ulp is not None and (tolerance.ulp > 0 or raw_a.dtype == raw_e.dtype):
        ok |= np.where(special, False, ulp <= tolerance.ulp)
    ok &= ~((nan_a != nan_e) | (inf_a != inf_e) | (inf_a & inf_e & (wa != we)))
    bad = int(ok.size - ok.sum())
    worst = None
    if bad:
        score = np.where(ok, -1.0, np.where(special, np.inf, err))
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(score)), a.shape))
    max_ulp = None if ulp is None else float(ulp.max())
    return Metrics(max_abs, max_rel, max_ulp, sqnr, nan_mis, inf_mis, bad, int(a.size), worst)


def default_tolerance(same_engine: bool, dtype: Any = np.float32) -> Tolerance:
    """Exact for one engine against itself (it is deterministic); otherwise 4 ulp or 16
    epsilons of the tensor's scale, in the value's float type."""
    if same_engine:
        return Tolerance()
    try:
        eps = float(finfo(np.dtype(dtype)).eps)
    except (TypeError, ValueError):
        eps = float(np.finfo(np.float32).eps)
    return Tolerance(rtol=16 * eps, ulp=4)


def is_float_type(t: Type | None) -> bool:
    et = t.element_type if isinstance(t, TensorType) else None
    return isinstance(et, (FloatType, ComplexType))
