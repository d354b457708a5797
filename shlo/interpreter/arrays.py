"""Arrays in and out of a run, as files: what `shlo run` reads (`.npy` files, an `.npz`,
IREE-style inline values) and writes (`--out`), and `--expected` comparisons.

* Arguments follow the entry function's order. An `.npz` maps to arguments by its keys: the function's
  argument names (the SSA name in the text or a `jax.arg_info` attribute), else `arr_0, arr_1,
  ...` (``np.savez(f, a, b)``) or `arg0, arg1, ...` by number. Anything else is an
  error that lists what was expected: never a silent reordering.
* Narrow types (bf16, fp8, int4, ...): numpy writes ml_dtypes arrays to `.npy` as raw bytes
  (`|V2`); such an array, or one of unsigned ints of the same item size (the upstream probe
  layout), is read as the type the function declares. Results of narrow types are written as
  ml_dtypes arrays, so ``np.load(f)[k].view(ml_dtypes.bfloat16)`` restores them.
* Inline values as IREE's tools take them: ``2x3xf32=1,2,3,4,5,6``, ``f32=0.5``, ``4xi1=1 0 1
  0`` (brackets ignored), ``@file.npy``.
"""

from __future__ import annotations

import os
import re
import zipfile
from typing import Any, Sequence

import numpy as np

from ..attributes import DictAttr, StringAttr
from ..ir import Module, function_type
from ..types import QuantizedType, TensorType, Type

__all__ = ["ArrayFileError", "read_array", "inline_value", "entry_arguments", "save_results",
           "compare_expected", "argument_names"]


class ArrayFileError(ValueError):
    """An input or output file of arrays that cannot be used; the message says why."""


def _dtype_of(t: Type) -> np.dtype | None:
    if not isinstance(t, TensorType):
        return None
    et = t.element_type
    return np.dtype(et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype)


def read_array(path: str, expected: Type | None = None) -> np.ndarray:
    """The array in `.npy` file ``path``; raw-byte (`|V`) or same-size unsigned arrays are read
    as the narrow type ``expected`` declares."""
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            if not head:
                raise ArrayFileError(f"{path}: empty file (expected a .npy array)")
            if head != b"\x93NUMPY":
                raise ArrayFileError(f"{path}: not a .npy file (no NUMPY header)")
            f.seek(0)
            arr = np.load(f, allow_pickle=False)
    except ArrayFileError:
        raise
    except ValueError as e:
        if "pickle" in str(e):
            raise ArrayFileError(f"{path}: holds Python objects (a pickled array); save "
                                 "numeric arrays only") from None
        raise ArrayFileError(f"{path}: cannot read it as a .npy array ({e})") from None
    except (EOFError, OSError) as e:
        raise ArrayFileError(f"{path}: cannot read it as a .npy array ({e})") from None
    return as_declared(arr, expected)


def as_declared(arr: np.ndarray, expected: Type | None) -> np.ndarray:
    """``arr`` reinterpreted as ``expected``'s narrow dtype when it holds that type's raw bits
    (a `|V` array, or unsigned ints of the same item size); otherwise unchanged."""
    dtype = _dtype_of(expected) if expected is not None else None
    if dtype is None or arr.dtype == dtype or dtype.kind != "V":
        return arr
    if arr.dtype.itemsize == dtype.itemsize and arr.dtype.kind in "Vu":
        return np.ascontiguousarray(arr).view(dtype)
    return arr


_INLINE = re.compile(r"^(?:(\d+(?:x\d+)*)x)?([a-z][\w]*)=(.*)$", re.S)


def inline_value(text: str) -> np.ndarray:
    """An IREE-style inline value: ``[DIMSx]TYPE=v1,v2,...`` or ``@file.npy``."""
    if text.startswith("@"):
        return read_array(text[1:])
    m = _INLINE.match(text.strip())
    if not m:
        raise ArrayFileError(f"--input '{text}': expected SHAPExTYPE=VALUES (2x3xf32=1,2,3,4,5,6) "
                             "or @file.npy")
    dims = tuple(int(d) for d in m.group(1).split("x")) if m.group(1) else ()
    from ..errors import ShloError
    from ..syntax.parser import Parser

    try:
        t = Parser(f"tensor<{m.group(1) + 'x' if m.group(1) else ''}{m.group(2)}>").parse_type()
    except ShloError:
        raise ArrayFileError(f"--input '{text}': unknown element type '{m.group(2)}'") from None
    dtype = _dtype_of(t)
    words = [w for w in re.split(r"[\s,\[\]]+", m.group(3)) if w]
    n = int(np.prod(dims)) if dims else 1
    if len(words) == 1 and n != 1:
        words = words * n  # a splat
    if len(words) != n:
        raise ArrayFileError(f"--input '{text}': {len(words)} values for shape "
                             f"{'x'.join(map(str, dims)) or 'scalar'} ({n} elements)")
    try:
        if dtype == np.bool_:
            vals = np.array([w.lower() in ("1", "true") for w in words])
        elif dtype.kind in "iu" or (dtype.kind == "V" and "int" in dtype.name):
            vals = np.array([int(w, 0) for w in words]).astype(dtype)
        elif dtype.kind == "c":
            vals = np.array([complex(w.replace("i", "j")) for w in words], dtype=dtype)
        else:
            vals = np.array([float(w) for w in words], dtype=np.float64).astype(dtype)
    except ValueError as e:
        raise ArrayFileError(f"--input '{text}': {e}") from None
    return vals.reshape(dims)


