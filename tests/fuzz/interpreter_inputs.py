"""Family (c): hostile interpreter inputs. Named programs that stress one limit each (huge
results, zero-size tensors, recursion, a loop that never ends, a huge grid), and the built-in
seeds run on hostile arguments (NaN, inf, extremes, zero-size variants, wrong argument counts,
dtypes, shapes and kinds). The contract: results or shlo's own errors, within the time bound.

Huge results are sized far beyond any machine's memory (10^11 elements and more), so that an
attempt to allocate fails at once instead of filling the machine.
"""

from __future__ import annotations

import random
import re
import warnings
from typing import Any, Callable

import numpy as np

from .seeds import BUILTIN

_F = "func.func @main({args}) -> {res} {{\n{body}\n  return {ret} : {res}\n}}"


def _prog(res: str, body: str, args: str = "", ret: str = "%0") -> str:
    return _F.format(args=args, res=res, body=body, ret=ret)


# name -> (program, arguments, run options, time bound in seconds)
NAMED: dict[str, tuple[str, tuple, dict, float]] = {
    "sort-zero-size": (_prog("tensor<0x3xf32>", '  %0 = "stablehlo.sort"(%a) ({\n'
                             "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                             "    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>)"
                             " -> tensor<i1>\n    stablehlo.return %c : tensor<i1>\n"
                             "  }) {dimension = 1 : i64} : (tensor<0x3xf32>) -> tensor<0x3xf32>",
                             "%a: tensor<0x3xf32>"), (np.zeros((0, 3), np.float32),), {}, 10),
    "iota-1e11": (_prog("tensor<100000000000xf32>", "  %0 = stablehlo.iota dim = 0 : "
                        "tensor<100000000000xf32>"), (), {}, 10),
    "pad-1e11": (_prog("tensor<100000000000xf32>", "  %0 = stablehlo.pad %a, %p, low = "
                       "[99999999998], high = [0], interior = [0] : (tensor<2xf32>, tensor<f32>)"
                       " -> tensor<100000000000xf32>", "%a: tensor<2xf32>, %p: tensor<f32>"),
                 (np.ones(2, np.float32), np.float32(0)), {}, 10),
    "rng-bit-generator-1e11": (
        _prog("tensor<100000000000xui32>", "  %s, %0 = stablehlo.rng_bit_generator %k, "
              "algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, "
              "tensor<100000000000xui32>)", "%k: tensor<2xui64>"),
        (np.array([1, 2], np.uint64),), {}, 10),
    "broadcast-2^32x2^32x4": (
        _prog("tensor<4294967296x4294967296x4xf32>", "  %0 = stablehlo.broadcast_in_dim %a, "
              "dims = [2] : (tensor<4xf32>) -> tensor<4294967296x4294967296x4xf32>",
              "%a: tensor<4xf32>"), (np.ones(4, np.float32),), {}, 10),
    "broadcast-1e11-then-add": (
        _prog("tensor<100000000000xf32>", "  %b = stablehlo.broadcast_in_dim %a, dims = [] : "
              "(tensor<f32>) -> tensor<100000000000xf32>\n  %0 = stablehlo.add %b, %b : "
              "tensor<100000000000xf32>", "%a: tensor<f32>"), (np.float32(1),), {}, 10),
    "self-recursive-call": (
        _prog("tensor<f32>", "  %0 = func.call @main(%a) : (tensor<f32>) -> tensor<f32>",
              "%a: tensor<f32>"), (np.float32(1),), {}, 10),
    "dynamic-iota-negative-shape": (
        _prog("tensor<?xf32>", "  %s = stablehlo.constant dense<[-3]> : tensor<1xi64>\n"
              "  %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>"),
        (), {}, 10),
    "dynamic-reshape-wrong-count": (
        _prog("tensor<?xf32>", "  %s = stablehlo.constant dense<[5]> : tensor<1xi64>\n"
              "  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3xf32>, tensor<1xi64>) -> "
              "tensor<?xf32>", "%a: tensor<2x3xf32>"), (np.ones((2, 3), np.float32),), {}, 10),
    "while-forever": (
        _prog("tensor<i32>", "  %0 = stablehlo.while(%i = %a) : tensor<i32>\n   cond {\n"
              "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
              "    stablehlo.return %t : tensor<i1>\n  } do {\n"
              "    stablehlo.return %i : tensor<i32>\n  }", "%a: tensor<i32>"),
        (np.int32(0),), {"time_limit": 0.5}, 5),  # it never ends, as written: a limit stops it
    "replicas-1e6": (_prog("tensor<f32>", "  %0 = stablehlo.abs %a : tensor<f32>",
                           "%a: tensor<f32>"), (np.float32(-1),), {"replicas": 1000000}, 5),
    "replicas-0": (_prog("tensor<f32>", "  %0 = stablehlo.abs %a : tensor<f32>",
                         "%a: tensor<f32>"), (np.float32(-1),), {"replicas": 0}, 5),
    "dynamic-slice-huge-index": (
        _prog("tensor<2xf32>", "  %0 = stablehlo.dynamic_slice %a, %i, sizes = [2] : "
              "(tensor<4xf32>, tensor<i64>) -> tensor<2xf32>", "%a: tensor<4xf32>, "
              "%i: tensor<i64>"), (np.ones(4, np.float32), np.int64(2 ** 63 - 1)), {}, 10),
    "gather-out-of-range": (
        _prog("tensor<1x2xf32>", '  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = '
              "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map"
              " = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>} : "
              "(tensor<3x2xf32>, tensor<1x1xi64>) -> tensor<1x2xf32>",
              "%a: tensor<3x2xf32>, %i: tensor<1x1xi64>"),
        (np.ones((3, 2), np.float32), np.array([[-2 ** 63]], np.int64)), {}, 10),
    "integer-divide-by-zero-min": (
        _prog("tensor<2xi32>", "  %0 = stablehlo.divide %a, %b : tensor<2xi32>\n"
              "  %1 = stablehlo.remainder %a, %b : tensor<2xi32>",
              "%a: tensor<2xi32>, %b: tensor<2xi32>", ret="%1"),
        (np.array([-2 ** 31, 5], np.int32), np.array([-1, 0], np.int32)), {}, 10),
    "shift-by-huge": (
        _prog("tensor<2xi64>", "  %0 = stablehlo.shift_left %a, %b : tensor<2xi64>\n"
              "  %1 = stablehlo.shift_right_arithmetic %0, %b : tensor<2xi64>",
              "%a: tensor<2xi64>, %b: tensor<2xi64>", ret="%1"),
        (np.array([1, -1], np.int64), np.array([2 ** 63 - 1, -2 ** 63], np.int64)), {}, 10),
    "convert-nan-inf-to-int": (
        _prog("tensor<4xi8>", "  %0 = stablehlo.convert %a : (tensor<4xf32>) -> tensor<4xi8>",
              "%a: tensor<4xf32>"), (np.array([np.nan, np.inf, -np.inf, 1e30], np.float32),),
        {}, 10),
    "pow-int-negative": (
        _prog("tensor<3xi32>", "  %0 = stablehlo.power %a, %b : tensor<3xi32>",
              "%a: tensor<3xi32>, %b: tensor<3xi32>"),
        (np.array([0, 2, -1], np.int32), np.array([-1, -2, -2 ** 31], np.int32)), {}, 10),
}


