"""Ops of other MLIR dialects that exporters leave in StableHLO modules, each defined beside
its kernel and verifier, with the semantics of its upstream dialect (docs/frameworks.md lists
which exporter emits which):

* :mod:`.arith`: `arith.constant`, integer/float arithmetic, comparisons, `select`, casts
  (`index_cast` for shapes of dynamic dimensions);
* :mod:`.tensor`: `tensor.dim`, `from_elements`, `extract`, `insert`, `splat`, `empty`,
  `reshape`, `cast` (and `builtin.unrealized_conversion_cast`, which has no semantics);
* :mod:`.math`: the elementwise functions of MLIR's math dialect;
* :mod:`.shape`: the `shape` dialect on extent tensors (`shape_of`, `broadcast`,
  `cstr_broadcastable`, `assuming`, ...), as torch-mlir emits it for dynamic shapes;
* :mod:`.bufferization`: `memref.cast`, `bufferization.to_tensor` / `to_buffer` (identities).

Run-time values: a tensor is a numpy array, a scalar (`index`, `i64`, `f32`) a numpy scalar, a
`!shape.shape` an int64 array of extents, a `!shape.witness` the constant :data:`shape.WITNESS`.
"""

from .._lazy import package_getattr

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {})