def argument_names(module: Module, entry: str) -> list[set[str]]:
    """The names each argument of ``entry`` answers to (its SSA name in the text and its
    `jax.arg_info` attribute)."""
    func = module.function(entry)
    args = func.regions[0].blocks[0].arguments if func.regions and func.regions[0].blocks \
        else []
    attrs = func.attr("arg_attrs")
    dicts = list(getattr(attrs, "values", ()) or ())
    out: list[set[str]] = []
    for i, v in enumerate(args):
        names: set[str] = set()
        if getattr(v, "name", None):
            names.add(str(v.name))
        d = dicts[i] if i < len(dicts) else None
        if isinstance(d, DictAttr):
            info = dict(d.items).get("jax.arg_info")
            if isinstance(info, StringAttr):
                names.add(info.value)
        out.append(names)
    return out


def _arr_index(key: str) -> int | None:
    """N for `arr_N` (np.savez's names) and `argN` (MLIR's default argument names)."""
    m = re.fullmatch(r"arr_(\d+)|arg(\d+)", key)
    return int(m.group(1) or m.group(2)) if m else None


def entry_arguments(module: Module | None, entry: str, inputs: Sequence[str] = (),
                    npz: str | None = None, inline: Sequence[str] = ()) -> list[Any]:
    """The arguments of ``entry`` from `.npy` paths (or ``name=path``), an `.npz` and inline
    values, in the function's argument order. Without a module (a jax.export file, whose
    calling convention is applied later) they come in the order given, and npz keys must be
    positional (`arr_N`/`argN`)."""
    types: list[Type] | None = None
    names: list[set[str]] = []
    if module is not None:
        if entry not in module.functions:
            from ..errors import ExecutionError

            raise ExecutionError(f"no function @{entry} in the module")
        types = list(function_type(module.function(entry)).inputs)
        names = argument_names(module, entry)
    positional: list[Any] = []
    named: dict[int, Any] = {}

    def index_of(name: str, source: str) -> int:
        hits = [i for i, ns in enumerate(names) if name in ns]
        if len(hits) != 1:
            known = ", ".join("/".join(sorted(ns)) or f"#{i}" for i, ns in enumerate(names))
            raise ArrayFileError(f"{source}: '{name}' names no argument of @{entry} (its "
                                 f"arguments: {known or 'unknown here: use arr_0, arr_1, ...'})")
        return hits[0]

    def expected(i: int) -> Type | None:
        return types[i] if types is not None and i < len(types) else None

    for p in inputs:
        if "=" in p and not os.path.exists(p):
            name, path = p.split("=", 1)
            i = index_of(name, p)
            named[i] = read_array(path, expected(i))
        else:
            positional.append(read_array(p, expected(len(positional))))
    for text in inline:
        positional.append(as_declared(inline_value(text), expected(len(positional))))
    if npz is not None:
        for i, arr in _read_npz(npz, names, expected, index_of):
            named[i] = arr
    args = positional[:]
    for i in sorted(named):
        if i < len(args):
            raise ArrayFileError(f"argument {i} of @{entry} is given twice (positionally and "
                                 "by name)")
        while len(args) < i:
            args.append(None)
        args.append(named[i])
    missing = [i for i, a in enumerate(args) if a is None]
    if types is None:
        if missing:
            raise ArrayFileError(f"arguments #{', #'.join(map(str, missing))} are missing")
        return args
    if missing or len(args) != len(types):
        want = ", ".join(str(t) for t in types) or "none"
        raise ArrayFileError(f"@{entry} takes {len(types)} argument(s) ({want}); got "
                             f"{len(args) - len(missing)}"
                             + (f" (missing #{', #'.join(map(str, missing))})" if missing
                                else ""))
    return args


