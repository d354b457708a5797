"""The interpreter: prepared evaluation of functions (evaluator.py) and the process grid."""
