"""Prepare once, run many (ARCHITECTURE.md principle 4; spec section "Execution").

:class:`CompiledBlock` turns a block into a list of prepared steps: each op is resolved to the
kernel its ops module registered, with attributes decoded and operand/result slots fixed in a
flat frame. Running is a tight loop over those steps. Values a nested region uses from enclosing
blocks are *captures*: the step owning the region binds them before calling its kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Callable, Protocol, Sequence

from ..errors import ExecutionError, ShloError, locate, runtime_location
from ..ir import Block, Module, Operation, Region, Value, function_body
from ..ops.distributed.grid import Engine, Grid
from ..ops.quantization import dequantize_op_quantize
from ..registry import COMMUTATIVE, QUANTIZED_AWARE, TERMINATOR, lookup, names_with
from ..types import is_quantized
from .threads import THREADS

__all__ = ["PrepareContext", "ProcessContext", "CompiledBlock", "Observer"]


@dataclass
class ProcessContext:
    """What a running process knows about itself (spec "Process grid", "Feeds").

    One is created per process; kernels of replica_id, partition_id, infeed, outfeed and the
    collectives read it at run time (the grid and feeds may change between runs). The
    distribution ops reach the other processes only through ``grid`` and start grids only
    through ``engine`` (the interfaces of :mod:`shlo.ops.distributed.grid`).
    """

    replica_id: int = 0
    partition_id: int = 0
    num_replicas: int = 1
    num_partitions: int = 1
    grid: Grid | None = None  # the other processes of the run (None: this process runs alone)
    engine: Engine = THREADS  # starts grids (`interpreter.run_parallel`, shlo.run(replicas=))
    infeed: list[Any] = field(default_factory=list)
    outfeed: list[Any] = field(default_factory=list)
    custom_calls: dict[str, Callable[..., Any]] = field(default_factory=dict)
    # Failed check ops (shlo.ops.check) append a message here; running goes on.
    check_failures: list[Any] = field(default_factory=list)
    # Values recorded by `interpreter.probe`, by probe_id, in order (for expect_serialized_eq).
    probes: dict[str, list[Any]] = field(default_factory=dict)
    # send/recv queues by channel id of a process run without a grid (one process).
    channels: dict[int, Any] = field(default_factory=dict)

    @property
    def process_id(self) -> int:
        return self.replica_id * self.num_partitions + self.partition_id

    def start_run(self, infeed: Sequence[Any] | None = None,
                  custom_calls: dict[str, Callable[..., Any]] | None = None) -> None:
        """Forget what an earlier run left (feeds, check failures, probes, channels, the hidden
        `rng` counters) so that a prepared function reused for a new run behaves as a fresh
        one: the same program on the same inputs gives the same results."""
        self.infeed = list(infeed or [])
        self.outfeed = []
        self.custom_calls = dict(custom_calls or {})
        self.check_failures.clear()  # in place: check kernels hold this list
        self.probes.clear()  # in place: probe kernels hold this dict
        self.channels = {}
        self.__dict__.pop("rng_counters", None)


class Observer(Protocol):
    """Watches a run op by op (the hook of :mod:`shlo.debug`: trace, profile, diff).

    A context prepared with an observer asks ``wants(op)`` once per op while preparing; the
    kernel of each wanted op is wrapped to call ``enter`` before it runs and ``exit`` after,
    with its operands, results and the seconds it took (nested ops of its regions and callees
    run in between). Ops not wanted, and every run prepared without an observer, run exactly
    as before: observing costs nothing when it is off.
    """

    def wants(self, op: Operation) -> bool: ...

    def enter(self, op: Operation, process: ProcessContext) -> None: ...

    def exit(self, op: Operation, process: ProcessContext, operands: tuple[Any, ...],
             results: Sequence[Any], seconds: float) -> None: ...


def _observed(op: Operation, kern: Callable[..., Sequence[Any]], observer: Observer,
              process: ProcessContext) -> Callable[..., Sequence[Any]]:
    enter, exit_, clock = observer.enter, observer.exit, perf_counter

    def run(*args: Any) -> Sequence[Any]:
        enter(op, process)
        t0 = clock()
        results = kern(*args)
        exit_(op, process, args, results, clock() - t0)
        return results

    return run


class PrepareContext:
    """Handed to every prepare function: compiles regions and functions, knows the process.
    With an ``observer`` (:class:`Observer`), the kernels of the ops it wants report to it."""

    def __init__(self, module: Module | None, process: ProcessContext | None = None,
                 observer: Observer | None = None) -> None:
        self.module = module
        self.process = process or ProcessContext()
        self.observer = observer
        self._functions: dict[str, CompiledBlock] = {}
        self._new_regions: list[CompiledBlock] = []

    def for_process(self, replica_id: int, partition_id: int, num_replicas: int,
                    num_partitions: int) -> "PrepareContext":
        """A context preparing this context's module for process ``(replica_id,
        partition_id)`` of a ``num_replicas x num_partitions`` grid, with this process's custom
        calls and engine (what an engine prepares each process of a grid with)."""
        process = ProcessContext(replica_id=replica_id, partition_id=partition_id,
                                 num_replicas=num_replicas, num_partitions=num_partitions,
                                 custom_calls=dict(self.process.custom_calls),
                                 engine=self.process.engine)
        return PrepareContext(self.module, process, self.observer)

    def region(self, region: Region) -> "CompiledBlock":
        """Compile ``region`` (its entry block) into a callable ``fn(*args) -> list``."""
        cb = CompiledBlock(region.blocks[0], self)
        self._new_regions.append(cb)
        return cb

    def function(self, name: str) -> "CompiledBlock":
        """The compiled body of function ``@name`` (compiled once per context)."""
        cb = self._functions.get(name)
        if cb is None:
            if self.module is None:
                raise ExecutionError(f"no module to look up function @{name} in")
            func = self.module.functions.get(name)
            if func is None:
                raise ExecutionError(f"function @{name} is not defined")
            cb = self._functions[name] = CompiledBlock.__new__(CompiledBlock)
            cb._init(function_body(func), self)  # cache first: allows recursion
        return cb

    def prepare(self, op: Operation) -> Callable[..., Sequence[Any]]:
        """Resolve ``op`` to its run-time kernel."""
        d = lookup(op.name)
        if d is None or d.prepare is None:
            kern = _unsupported(op)
        elif QUANTIZED_AWARE not in d.traits and _has_quantized(op):
            kern = dequantize_op_quantize(op, self)
        else:
            kern = d.prepare(op, self)
        if self.observer is not None and self.observer.wants(op):
            return _observed(op, kern, self.observer, self.process)
        return kern


def _has_quantized(op: Operation) -> bool:
    return any(is_quantized(v.type) for v in op.operands) or any(
        is_quantized(v.type) for v in op.results)


def _unsupported(op: Operation) -> Callable[..., Sequence[Any]]:
    def run(*args: Any) -> Sequence[Any]:
        raise ExecutionError(f"'{op.name}' op is not supported by the interpreter",
                             runtime_location(op))

    return run


class CompiledBlock:
    """A block turned into prepared steps; call it with the block's arguments."""

    def __init__(self, block: Block, ctx: PrepareContext) -> None:
        self._init(block, ctx)

    def _init(self, block: Block, ctx: PrepareContext) -> None:
        self.block = block
        self.slots: dict[Value, int] = {}
        self.capture_values: list[Value] = []
        self.capture_slots: list[int] = []
        self.bound: list[Any] = []
        for v in block.arguments:
            self.slots[v] = len(self.slots)
        self.nargs = len(block.arguments)
        self.steps: list[tuple[Any, ...]] = []
        self.ret: list[int] = []
        self.ops: list[Operation] = []
        terminators = names_with(TERMINATOR)
        for op in block.operations:
            if op.name in terminators and op is block.operations[-1]:
                self.ret = [self._slot(v) for v in op.operands]
                break
            saved = ctx._new_regions
            ctx._new_regions = []
            try:
                kern = ctx.prepare(op)
            except ShloError as e:
                raise locate(e, op)
            except Exception as e:  # a bad attribute found while preparing
                raise ExecutionError(f"'{op.name}' op: {e}", runtime_location(op)) from e
            regions, ctx._new_regions = ctx._new_regions, saved
            ins = tuple(self._slot(v) for v in op.operands)
            binds = tuple((r, tuple(self._slot(v) for v in r.capture_values))
                          for r in regions if r.capture_values)
            outs = tuple(self._new(v) for v in op.results)
            self.steps.append((kern, ins, outs, binds))
            self.ops.append(op)
        self.size = len(self.slots)
        self.run: Callable[..., list[Any]] = self._generate()

    def _new(self, v: Value) -> int:
        s = self.slots[v] = len(self.slots)
        return s

    def _slot(self, v: Value) -> int:
        s = self.slots.get(v)
        if s is None:  # defined in an enclosing block: a capture
            s = self._new(v)
            self.capture_values.append(v)
            self.capture_slots.append(s)
        return s

    @property
    def single_op(self) -> str | None:
        """The op name when the body is `return op(arg0, arg1)` (or `op(arg1, arg0)`).

        Lets reductions recognise common bodies (add, max, ...) and call numpy directly.
        """
        b = self.block
        if len(b.operations) != 2 or len(b.arguments) != 2:
            return None
        op, ret = b.operations
        if len(op.operands) != 2 or len(ret.operands) != 1 or ret.operands[0] is not op.results[0]:
            return None
        if {id(op.operands[0]), id(op.operands[1])} != {id(b.arguments[0]), id(b.arguments[1])}:
            return None
        if op.operands[0] is not b.arguments[0] and op.name not in names_with(COMMUTATIVE):
            return None
        return op.name

    def _generate(self) -> Callable[..., list[Any]]:
        """Python source for this block: one line per step, values in local variables.

        Locals are much faster than a frame list, each value is deleted after its last use (so
        a long function holds only its live tensors), and the line of a failing step tells
        which op failed.
        """
        env: dict[str, Any] = {"_self": self}
        nargs = self.nargs
        last_use: dict[int, int] = {}
        for k, (_, ins, _, binds) in enumerate(self.steps):
            for s in ins:
                last_use[s] = k
            for _, cs in binds:
                for s in cs:
                    last_use[s] = k
        keep = set(self.ret)
        dead_after: dict[int, list[int]] = {}
        for s, k in last_use.items():
            if s not in keep:
                dead_after.setdefault(k, []).append(s)
        args = ", ".join(f"v{i}" for i in range(nargs))
        lines = [f"def run({args}):"]
        if self.capture_slots:
            lines.append("    " + "".join(f"v{c}, " for c in self.capture_slots) + "= _self.bound")
        self._line_step: dict[int, int] = {}
        for k, (kern, ins, outs, binds) in enumerate(self.steps):
            env[f"k{k}"] = kern
            for j, (r, cs) in enumerate(binds):
                env[f"r{k}_{j}"] = r
                lines.append(f"    r{k}_{j}.bound = [{', '.join(f'v{c}' for c in cs)}]")
            call = f"k{k}({', '.join(f'v{x}' for x in ins)})"
            if len(outs) == 1:
                lines.append(f"    v{outs[0]} = {call}[0]")
            elif outs:
                lines.append(f"    {''.join(f'v{o}, ' for o in outs)}= {call}")
            else:
                lines.append(f"    {call}")
            self._line_step[len(lines)] = k
            for j, (r, cs) in enumerate(binds):
                self._line_step[len(lines) - 1 - j] = k
            dead = [f"v{x}" for x in dead_after.get(k, ())]
            if dead:
                lines.append(f"    del {', '.join(dead)}")
        lines.append(f"    return [{', '.join(f'v{x}' for x in self.ret)}]")
        code = compile("\n".join(lines), _GENERATED, "exec")
        exec(code, env)
        return env["run"]

    def __call__(self, *args: Any) -> list[Any]:
        """Run the block; an exception in any op (here or in nested regions and calls, which
        call each other's ``run`` directly) becomes an ExecutionError naming that op."""
        try:
            return self.run(*args)
        except ShloError as e:
            op = self._failing_op(e)
            raise e if op is None else locate(e, op)
        except Exception as e:
            op = self._failing_op(e)
            if op is None:
                raise
            raise ExecutionError(f"'{op.name}' op: {type(e).__name__}: {e}",
                                 runtime_location(op)) from e

    @staticmethod
    def _failing_op(e: BaseException) -> Operation | None:
        """The innermost op whose step raised ``e`` (from the generated code's line numbers in
        the traceback)."""
        tb = e.__traceback__
        found: tuple[CompiledBlock, int] | None = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == _GENERATED:
                found = (tb.tb_frame.f_globals["_self"], tb.tb_lineno)
            tb = tb.tb_next
        if found is None:
            return None
        cb, line = found
        k = cb._line_step.get(line)
        return cb.ops[k] if k is not None else None


_GENERATED = "<shlo prepared block>"

