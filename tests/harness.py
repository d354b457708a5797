"""The op-test harness: one way to run an op or a program in a test and get numpy results.

* :func:`run_op` / :func:`run1` build one op by hand (shlo.ir) in a function ``@main`` whose
  arguments are its operands, prepare it with the evaluator (so kernel tests do not depend on
  the parser), optionally verify the function first, run the kernel on numpy operands and
  check every result's dtype and static shape against its result type.
  :func:`prepare_op` stops before running and returns the kernel (to run it several times or
  to see it fail at prepare time).
* :func:`run_text` parses a program and runs it with :func:`shlo.run`.

Operand types (``operand_types``), as MLIR writes an op's signature ``(operand types) ->
result types``:

* ``None``: each operand's own type (:func:`type_of`: its dtype's element type, its shape);
* an element type name (``"i32"``) for every operand, or a list of names and types, one per
  operand. An operand given by a name is converted to that element type's dtype and typed
  with the shape of all operands broadcast together (the element-wise convention: ``run1(
  "stablehlo.add", [[1, 2], [3, 4]], "i32")``); a Type is used as it is.

Result types (``results``): a Type, an element type name (a tensor of the broadcast operand
shape) or a list of those; ``None`` means the type of the last operand (element-wise ops).

The tests import it as ``from harness import run1, run_op, ...`` (``tests/`` is on ``sys.path``:
tests/conftest.py lives there).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence, Union

import numpy as np
import pytest

import shlo
from shlo.attributes import StringAttr, TypeAttr
from shlo.errors import VerificationError
from shlo.interpreter.evaluator import PrepareContext
from shlo.ir import Block, Module, Operation, Region
from shlo.types import FunctionType, TensorType, Type, element_type_for_dtype, tensor

__all__ = ["type_of", "build_op", "body", "verify_op", "prepare_op", "run_op", "run1",
           "run_text", "to_numpy"]

TypeLike = Union[Type, str]
"""A Type, or an element type name (``"f32"``, ``"complex<f64>"``) for a tensor of the
broadcast operand shape."""


def type_of(value: Any, dynamic: bool = False) -> TensorType:
    """The tensor type of a numpy array: its dtype's element type (signless integers, `i1` for
    bool) and its shape; with ``dynamic`` every dimension is `?`."""
    a = np.asarray(value)
    shape = (None,) * a.ndim if dynamic else tuple(a.shape)
    return TensorType(shape, element_type_for_dtype(a.dtype))


def _types(given: TypeLike | Sequence[TypeLike] | None, n: int) -> list[TypeLike] | None:
    if given is None:
        return None
    if isinstance(given, (str, Type)):
        return [given] * n
    given = list(given)
    assert len(given) == n, f"{len(given)} operand types for {n} operands"
    return given


def _resolve(t: TypeLike, shape: tuple[int, ...]) -> Type:
    return tensor(shape, t) if isinstance(t, str) else t


def _result_types(results: TypeLike | Sequence[TypeLike] | None, operand_types: list[Type],
                  shape: tuple[int, ...]) -> list[Type]:
    if results is None:
        assert operand_types, "an op without operands needs its result types"
        return [operand_types[-1]]
    if isinstance(results, (str, Type)):
        results = [results]
    return [_resolve(t, shape) for t in results]


def build_op(name: str, operand_types: Sequence[TypeLike], results: TypeLike |
             Sequence[TypeLike] | None = None, shape: tuple[int, ...] = (), *,
             regions: list[Region] | None = None, **properties: Any) -> Operation:
    """Op ``name`` over the arguments of a function ``@main`` that returns its results (the
    function is in a module: ``op.parent.parent.parent`` is the func.func op). Element type
    names in the types stand for tensors of ``shape``."""
    ins = [_resolve(t, shape) for t in operand_types]
    outs = _result_types(results, ins, shape)
    body = Block(ins)
    op = body.append(Operation(name, list(body.arguments), outs, properties=properties,
                               regions=regions))
    body.append(Operation("func.return", list(op.results), []))
    func = Operation("func.func", properties={
        "sym_name": StringAttr("main"), "function_type": TypeAttr(FunctionType(ins, outs))},
        regions=[Region([body])])
    Operation("builtin.module", regions=[Region([Block(operations=[func])])])
    return op


def body(name: str, element_type: str, arity: int = 2) -> Region:
    """A region applying op ``name`` to its ``arity`` scalar arguments of ``element_type`` and
    returning the result: the body of a reduction (`add`, `maximum`, ...) or of `map`."""
    t = tensor((), element_type)
    block = Block([t] * arity)
    op = block.append(Operation(name, list(block.arguments), [t]))
    block.append(Operation("stablehlo.return", list(op.results), []))
    return Region([block])


def _module_of(op: Operation) -> Module:
    func = op.parent.parent.parent
    return Module(func.parent.parent.parent)


def verify_op(op: Operation) -> None:
    """Run the verifier over the function that holds ``op`` (built by :func:`build_op`);
    raises VerificationError listing every violation."""
    from shlo.verifier import collect

    diags = collect(_module_of(op))
    if diags:
        raise VerificationError(diags[0].message, diagnostics=diags)


def prepare_op(name: str, operand_types: Sequence[TypeLike], results: TypeLike |
               Sequence[TypeLike] | None = None, shape: tuple[int, ...] = (), *,
               regions: list[Region] | None = None, verify: bool = False,
               **properties: Any) -> Callable[..., Sequence[Any]]:
    """The kernel of op ``name`` (see :func:`build_op`), verified first with ``verify``."""
    op = build_op(name, operand_types, results, shape=shape, regions=regions, **properties)
    if verify:
        verify_op(op)
    return PrepareContext(None).prepare(op)


def to_numpy(value: Any) -> Any:
    """A run-time value as the API returns it: numpy scalars become 0-d arrays; tuples, tokens
    and arrays stay what they are."""
    if isinstance(value, tuple):
        return tuple(to_numpy(v) for v in value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    return value


def _check_result(name: str, i: int, value: Any, t: Type) -> None:
    # pytest.fail, not assert: a test expecting the op to raise (`pytest.raises(Exception)`)
    # must not pass because a result had the wrong type.
    if not isinstance(t, TensorType) or not isinstance(value, np.ndarray):
        return
    if value.dtype != t.dtype:
        pytest.fail(f"{name} result {i}: dtype {value.dtype}, but its type {t} holds {t.dtype}")
    if t.shape is not None and not (len(value.shape) == len(t.shape) and all(
            d is None or d == s for d, s in zip(t.shape, value.shape))):
        pytest.fail(f"{name} result {i}: shape {value.shape}, but its type is {t}")


def run_op(name: str, operands: Sequence[Any],
           operand_types: TypeLike | Sequence[TypeLike] | None = None,
           results: TypeLike | Sequence[TypeLike] | None = None, *,
           regions: list[Region] | None = None, dynamic: Sequence[int] = (),
           verify: bool = False, quiet: bool = False, **properties: Any) -> list[Any]:
    """Run op ``name`` on ``operands`` and return its results (numpy arrays; tuples and tokens
    as they are), after checking each result's dtype and static shape against its type.

    ``operand_types`` and ``results`` as the module docstring says; ``dynamic`` lists the
    operands whose types (taken from the arrays) have every dimension dynamic (`?`), for the
    dynamic-shape ops; ``regions`` and the keyword ``properties`` (attribute objects of
    shlo.attributes) go on the op; ``verify``
    checks the op first (VerificationError); ``quiet`` runs under ``np.errstate(all=
    "ignore")`` (by default numpy's warnings stay on, so that tests can turn them into errors).
    """
    types = _types(operand_types, len(operands))
    arrays = [np.asarray(a) if types is None or not isinstance(types[i], str)
              else np.asarray(a, dtype=tensor((), types[i]).dtype)
              for i, a in enumerate(operands)]
    if types is None:
        types = [type_of(a, dynamic=i in dynamic) for i, a in enumerate(arrays)]
    else:
        assert not dynamic, "dynamic applies to the operand types taken from the arrays"
    result_list = [results] if isinstance(results, (str, Type)) else list(results or [])
    named = any(isinstance(t, str) for t in [*types, *result_list])
    shape = np.broadcast_shapes(*[a.shape for a in arrays]) if named and arrays else ()
    op = build_op(name, types, results, shape=shape, regions=regions, **properties)
    if verify:
        verify_op(op)
    kernel = PrepareContext(None).prepare(op)
    with np.errstate(all="ignore") if quiet else contextlib.nullcontext():
        outs = [to_numpy(o) for o in kernel(*arrays)]
    if len(outs) != len(op.results):
        pytest.fail(f"{name}: {len(outs)} results, expected {len(op.results)}")
    for i, (o, r) in enumerate(zip(outs, op.results)):
        _check_result(name, i, o, r.type)
    return outs


def run1(name: str, operands: Sequence[Any],
         operand_types: TypeLike | Sequence[TypeLike] | None = None,
         results: TypeLike | None = None, **options: Any) -> Any:
    """:func:`run_op` for an op with one result: that result."""
    (out,) = run_op(name, operands, operand_types, results, **options)
    return out


def run_text(text: str, *args: Any, verify: bool = False, **options: Any) -> list[Any]:
    """Parse ``text`` and run it with :func:`shlo.run` (``entry``, ``replicas``, feeds, ... go
    through ``options``); unverified unless ``verify``, so that kernel tests do not depend on
    the verifier."""
    return shlo.run(shlo.parse(text), *args, verify=verify, **options)
