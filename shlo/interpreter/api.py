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
from .arguments import check_argument  # (process_grid still imports it from here: see its home)
from .evaluator import CompiledBlock, Observer, PrepareContext, ProcessContext

__all__ = ["run", "prepare_entry"]


def prepare_entry(module: Module, entry: str = "main") -> tuple[CompiledBlock, ProcessContext]:
    """Function ``entry`` of ``module`` compiled for one process, and that process's context
    (cached on the module: repeated runs reuse the preparation)."""
    cache = module.__dict__.setdefault("_prepared", {})
    hit = cache.get(entry)
    if hit is None:
        ctx = PrepareContext(module)
        hit = cache[entry] = (ctx.function(entry), ctx.process)
    return hit


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
        outfeed: list[Any] | None = None, observer: Observer | None = None,
        **grid_options: Any) -> list[Any]:
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
        if observer is not None:
            grid_options["observer"] = observer
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
    if observer is None:
        fn, process = prepare_entry(module, entry)
    else:  # the last observer's preparation is kept (it holds the observer: ids stay unique)
        observed = module.__dict__.setdefault("_prepared_observed", {})
        hit = observed.get(entry)
        if hit is None or hit[2] is not observer:
            ctx = PrepareContext(module, observer=observer)
            hit = observed[entry] = (ctx.function(entry), ctx.process, observer)
        fn, process = hit[0], hit[1]
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
    from ..verifier import verify as _verify

    _verify(module)
    module.__dict__["_verified"] = True
