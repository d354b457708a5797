"""The opset, grouped as the spec groups it; each op is defined once (see shlo/registry.py).

Importing this package imports every ops module, which fills the registry.
"""

from . import (  # noqa: F401
    check, chlo, control_flow, distributed, dynamic, elementwise, indexing, linalg, quantization,
    random, reduction, shape,
)
from . import _legacy  # noqa: F401  (transitional, last: fills what the modules do not define)
