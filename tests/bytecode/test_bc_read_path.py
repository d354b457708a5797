"""The one-pass read of a current-version portable artifact (ops converted to StableHLO as they
are read, shlo/bytecode/reader.py) builds exactly what the step-by-step path builds (read as
VHLO, verify, upgrade, vhlo-legalize-to-stablehlo), and hands everything else to it."""

import pytest

from shlo.bytecode import serialize
from shlo.bytecode import portable as P
from shlo.bytecode.reader import BytecodeReader, _NotConverted
from shlo.syntax.printer import format_module

from conftest import PROGRAMS, VHLO_DIR


def _step_by_step(data):
    m, r = P.read_vhlo(data)
    if P.vir.is_vhlo_module(m):
        P.verify_structure(m)
        if not P.current_already(n for n, _ in r.op_names):
            P.convert_to_version(m, P.CURRENT)
        P.vhlo_to_stablehlo(m)
    return m


def _same(a, b):
    """Same printed IR (generic form, with locations) and the same split of each op's
    attributes into properties and discardable attributes."""
    assert format_module(a, generic=True, debug_info=True) == \
        format_module(b, generic=True, debug_info=True)
    for x, y in zip(a.op.walk(), b.op.walk()):
        assert (x.name, x.properties, x.attributes) == (y.name, y.properties, y.attributes)
        assert [v.type for v in x.results] == [v.type for v in y.results]


def _artifacts():
    out = [(f"{name}@current", serialize(_parse(text), "current"))
           for name, text in sorted(PROGRAMS.items())]
    if VHLO_DIR.is_dir():
        out += [(p.name, p.read_bytes()) for p in sorted(VHLO_DIR.glob("*.mlir.bc"))]
    return out


def _parse(text):
    import shlo

    return shlo.parse(text)


def test_one_pass_read_equals_step_by_step():
    one_pass = 0
    for name, data in _artifacts():
        try:
            expected = _step_by_step(data)
        except Exception:
            expected = None  # an invalid artifact: the one-pass read must not accept it
        try:
            got = BytecodeReader(data, name, to_stablehlo=True).module()
        except _NotConverted:
            continue
        except Exception:
            assert expected is None, name
            continue
        assert expected is not None, f"{name}: read in one pass, rejected step by step"
        _same(got, expected)
        one_pass += 1
    assert one_pass >= len(PROGRAMS)


def test_older_versions_take_the_step_by_step_path():
    text = PROGRAMS["elementwise"].replace(
        " {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = "
        "0.000000e+00, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}", "")
    data = serialize(_parse(text), "1.0.0")
    # exponential_v1 (1.0.0) is no current VHLO op: the one-pass read declines ...
    with pytest.raises(_NotConverted):
        BytecodeReader(data, None, to_stablehlo=True).module()
    # ... and deserialize upgrades it as before
    _same(P.deserialize_portable_artifact(data), _step_by_step(data))
