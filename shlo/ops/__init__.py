"""The opset, grouped as the spec groups it; each op is defined once (see shlo/registry.py).

Importing this package imports no op module: the registry imports the modules of an op the
first time the op is looked up, as the generated index says (``_index.py``, made by
``python -m shlo.ops._make_index`` and checked against a full import by
tests/test_op_index.py). :func:`load_all` imports every module that registers something.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..registry import Index
from ._lazy import package_getattr

__all__ = ["load_all", "index"]


def load_all() -> None:
    """Import every ops module that registers something (the registry's eager load)."""
    idx = index()
    for mods in idx.modules.values():
        for m in mods:
            importlib.import_module(m)
    for table in idx.extensions.values():
        for m in table.values():
            importlib.import_module(m)


def index() -> Index:
    """The generated index, in the registry's terms."""
    from . import _index

    modules: dict[str, tuple[str, ...]] = {}
    for mod, names in _index.OPS.items():
        for n in names.split():
            modules[n] = modules.get(n, ()) + (mod,)
    traits = {t: frozenset(names.split()) for t, names in _index.TRAITS.items()}
    extensions = {kind: {k: m for m, keys in table.items() for k in keys.split()}
                  for kind, table in _index.EXTENSIONS.items()}
    return Index(modules, traits, extensions)


__getattr__ = package_getattr(__name__, {})  # `shlo.ops.elementwise`: imported on first access
