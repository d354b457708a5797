"""Small StableHLO programs for differential testing (tests/differential, docs/differential.md).

A :class:`Program` is a function ``@core`` over tensors of any element type, written as
StableHLO text with :class:`FunctionBuilder`, together with a wrapper ``@main`` for the oracles
(XLA and the upstream reference interpreter, shlo/testing/oracles.py). The upstream interpreter
exchanges only numpy's own dtypes with signless integers (no bf16, f8, int4, complex or unsigned
arrays), so ``@main`` takes and returns *transport* values and converts them around ``@core``'s
body (inlined; or a ``func.call @core``):

| element type | transported as | in ``@main`` |
|---|---|---|
| i1, i8..i64, f16, f32, f64 | itself | nothing |
| ui8..ui64, bf16, every f8 | the signless integer of the same width (the bits) | bitcast_convert |
| i2, i4, ui2, ui4 | i8 (the value) | convert |
| f4E2M1FN | i8 (the 4 bits) | convert to ui4, bitcast_convert |
| complex<f32>, complex<f64> | two f32 / f64 tensors (real, imag) | complex / real, imag |

shlo runs ``@core`` itself on the native arrays (:meth:`Program.run_shlo`), so every
comparison is between shlo's kernels and the oracle's, and the transport ops are only run by
the oracles (where they are exact: bit reinterpretations and conversions of representable
values).

:func:`random_array` draws inputs with a fixed generator, mixing special values (zeros of
both signs, infinities, NaN, subnormals, the largest finite values; integer minimum, maximum,
-1, 0) with random ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from ..types import ElementType, element_type

__all__ = [
    "BOOL", "SIGNED", "UNSIGNED", "INTEGERS", "FLOAT8", "FLOATS", "COMPLEX", "ALL_TYPES",
    "type_str", "Val", "FunctionBuilder", "Program", "random_array", "binary_body",
    "unary_program", "binary_program", "float_info",
]

BOOL = ["i1"]
SIGNED = ["i2", "i4", "i8", "i16", "i32", "i64"]
UNSIGNED = ["ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
INTEGERS = SIGNED + UNSIGNED
FLOAT8 = ["f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4"]
FLOATS = ["f4E2M1FN"] + FLOAT8 + ["bf16", "f16", "f32", "f64"]
COMPLEX = ["complex<f32>", "complex<f64>"]
ALL_TYPES = BOOL + INTEGERS + FLOATS + COMPLEX

_NATIVE = {"i1", "i8", "i16", "i32", "i64", "f16", "f32", "f64"}
_SUB_BYTE_INT = {"i2", "i4", "ui2", "ui4"}
_SIGNED_DT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def type_str(shape: Sequence[int], et: str) -> str:
    """`tensor<2x3xf32>` (`tensor<f32>` for shape ())."""
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def float_info(dt: np.dtype) -> Any:
    """numpy's finfo for numpy's floats, ml_dtypes' for the others."""
    dt = np.dtype(dt)
    return np.finfo(dt) if dt in (np.float16, np.float32, np.float64) else ml_dtypes.finfo(dt)


# --- building functions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Val:
    """An SSA value of a function being built: its name, shape and element type."""

    name: str
    shape: tuple[int, ...]
    et: str

    @property
    def type(self) -> str:
        return type_str(self.shape, self.et)