def _named_trial(name: str) -> Callable[[], str | None]:
    text, args, options, bound = NAMED[name]

    def trial() -> str | None:
        import shlo

        results = shlo.run(shlo.parse(text), *args, **options)
        _touch(results)
        return None
    trial.bound = bound  # type: ignore[attr-defined]
    return trial


def _touch(results: Any) -> None:
    """Use every result (a lazy view must not fail later, where the user touches it)."""
    for r in results if isinstance(results, (list, tuple)) else [results]:
        if isinstance(r, (list, tuple)):
            _touch(r)
        elif isinstance(r, np.ndarray) and r.size and r.nbytes < 1 << 28:
            np.ascontiguousarray(r).tobytes()


# --- hostile arguments for the built-in seeds ------------------------------------------------


def _values(rng: random.Random, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    if dtype.kind == "f" or dtype.kind == "c" or dtype.kind == "V":
        pool = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4e38, -3.4e38, 1.0, -1.0, 1e300]
        vals = np.array([rng.choice(pool) for _ in range(n)], np.float64)
        with np.errstate(all="ignore"):
            return vals.astype(dtype).reshape(shape)
    if dtype.kind == "b":
        return np.array([rng.random() < 0.5 for _ in range(n)]).reshape(shape)
    info = np.iinfo(dtype)
    pool = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.max // 2]
    return np.array([rng.choice(pool) for _ in range(n)], dtype).reshape(shape)


