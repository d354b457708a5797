"""A picture of a program's dataflow: a standalone HTML page (or an SVG) per `shlo graph`.

Each function is a section holding its body's graph: ops are nodes (name, result types,
location in the tooltip), edges go from producer to user, laid out in layers (an op sits one
layer below the deepest op it uses). Constants are folded into their users (a node lists how
many constants it takes). An op with regions (`while`, `reduce`, `case`, ...) has a collapsible
box beneath the function's graph per region; `call`s link to their callee's section. An overlay
(`{op key: value}`, from a trace, a profile or a diff) colours the nodes from pale to red, with
the legend saying what the colour means.

The page needs no server and no network: the layout is computed here, the page's script only
turns the embedded JSON into SVG (one string per graph, so 10,000 ops draw in well under a
second), and sets ``data-status="ok"`` on ``<body>`` (or lists script errors in
``#errors``) when done, which is what the headless-browser test checks.
"""

from __future__ import annotations

import html
import json
from typing import Any

from ..ir import Block, Module, Operation
from ..types import format_type
from .trace import location_name, op_location

__all__ = ["graph_html", "graph_svg", "layout"]

NODE_W, NODE_H, GAP_X, GAP_Y = 190, 38, 24, 34
_CONSTANTS = frozenset({"stablehlo.constant", "arith.constant", "chlo.constant"})
_TERMINATORS = frozenset({"func.return", "stablehlo.return", "return"})


def _label_types(op: Operation) -> str:
    ts = [format_type(v.type) for v in op.results]
    text = ", ".join(ts)
    return text if len(text) <= 30 else text[:28] + "…"


def layout(module: Module) -> dict[str, Any]:
    """The page's data: graphs (one per function body and per region) with placed nodes and
    edges, keyed so that overlays (by op key: position in the module's walk order) apply."""
    keys = {id(op): i for i, op in enumerate(module.walk())}
    graphs: list[dict[str, Any]] = []

    def block_graph(block: Block, title: str, anchor: str, depth: int) -> int:
        gid = len(graphs)
        g: dict[str, Any] = {"id": gid, "title": title, "anchor": anchor, "depth": depth,
                             "nodes": [], "edges": [], "children": []}
        graphs.append(g)
        index: dict[int, int] = {}
        layer: dict[int, int] = {}
        columns: dict[int, int] = {}
        folded: dict[int, int] = {}
        for op in block.operations:
            if op.name in _CONSTANTS and op.results:
                folded[id(op)] = 1
                continue
            deps = [v.owner for v in op.operands if isinstance(v.owner, Operation)
                    and id(v.owner) in index]
            n_const = sum(1 for v in op.operands if isinstance(v.owner, Operation)
                          and id(v.owner) in folded)
            lay = max((layer[id(d)] + 1 for d in deps), default=0)
            col = columns.get(lay, 0)
            columns[lay] = col + 1
            k = keys.get(id(op), -1)
            node: dict[str, Any] = {"k": k, "n": op.name.split(".", 1)[-1]
                                    if op.name.startswith("stablehlo.") else op.name,
                                    "t": _label_types(op), "x": col * (NODE_W + GAP_X),
                                    "y": lay * (NODE_H + GAP_Y),
                                    "tip": f"{op.name} {op_location(op)}"
                                           + (f" ({location_name(op.location)})"
                                              if location_name(op.location) else "")
                                           + "\n-> " + ", ".join(format_type(v.type)
                                                                   for v in op.results)}
            if n_const:
                node["c"] = n_const
            callee = op.attr("callee")
            if callee is not None and hasattr(callee, "name"):
                node["call"] = f"func-{callee.name}"
            if op.name in _TERMINATORS:
                node["ret"] = 1
            index[id(op)] = len(g["nodes"])
            layer[id(op)] = lay
            g["nodes"].append(node)
            for d in deps:
                g["edges"].append([index[id(d)], index[id(op)]])
            for r_i, region in enumerate(op.regions):
                for b_i, b in enumerate(region.blocks):
                    child = block_graph(b, f"{op.name} {op_location(op)} region {r_i}"
                                           + (f" block {b_i}" if b_i else ""),
                                        f"g{len(graphs)}", depth + 1)
                    g["children"].append(child)
                    node.setdefault("regions", []).append(child)
        g["w"] = max((n["x"] for n in g["nodes"]), default=0) + NODE_W
        g["h"] = max((n["y"] for n in g["nodes"]), default=0) + NODE_H
        return gid

    functions = []
    for op in module.body.operations:
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            name = op.attr("sym_name").value
            ft = op.attr("function_type")
            sig = format_type(ft.type) if ft is not None else ""
            functions.append(block_graph(op.regions[0].blocks[0], f"@{name} {sig}",
                                         f"func-{name}", 0))
    return {"graphs": graphs, "functions": functions,
            "file": module.filename or "", "ops": sum(1 for _ in module.walk())}


