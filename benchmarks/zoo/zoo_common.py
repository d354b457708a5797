"""Shared by make_zoo.py (export side, needs the framework libraries) and run_zoo.py (shlo side,
needs only numpy and ml_dtypes): where the cache lives and how arrays are stored in it.

Arrays go into .npz files as ``a0, a1, ...`` in the flattened order of the exported function's
arguments (or results). numpy cannot describe ml_dtypes types (bfloat16, float8_*, int4, ...)
in an .npz header, so those are stored as same-width unsigned views and their real dtype name
is kept in the manifest (``in_dtypes`` / ``out_dtypes``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np


def zoo_dir(override: str | None = None) -> Path:
    if override:
        return Path(override).expanduser()
    return Path(os.environ.get("SHLO_ZOO_DIR", "~/.cache/shlo-zoo")).expanduser()


_NATIVE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"}


def pack(arrays) -> tuple[dict, list[str]]:
    """Arrays -> (npz dict, dtype names). Non-numpy dtypes are stored as uint views."""
    out, names = {}, []
    for i, a in enumerate(arrays):
        a = np.asarray(a)
        name = a.dtype.name
        if name not in _NATIVE:
            a = a.view(np.dtype(f"u{a.dtype.itemsize}"))
        out[f"a{i}"] = a
        names.append(name)
    return out, names


def unpack(npz_path: Path, dtype_names: list[str]) -> list[np.ndarray]:
    with np.load(npz_path) as z:
        arrays = [z[f"a{i}"] for i in range(len(dtype_names))]
    out = []
    for a, name in zip(arrays, dtype_names):
        if name not in _NATIVE:
            import ml_dtypes

            a = a.view(getattr(ml_dtypes, name))
        out.append(a)
    return out


def read_manifest(root: Path) -> list[dict]:
    """Every entry's manifest (one JSON file per entry, ``<name>.json``), sorted by group then
    name; ``manifest.jsonl`` is the same, concatenated, for reading by eye."""
    entries = []
    for p in sorted(root.glob("*.json")):
        if p.name == "versions.json" or p.name.startswith("results"):
            continue
        try:
            e = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(e, dict) and "name" in e and "files" in e:
            entries.append(e)
    order = {g: i for i, g in enumerate(GROUPS)}
    entries.sort(key=lambda e: (order.get(e.get("group"), 99), e["name"]))
    return entries


GROUPS = ["hf", "flax", "eqx", "keras", "sharded", "misc", "linalg", "perf", "torch",
          "torch_xla"]