def _read_npz(path: str, names: list[set[str]], expected: Any,
              index_of: Any) -> list[tuple[int, np.ndarray]]:
    try:
        z = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ArrayFileError(f"{path}: cannot read it as an .npz archive ({e})") from None
    if not hasattr(z, "files"):
        raise ArrayFileError(f"{path}: a single .npy array, not an .npz archive (pass it "
                             "positionally)")
    with z:
        keys = list(z.files)
        out = []
        by_name = bool(names) and all(sum(k in ns for ns in names) == 1 for k in keys)
        if keys and not by_name and all(_arr_index(k) is not None for k in keys):
            picks = [(_arr_index(k), k) for k in keys]
        else:
            picks = [(index_of(k, f"--args {path}"), k) for k in keys]
        for i, k in picks:
            try:
                arr = z[k]
            except (ValueError, OSError, zipfile.BadZipFile) as e:
                raise ArrayFileError(f"{path}: entry '{k}' is unreadable ({e})") from None
            out.append((i, as_declared(arr, expected(i))))
    return out


# --- results ------------------------------------------------------------------------------------


def _flat(results: list[Any], prefix: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for i, r in enumerate(results):
        if isinstance(r, tuple):
            for j, x in enumerate(r):
                out[f"{prefix}result{i}.{j}"] = np.asarray(x)
        elif r is not None and not isinstance(r, (str, bytes)) and hasattr(r, "dtype"):
            out[f"{prefix}result{i}"] = np.asarray(r)
    return out


def save_results(path: str, results: list[Any], per_process: bool = False) -> list[str]:
    """Write ``results`` to ``path``: an `.npz` written at exactly that path (keys
    `result0...`, `process{p}.result0...` for per-process results), or, when ``path`` is a
    directory (existing, or ending with `/`), one `.npy` per result in it. Returns the files
    written."""
    arrays: dict[str, np.ndarray] = {}
    if per_process:
        for pid, proc in enumerate(results):
            arrays.update(_flat(proc, f"process{pid}."))
    else:
        arrays.update(_flat(results, ""))
    if path.endswith(("/", os.sep)) or os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        files = []
        for k, v in arrays.items():
            f = os.path.join(path, k + ".npy")
            np.save(f, v)
            files.append(f)
        return files
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    return [path]


def compare_expected(results: list[Any], path: str, rtol: float = 1e-6, atol: float = 0.0
                     ) -> list[str]:
    """Compare ``results`` with the arrays of `.npz` ``path`` (keys `result0...` or
    `arr_0...`, in order); one line per result, "ok" or what differs."""
    try:
        z = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise ArrayFileError(f"--expected {path}: cannot read it ({e})") from None
    with z:
        keys = list(z.files)
        keys.sort(key=lambda k: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", k)])
        flat = list(_flat(results, "").items())
        if len(keys) != len(flat):
            return [f"--expected {path}: {len(keys)} arrays for {len(flat)} results"]
        lines = []
        for (name, got), k in zip(flat, keys):
            want = as_declared(z[k], None)
            lines.append(_compare(name, got, want, rtol, atol))
    return lines


def _as_float(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "V":
        return a.astype(np.float64) if "int" not in a.dtype.name else a.astype(np.int64)
    return a


def _compare(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    if got.shape != want.shape:
        return f"{name}: shape {got.shape}, expected {want.shape}"
    if got.dtype.itemsize == want.dtype.itemsize and want.dtype.kind in "Vu" and \
            got.dtype.kind == "V":
        want = want.view(got.dtype)
    g, w = _as_float(got), _as_float(want)
    if g.dtype.kind in "fc" or w.dtype.kind in "fc":
        close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = g == w
    bad = int(close.size - np.count_nonzero(close))
    if bad == 0:
        return f"{name}: ok"
    diff = np.abs(g.astype(np.complex128 if g.dtype.kind == "c" else np.float64) -
                  w.astype(np.complex128 if w.dtype.kind == "c" else np.float64))
    worst = np.unravel_index(int(np.nanargmax(np.where(close, 0, diff))), close.shape) \
        if close.ndim else ()
    return (f"{name}: {bad} of {close.size} elements differ (max |diff| "
            f"{float(np.nanmax(np.where(close, 0, diff))):.6g} at {list(map(int, worst))}: got "
            f"{g[worst]!r}, expected {w[worst]!r}; rtol={rtol}, atol={atol})")
