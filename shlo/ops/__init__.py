"""The opset, grouped as the spec groups it; each op is defined once (see shlo/registry.py).

Importing this package imports every ops module, which fills the registry.
"""

from . import (  # noqa: F401
    check, chlo, control_flow, custom_call, distributed, dynamic, elementwise, foreign, func,
    indexing, linalg, quantization, random, reduction, sdy, shape, tosa,
)
