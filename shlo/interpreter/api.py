"""`shlo.run`: numpy in, numpy out (spec section "Execution").

Arguments are checked against the entry function's signature; results come back as numpy
arrays of the result types' dtypes (ml_dtypes arrays for bf16/f8/int4, storage values for
quantized tensors). Preparation is cached on the Module, so repeated calls reuse it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ExecutionError
from ..ir import Module, function_type
from ..types import TOKEN
from ..types import TensorType, TokenType, TupleType, Type
from .evaluator import CompiledBlock, PrepareContext, ProcessContext

__all__ = ["run", "prepare_entry", "check_argument"]


def prepare_entry(module: Module, entry: str = "main") -> tuple[CompiledBlock, ProcessContext]:
    """Function ``entry`` of ``module`` compiled for one process, and that process's context
    (cached on the module: repeated runs reuse the preparation)."""
    cache = module.__dict__.setdefault("_prepared", {})
    hit = cache.get(entry)
    if hit is None:
        ctx = PrepareContext(module)
        hit = cache[entry] = (ctx.function(entry), ctx.process)
    return hit


def check_argument(value: Any, type: Type, index: int, entry: str) -> Any:
    """Convert ``value`` to the run-time value of ``type`` or raise ExecutionError."""
    if isinstance(type, TokenType):
        return TOKEN
    if isinstance(type, TupleType):
        if not isinstance(value, (tuple, list)) or len(value) != len(type.types):
            raise ExecutionError(f"@{entry} argument {index}: expected a tuple of "
                                 f"{len(type.types)} values for {type}")
        return tuple(check_argument(v, t, index, entry) for v, t in zip(value, type.types))
    if not isinstance(type, TensorType):
        raise ExecutionError(f"@{entry} argument {index}: unsupported type {type}")
    arr = np.asarray(value)
    dtype = type.element_type.dtype
    if arr.dtype != dtype:
        if arr.dtype.kind in "biuf" and np.can_cast(arr.dtype, dtype, "same_kind") and \
                not isinstance(value, np.ndarray):
            arr = arr.astype(dtype)  # Python scalars and lists take the declared type
        else:
            raise ExecutionError(f"@{entry} argument {index}: expected dtype {dtype} for "
                                 f"{type}, got {arr.dtype}")
    if type.shape is not None:
        ok = len(arr.shape) == len(type.shape) and all(
            d is None or d == s for d, s in zip(type.shape, arr.shape))
        if not ok:
            raise ExecutionError(f"@{entry} argument {index}: expected shape "
                                 f"{_shape_str(type.shape)} for {type}, got "
                                 f"{_shape_str(arr.shape)}")
    return arr


def _shape_str(shape: Sequence[int | None]) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


def _to_numpy(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


def run(module: Module | str, *args: Any, entry: str = "main", verify: bool = True,
        infeed: Sequence[Any] | None = None,
        custom_calls: dict[str, Callable[..., Any]] | None = None,
        replicas: int | None = None, partitions: int | None = None,
        outfeed: list[Any] | None = None, **grid_options: Any) -> list[Any]:
    """Run function ``entry`` of ``module`` on ``args``; returns the list of its results.

    ``module`` may be a Module or program text. ``verify`` checks the module first.
    ``infeed`` is the list of values `infeed` ops take in order (each a tuple/list of arrays);
    values that `outfeed` ops emit are appended to ``outfeed`` when given. ``custom_calls`` maps
    a custom_call target name to a Python callable taking and returning numpy arrays.
    ``replicas``/``partitions`` run on a process grid (see
    :func:`shlo.interpreter.process_grid.run_grid` for the per-process arguments, feeds and
    results, and the grid options ``programs``, ``process_args`` and ``timeout``): results
    then come back as a list indexed by process id of each process's list of results.
    """
    if isinstance(module, str):
        from ..syntax.parser import parse

        module = parse(module)
    if verify:
        _verify_once(module)
    num_replicas, num_partitions = _grid_size(module, replicas, partitions)
    explicit = replicas is not None or partitions is not None or "programs" in grid_options
    if explicit or grid_options or num_replicas * num_partitions != 1:
        # Results per process (a list by process id) when a grid was asked for or the
        # module declares one; a 1x1 run that only passes grid options stays flat.
        from .process_grid import run_grid

        feeds: list[Any] = []
        per_process = run_grid(module, *args, entry=entry, replicas=replicas,
                               partitions=partitions, infeed=infeed, outfeed=feeds,
                               custom_calls=custom_calls, **grid_options)
        flat = not explicit and len(per_process) == 1
        if outfeed is not None:
            outfeed.extend(feeds[0] if flat else feeds)
        return per_process[0] if flat else per_process
    func = module.functions.get(entry)
    if func is None:
        raise ExecutionError(f"no function @{entry} in the module")
    ftype = function_type(func)
    if len(args) != len(ftype.inputs):
        raise ExecutionError(f"@{entry} takes {len(ftype.inputs)} arguments, got {len(args)}",
                             func.location)
    values = [check_argument(a, t, i, entry) for i, (a, t) in enumerate(zip(args, ftype.inputs))]
    fn, process = prepare_entry(module, entry)
    process.start_run(infeed, custom_calls)
    with np.errstate(all="ignore"):  # NaN/inf/overflow are values here, not warnings
        results = fn(*values)
    if outfeed is not None:
        outfeed.extend(process.outfeed)
    if process.check_failures:
        raise ExecutionError(f"{len(process.check_failures)} check(s) failed:\n"
                             + "\n".join(process.check_failures), func.location)
    return [_to_numpy(r) for r in results]


def _grid_size(module: Module, replicas: int | None, partitions: int | None) -> tuple[int, int]:
    def attr_int(name: str) -> int:
        a = module.op.attr(name)
        return int(a.value) if a is not None else 1

    r = replicas if replicas is not None else attr_int("mhlo.num_replicas")
    p = partitions if partitions is not None else attr_int("mhlo.num_partitions")
    return r, p


def _verify_once(module: Module) -> None:
    if module.__dict__.get("_verified"):
        return
    try:
        from ..verifier import verify as _verify
    except ImportError:  # the verifier is optional until it exists
        return
    _verify(module)
    module.__dict__["_verified"] = True
