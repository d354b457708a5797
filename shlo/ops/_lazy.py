"""What is imported when first used: scipy (importing scipy.special costs about 0.4 s; `shlo run`
of a program that needs none of it should not pay that), the submodules of the ops groups
(:func:`package_getattr`: a program that adds two tensors imports no convolution), and compiled
code (:class:`Once`: numba's import and the loading of compiled functions)."""

from __future__ import annotations

import importlib
import threading
from typing import Any, Callable

__all__ = ["LazyModule", "Once", "special", "fft", "package_getattr"]


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


class Once:
    """What ``load()`` returns, loaded by the first :meth:`get` (one thread loads, the others
    wait) and kept: ``value`` is None before, False where it cannot load (``load`` says so by
    returning False), else the loaded object. Its owner may set ``value`` to False (a forked
    child, tests)."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self._load = load
        self._lock = threading.Lock()
        self.value: Any = None

    def get(self) -> Any:
        """The loaded object, or None where it cannot load."""
        if self.value is None:
            with self._lock:
                if self.value is None:
                    self.value = self._load()
        return self.value or None


special = LazyModule("scipy.special")
fft = LazyModule("scipy.fft")


def package_getattr(package: str, names: dict[str, str]) -> Callable[[str], Any]:
    """The PEP 562 ``__getattr__`` of an ops group package: ``names`` maps each attribute the
    package re-exports to the module defining it (relative to the package: ``".dot"``), imported
    on first access; any other attribute is a submodule, imported on first access."""

    def __getattr__(attr: str) -> Any:
        where = names.get(attr)
        if where is not None:
            return getattr(importlib.import_module(where, package), attr)
        try:
            return importlib.import_module(f"{package}.{attr}")
        except ModuleNotFoundError as e:
            if e.name != f"{package}.{attr}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {attr!r}") from None

    return __getattr__