class FunctionBuilder:
    """Writes one `func.func` in generic op syntax; names are unique (`%v0`, `%v1`, ...)."""

    def __init__(self, name: str = "core", visibility: str = "", prefix: str = "v",
                 arg_prefix: str = "arg") -> None:
        self.name = name
        self.visibility = visibility
        self.prefix = prefix
        self.arg_prefix = arg_prefix
        self.args: list[Val] = []
        self.lines: list[str] = []
        self.results: list[Val] = []
        self._n = 0

    def fresh(self, prefix: str | None = None) -> str:
        self._n += 1
        return f"%{self.prefix if prefix is None else prefix}{self._n}"

    def arg(self, shape: Sequence[int], et: str) -> Val:
        v = Val(f"%{self.arg_prefix}{len(self.args)}", tuple(shape), et)
        self.args.append(v)
        return v

    def op(self, name: str, operands: Sequence[Val], results: Sequence[tuple[Sequence[int], str]],
           attrs: str = "", regions: str = "") -> list[Val]:
        """Emit `"name"(operands) (regions) {attrs} : (types) -> (types)`; returns the results."""
        base = self.fresh()
        outs = [Val(base if len(results) == 1 else f"{base}#{i}", tuple(s), e)
                for i, (s, e) in enumerate(results)]
        lhs = base if len(results) == 1 else f"{base}:{len(results)}"
        if not results:
            lhs = ""
        name = name if "." in name else "stablehlo." + name
        ins = ", ".join(v.name for v in operands)
        sig = "(" + ", ".join(v.type for v in operands) + ") -> "
        res_types = ", ".join(v.type for v in outs)
        sig += res_types if len(outs) == 1 else f"({res_types})"
        region_text = f" ({regions})" if regions else ""
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(f"{lhs + ' = ' if lhs else ''}\"{name}\"({ins}){region_text}{attr_text}"
                          f" : {sig}")
        return outs

    def op1(self, name: str, operands: Sequence[Val], shape: Sequence[int], et: str,
            attrs: str = "", regions: str = "") -> Val:
        """:meth:`op` with one result."""
        return self.op(name, operands, [(shape, et)], attrs, regions)[0]

    def constant(self, value: Any, shape: Sequence[int], et: str) -> Val:
        """A splat constant (`value` written as MLIR writes it: `0`, `1.5`, `true`, `0x7F80`)."""
        return self.op1("constant", [], shape, et,
                        f"value = dense<{value}> : {type_str(shape, et)}")

    def ret(self, *vals: Val) -> None:
        self.results = list(vals)

    def text(self) -> str:
        args = ", ".join(f"{v.name}: {v.type}" for v in self.args)
        res = ", ".join(v.type for v in self.results)
        vis = f"{self.visibility} " if self.visibility else ""
        body = "\n".join("  " + line for line in self.lines)
        ret = "  func.return " + ", ".join(v.name for v in self.results)
        if self.results:
            ret += " : " + res
        return f"func.func {vis}@{self.name}({args}) -> ({res}) {{\n{body}\n{ret}\n}}"


def binary_body(op: str, et: str, fb: FunctionBuilder | None = None) -> str:
    """A region `^bb0(%x: tensor<et>, %y: tensor<et>)` returning `op(x, y)` (for reduce & co)."""
    n = fb.fresh("r") if fb is not None else "%r"
    t = type_str((), et)
    return (f"{{\n  ^bb0({n}x: {t}, {n}y: {t}):\n"
            f"    {n}z = \"stablehlo.{op}\"({n}x, {n}y) : ({t}, {t}) -> {t}\n"
            f"    \"stablehlo.return\"({n}z) : ({t}) -> ()\n  }}")


# --- transport across the oracle boundary ----------------------------------------------------


def _kind(et: str) -> str:
    if et in _NATIVE:
        return "native"
    if et in _SUB_BYTE_INT:
        return "subbyte"
    if et == "f4E2M1FN":
        return "f4"
    if et.startswith("complex"):
        return "complex"
    return "bits"


def _bits_type(et: str) -> str:
    return f"i{np.dtype(element_type(et).dtype).itemsize * 8}"


def _transport_types(et: str) -> list[str]:
    k = _kind(et)
    if k == "native":
        return [et]
    if k in ("subbyte", "f4"):
        return ["i8"]
    if k == "complex":
        part = et[len("complex<"):-1]
        return [part, part]
    return [_bits_type(et)]


def _decode_arg(fb: FunctionBuilder, vals: list[Val], et: str) -> Val:
    """Ops of @main turning transport values into a value of element type ``et``."""
    k, shape = _kind(et), vals[0].shape
    if k == "native":
        return vals[0]
    if k == "subbyte":
        return fb.op1("convert", vals, shape, et)
    if k == "f4":
        u = fb.op1("convert", vals, shape, "ui4")
        return fb.op1("bitcast_convert", [u], shape, et)
    if k == "complex":
        return fb.op1("complex", vals, shape, et)
    return fb.op1("bitcast_convert", vals, shape, et)


