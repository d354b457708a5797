"""`shlo.run`: numpy in, numpy out (spec section "Execution").

Arguments are checked against the entry function's signature; results come back as numpy
arrays of the result types' dtypes (ml_dtypes arrays for bf16/f8/int4, storage values for
quantized tensors). Preparation is cached on the Module, so repeated calls reuse it.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ExecutionError
from ..ir import Module, function_type
from .arguments import check_argument  # (process_grid still imports it from here: see its home)
from ..ops.sdy.plan import sharded_plan
from .evaluator import CompiledBlock, Observer, PrepareContext, ProcessContext
from .limits import (TimeLimit, TimeLimitExceeded, check_grid_size, check_result_sizes,
                     default_max_bytes, recursion_error, time_limit_error)

__all__ = ["run", "prepare_entry", "as_module", "is_path"]


def prepare_entry(module: Module, entry: str = "main",
                  counted: bool = False) -> tuple[CompiledBlock, ProcessContext]:
    """Function ``entry`` of ``module`` compiled for one process, and that process's context
    (cached on the module: repeated runs reuse the preparation). ``counted``: its loops
    count their iterations (for runs with a time limit; see PrepareContext)."""
    cache = module.__dict__.setdefault("_prepared", {})
    hit = cache.get((entry, counted))
    if hit is None:
        ctx = PrepareContext(module, counted=counted)
        hit = cache[(entry, counted)] = (ctx.function(entry), ctx.process)
    return hit


def _to_numpy(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(v) for v in value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


# --- what a program may be given as ---------------------------------------------------------------


def is_path(program: Any) -> bool:
    """Whether ``program`` names a file: an ``os.PathLike``, or a str that names an existing
    file and holds no newline and no `{` (program text always has a `{`, a file name
    seldom)."""
    if isinstance(program, os.PathLike):
        return True
    return (isinstance(program, str) and "\n" not in program and "{" not in program
            and os.path.isfile(program))


def as_module(program: Any, filename: str | None = None) -> Module:
    """``program`` as a Module. Accepted: a Module; a path (:func:`is_path`); program text
    (str); MLIR bytecode or a jax.export file (bytes); and, when jax is in use, a
    ``jax.stages.Lowered`` (its ``as_text()``), an MLIR ``ir.Module`` of jaxlib (``str()``)
    and a ``jax.export.Exported`` (``mlir_module()``). jax is never imported here: its
    objects are recognised by their type's module, so jax stays optional."""
    if isinstance(program, Module):
        return program
    if is_path(program):
        from ..syntax.split import read_program, source_name

        path = os.fspath(program)
        return _parse(read_program(path), filename or source_name(path))
    if isinstance(program, (str, bytes, bytearray, memoryview)):
        if isinstance(program, str) and "{" not in program and program.strip() and \
                "\n" not in program.strip():
            raise FileNotFoundError(f"no such file: {program!r} (a str without '{{' and "
                                    f"newlines is read as a path)")
        return _parse(program, filename)
    text = _jax_text(program)
    if text is not None:
        return _parse(text, filename)
    raise TypeError(f"cannot read a program from {type(program).__module__}."
                    f"{type(program).__qualname__}: give a Module, a path, text, bytes, a "
                    f"jax.stages.Lowered, an MLIR ir.Module or a jax.export.Exported")


def _jax_text(obj: Any) -> str | None:
    """The StableHLO text of a JAX object, by its documented public route; None otherwise."""
    mod = type(obj).__module__ or ""
    if not mod.startswith(("jax", "jaxlib", "mlir")) or "jax" not in sys.modules \
            and "jaxlib" not in sys.modules:
        return None
    name = type(obj).__name__
    stages = sys.modules.get("jax.stages")
    if stages is not None and isinstance(obj, stages.Lowered):
        return obj.as_text()
    export = sys.modules.get("jax.export")
    if export is not None and isinstance(obj, export.Exported):
        return obj.mlir_module()
    if name == "Module" and ".mlir" in mod and hasattr(obj, "operation"):
        return str(obj)
    if name == "Lowered" and hasattr(obj, "as_text"):
        return obj.as_text()
    if name == "Exported" and hasattr(obj, "mlir_module"):
        return obj.mlir_module()
    return None


def jax_kept_arguments(program: Any, args: Sequence[Any]) -> list[Any]:
    """``args`` as the module of a JAX object takes them: jax drops the arguments a jitted
    function does not use from its lowering, so when ``args`` are all of the function's
    flattened arguments, keep those the module kept (``jax.export.Exported``:
    ``module_kept_var_idx``; ``jax.stages.Lowered``: its lowering's ``kept_var_idx``, the
    same list, not yet public)."""
    args = list(args)
    kept: Any = None
    n_all: int | None = None
    mod = type(program).__module__ or ""
    if not mod.startswith("jax"):
        return args
    if hasattr(program, "module_kept_var_idx") and hasattr(program, "in_avals"):
        kept, n_all = program.module_kept_var_idx, len(program.in_avals)
    elif hasattr(program, "_lowering") and hasattr(program, "in_avals"):
        compile_args = getattr(program._lowering, "compile_args", None)
        if isinstance(compile_args, dict):
            kept = compile_args.get("kept_var_idx")
        leaves = sys.modules["jax"].tree_util.tree_leaves(program.in_avals) \
            if "jax" in sys.modules else None
        n_all = len(leaves) if leaves is not None else None
    if kept is None or n_all is None or len(args) != n_all or len(kept) == n_all:
        return args
    return [args[i] for i in sorted(kept)]