def _signature(text: str) -> list[tuple[np.dtype, tuple[int, ...]]] | None:
    import shlo
    from shlo.types import TensorType

    fn = shlo.parse(text).function("main")
    ft = fn.attr("function_type")
    ft = getattr(ft, "type", ft)
    out = []
    for t in ft.inputs:
        if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
            return None
        et = getattr(t.element_type, "storage", t.element_type)
        out.append((np.dtype(et.dtype), tuple(t.shape)))
    return out


def _zero_variant(rng: random.Random, text: str) -> str | None:
    dims = sorted(set(re.findall(r"(?<=[<x])(\d+)(?=x)", text)))
    if not dims:
        return None
    d = rng.choice(dims)
    return re.sub(rf"(?<=[<x]){d}(?=x)", "0", text)


# (not the while loop: on hostile values it never ends, as the program says; while-forever is
# the case for that)
_RUNNABLE = [s for s in BUILTIN if "@foo" not in s and "stablehlo.while" not in s]


def _arg_trial(rng: random.Random, text: str) -> tuple[str, str, Callable[[], str | None]]:
    sig = _signature(text)
    if sig is None:
        sig = []
    args: list[Any] = [_values(rng, dt, sh) for dt, sh in sig]
    kind = "hostile-values"
    r = rng.random()
    if r < 0.12:
        args = args[:-1] if args else [np.float32(1)]
        kind = "too-few-args"
    elif r < 0.2:
        args = args + [np.float32(1)]
        kind = "too-many-args"
    elif r < 0.3 and args:
        i = rng.randrange(len(args))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args[i] = args[i].astype(rng.choice([np.float64, np.int64, np.uint8, np.bool_,
                                                 np.complex64, np.float16]))
        kind = "wrong-dtype"
    elif r < 0.38 and args:
        i = rng.randrange(len(args))
        args[i] = np.zeros(tuple(reversed(args[i].shape)) + (2,), args[i].dtype)
        kind = "wrong-shape"
    elif r < 0.46 and args:
        i = rng.randrange(len(args))
        args[i] = rng.choice([None, "x", [1.0, 2.0], {"a": 1}, 3, 2.5, object(),
                              np.array(["a", "b"]), np.array([1, None], object)])
        kind = "wrong-kind"
    elif r < 0.52 and args:
        i = rng.randrange(len(args))
        args[i] = np.lib.stride_tricks.as_strided(args[i], args[i].shape,
                                                  (0,) * args[i].ndim)
        kind = "zero-strides"

    def trial() -> str | None:
        import shlo

        _touch(shlo.run(shlo.parse(text), *args))
        return None
    return kind, f"{kind}: {[getattr(a, 'dtype', type(a)) for a in args]}\n{text}", trial


def cases(rng: random.Random):
    """The named cases first (in order), then hostile arguments and zero-size variants."""
    for name in NAMED:
        yield name, f"{name}:\n{NAMED[name][0]}", _named_trial(name)
    while True:
        text = rng.choice(_RUNNABLE)
        if rng.random() < 0.3:
            z = _zero_variant(rng, text)
            if z is not None:
                try:
                    kind, case, trial = _arg_trial(rng, z)
                except Exception:  # noqa: BLE001 - a variant the parser rejects
                    continue
                yield "zero-size/" + kind, case, trial
                continue
        yield _arg_trial(rng, text)