def _encode_result(fb: FunctionBuilder, v: Val) -> list[Val]:
    """Ops of @main turning a result of @core into transport values."""
    k, shape, et = _kind(v.et), v.shape, v.et
    if k == "native":
        return [v]
    if k == "subbyte":
        return [fb.op1("convert", [v], shape, "i8")]
    if k == "f4":
        u = fb.op1("bitcast_convert", [v], shape, "ui4")
        return [fb.op1("convert", [u], shape, "i8")]
    if k == "complex":
        part = et[len("complex<"):-1]
        return [fb.op1("real", [v], shape, part), fb.op1("imag", [v], shape, part)]
    return [fb.op1("bitcast_convert", [v], shape, _bits_type(et))]


def to_transport(a: np.ndarray, et: str) -> list[np.ndarray]:
    """The transport arrays of a native array of element type ``et``."""
    a = np.asarray(a, dtype=element_type(et).dtype)
    k = _kind(et)
    if k == "native":
        return [np.asarray(a, order="C")]
    if k == "subbyte":
        return [a.astype(np.int8)]
    if k == "f4":
        return [a.view(np.uint8).astype(np.int8)]
    if k == "complex":
        return [np.asarray(a.real, order="C"), np.asarray(a.imag, order="C")]
    return [np.asarray(a, order="C").view(_SIGNED_DT[a.dtype.itemsize])]


def from_transport(arrays: list[np.ndarray], et: str) -> np.ndarray:
    """The native array of element type ``et`` from its transport arrays."""
    dt = element_type(et).dtype
    k = _kind(et)
    if k == "native":
        return np.asarray(arrays[0]).astype(dt, copy=False)
    if k == "subbyte":
        return np.asarray(arrays[0]).astype(np.int8).astype(dt)
    if k == "f4":
        return np.asarray(arrays[0]).astype(np.int8).astype(np.uint8).view(dt)
    if k == "complex":
        z = np.empty(np.shape(arrays[0]), dt)
        z.real, z.imag = arrays[0], arrays[1]
        return z
    a = np.asarray(np.asarray(arrays[0]), order="C")
    return a.view(_SIGNED_DT[a.dtype.itemsize]).view(dt)


