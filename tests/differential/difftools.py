"""Machinery of the differential tier (docs/differential.md).

A :class:`Batch` is a set of :class:`Case` s (one op each) that share their inputs and run as ONE
program per oracle (one XLA compilation, one message to the upstream interpreter's child
process). Tests are parametrized per (oracle, batch) (:func:`params`) and call
:meth:`Runner.check_batch`, which compares every case and fails listing all disagreeing ones;
so pytest-xdist never compiles a batch twice. When an oracle (or shlo) rejects a batch's
program, the batch is bisected down to the rejected cases, so one unsupported op does not hide
the others; a case the oracle rejects is skipped with the oracle's message (and counted in the
terminal summary). Cases marked ``xfail`` (known shlo bugs) run alone as strict xfails
(:func:`xfail_params`).

Comparisons (:func:`mismatches`) follow :class:`Tol`: ``exact`` (same value; NaN matches any
NaN; zeros must agree in sign), ``bits`` (identical bit patterns, for data movement), ``ulp``
(at most ``n`` units in the last place, via shlo.ops.check.ulp_distance), ``rel`` (complex
results of unspecified algorithms: relative error ``<= n`` of the magnitude) and ``class``
(special values: per real/imaginary part the same NaN-ness and infinities, finite values within
relative ``n``). Against XLA, f32, f64, bf16 and complex inputs have their subnormals flushed
to zero (XLA runs with flush-to-zero and denormals-are-zero), and subnormal results compare as
zeros of the same sign.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from shlo.errors import VerificationError
from shlo.ops.check import ulp_distance
from shlo.testing import oracles
from shlo.testing.programs import FunctionBuilder, Program, Val, float_info
from shlo.types import element_type

ORACLES = ("upstream", "xla")
FTZ_TYPES = {"f32", "f64", "bf16", "complex<f32>", "complex<f64>"}

# --- tolerances ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tol:
    """How a result is compared: ``kind`` in exact/bits/ulp/rel/class with bound ``n``; per oracle
    overrides in ``per_oracle`` (e.g. ``{"xla": Tol("ulp", 4)}``)."""

    kind: str = "exact"
    n: float = 0
    per_oracle: tuple[tuple[str, "Tol"], ...] = ()

    def for_oracle(self, oracle: str) -> "Tol":
        for name, tol in self.per_oracle:
            if name == oracle:
                return tol
        return self

    def __str__(self) -> str:
        return self.kind if self.kind in ("exact", "bits") else f"{self.kind}<={self.n}"


EXACT = Tol()
BITS = Tol("bits")


def ulps(n: int, xla: int | None = None) -> Tol:
    """At most ``n`` ulps (``xla`` ulps against XLA when given)."""
    if xla is None:
        return Tol("ulp", n)
    return Tol("ulp", n, (("xla", Tol("ulp", xla)),))


def _flush(x: np.ndarray) -> np.ndarray:
    """Subnormal values as zeros of the same sign (XLA's flush-to-zero)."""
    if x.dtype.kind == "c":
        z = np.empty(x.shape, x.dtype)
        z.real = _flush(np.asarray(x.real, order="C"))
        z.imag = _flush(np.asarray(x.imag, order="C"))
        return z
    tiny = float(float_info(x.dtype).tiny)
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        sub = (np.abs(x64) < tiny) & (x64 != 0)
    return np.where(sub, np.copysign(0.0, x64), x64).astype(x.dtype)


def flush_subnormals(a: np.ndarray, et: str) -> np.ndarray:
    """``a`` with subnormals flushed to +0 if XLA flushes type ``et``; else ``a``."""
    return _flush(np.asarray(a)) if et in FTZ_TYPES else a


def _float_bad(ours: np.ndarray, theirs: np.ndarray, tol: Tol) -> np.ndarray:
    ftype = element_type({np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}.get(
        ours.dtype, _float_name(ours.dtype)))
    o64, t64 = ours.astype(np.float64), theirs.astype(np.float64)
    nan_o, nan_t = np.isnan(o64), np.isnan(t64)
    if tol.kind == "exact":
        same = (o64 == t64) & (np.signbit(o64) == np.signbit(t64))
        return ~((nan_o & nan_t) | same)
    if tol.kind == "class":  # same NaN-ness, same infinities; finite values relatively close
        with np.errstate(all="ignore"):
            close = np.abs(o64 - t64) <= tol.n * np.maximum(np.abs(o64), np.abs(t64))
            tiny = float(float_info(ours.dtype).tiny)
            close |= (np.abs(o64) <= tiny) & (np.abs(t64) <= tiny)
        return ~((nan_o & nan_t) | (o64 == t64) | (np.isfinite(o64) & np.isfinite(t64) & close))
    d = ulp_distance(np.asarray(ours, order="C"), np.asarray(theirs, order="C"), ftype)
    return ~((nan_o & nan_t) | (d <= tol.n))


_DTYPE_NAMES: dict[np.dtype, str] = {}


def _float_name(dt: np.dtype) -> str:
    if not _DTYPE_NAMES:
        from shlo.testing.programs import FLOATS

        for n in FLOATS:
            _DTYPE_NAMES[np.dtype(element_type(n).dtype)] = n
    return _DTYPE_NAMES[np.dtype(dt)]


def mismatches(ours: np.ndarray, theirs: np.ndarray, tol: Tol, ftz: bool = False) -> np.ndarray:
    """Boolean mask of the elements where ``ours`` and ``theirs`` disagree under ``tol``."""
    ours, theirs = np.asarray(ours, order="C"), np.asarray(theirs, order="C")
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        raise AssertionError(f"result type differs: shlo {ours.dtype}{ours.shape}, "
                             f"oracle {theirs.dtype}{theirs.shape}")
    if ours.dtype.name in ("int2", "int4", "uint2", "uint4"):
        return ours.astype(np.int64) != theirs.astype(np.int64)
    if tol.kind == "bits" or ours.dtype.kind in "biu":
        if ours.dtype.kind in "biu":
            return ours != theirs
        w = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}
        if ours.dtype.kind == "c":
            o, t = ours.view(w[ours.dtype.itemsize // 2]), theirs.view(w[ours.dtype.itemsize // 2])
            return (o != t).reshape(ours.shape + (2,)).any(-1)
        return ours.view(w[ours.dtype.itemsize]) != theirs.view(w[ours.dtype.itemsize])
    if ftz:
        ours, theirs = _flush(ours), _flush(theirs)
    if ours.dtype.kind == "c":
        if tol.kind == "rel":
            with np.errstate(all="ignore"):
                scale = np.maximum(np.abs(ours), np.abs(theirs))
                close = np.abs(ours - theirs) <= tol.n * scale
            both_nan = np.isnan(ours) & np.isnan(theirs)
            same_inf = (ours == theirs)
            return ~(close | both_nan | same_inf)
        re = _float_bad(np.asarray(ours.real, order="C"), np.asarray(theirs.real, order="C"), tol)
        im = _float_bad(np.asarray(ours.imag, order="C"), np.asarray(theirs.imag, order="C"), tol)
        return re | im
    if tol.kind == "rel":
        with np.errstate(all="ignore"):
            o64, t64 = ours.astype(np.float64), theirs.astype(np.float64)
            close = np.abs(o64 - t64) <= tol.n * np.maximum(np.abs(o64), np.abs(t64))
        return ~(close | (np.isnan(o64) & np.isnan(t64)) | (o64 == t64))
    return _float_bad(ours, theirs, tol)


# --- cases and batches -----------------------------------------------------------------------

Build = Callable[[FunctionBuilder, list[Val]], Val]
Allow = Callable[[str, list[np.ndarray], np.ndarray, np.ndarray], np.ndarray]


@dataclass
class Case:
    """One result of a batch: ``build(fb, inputs)`` emits its ops and returns the result.

    ``allow(oracle, args, ours, theirs)`` may return a mask of elements whose difference is a
    known, documented divergence of that oracle (docs/differential.md); they are not counted.
    ``skip`` names oracles that must not run this case (with the reason as value).
    """

    label: str
    build: Build
    tol: Tol = EXACT
    allow: Allow | None = None
    skip: dict[str, str] = field(default_factory=dict)
    alone: dict[str, str] = field(default_factory=dict)  # oracle -> why it needs its own program
    xfail: dict[str, str] = field(default_factory=dict)  # oracle -> the shlo bug (strict xfail)


def xla_nan_payload(oracle: str, args: list, ours: Any, theirs: Any) -> np.ndarray:
    """Allowance: XLA moves f8E4M3 / f8E3M4 values through a wider type in concatenate,
    dynamic_update_slice and scatter, which canonicalizes NaN payloads; shlo (and upstream)
    copy the bits (the spec's data movement moves elements)."""
    with np.errstate(invalid="ignore"):
        o, t = np.asarray(ours).astype(np.float32), np.asarray(theirs).astype(np.float32)
    return (oracle == "xla") & np.isnan(o) & np.isnan(t)


XLA_NAN_PAYLOAD_TYPES = {"f8E4M3", "f8E3M4"}


@dataclass
class Batch:
    """Cases sharing their inputs (``args`` of element types ``arg_types``).

    ``oracle_args(oracle, args)`` may adapt the inputs for one oracle (e.g. no integer division
    by zero for the upstream interpreter, which aborts on it); shlo then runs on the same
    adapted inputs, so every comparison is on identical inputs. ``ftz`` flushes subnormal
    inputs for XLA and compares subnormal results as zero (arithmetic; not data movement).
    ``retry_alone`` compares a case that disagrees once more with the oracle running that case
    alone (XLA's fusion of a combined program can change its results); only the second
    comparison counts.
    """

    key: str
    arg_types: list[tuple[tuple[int, ...], str]]
    args: list[np.ndarray]
    cases: list[Case]
    oracle_args: Callable[[str, list[np.ndarray]], list[np.ndarray]] | None = None
    ftz: bool = True
    retry_alone: bool = False

    def program(self, cases: Sequence[Case] | None = None) -> Program:
        fb = FunctionBuilder()
        ins = [fb.arg(s, et) for s, et in self.arg_types]
        fb.ret(*[c.build(fb, ins) for c in (self.cases if cases is None else cases)])
        return Program(fb)

    def inputs_for(self, oracle: str) -> list[np.ndarray]:
        args = list(self.args)
        if self.oracle_args is not None:
            args = self.oracle_args(oracle, args)
        if oracle == "xla" and self.ftz:
            args = [flush_subnormals(a, et) for a, (_, et) in zip(args, self.arg_types)]
        return args

    def case(self, label: str) -> tuple[int, Case]:
        for i, c in enumerate(self.cases):
            if c.label == label:
                return i, c
        raise KeyError(label)


def params(batches: Sequence[Batch], oracles_: Sequence[str] = ORACLES) -> list[Any]:
    """pytest params (oracle, batch key), ids `oracle-key`: one test per batch and oracle, so
    that a batch's program is compiled once even when pytest-xdist spreads the tests."""
    import pytest

    return [pytest.param(o, b.key, id=f"{o}-{b.key}") for b in batches for o in oracles_]


def xfail_params(batches: Sequence[Batch]) -> list[Any]:
    """pytest params (oracle, batch key, case label) of the cases marked ``xfail`` (known shlo
    bugs, strict: the test fails when the bug is fixed, so the mark gets removed)."""
    import pytest

    out = [pytest.param(o, b.key, c.label, id=f"{o}-{b.key}-{c.label}",
                        marks=pytest.mark.xfail(strict=True, reason=why))
           for b in batches for c in b.cases for o, why in c.xfail.items()]
    return out or [pytest.param(None, None, None, id="none",
                                marks=pytest.mark.skip(reason="no known shlo bug"))]


# --- running ---------------------------------------------------------------------------------


class Runner:
    """Runs batches on shlo and the oracles, caching per (batch, oracle); counts comparisons."""

    def __init__(self) -> None:
        self._upstream: oracles.UpstreamSession | None = None
        self._cache: dict[tuple[int, str], Any] = {}
        self.compared: Counter[str] = Counter()     # elements compared per oracle
        self.cases: Counter[str] = Counter()        # cases compared per oracle
        self.seconds: Counter[str] = Counter()      # time spent in each oracle / shlo
        self.skips: Counter[str] = Counter()        # cases not compared, by reason
        self.allowed: Counter[str] = Counter()      # elements excused by a documented allowance

    def close(self) -> None:
        if self._upstream is not None:
            self._upstream.close()

    def oracle(self, name: str, program: Program, args: list[np.ndarray]) -> list[np.ndarray]:
        text, targs = program.oracle_text(), program.oracle_args(args)
        t0 = time.perf_counter()
        try:
            if name == "xla":
                outs = oracles.xla_run(text, targs)
            else:
                if self._upstream is None:
                    self._upstream = oracles.UpstreamSession(timeout=120)
                outs = self._upstream.run(text, targs)
        finally:
            self.seconds[name] += time.perf_counter() - t0
        return program.decode(outs)

    def shlo(self, program: Program, args: list[np.ndarray]) -> list[np.ndarray]:
        t0 = time.perf_counter()
        try:
            return program.run_shlo(args)
        finally:
            self.seconds["shlo"] += time.perf_counter() - t0

    def results(self, batch: Batch, oracle: str) -> dict[str, Any]:
        """{label: (inputs, shlo result, oracle result or OracleError)} for ``oracle``."""
        key = (id(batch), oracle)  # batch keys repeat across families ("f32")
        if key in self._cache:
            return self._cache[key]
        args = batch.inputs_for(oracle)
        cases = [c for c in batch.cases if oracle not in c.skip]
        out: dict[str, Any] = {}
        together = [c for c in cases if oracle not in c.alone]
        groups = [together] + [[c] for c in cases if oracle in c.alone]
        for group in groups:
            if not group:
                continue
            ours = self._split(lambda cs: self.shlo(batch.program(cs), args), group)
            theirs = self._split(lambda cs: self.oracle(oracle, batch.program(cs), args), group)
            for c, o, t in zip(group, ours, theirs):
                out[c.label] = (args, o, t)
        self._cache[key] = out
        return out

    @staticmethod
    def _split(run: Callable[[list[Case]], list[Any]], cases: list[Case]) -> list[Any]:
        """``run(cases)``; if it raises, the two halves separately, recursively, down to single
        cases (whose exception then stands in place of the result): a few programs more, not
        one per case, when one op of a batch is rejected."""
        try:
            return list(run(cases))
        except Exception as e:  # noqa: BLE001 - reported by check()
            if len(cases) == 1:
                return [e]
        half = len(cases) // 2
        return Runner._split(run, cases[:half]) + Runner._split(run, cases[half:])

    def check_batch(self, batch: Batch, oracle: str) -> None:
        """Compare every case of ``batch`` (but the xfail ones) with ``oracle``; fail listing
        each disagreeing case; skip when the oracle ran none of them."""
        import pytest

        failures, skipped, compared = [], [], 0
        for c in batch.cases:
            if oracle in c.xfail:
                continue
            try:
                self.check(batch, c.label, oracle)
                compared += 1
            except pytest.skip.Exception as e:
                skipped.append(f"{c.label}: {e.msg}")
                self.skips[f"{oracle}: {str(e.msg)[:150]}"] += 1
            except AssertionError as e:
                failures.append(str(e))
        if failures:
            raise AssertionError(f"{len(failures)} of {len(batch.cases)} cases of {batch.key} "
                                 f"differ from {oracle}:\n" + "\n".join(failures))
        if not compared:
            pytest.skip("; ".join(skipped)[:500])

    def check(self, batch: Batch, label: str, oracle: str) -> None:
        """Compare one case of ``batch`` with ``oracle``; fail with a description."""
        import pytest

        _, case = batch.case(label)
        if oracle in case.skip:
            pytest.skip(case.skip[oracle])
        args, ours, theirs = self.results(batch, oracle)[label]
        if isinstance(ours, VerificationError):  # the tier's own programs must be valid
            raise AssertionError(f"invalid test program: {_first_line(ours)}")
        if isinstance(theirs, Exception):
            if not isinstance(theirs, oracles.OracleError):
                raise theirs
            if isinstance(ours, Exception):
                pytest.skip(f"shlo and {oracle} reject it: {_first_line(ours)}")
            pytest.skip(f"{oracle} rejects it: {_first_line(theirs)}")
        if isinstance(ours, Exception):
            raise AssertionError(f"shlo fails where {oracle} runs: {_first_line(ours)}")
        bad, allowed = self._compare(batch, case, oracle, args, ours, theirs)
        if bad.any() and batch.retry_alone and len(batch.cases) > 1:
            theirs = self._split(lambda cs: self.oracle(oracle, batch.program(cs), args),
                                 [case])[0]
            if isinstance(theirs, Exception):
                raise theirs
            bad, allowed = self._compare(batch, case, oracle, args, ours, theirs)
        if allowed.any():
            self.allowed[f"{oracle}: {batch.key} {case.label}"] += int(allowed.sum())
        self.cases[oracle] += 1
        self.compared[oracle] += int(np.size(ours))
        if bad.any():
            raise AssertionError(describe(batch, case, oracle, args, ours, theirs, bad))

    @staticmethod
    def _compare(batch: Batch, case: Case, oracle: str, args: list[np.ndarray], ours: Any,
                 theirs: Any) -> tuple[np.ndarray, np.ndarray]:
        """(elements that disagree, elements excused by the case's allowance)."""
        ftz = oracle == "xla" and batch.ftz and np.asarray(ours).dtype.name in _ftz_dtypes()
        tol = case.tol.for_oracle(oracle)
        bad = mismatches(ours, theirs, tol, ftz and tol.kind != "bits")
        allowed = np.zeros(np.shape(bad), bool)
        if case.allow is not None and bad.any():
            allowed = bad & case.allow(oracle, args, ours, theirs)
            bad &= ~allowed
        return bad, allowed


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0][:300] if lines else type(e).__name__


def _ftz_dtypes() -> set[str]:
    return {np.dtype(element_type(t).dtype).name for t in FTZ_TYPES}


def _fmt(x: Any) -> str:
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return repr(complex(x))
    if x.dtype.kind in "biu" or x.dtype.name in ("int2", "int4", "uint2", "uint4"):
        return repr(int(x))
    return repr(float(x))


def describe(batch: Batch, case: Case, oracle: str, args: list[np.ndarray], ours: np.ndarray,
             theirs: np.ndarray, bad: np.ndarray) -> str:
    """The first few disagreeing elements, with the inputs at the same index when the
    inputs have the result's shape (element-wise ops)."""
    idx = np.argwhere(np.asarray(bad))[:5]
    lines = [f"{case.label} on {batch.key}: shlo and {oracle} differ at {int(bad.sum())} of "
             f"{bad.size} elements (tolerance {case.tol.for_oracle(oracle)})"]
    for i in idx:
        i = tuple(int(k) for k in i)
        ins = [_fmt(a[i]) for a in args if np.shape(a) == np.shape(ours)]
        lines.append(f"  at {i}: inputs ({', '.join(ins)}) -> shlo {_fmt(ours[i])}, "
                     f"{oracle} {_fmt(theirs[i])}")
    return "\n".join(lines)


def seed(key: str) -> int:
    """A fixed seed per batch key (stable across runs and processes)."""
    import zlib

    return zlib.crc32(key.encode()) ^ int(os.environ.get("SHLO_DIFF_SEED", "0"))
