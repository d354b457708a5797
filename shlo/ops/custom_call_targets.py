"""Built-in custom_call targets that are not LAPACK (docs/custom_calls.md).

* `@shape_assertion` (jax.export's shape polymorphism): operand 0 is the i1 condition, the
  others the values the `error_message` attribute's `{0}`, `{1}`, ... placeholders name; a false
  condition is an ExecutionError at the op with the filled-in message.
* Host callbacks (`xla_ffi_python_cpu_callback` and its GPU, partitioned and legacy spellings,
  from `jax.debug.print`, `jax.pure_callback`, `jax.experimental.io_callback`): the callable
  lived in the exporting process, so shlo cannot call it. One with no results (a debug print)
  is skipped with one warning per target and program; any other is an error that says how to
  supply a handler.
* `@mhlo.erf` (torch-xla's GELU): `chlo.erf`'s semantics, computed in float64 and rounded once.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ._lazy import special as sc
from ..types import TOKEN, TokenType
from ._numeric import round_from_wide
from .custom_call import CustomCall, custom_call_target

__all__ = ["HOST_CALLBACK_TARGETS"]

_PLACEHOLDER = re.compile(r"\{(\d+)\}")


@custom_call_target("shape_assertion", builtin=True)
def shape_assertion(call: CustomCall, condition: np.ndarray, *values: np.ndarray) -> None:
    """Check the condition; fail with the assertion's message, placeholders filled."""
    if bool(np.asarray(condition).all()):
        return
    template = str(call.attributes.get("error_message", "shape assertion failed"))

    def fill(m: re.Match[str]) -> str:
        i = int(m.group(1))
        return str(np.asarray(values[i]).item()) if i < len(values) else m.group(0)

    raise call.error(_PLACEHOLDER.sub(fill, template))


HOST_CALLBACK_TARGETS = (
    "xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback",
    "xla_ffi_partitioned_python_cpu_callback", "xla_ffi_partitioned_python_gpu_callback",
    "xla_python_cpu_callback", "xla_python_gpu_callback",
    "xla_buffer_python_cpu_callback", "xla_buffer_python_gpu_callback",
)
"""The targets JAX lowers host callbacks to (jax/_src/callback.py, buffer_callback.py)."""


@custom_call_target(*HOST_CALLBACK_TARGETS, builtin=True)
def host_callback(call: CustomCall, *operands: Any) -> Any:
    """Skip a callback without results (a debug print: nothing it computes flows on), with one
    warning; refuse any other."""
    if all(isinstance(t, TokenType) for t in call.result_types):
        call.warn("a host callback with no results (jax.debug.print or io_callback without "
                  "results) was skipped: its Python function lives in the process that "
                  "exported the program. To run it, register a handler for this target "
                  "(docs/custom_calls.md)")
        return [TOKEN] * len(call.result_types)
    name = call.call_target_name
    raise call.error(
        f"a host callback with results (jax.pure_callback / io_callback) cannot run here: the "
        f"Python function it calls lived in the exporting process (backend_config "
        f"{dict(call.backend_config) if not isinstance(call.backend_config, str) else call.backend_config!r}"
        f" is its index there). Supply what it computes as a handler: "
        f"shlo.run(..., custom_calls={{'{name}': fn}}) with fn(*operands) -> results, or "
        f"@shlo.custom_call_target('{name}') / `shlo run --custom-calls my_targets.py` "
        f"(see docs/custom_calls.md)")


@custom_call_target("mhlo.erf", builtin=True)
def mhlo_erf(call: CustomCall, x: np.ndarray) -> np.ndarray:
    """erf element-wise, computed in float64 and rounded once to the result type."""
    dtype = call.result_types[0].dtype
    with np.errstate(all="ignore"):
        return round_from_wide(sc.erf(np.asarray(x).astype(np.float64)), dtype)