@dataclass
class Program:
    """``@core`` (shlo runs it) plus the ``@main`` transport wrapper (the oracles run it)."""

    core: FunctionBuilder
    extra_functions: list[str] = field(default_factory=list)
    _module: Any = None

    @property
    def arg_types(self) -> list[str]:
        return [v.et for v in self.core.args]

    @property
    def result_types(self) -> list[str]:
        return [v.et for v in self.core.results]

    def core_text(self) -> str:
        return "\n".join([self.core.text(), *self.extra_functions])

    def oracle_text(self, inline: bool = True) -> str:
        """``@main`` for the oracles: transport arguments decoded, ``@core``'s body (inlined,
        or a ``func.call`` when ``inline`` is false), results encoded. Inlining keeps XLA's
        compilation about a third faster."""
        main = FunctionBuilder("main", prefix="m", arg_prefix="t")
        decoded = []
        for v in self.core.args:
            ts = [main.arg(v.shape, t) for t in _transport_types(v.et)]
            decoded.append(_decode_arg(main, ts, v.et))
        rs = self.core.results
        if inline:
            names = {a.name: d.name for a, d in zip(self.core.args, decoded)}
            pattern = re.compile("(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w#])") \
                if names else None
            for line in self.core.lines:
                main.lines.append(pattern.sub(lambda m: names[m.group(0)], line)
                                  if pattern else line)
            results = [Val(names.get(r.name, r.name), r.shape, r.et) for r in rs]
        else:
            base = main.fresh()
            results = [Val(base if len(rs) == 1 else f"{base}#{i}", r.shape, r.et)
                       for i, r in enumerate(rs)]
            lhs = base if len(rs) == 1 else f"{base}:{len(rs)}"
            main.lines.append(
                f"{lhs} = func.call @{self.core.name}(" + ", ".join(v.name for v in decoded)
                + ") : (" + ", ".join(v.type for v in decoded) + ") -> ("
                + ", ".join(r.type for r in rs) + ")")
        outs: list[Val] = []
        for r in results:
            outs += _encode_result(main, r)
        main.ret(*outs)
        texts = [main.text()]
        if not inline:
            core = FunctionBuilder(self.core.name, "private")
            core.args, core.lines, core.results = self.core.args, self.core.lines, \
                self.core.results
            texts.append(core.text())
        return "\n".join(texts + self.extra_functions)

    def oracle_args(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for a, et in zip(args, self.arg_types):
            out += to_transport(a, et)
        return out

    def decode(self, outs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The oracle's transport results as native arrays of @core's result types."""
        res, i = [], 0
        for et in self.result_types:
            n = len(_transport_types(et))
            res.append(from_transport(list(outs[i:i + n]), et))
            i += n
        return res

    def run_shlo(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        from ..interpreter.api import run
        from ..syntax.parser import parse

        if self._module is None:
            self._module = parse(self.core_text())
        outs = run(self._module, *args, entry=self.core.name)
        return [np.asarray(o) for o in outs]


def unary_program(op: str, et: str, shape: Sequence[int] = (16,), result_et: str | None = None,
                  attrs: str = "") -> Program:
    """`@core(x) = op(x)`."""
    fb = FunctionBuilder()
    x = fb.arg(shape, et)
    fb.ret(fb.op1(op, [x], shape, result_et or et, attrs))
    return Program(fb)


def binary_program(op: str, et: str, shape: Sequence[int] = (16,), result_et: str | None = None,
                   attrs: str = "") -> Program:
    """`@core(x, y) = op(x, y)`."""
    fb = FunctionBuilder()
    x, y = fb.arg(shape, et), fb.arg(shape, et)
    fb.ret(fb.op1(op, [x, y], shape, result_et or et, attrs))
    return Program(fb)


# --- inputs ----------------------------------------------------------------------------------


def _float_specials(dt: np.dtype) -> np.ndarray:
    fi = float_info(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3.0, float(fi.max), -float(fi.max),
            float(fi.tiny), -float(fi.tiny), np.inf, -np.inf, np.nan]
    sub = float(fi.smallest_subnormal) if hasattr(fi, "smallest_subnormal") else 0.0
    if 0.0 < sub < float(fi.tiny):
        vals += [sub, -3 * sub]
    with np.errstate(all="ignore"):
        return np.array(vals, np.float64).astype(dt)


def random_array(et: str, shape: Sequence[int], rng: np.random.Generator,
                 specials: bool = True, low: float | None = None, high: float | None = None
                 ) -> np.ndarray:
    """Random values of element type ``et``; the first elements are special values (shuffled
    into place) when ``specials``. ``low``/``high`` bound the random (non-special) values."""
    t: ElementType = element_type(et)
    dt = t.dtype
    n = int(np.prod(shape, dtype=np.int64))
    if t.is_bool:
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if t.is_complex:
        part = np.float32 if dt == np.complex64 else np.float64
        re = random_array(et[len("complex<"):-1], shape, rng, specials, low, high).ravel()
        im = random_array(et[len("complex<"):-1], shape, rng, False, low, high).ravel()
        im[rng.random(n) < 0.15] = 0.0
        z = np.empty(n, dt)
        z.real, z.imag = re.astype(part), im.astype(part)
        return z.reshape(shape)
    if t.is_integer:
        lo = t.min if low is None else max(t.min, int(low))
        hi = t.max if high is None else min(t.max, int(high))
        wide = np.int64 if t.is_signed else np.uint64
        vals = rng.integers(lo, hi, n, endpoint=True, dtype=wide)
        if specials:
            sp = [v for v in (t.min, t.max, 0, 1, -1, t.min + 1, t.max - 1, 2)
                  if t.min <= v <= t.max and lo <= v <= hi]
            sp = list(dict.fromkeys(sp))[:max(0, n // 2)]
            vals[:len(sp)] = np.array(sp, dtype=object).astype(wide)
            rng.shuffle(vals)
        return vals.astype(dt).reshape(shape)
    fi = float_info(dt)
    emax = float(np.log2(float(fi.max)))
    lo_e, hi_e = max(-6.0, float(np.log2(float(fi.tiny)))), min(6.0, emax)
    mag = 2.0 ** rng.uniform(lo_e, hi_e, n)
    vals = mag * rng.choice([-1.0, 1.0], n)
    if low is not None or high is not None:
        lo_v = -hi_e if low is None else low
        hi_v = hi_e if high is None else high
        vals = rng.uniform(lo_v, hi_v, n)
    if specials:
        sp = _float_specials(dt).astype(np.float64)[:max(0, n // 2)]
        vals[:len(sp)] = sp
        rng.shuffle(vals)
    with np.errstate(all="ignore"):
        return vals.astype(dt).reshape(shape)