_SCRIPT = r"""
(function () {
  var D = JSON.parse(document.getElementById('data').textContent);
  var W = %(w)d, H = %(h)d, errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); show(); });
  function show() {
    var el = document.getElementById('errors');
    el.textContent = errors.join('\n'); el.hidden = errors.length === 0;
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) {
    return {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]; }); }
  var ov = D.overlay || null, lo = 0, hi = 1;
  if (ov) { var vs = Object.keys(ov).map(function (k) { return ov[k]; });
    lo = Math.min.apply(null, vs.concat([0])); hi = Math.max.apply(null, vs.concat([1e-30])); }
  function colour(k) {
    if (!ov || !(k in ov)) return '#eef3fb';
    var t = hi > lo ? (ov[k] - lo) / (hi - lo) : 0;
    var r = 255, g = Math.round(245 - 190 * t), b = Math.round(235 - 200 * t);
    return 'rgb(' + r + ',' + g + ',' + b + ')';
  }
  function svg(g) {
    var p = ['<svg xmlns="http://www.w3.org/2000/svg" width="' + (g.w + 8) + '" height="' +
             (g.h + 8) + '" viewBox="-4 -4 ' + (g.w + 8) + ' ' + (g.h + 8) + '">'];
    g.edges.forEach(function (e) {
      var a = g.nodes[e[0]], b = g.nodes[e[1]];
      var x1 = a.x + W / 2, y1 = a.y + H, x2 = b.x + W / 2, y2 = b.y, m = (y1 + y2) / 2;
      p.push('<path class="edge" d="M' + x1 + ',' + y1 + ' C' + x1 + ',' + m + ' ' + x2 + ',' +
             m + ' ' + x2 + ',' + y2 + '"/>');
    });
    g.nodes.forEach(function (n) {
      var val = ov && (n.k in ov) ? ' = ' + Number(ov[n.k]).toPrecision(3) : '';
      p.push('<g class="node' + (n.ret ? ' ret' : '') + '" data-key="' + n.k + '"' +
             (n.call ? ' data-call="' + n.call + '"' : '') +
             (n.regions ? ' data-regions="' + n.regions.join(' ') + '"' : '') +
             ' transform="translate(' + n.x + ',' + n.y + ')"><title>' + esc(n.tip + val) +
             '</title><rect width="' + W + '" height="' + H + '" rx="5" fill="' +
             colour(n.k) + '"/><text x="8" y="15" class="op">' + esc(n.n) +
             (n.regions ? ' ▾' : '') + (n.call ? ' →' : '') + (n.c ? ' ·' + n.c + 'c' : '') +
             '</text><text x="8" y="30" class="ty">' + esc(n.t) + '</text></g>');
    });
    p.push('</svg>');
    return p.join('');
  }
  function section(gid, parent) {
    var g = D.graphs[gid];
    var d = document.createElement('details');
    d.id = g.anchor; d.className = 'graph depth' + g.depth;
    d.open = g.depth === 0 || D.open;
    var s = document.createElement('summary');
    s.textContent = g.title + '  (' + g.nodes.length + ' ops)';
    d.appendChild(s);
    var box = document.createElement('div');
    box.className = 'canvas';
    d.appendChild(box);
    var drawn = false;
    function draw() {
      if (drawn || !d.open) return;
      drawn = true;
      box.innerHTML = svg(g);
      g.children.forEach(function (c) { section(c, d); });
    }
    d.addEventListener('toggle', draw);
    parent.appendChild(d);
    draw();
  }
  var main = document.getElementById('graphs');
  D.functions.forEach(function (f) { section(f, main); });
  document.addEventListener('click', function (ev) {
    var n = ev.target.closest && ev.target.closest('g.node');
    if (!n) return;
    var target = n.getAttribute('data-call') ||
      (n.getAttribute('data-regions') ?
       D.graphs[+n.getAttribute('data-regions').split(' ')[0]].anchor : null);
    if (!target) return;
    var el = document.getElementById(target);
    if (el) { el.open = true; el.scrollIntoView(); }
  });
  document.getElementById('count').textContent =
    document.querySelectorAll('g.node').length + ' nodes drawn';
  show();
  document.body.setAttribute('data-status', errors.length ? 'error' : 'ok');
})();
"""

