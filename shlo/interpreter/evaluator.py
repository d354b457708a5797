"""Prepare once, run many (ARCHITECTURE.md principle 4; spec section "Execution").

:class:`CompiledBlock` turns a block into a list of prepared steps: each op is resolved to the
kernel its ops module registered, with attributes decoded and operand/result slots fixed in a
flat frame. Running is a tight loop over those steps. Values a nested region uses from enclosing
blocks are *captures*: the step owning the region binds them before calling its kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Callable, Sequence

from ..errors import ExecutionError, ShloError, locate, runtime_location
from ..ir import Block, Module, Operation, Region, Value, function_body
from ..ops.distributed.grid import Engine, Grid
from ..ops.quantization import dequantize_op_quantize
from ..registry import COMMUTATIVE, QUANTIZED_AWARE, TERMINATOR, lookup, names_with
from ..types import is_quantized
from . import fusion
from .emitter import Emitter
from .limits import check_shape_size, result_check
from .observing import Observer, failing_step
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
    # The largest value (bytes) an op may make: results whose shapes are known only at run
    # time are checked against it (interpreter/limits.py; None: no limit).
    max_bytes: int | None = None

    @property
    def process_id(self) -> int:
        return self.replica_id * self.num_partitions + self.partition_id

    def check_shape(self, op: Operation, shape: tuple[int, ...]) -> None:
        """Before making ``op``'s result of run-time ``shape`` (dynamic-shape ops taking it as
        an operand): refuse it when larger than ``max_bytes``."""
        if self.max_bytes is not None:
            check_shape_size(op, shape, self.max_bytes)

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


class PrepareContext:
    """Handed to every prepare function: compiles regions and functions, knows the process.

    With an ``observer`` (:class:`Observer`) the generated code reports every op to it.
    ``counted``: loops count their iterations (`for n in count()` instead of `while True`),
    so that a run stopped by its time limit can say which iteration each loop was in
    (observed runs always count). ``compiled`` False runs kernel by kernel: no region or
    callee emitted in place, no direct forms, no constants read from globals (the reference
    that tests compare the generated code with)."""

    def __init__(self, module: Module | None, process: ProcessContext | None = None,
                 observer: Observer | None = None, counted: bool = False,
                 compiled: bool = True) -> None:
        self.module = module
        self.process = process or ProcessContext()
        self.observer = observer
        self.counted = counted or observer is not None
        self.compiled = compiled
        self._functions: dict[str, CompiledBlock] = {}
        self._new_regions: list[CompiledBlock] = []
        self._nests = False  # the op being prepared compiled a region or looked up a function

    def for_process(self, replica_id: int, partition_id: int, num_replicas: int,
                    num_partitions: int) -> "PrepareContext":
        """A context preparing this context's module for process ``(replica_id,
        partition_id)`` of a ``num_replicas x num_partitions`` grid, with this process's custom
        calls, engine and memory limit (what an engine prepares each process of a grid
        with)."""
        process = ProcessContext(replica_id=replica_id, partition_id=partition_id,
                                 num_replicas=num_replicas, num_partitions=num_partitions,
                                 custom_calls=dict(self.process.custom_calls),
                                 engine=self.process.engine, max_bytes=self.process.max_bytes)
        return PrepareContext(self.module, process, self.observer, self.counted, self.compiled)

    def region(self, region: Region) -> "CompiledBlock":
        """Compile ``region`` (its entry block) into a callable ``fn(*args) -> list``."""
        self._nests = True
        cb = CompiledBlock(region.blocks[0], self)
        self._new_regions.append(cb)
        return cb

    def function(self, name: str) -> "CompiledBlock":
        """The compiled body of function ``@name`` (compiled once per context)."""
        self._nests = True
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
            return _unsupported(op)
        if QUANTIZED_AWARE not in d.traits and _has_quantized(op):
            return dequantize_op_quantize(op, self)
        return d.prepare(op, self)


def _prepare(ctx: PrepareContext, op: Operation) -> Callable[..., Sequence[Any]]:
    """``ctx.prepare(op)``, an error located at ``op``."""
    try:
        return ctx.prepare(op)
    except ShloError as e:
        raise locate(e, op)
    except Exception as e:  # a bad attribute found while preparing
        raise ExecutionError(f"'{op.name}' op: {e}", runtime_location(op)) from e


def evaluate_op(op: Operation, arrays: Sequence[Any],
                operand_types: Sequence[Any] | None = None,
                result_types: Sequence[Any] | None = None,
                properties: dict[str, Any] | None = None) -> list[Any]:
    """Run ``op``'s own kernel on ``arrays``, outside any program (``op`` has no regions):
    the folders' constant evaluation and `shlo diff`'s re-run of an op on another engine's
    operands. With ``operand_types``/``result_types``/``properties`` it runs a variant of the
    op (e.g. on f64, as upstream's folder computes). Numpy warnings are silenced."""
    import numpy as np

    types = list(operand_types) if operand_types is not None else [v.type for v in op.operands]
    tmp = Operation(op.name, [Value(t) for t in types],
                    list(result_types) if result_types is not None else
                    [v.type for v in op.results],
                    dict(op.properties if properties is None else properties),
                    dict(op.attributes), [], location=op.location)
    with np.errstate(all="ignore"):
        return list(PrepareContext(None).prepare(tmp)(*arrays))


def _has_quantized(op: Operation) -> bool:
    return any(is_quantized(v.type) for v in op.operands) or any(
        is_quantized(v.type) for v in op.results)


def _unsupported(op: Operation) -> Callable[..., Sequence[Any]]:
    def run(*args: Any) -> Sequence[Any]:
        raise ExecutionError(f"'{op.name}' op is not supported by the interpreter",
                             runtime_location(op))

    return run


class CompiledBlock:
    """A block turned into prepared steps; call it with the block's arguments.

    ``run`` (the generated function) is made on first use: a block inlined into the function
    of an enclosing block (a `while` body, a small callee) never needs its own.
    """

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
        steps: list[tuple[Any, ...]] = []
        self.ret: list[int] = []
        self.ops: list[Operation] = []
        self.regions: list[list[CompiledBlock]] = []
        self.ctx = ctx
        # observed: each step's op key, and whether it runs other ops (regions, callees)
        self.keys: list[int] = []
        self.nests: list[bool] = []
        observer = ctx.observer
        terminators = names_with(TERMINATOR)
        chains = {} if ctx.observer is not None else \
            {id(c.ops[-1]): c for c in fusion.plan(block)}  # element-wise chains (fusion.py)
        members = {id(op) for c in chains.values() for op in c.ops}
        for op in block.operations:
            if op.name in terminators and op is block.operations[-1]:
                self.ret = [self._slot(v) for v in op.operands]
                break
            if id(op) in members:
                chain = chains.get(id(op))
                if chain is not None:  # the chain runs where its last member was
                    kern = fusion.fused_kernel(chain, [_prepare(ctx, m) for m in chain.ops])
                    steps.append((kern, tuple(self._slot(v) for v in chain.inputs),
                                  tuple(self._new(v) for v in chain.outputs), ()))
                    self.ops.append(op)
                    self.regions.append([])
                continue
            saved, saved_nests = ctx._new_regions, ctx._nests
            ctx._new_regions, ctx._nests = [], False
            kern = _prepare(ctx, op)
            regions, ctx._new_regions = ctx._new_regions, saved
            if observer is not None:
                self.keys.append(observer.key(op))
                self.nests.append(ctx._nests)
            ctx._nests = saved_nests
            ins = tuple(self._slot(v) for v in op.operands)
            binds = tuple((r, tuple(self._slot(v) for v in r.capture_values))
                          for r in regions if r.capture_values)
            outs = tuple(self._new(v) for v in op.results)
            steps.append((kern, ins, outs, binds))
            self.ops.append(op)
            self.regions.append(regions)
        self.size = len(self.slots)
        self.steps = steps  # set last: a callee still being prepared (recursion) has none
        self.weight = len(steps) + sum(r.weight for rs in self.regions for r in rs)

    def __getattr__(self, name: str) -> Any:
        if name == "run":  # generated on first use (see the class docstring)
            run = self.__dict__["run"] = self._generate()
            return run
        raise AttributeError(name)

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
    def per_element(self) -> bool:
        """Whether the block must run one element at a time when a region op applies it to
        whole arrays (``_regions.call_body``): it holds control flow (an op with regions:
        `while`, `if`, `case`, ...), itself or in a function it calls; branching on a
        predicate needs one predicate, not an array of them."""
        found = self.__dict__.get("_per_element")
        if found is None:
            self.__dict__["_per_element"] = False  # (a recursive call: decided by the rest)
            found = self.__dict__["_per_element"] = any(
                inner.regions or (inner.name == "func.call" and self._branching_callee(inner))
                for op in self.block.operations for inner in op.walk())
        return found

    def _branching_callee(self, call: Operation) -> bool:
        """Whether the function ``call`` calls is :attr:`per_element` (or unknown here)."""
        callee = call.attr("callee")
        fn = self.ctx._functions.get(getattr(callee, "name", str(callee)))
        return fn is None or fn.per_element

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
        """This block as one Python function (see :class:`Emitter`)."""
        em = Emitter(self)
        names = {s: f"a{s}" for s in range(self.nargs)}
        for s in self.capture_slots:
            names[s] = f"a{s}"
        em.add(0, f"def run({', '.join(names[s] for s in range(self.nargs))}):")
        if self.capture_slots:
            em.add(1, "".join(f"{names[c]}, " for c in self.capture_slots) + "= _self.bound")
        if em.observed:  # the run's recorder, this call's iteration, the clock
            em.env["_begin"] = _beginning(self, self.ctx.observer, self.ctx.process)
            em.add(1, "_rec, _const, _open, _close, _n, _t = _begin()")
        rets = self.emit(em, names, 1, own=True)
        em.add(1, f"return [{', '.join(rets)}]")
        self.source = "\n".join(em.lines)  # what runs (for tests and for reading)
        return em.compile()["run"]

    def _dead_after(self, own: bool) -> dict[int, list[int]]:
        """The slots to delete after each step: those last used there, except the block's
        results, and (``own`` False: the block is inlined) its arguments and captures, which
        belong to the enclosing code."""
        key = "_dead_own" if own else "_dead_inlined"
        dead = self.__dict__.get(key)
        if dead is not None:
            return dead
        last_use: dict[int, int] = {}
        for k, (_, ins, _, binds) in enumerate(self.steps):
            for s in ins:
                last_use[s] = k
            for _, cs in binds:
                for s in cs:
                    last_use[s] = k
        keep = set(self.ret)
        if not own:
            keep.update(range(self.nargs))
            keep.update(self.capture_slots)
        dead = {}
        for s, k in last_use.items():
            if s not in keep:
                dead.setdefault(k, []).append(s)
        self.__dict__[key] = dead
        return dead

    def emit(self, em: "Emitter", names: dict[int, str], indent: int,
             own: bool = False) -> list[str]:
        """Emit this block's steps at ``indent``; ``names`` gives the variable of each argument
        and capture slot (and receives those of the results). Returns the variables of the
        block's results. Steps whose kernel carries an ``inline`` spec (while, if, case,
        func.call) emit their regions or callee in place when they can (:meth:`Emitter.inline`);
        a kernel with ``direct`` (one result) is called without its 1-tuple, a Python operator
        as that operator; a kernel with ``constant`` (no operands) is that value."""
        dead_after = self._dead_after(own)
        observed, compiled = em.observed, em.compiled
        for k, (kern, ins, outs, binds) in enumerate(self.steps):
            op = self.ops[k]
            if compiled and not ins and len(outs) == 1 and hasattr(kern, "constant") and \
                    getattr(kern, "inline", None) is None:
                # a constant is read where it is used, from the function's globals
                names[outs[0]] = em.obj(kern.constant, "c")
                em.constants.add(names[outs[0]])
                if observed:
                    em.add(indent, f"_t = _const({self.keys[k]}, {em.it}, _t, {names[outs[0]]})",
                           op)
                continue
            for s in outs:
                names[s] = em.fresh("v")
            args = [names[s] for s in ins]
            res = [names[s] for s in outs]
            nests = observed and self.nests[k]
            slot = em.open(indent, op, self.keys[k]) if nests else ""
            spec = getattr(kern, "inline", None) if compiled else None
            if spec is None or not em.inline(self, k, spec, args, res, names, indent):
                for r, cs in binds:
                    bound = [names[c] for c in cs]
                    em.add(indent, f"{em.obj(r, 'r')}.bound = [{', '.join(bound)}]", op, bound)
                em.step(indent, op, kern, args, res)
            if nests:
                em.close(indent, op, slot, args, res)
            elif observed:
                em.record(indent, op, self.keys[k], args, res)
            fits = result_check(op, self.ctx.process) if res else None
            if fits is not None:  # a result of dynamic shape: checked against max_bytes
                em.add(indent, f"{em.obj(fits, 'fits')}({', '.join(res)})", op, res)
            dead = [names[s] for s in dead_after.get(k, ()) if names[s] not in em.constants]
            if dead:
                em.add(indent, f"del {', '.join(dead)}", op)
        return [names[s] for s in self.ret]

    def region_names(self, k: int, region: "CompiledBlock", names: dict[int, str],
                     args: Sequence[str]) -> dict[int, str]:
        """The names of ``region``'s (of step ``k``) argument and capture slots, for
        inlining it: ``args`` for its arguments, this block's variables for its captures."""
        inner = {i: a for i, a in enumerate(args)}
        for v, s in zip(region.capture_values, region.capture_slots):
            inner[s] = names[self.slots[v]]
        return inner

    def __call__(self, *args: Any) -> list[Any]:
        """Run the block; an exception in any op (here or in nested regions and calls, which
        call each other's ``run`` directly) becomes an ExecutionError naming that op (and an
        observed run's recorder hears of it)."""
        try:
            return self.run(*args)
        except ShloError as e:
            op = self._failed(e)
            raise e if op is None else locate(e, op)
        except Exception as e:
            op = self._failed(e)
            if op is None:
                raise
            raise ExecutionError(f"'{op.name}' op: {type(e).__name__}: {e}",
                                 runtime_location(op)) from e

    def _failed(self, e: BaseException) -> Operation | None:
        """The innermost op whose step raised ``e``, told to an observed run's recorder."""
        step = failing_step(e)
        if step is None:
            return None
        ctx = step.block.ctx
        if ctx.observer is not None:
            ctx.observer.recorder(ctx.process).failed(ctx.observer.key(step.op),
                                                      step.iteration or 0, step.start)
        return step.op


def _beginning(block: CompiledBlock, observer: Observer,
               process: ProcessContext) -> Callable[[], tuple[Any, ...]]:
    """What an observed generated function calls first: the run's recorder's ``record``,
    ``constant``, ``open`` and ``close``, the iteration of its top-level ops and the clock."""
    clock = perf_counter

    def begin() -> tuple[Any, ...]:
        r = observer.recorder(process)
        return r.record, r.constant, r.open, r.close, r.enter(block), clock()

    return begin
