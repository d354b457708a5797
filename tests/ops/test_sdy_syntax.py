"""The Shardy (`sdy`) dialect as text: parse, print (pretty and generic), round trip.

The vectors are upstream's lit tests (openxla/shardy `shardy/dialect/sdy/ir/test/*_parse_print
.mlir`): the input line and the line its CHECK expects upstream's printer to produce.
"""

from __future__ import annotations

import pytest

import shlo  # noqa: F401  (fills the registry)
from shlo.attributes import OpaqueAttr
from shlo.errors import ParseError, VerificationError
from shlo.ops.sdy.attrs import (
    AxisList, AxisRef, DimSharding, Mesh, MeshAxis, OpShardingRule, TensorSharding,
)
from shlo.syntax.parser import parse
from shlo.syntax.printer import format_module
from shlo.verifier import verify


def _attr(text: str):
    m = parse(f'func.func @f() attributes {{a = {text}}} {{\n  return\n}}')
    return m.functions["f"].attr("a")


def _roundtrip(text: str) -> str:
    """Pretty text after parse+verify, checked to be a fixed point in both forms."""
    m = parse(text)
    verify(m)
    pretty = format_module(m)
    generic = format_module(m, generic=True)
    for t, g in ((pretty, False), (generic, True)):
        m2 = parse(t)
        verify(m2)
        assert format_module(m2, generic=g) == t
    assert format_module(parse(generic)) == pretty
    return pretty


# --- attributes (tensor_sharding_parse_print.mlir, mesh_parse_print.mlir, ...) ---------------

ATTRS = [
    # (input, what upstream prints)
    ('#sdy.sharding<@mesh, [{"a"}, {"b"}]>', None),
    ('#sdy.sharding<@mesh, [{"a", ?}, {?}]>', None),
    ('#sdy.sharding<@mesh, [{"a"}p1, {"b", ?}p0]>', None),
    ('#sdy.sharding<@mesh, [{"c":(1)2}, {"b"}], replicated={"a"}>', None),
    ('#sdy.sharding<@mesh, [{}, {}], replicated={"a"}, unreduced={"b"}>', None),
    ('#sdy.sharding<@mesh, [{}], unreduced=max{"b"}>', None),
    ('#sdy.sharding<@mesh, [{}], unreduced=sum{"b"}>', '#sdy.sharding<@mesh, [{}], '
                                                       'unreduced={"b"}>'),
    ('#sdy.sharding<mesh<["a"=2, "b"=4]>, [{"a"}, {}]>', None),
    ('#sdy.sharding<mesh<[], device_ids=[3]>, []>', None),
    ('#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>', None),
    ('#sdy.sharding_per_value<[]>', None),
    ('#sdy.mesh<["a"=2, "b"=2], device_ids=[0, 1, 2, 3]>', '#sdy.mesh<["a"=2, "b"=2]>'),
    ('#sdy.mesh<["a"=2], device_ids=[1, 0]>', None),
    ('#sdy<manual_axes{"x", "y"}>', None),
    ('#sdy<manual_axes{}>', None),
    ('#sdy<propagation_direction FORWARD>', None),
    ('#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=32, k=16} reduction={j}>', None),
    ('#sdy.op_sharding_rule<([], [])->([])>', None),
    ('#sdy.op_sharding_rule<([i, j])->([ij]) {i=2, j=4}>', None),
    ('#sdy.op_sharding_rule<([i, j, k, l])->([i, k, l]) {i=2, j=3, k=5, l=7} reduction={j} '
     'need_replication={i, l} permutation={k}, custom>', None),
    ('#sdy.op_sharding_rule<([i, j, k, l])->([i, k, l]) {i=2, j=3, k=5, l=7} reduction={j} '
     'need_replication={i, l} permutation={k} blocked_propagation={l}>', None),
    # jaxlib's LAPACK custom calls (jnp.linalg.inv of a batch):
    ('#sdy.op_sharding_rule<([i, j, k])->([i, l, m], [i, n], [i]) {i=2, j=3, k=3, l=3, m=3, '
     'n=3}, custom>', None),
]


@pytest.mark.parametrize("text,expected", ATTRS)
def test_attribute_prints_as_upstream(text: str, expected: str | None) -> None:
    a = _attr(text)
    assert not isinstance(a, OpaqueAttr)
    assert a.mlir() == (expected or text)
    assert _attr(a.mlir()) == a