def _parse(program: str | bytes | bytearray | memoryview, filename: str | None) -> Module:
    if isinstance(program, str):
        from ..syntax.parser import parse

        return parse(program, filename)
    from ..bytecode import load_bytes

    return load_bytes(bytes(program), filename)


def run(module: Module | str, *args: Any, entry: str = "main", verify: bool = True,
        infeed: Sequence[Any] | None = None,
        custom_calls: dict[str, Callable[..., Any]] | None = None,
        replicas: int | None = None, partitions: int | None = None,
        outfeed: list[Any] | None = None, observer: Observer | None = None,
        max_bytes: int | None | str = "physical", time_limit: float | None = None,
        **grid_options: Any) -> list[Any]:
    """Run function ``entry`` of ``module`` on ``args``; returns the list of its results.

    ``module`` may be anything :func:`as_module` reads (a Module, a path, text, bytes, a JAX
    object). ``verify`` checks the module first.
    ``infeed`` is the list of values `infeed` ops take in order (each a tuple/list of arrays);
    values that `outfeed` ops emit are appended to ``outfeed`` when given. ``custom_calls`` maps
    a custom_call target name to a Python callable taking and returning numpy arrays
    (``fn(*operands)``; a function decorated with ``@shlo.custom_call_target`` is called
    ``fn(call, *operands)`` with the op's read-only view): these take precedence over registered
    and built-in targets for this run (docs/custom_calls.md).
    ``replicas``/``partitions`` run on a process grid (see
    :func:`shlo.interpreter.process_grid.run_grid` for the per-process arguments, feeds and
    results, and the grid options ``programs``, ``process_args`` and ``timeout``): results
    then come back as a list indexed by process id of each process's list of results.
    """
    if not isinstance(module, (Module, str, bytes)):
        args = tuple(jax_kept_arguments(module, args))
    module = as_module(module)
    if verify:
        _verify_once(module)
    limit = default_max_bytes() if max_bytes == "physical" else max_bytes
    check_result_sizes(module, limit)
    try:
        with TimeLimit(time_limit):
            return _run(module, args, entry, infeed, custom_calls, replicas, partitions,
                        outfeed, observer, grid_options, limit, time_limit is not None)
    except ExecutionError as e:
        if isinstance(e.__cause__, RecursionError):
            raise recursion_error(module, entry) from None
        if isinstance(e.__cause__, TimeLimitExceeded):
            raise time_limit_error(e.__cause__, time_limit or 0) from None
        raise
    except RecursionError:
        raise recursion_error(module, entry) from None
    except TimeLimitExceeded as e:
        raise time_limit_error(e, time_limit or 0) from None


def _run(module: Module, args: Sequence[Any], entry: str, infeed: Sequence[Any] | None,
         custom_calls: dict[str, Callable[..., Any]] | None, replicas: int | None,
         partitions: int | None, outfeed: list[Any] | None, observer: Observer | None,
         grid_options: dict[str, Any], max_bytes: int | None = None,
         counted: bool = False) -> list[Any]:
    num_replicas, num_partitions = _grid_size(module, replicas, partitions)
    explicit = replicas is not None or partitions is not None or "programs" in grid_options
    # --- sharded programs (docs/sharding.md): annotations say where values live, not how
    # many copies to run. Without a manual region the program runs once; with one, on one
    # process per device, returning the (identical) global results of process 0.
    per_process_args = any(type(a).__name__ == "PerProcess" for a in args)
    plan = None if explicit or grid_options or per_process_args else sharded_plan(module)
    if plan is not None and not plan.manual:
        num_replicas = num_partitions = 1
    elif plan is not None:
        from .process_grid import run_grid

        feeds: list[Any] = []
        per_process = run_grid(module, *args, entry=entry, replicas=plan.replicas,
                               partitions=plan.partitions, infeed=infeed, outfeed=feeds,
                               custom_calls=custom_calls, max_bytes=max_bytes,
                               **({"observer": observer} if observer is not None else {}))
        if outfeed is not None:
            outfeed.extend(feeds[0])
        return per_process[0]
    if explicit or grid_options or num_replicas * num_partitions != 1:
        if grid_options.get("engine") is None:
            check_grid_size(num_replicas, num_partitions)
        # Results per process (a list by process id) when a grid was asked for or the
        # module declares one; a 1x1 run that only passes grid options stays flat.
        from .process_grid import run_grid

        feeds: list[Any] = []
        if observer is not None:
            grid_options["observer"] = observer
        per_process = run_grid(module, *args, entry=entry, replicas=replicas,
                               partitions=partitions, infeed=infeed, outfeed=feeds,
                               custom_calls=custom_calls, max_bytes=max_bytes, **grid_options)
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
        fn, process = prepare_entry(module, entry, counted)
    else:  # the last observer's preparation is kept (it holds the observer: ids stay unique)
        observed = module.__dict__.setdefault("_prepared_observed", {})
        hit = observed.get(entry)
        if hit is None or hit[2] is not observer:
            ctx = PrepareContext(module, observer=observer)
            hit = observed[entry] = (ctx.function(entry), ctx.process, observer)
        fn, process = hit[0], hit[1]
    process.start_run(infeed, custom_calls)
    process.max_bytes = max_bytes
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
