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

from . import batch_norm, convolution, decompositions, dot, fft  # noqa: F401  (fill the registry)
from .convolution import conv_dimension_numbers
from .dot import DotDimensionNumbers, dot_dimension_numbers
from .matmul import DotAlgorithm, Matmul, blas_matmul

__all__ = ["Matmul", "DotAlgorithm", "blas_matmul", "conv_dimension_numbers",
           "dot_dimension_numbers", "DotDimensionNumbers"]
