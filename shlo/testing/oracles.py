"""Optional oracles from jaxlib (../shared/ORACLES.md): XLA, the upstream reference interpreter
and the upstream MLIR parser/verifier. Everything here needs `jax`; callers skip without it.

* :func:`xla_run` compiles StableHLO text with XLA's CPU client and runs it.
* :func:`upstream_run` runs the upstream C++ reference interpreter in a child process (it aborts
  the process on some inputs), returning results or raising :class:`OracleError`.
* :class:`UpstreamSession` keeps one such child process for many programs (the child's
  start-up, about 2 s, is paid once; a crash restarts it for the next program).
* :func:`mlir_parse` parses (and verifies) text with the upstream MLIR parser.
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any, Sequence

import numpy as np

__all__ = ["available", "xla_run", "upstream_run", "UpstreamSession", "mlir_parse", "mlir_context",
           "OracleError"]


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
        ctx = mlir_context()
    except Exception as e:  # pragma: no cover - depends on jaxlib
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    conn.send(_upstream_eval(ctx, text, args))


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


def _upstream_eval(ctx: Any, text: str, args: list[np.ndarray]) -> tuple[str, Any]:
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir.dialects import stablehlo

        with ctx:
            m = ir.Module.parse(text)
            # not np.ascontiguousarray: it turns 0-d arguments into tensor<1x...>
            attrs = [ir.DenseElementsAttr.get(np.asarray(a, order="C")) for a in args]
            res = stablehlo.eval_module(m, attrs)
            return ("ok", [np.array(r) for r in res])
    except Exception as e:  # pragma: no cover - depends on jaxlib
        return ("error", f"{type(e).__name__}: {e}")


def _upstream_server(conn: Any) -> None:
    """Child loop of :class:`UpstreamSession`: evaluate (text, args) requests until None."""
    ctx = mlir_context()
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        conn.send(_upstream_eval(ctx, *request))


class UpstreamSession:
    """The upstream reference interpreter in one long-lived child process.

    ``session.run(text, args)`` is :func:`upstream_run` without the per-call process start-up.
    When the interpreter aborts (SIGFPE on integer division by zero, chlo ops, ...) or times
    out, that call raises :class:`OracleError` and the next call starts a fresh child. Use as a
    context manager, or call :meth:`close`.
    """

    def __init__(self, timeout: float = 600.0) -> None:
        self.timeout = timeout
        self._proc: Any = None
        self._conn: Any = None
        self.programs = 0   # programs evaluated (successfully or not)
        self.restarts = 0   # children started

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe(duplex=True)
        self._proc = ctx.Process(target=_upstream_server, args=(child,), daemon=True)
        self._proc.start()
        child.close()
        self.restarts += 1

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._conn.close()
        self._proc = self._conn = None

    def run(self, text: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Evaluate @main of ``text`` on ``args``; same contract as :func:`upstream_run`."""
        if self._proc is None or not self._proc.is_alive():
            self._kill()
            self._start()
        self.programs += 1
        try:
            self._conn.send((text, [np.asarray(a) for a in args]))
            if not self._conn.poll(self.timeout):
                self._kill()
                raise OracleError("upstream interpreter timed out")
            status, payload = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._kill()
            raise OracleError(f"upstream interpreter crashed (exit code {code})") from None
        if status != "ok":
            raise OracleError(payload)
        return payload

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            try:
                self._conn.send(None)
                self._proc.join(5)
            except (BrokenPipeError, OSError):
                pass
        self._kill()

    def __enter__(self) -> "UpstreamSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
