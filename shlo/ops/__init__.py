"""The opset, grouped as the spec groups it; each op is defined once (see shlo/registry.py).

Importing this package imports every ops module, which fills the registry (and the built-in
custom_call targets: custom_call_targets, lapack).
"""

from . import (  # noqa: F401
    check, chlo, control_flow, custom_call, custom_call_targets, distributed, dynamic, elementwise,
    foreign, func, indexing, lapack, linalg, quantization, random, reduction, sdy, shape, tosa,
)
