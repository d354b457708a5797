"""The upstream interpreter's probe layout (`--probe-output-dir`): `index.csv` lines
`probe_id,type,path` and one `probeN.npy` per value; written by a trace with ``directory=``
(:class:`ProbeWriter`), read back typed by :func:`read_probe_dir`."""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

import numpy as np

from ..dtypes import is_ml_float
from ..ir import Operation
from ..types import QuantizedType, TensorType, format_type
from .locations import enclosing_function, location_name, op_location

__all__ = ["ProbeWriter", "read_probe_dir", "storage_array", "typed_array"]


def storage_array(a: np.ndarray) -> np.ndarray:
    """``a`` as numpy-native storage: ml_dtypes floats and sub-byte ints as unsigned ints of
    their item size (the upstream interpreter writes bf16 as `<u2`); other dtypes unchanged."""
    if a.dtype.kind == "V" or is_ml_float(a.dtype):  # (float8_e5m2: kind 'f', ml_dtypes 0.7)
        return np.ascontiguousarray(a).view(f"<u{a.dtype.itemsize}")
    return a


def typed_array(stored: np.ndarray, type_text: str) -> np.ndarray:
    """The value of MLIR type ``type_text`` from its stored array (the inverse of
    :func:`storage_array`)."""
    from ..interpreter.arrays import as_declared
    from ..syntax.parser import Parser

    t = Parser(type_text).parse_type()
    if not isinstance(t, TensorType):
        return stored
    et = t.element_type
    dtype = et.storage_type.dtype if isinstance(et, QuantizedType) else et.dtype
    value = as_declared(stored, t)  # narrow types from their bits
    return value if value.dtype == dtype else value.astype(dtype)


class ProbeWriter:
    """Streams values to ``directory`` as the upstream interpreter's `--probe-output-dir`
    does: `probeN.npy` files and an `index.csv` of `probe_id,type,path` lines (probe ids are
    the probe op's own, else `<location name>.<n>` or `probe<n>` per traced value, as
    `interpreter-instrument-with-probe` names them). `ops.csv` beside it describes each file:
    op, location, function, iteration, process, seconds. Values are written as their ops
    finish (an op holding regions after the ops of its regions)."""

    def __init__(self, directory: str) -> None:
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        # open for the run's duration (closed by close(), after the run)
        join = os.path.join
        self.index = open(join(directory, "index.csv"), "w", encoding="utf-8")  # noqa: SIM115
        self.ops = open(join(directory, "ops.csv"), "w", encoding="utf-8")  # noqa: SIM115
        self.ops.write("file,probe_id,op,location,name,function,iteration,process,seconds\n")
        self.ids: dict[tuple[int, int], str] = {}
        self.n = 0

    def _probe_id(self, op: Operation, k: int) -> str:
        if op.name == "interpreter.probe":
            return str(op.attr("probe_id").value)
        pid = self.ids.get((id(op), k))
        if pid is None:
            base = (location_name(op.location) or "").split("@")[0]
            base = re.sub(r"[\s,]", "_", base)
            pid = self.ids[(id(op), k)] = (f"{base}.{len(self.ids) + 1}" if base else
                                          f"probe{len(self.ids) + 1}")
        return pid

    def write(self, op: Operation, iteration: int, process: int, seconds: float | None,
              results: Sequence[Any]) -> None:
        for k, (r, v) in enumerate(zip(results, op.results)):
            if not isinstance(r, (np.ndarray, np.generic)) or not isinstance(v.type, TensorType):
                continue
            self.n += 1
            path = os.path.join(self.directory, f"probe{self.n}.npy")
            np.save(path, storage_array(np.asarray(r)))
            pid = self._probe_id(op, k)
            self.index.write(f"{pid},{format_type(v.type)},{path}\n")
            name = (location_name(op.location) or "").replace(",", "_")
            sec = "" if seconds is None else f"{seconds:.9f}"
            self.ops.write(f"probe{self.n}.npy,{pid},{op.name},{op_location(op)},{name},"
                           f"{enclosing_function(op)},{iteration},{process},{sec}\n")

    def close(self) -> None:
        self.index.close()
        self.ops.close()


def read_probe_dir(directory: str) -> list[tuple[str, str, np.ndarray]]:
    """``(probe_id, type, value)`` per line of ``directory``/index.csv, each value read with
    numpy and given its dtype back from the type (bf16, fp8, int4 through ml_dtypes)."""
    out = []
    with open(os.path.join(directory, "index.csv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            pid, rest = line.split(",", 1)
            type_text, path = rest.rsplit(",", 1)
            if not os.path.isabs(path) and not os.path.exists(path):
                path = os.path.join(directory, os.path.basename(path))
            out.append((pid, type_text, typed_array(np.load(path), type_text)))
    return out
