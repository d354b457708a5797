"""Linear-algebra ops, a module per structured op (spec sections of the same names):

* ``dot.py``: dot_general, and the forms of it `dot`, `einsum`, `unary_einsum`;
* ``convolution.py``: convolution, dynamic_conv;
* ``fft.py``: fft;
* ``decompositions.py``: cholesky, triangular_solve;
* ``batch_norm.py``: batch_norm_grad, batch_norm_inference, batch_norm_training;

and what they share, knowing no op: ``matmul.py`` (the batched matrix product every contraction
reduces to, with the numeric choices of docs/semantics/linalg.md) and ``contraction_checks.py``
(the constraints the contractions share).

The kernels never loop over elements: windows of `convolution` are strided views, `fft` calls
``scipy.fft``, `triangular_solve` loops over matrix rows (vectorized over batch and right-hand
sides).
"""

from .._lazy import package_getattr

__all__ = ["Matmul", "DotAlgorithm", "blas_matmul", "conv_dimension_numbers",
           "dot_dimension_numbers", "DotDimensionNumbers"]

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {
    "conv_dimension_numbers": ".convolution", "DotDimensionNumbers": ".dot",
    "dot_dimension_numbers": ".dot", "DotAlgorithm": ".matmul", "Matmul": ".matmul",
    "blas_matmul": ".matmul"})