def test_attribute_values() -> None:
    s = _attr('#sdy.sharding<@mesh, [{"x":(2)4, ?}p3, {}], replicated={"y"}>')
    assert s == TensorSharding("mesh", (DimSharding((AxisRef("x", 2, 4),), False, 3),
                                        DimSharding()), (AxisRef("y"),))
    assert _attr('#sdy.mesh<["a"=2]>') == Mesh((MeshAxis("a", 2),))
    assert _attr('#sdy<manual_axes{"a"}>') == AxisList("manual_axes", ("a",))
    r = _attr('#sdy.op_sharding_rule<([i, z_1])->([zz_1]) {i=1, j=1, k=1, l=1, m=1, n=1, o=1, '
              'p=1, q=1, r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, z_1=2}>')
    assert isinstance(r, OpShardingRule)
    assert r.operands == (((0,), (18,)),) and r.results == (((17, 18),),)


def test_sub_axis_coordinates() -> None:
    """`"x":(pre)size` is the factor of x after its major factors of product pre."""
    mesh = Mesh((MeshAxis("x", 8),))
    major, middle, minor = AxisRef("x", 1, 2), AxisRef("x", 2, 2), AxisRef("x", 4, 2)
    assert [major.coordinate(mesh, {"x": c}) for c in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert [middle.coordinate(mesh, {"x": c}) for c in range(8)] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert [minor.coordinate(mesh, {"x": c}) for c in range(8)] == [0, 1, 0, 1, 0, 1, 0, 1]


@pytest.mark.parametrize("text,message", [
    ('#sdy.sharding<@mesh, [{"a"}p01]>', "leading zeros"),
    ('#sdy.sharding<@mesh, [{"a"}q1]>', "expecting priority in format 'p<number>'"),
    ('#sdy.sharding<@mesh, [{"a"}], foo={"b"}>', "expected valid named axis list"),
    ('#sdy.op_sharding_rule<([i, j])->([i, j]) {j=2, i=4}>', "ordered like an iota"),
    ('#sdy.op_sharding_rule<([i, 9])->([i])>', "expected ']'"),
    ('#sdy.op_sharding_rule<([a])->([a])>', "expecting symbol from 'i' to 'z'"),
    ('#sdy<propagation_direction SIDEWAYS>', "propagation_direction"),
])
def test_attribute_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        _attr(text)


# --- ops (mesh_parse_print, manual_computation_parse_print, ...) -----------------------------

MODULE = '''module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<16x32xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {
      %5 = sdy.named_computation<"foo">(%arg1) in_shardings=[<@mesh, [{"b"}, {}]>] (%arg2: tensor<8x32xf32>) {
        sdy.return %arg2 : tensor<8x32xf32>
      } : (tensor<8x32xf32>) -> tensor<8x32xf32>
      sdy.return %5 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"b"}]> : tensor<16x32xf32>
    %2 = sdy.reshard %1 <@mesh, [{"a", ?}, {?}]> : tensor<16x32xf32>
    sdy.sharding_group %2 group_id=3 : tensor<16x32xf32>
    %3 = sdy.propagation_barrier %2 allowed_direction=BACKWARD : tensor<16x32xf32>
    %4 = sdy.all_gather [{}, {"b"}] %3 out_sharding=<@mesh, [{}, {}]> : tensor<16x32xf32>
    %6 = sdy.all_slice [{"a"}, {}] %4 out_sharding=<@mesh, [{"a"}, {}]> : tensor<16x32xf32>
    %7 = sdy.all_to_all [{"a"}: 0->1] %6 out_sharding=<@mesh, [{}, {"a"}]> : tensor<16x32xf32>
    %8 = sdy.collective_permute %7 out_sharding=<@mesh, [{}, {"b"}]> : tensor<16x32xf32>
    %9 = sdy.all_reduce max {"a"} %8 out_sharding=<@mesh, [{}, {"b"}]> : tensor<16x32xf32>
    %10 = sdy.reduce_scatter [{}, {"a"}] %9 out_sharding=<@mesh, [{}, {"b", "a"}]> : tensor<16x32xf32>
    %11 = sdy.sharded_to_unreduced [{}, {"a"}] %10 out_sharding=<@mesh, [{}, {"b"}], unreduced={"a"}> : tensor<16x32xf32>
    %12 = sdy.replicated_to_unreduced {"b"} %2 out_sharding=<@mesh, [{"a", ?}, {?}], unreduced={"b"}> : tensor<16x32xf32>
    %13 = sdy.data_flow_edge %12 sharding=<@mesh, [{}, {}]> : tensor<16x32xf32>
    %14 = sdy.data_flow_edge %13 : tensor<16x32xf32>
    %15 = sdy.func_data_flow_edge %14 : tensor<16x32xf32>
    %16 = sdy.constant dense<1.000000e+00> : tensor<16x32xf32>
    %17 = stablehlo.add %15, %16 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=16, j=32}>} : tensor<16x32xf32>
    return %17 : tensor<16x32xf32>
  }
}
'''


def test_every_op_round_trips_pretty_and_generic() -> None:
    import re

    def anon(t: str) -> str:
        return re.sub(r"%[\w#]+", "%_", t)

    pretty = anon(_roundtrip(MODULE))
    for line in MODULE.splitlines()[1:-2]:  # every op prints as written (upstream's form)
        assert anon(line.strip()) in pretty, line


def test_generic_form_spells_the_attributes() -> None:
    generic = format_module(parse(MODULE), generic=True)
    assert '"sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=2]>, sym_name = "mesh"}>' in generic
    assert ('manual_axes = #sdy<manual_axes{"a"}>, out_shardings = #sdy.sharding_per_value<'
            '[<@mesh, [{"a"}, {}]>]>') in generic
    assert "allowed_direction = #sdy<propagation_direction BACKWARD>" in generic
    assert "reduction_op = #sdy<reduction_op max>" in generic
    assert 'gathering_axes = #sdy<list_of_axis_ref_lists[{}, {"b"}]>' in generic
    assert 'params = #sdy<all_to_all_param_list[{"a"}: 0->1]>' in generic
    assert "group_id = 3 : i64" in generic


def test_the_module_runs_as_identities() -> None:
    """Every sdy op of MODULE but the constant passes its value through: main(x) = x + 1."""
    import numpy as np

    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    (got,) = shlo.run(MODULE, x)
    np.testing.assert_array_equal(got, x + 1)


@pytest.mark.parametrize("body,message", [
    # manual_computation_verification.mlir
    ('''%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<16x32xf32>) {
      sdy.return %arg1 : tensor<16x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>''', "block arguments to have types tensor<8x32xf32>"),
    ('''%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"c"}, {}]>] out_shardings=[<@mesh, [{"c"}, {}]>] manual_axes={"c"} (%arg1: tensor<8x32xf32>) {
      sdy.return %arg1 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>''', 'unknown axis name: "c"'),
    ('''%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a"}, {}]>] out_shardings=[<@mesh, [{"b", "a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {
      sdy.return %arg1 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>''', "manual axis after a free axis"),
    ('''%0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg1: tensor<8x32xf32>) {
      sdy.return %arg1 : tensor<8x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>''', "sharding doesn't match tensor rank"),
    ('''%0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}]> : tensor<16x32xf32>''',
     "sharding doesn't match tensor rank"),
])
def test_verifier(body: str, message: str) -> None:
    text = f'''module {{
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {{
    {body}
    return %arg0 : tensor<16x32xf32>
  }}
}}'''
    with pytest.raises(VerificationError, match=message):
        verify(parse(text))


@pytest.mark.parametrize("mesh,message", [
    ('<["a"=2, "a"=2]>', "duplicate axis name"),
    ('<["a"=2], device_ids=[0, 2]>', "iota"),
    ('<[], device_ids=[0, 1]>', "at most one device id"),
])
def test_mesh_verifier(mesh: str, message: str) -> None:
    with pytest.raises(VerificationError, match=message):
        verify(parse(f"module {{\n  sdy.mesh @m = {mesh}\n}}"))


def test_propagation_edges_stay_verbatim() -> None:
    text = ('#sdy.propagation_edges<[{step-2 = [{"y" = operand-1 -> [operand-0, result-0]}]}]>')
    a = _attr(text)
    assert isinstance(a, OpaqueAttr) and a.mlir() == text