_STYLE = """
body { font: 13px system-ui, sans-serif; margin: 12px; color: #1c2430; }
h1 { font-size: 16px; margin: 0 0 6px; }
.meta { color: #5a6678; margin-bottom: 8px; }
details.graph { margin: 6px 0 6px 14px; border-left: 2px solid #cfd8e6; padding-left: 8px; }
summary { cursor: pointer; font-weight: 600; }
.canvas { overflow: auto; max-height: 85vh; }
.edge { fill: none; stroke: #8796ad; stroke-width: 1.2; }
g.node rect { stroke: #4b6a9b; stroke-width: 1; }
g.node.ret rect { stroke-dasharray: 4 2; }
g.node[data-call], g.node[data-regions] { cursor: pointer; }
text.op { font: 600 12px ui-monospace, monospace; fill: #1c2430; }
text.ty { font: 10px ui-monospace, monospace; fill: #4d5a6e; }
#errors { color: #b00020; white-space: pre; }
.legend span { display: inline-block; width: 90px; height: 10px;
  background: linear-gradient(90deg, rgb(255,245,235), rgb(255,55,35)); }
"""


def graph_html(module: Module, overlay: dict[Any, float] | None = None,
               overlay_label: str = "", open_regions: bool = False) -> str:
    """The standalone HTML page (see the module docstring). ``overlay`` maps op keys to a
    value coloured per node; ``overlay_label`` says what it is (e.g. "self ms")."""
    data = layout(module)
    if overlay:
        data["overlay"] = {str(k): float(v) for k, v in overlay.items()}
    data["open"] = bool(open_regions)
    title = html.escape(module.filename or "program")
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    legend = (f'<div class="legend">colour: {html.escape(overlay_label)} '
              f'<span></span> low → high</div>' if overlay else "")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + title +
            "</title><style>" + _STYLE + "</style></head><body>\n<h1>" + title + "</h1>"
            f"<div class=\"meta\">{data['ops']} ops, {len(data['functions'])} functions · "
            "click a call to go to its callee, an op with regions to open them · "
            "<span id=\"count\"></span></div>" + legend +
            "<pre id=\"errors\" hidden></pre><div id=\"graphs\"></div>\n"
            "<script type=\"application/json\" id=\"data\">" + payload + "</script>\n"
            "<script>" + _SCRIPT % {"w": NODE_W, "h": NODE_H} + "</script>\n</body></html>\n")


def graph_svg(module: Module, overlay: dict[Any, float] | None = None) -> str:
    """A static SVG of every function's body graph, one under the other (regions are listed
    as their parent node's `▾`; the HTML page opens them)."""
    data = layout(module)
    ov = {str(k): float(v) for k, v in (overlay or {}).items()}
    lo, hi = (min(ov.values(), default=0.0), max(ov.values(), default=1.0))
    parts, y0, width = [], 0, 200
    for gid in data["functions"]:
        g = data["graphs"][gid]
        parts.append(f'<text x="0" y="{y0 + 14}" class="title">{html.escape(g["title"])}</text>')
        y0 += 24
        for a, b in g["edges"]:
            na, nb = g["nodes"][a], g["nodes"][b]
            x1, y1 = na["x"] + NODE_W / 2, y0 + na["y"] + NODE_H
            x2, y2 = nb["x"] + NODE_W / 2, y0 + nb["y"]
            m = (y1 + y2) / 2
            parts.append(f'<path class="edge" d="M{x1},{y1} C{x1},{m} {x2},{m} {x2},{y2}"/>')
        for n in g["nodes"]:
            fill = "#eef3fb"
            if str(n["k"]) in ov:
                t = (ov[str(n["k"])] - lo) / (hi - lo) if hi > lo else 0.0
                fill = f"rgb(255,{round(245 - 190 * t)},{round(235 - 200 * t)})"
            parts.append(f'<g class="node" transform="translate({n["x"]},{y0 + n["y"]})">'
                         f'<title>{html.escape(n["tip"])}</title><rect width="{NODE_W}" '
                         f'height="{NODE_H}" rx="5" fill="{fill}"/><text x="8" y="15" '
                         f'class="op">{html.escape(n["n"])}{" ▾" if n.get("regions") else ""}'
                         f'</text><text x="8" y="30" class="ty">{html.escape(n["t"])}</text>'
                         f'</g>')
        y0 += g["h"] + 30
        width = max(width, g["w"])
    style = ("<style>.edge{fill:none;stroke:#8796ad;stroke-width:1.2}"
             "rect{stroke:#4b6a9b}text{font-family:monospace}.op{font-size:12px;"
             "font-weight:600}.ty{font-size:10px;fill:#4d5a6e}.title{font-size:13px;"
             "font-weight:600}</style>")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 8}" height="{y0}" '
            f'viewBox="-4 0 {width + 8} {y0}">{style}' + "".join(parts) + "</svg>\n")
