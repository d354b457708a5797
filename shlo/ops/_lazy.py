"""scipy, imported when first used (importing scipy.special costs about 0.4 s; `shlo run` of a
program that needs none of it should not pay that)."""

from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ["LazyModule", "special", "fft"]


class LazyModule:
    """A module imported on first attribute access: ``special.erf(x)``. ``special.later("erf")``
    is a function that looks the attribute up when called, for tables built at import time."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def later(self, attr: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(importlib.import_module(self._name), attr)(*args, **kwargs)

        call.__name__ = attr
        return call


special = LazyModule("scipy.special")
fft = LazyModule("scipy.fft")
