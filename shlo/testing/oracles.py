"""Optional oracles from jaxlib (../shared/ORACLES.md): XLA, the upstream reference interpreter
and the upstream MLIR parser/verifier. Everything here needs `jax`; callers skip without it.

* :func:`xla_run` compiles StableHLO text with XLA's CPU client and runs it.
* :func:`upstream_run` runs the upstream C++ reference interpreter in a child process (it aborts
  the process on some inputs), returning results or raising :class:`OracleError`.
* :func:`mlir_parse` parses (and verifies) text with the upstream MLIR parser.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any, Sequence

import numpy as np

__all__ = ["available", "xla_run", "upstream_run", "mlir_parse", "mlir_context", "OracleError"]


class OracleError(Exception):
    """The oracle rejected the program or crashed."""


def available() -> bool:
    try:
        import jax  # noqa: F401
        import jaxlib.mlir.dialects.stablehlo  # noqa: F401
    except Exception:
        return False
    return True


def mlir_context(allow_unregistered: bool = False):
    """An MLIR context with the stablehlo, chlo and interpreter dialects loaded."""
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, stablehlo

    ctx = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    stablehlo.register_interpreter_dialect(ctx)
    chlo.register_dialect(ctx)
    # Loading any portable artifact loads the quant dialect (jaxlib has no call for it).
    art = stablehlo.serialize_portable_artifact_str("func.func @f() { return }",
                                                    stablehlo.get_current_version())
    with ctx:
        stablehlo.deserialize_portable_artifact(ctx, art)
    ctx.allow_unregistered_dialects = allow_unregistered
    return ctx


def mlir_parse(text: str, allow_unregistered: bool = False):
    """Parse and verify ``text`` upstream; raises OracleError with the diagnostics."""
    from jaxlib.mlir import ir

    ctx = mlir_context(allow_unregistered)
    try:
        with ctx:
            return ir.Module.parse(text)
    except ir.MLIRError as e:
        raise OracleError(str(e)) from None


def xla_run(text: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Compile ``text`` with XLA's CPU client and run it on ``args``."""
    import jax
    from jax._src import xla_bridge
    from jaxlib import xla_client

    jax.config.update("jax_enable_x64", True)
    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]
    try:
        exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                       xla_client.CompileOptions())
    except Exception as e:
        raise OracleError(f"XLA rejected the program: {e}") from None
    outs = exe.execute([jax.device_put(np.asarray(a), dev) for a in args])
    return [np.asarray(o) for o in outs]


def _upstream_child(text: str, args: list[np.ndarray], conn: Any) -> None:
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo

        ctx = mlir_context()
        with ctx:
            m = ir.Module.parse(text)
            attrs = [ir.DenseElementsAttr.get(np.ascontiguousarray(a)) for a in args]
            res = stablehlo.eval_module(m, attrs)
            conn.send(("ok", [np.array(r) for r in res]))
    except Exception as e:  # pragma: no cover - depends on jaxlib
        conn.send(("error", f"{type(e).__name__}: {e}"))


def upstream_run(text: str, args: Sequence[np.ndarray], timeout: float = 600.0
                 ) -> list[np.ndarray]:
    """Run ``text`` with the upstream reference interpreter in a child process.

    Results must be of types numpy can receive (no bf16/f8/i4/complex: wrap such programs).
    """
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_upstream_child, args=(text, [np.asarray(a) for a in args], child))
    p.start()
    child.close()
    if not parent.poll(timeout):
        p.kill()
        p.join()
        raise OracleError("upstream interpreter timed out")
    try:
        status, payload = parent.recv()
    except EOFError:
        p.join()
        raise OracleError(f"upstream interpreter crashed (exit code {p.exitcode})") from None
    p.join()
    if status != "ok":
        raise OracleError(payload)
    return payload
