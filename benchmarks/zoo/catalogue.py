"""Turn run_zoo.py's results (DIR/results.json) and the cached programs into the failure
catalogue: failures grouped by cause, with the exact errors, and inventories of what the failing
programs contain (custom-call targets with their attributes and layouts, non-StableHLO ops,
sdy/mhlo attributes), then the timing table of the programs that ran.

    python benchmarks/zoo/catalogue.py [--dir DIR] > benchmarks/zoo/CATALOGUE.generated.md

Needs only the standard library and numpy. The diagnoses (the human part) are in CAUSES below:
each cause has a pattern matched against the error text and a diagnosis paragraph.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from zoo_common import read_manifest, zoo_dir  # noqa: E402

# (cause id, regex on "status: error", title). First match wins; diagnoses are in CATALOGUE.md.
CAUSES = [
    ("sdy", r"custom op 'sdy\.|#sdy\.|sdy\.", "sdy (Shardy) dialect not parsed"),
    ("bytecode", r"UnicodeDecodeError|utf-8' codec", "MLIR bytecode (.mlirbc) not readable"),
    ("dense_resource", r"dense_resource|dialect_resources|file-metadata|\{-#",
     "dense_resource constants / dialect_resources section"),
    ("shape_assertion", r"@shape_assertion", "custom_call @shape_assertion"),
    ("callback", r"xla_ffi_python_cpu_callback", "host callback custom call"),
    ("lapack", r"@lapack_\w+", "jaxlib CPU LAPACK custom calls (lapack_*_ffi)"),
    ("gspmd", r"@Sharding|@SPMD", "GSPMD @Sharding / @SPMD* custom calls"),
    ("custom_call", r"unsupported target @", "other custom_call target"),
    ("arith", r"'arith\.|arith\.", "arith dialect ops (torch-mlir)"),
    ("tensor", r"'tensor\.|tensor\.\w+", "tensor dialect ops (torch-mlir)"),
    ("timeout", r"^timeout", "timeout"),
    ("mismatch", r"^mismatch", "numerical mismatch"),
]


def cause_of(r: dict, e: dict | None = None) -> str:
    text = f"{r['status']}: {r.get('error', '')}"
    if e and e.get("dense_resource") and r["status"].startswith("parse error") \
            and "typed elements attribute" in text:
        return "dense_resource"
    for cid, pat, _ in CAUSES:
        if re.search(pat, text):
            return cid
    return "other"


def strip_loc(msg: str) -> str:
    return re.sub(r"^\S+\.mlir(bc)?:\d+:\d+: ", "", msg or "")


CC_RE = re.compile(r"stablehlo\.custom_call @([\w.$-]+)\((.*?)\) (\{.*\}) : \((.*?)\) -> (.*?)(?: loc\(.*)?$")


def custom_call_inventory(root: Path, entries: list[dict]) -> dict:
    """target -> list of distinct attribute signatures, with example types and programs."""
    inv: dict[str, dict] = defaultdict(dict)
    for e in entries:
        if not e.get("custom_calls") or e.get("format") == "bytecode":
            continue
        path = root / e["files"]["mlir"]
        for line in path.read_text().splitlines():
            m = CC_RE.search(line)
            if not m:
                continue
            target, _, attrs, ins, outs = m.groups()
            bc = re.search(r"mhlo\.backend_config = (\{[^}]*\})", attrs)
            bcs = re.search(r'backend_config = ("[^"]*")', attrs)
            fa = re.search(r"mhlo\.frontend_attributes = (\{[^}]*\})", attrs)
            api = re.search(r"api_version = (\d+)", attrs)
            side = "has_side_effect = true" in attrs
            ol = re.search(r"operand_layouts = (\[.*?\])(?:, (?:output_operand|result_lay))", attrs)
            rl = re.search(r"result_layouts = (\[.*?\])(?:, sdy|\}|, \w)", attrs)
            al = re.findall(r"output_tuple_indices = \[(.*?)\], operand_index = (\d+)", attrs)
            key = (bc.group(1) if bc else "", bcs.group(1) if bcs else "",
                   fa.group(1) if fa else "", api.group(1) if api else "", side)
            slot = inv[target].setdefault(key, {"programs": [], "types": set(),
                                                "layouts": set(), "aliases": set()})
            if e["name"] not in slot["programs"]:
                slot["programs"].append(e["name"])
            if len(slot["types"]) < 3:
                slot["types"].add(f"({ins}) -> {outs}")
            if len(slot["layouts"]) < 2:
                slot["layouts"].add(f"operands {ol.group(1) if ol else '?'}; "
                                    f"results {rl.group(1) if rl else '?'}")
            for t, o in al:
                slot["aliases"].add(f"result [{t}] aliases operand {o}")
    return inv


def fmt_t(s):
    if s is None:
        return "-"
    ms = s * 1e3
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


LOG_RE = re.compile(r"^(\S+)\s+(ok \(f64\)|ok|mismatch|timeout|crashed \(exit -?\d+\)|"
                    r"(?:parse|verify|run) error(?: \(Python \w+\))?)\s+err=\s*(\S+)"
                    r"(?: f64:(\S+)/(\S+))?\s+shlo=\s*(\S+)\s+xla=\s*(\S+?)([xm])\s+"
                    r"ratio=\s*(\S+)\s?(.*)$")


def parse_log(path: Path) -> list[dict]:
    """Rows of a run_zoo.py table (for a run whose results file was not written)."""
    num = lambda s: None if s == "-" else float(s)  # noqa: E731
    out = []
    for line in path.read_text().splitlines():
        m = LOG_RE.match(line)
        if not m:
            continue
        name, status, err, s64, x64, sh, xl, src, ratio, msg = m.groups()
        r = {"name": name, "status": status, "err": num(err), "xla_src": src,
             "shlo_s": None if sh == "-" else float(sh) / 1e3,
             "xla_s": None if xl == "-" else float(xl) / 1e3,
             "ratio": None if ratio == "-" else float(ratio.rstrip("x")), "from_log": True}
        if s64 is not None:
            r["err64_shlo"], r["err64_xla"] = num(s64), num(x64)
        if status.startswith(("ok", "mismatch")):
            r["err_note"] = msg
        else:
            r["error"] = msg
        out.append(r)
    return out


def merge(root: Path, sources: list[str]) -> None:
    """results.json from several runs: later sources win, rows kept in manifest order."""
    by_name: dict[str, dict] = {}
    loads = []
    for src in sources:
        p = Path(src)
        if p.suffix == ".log":
            rows = parse_log(p)
        else:
            d = json.loads(p.read_text())
            loads.append(d.get("load_average", 0))
            rows = d["results"]
        for r in rows:
            if r["status"].startswith("crashed") and r["name"] in by_name:
                continue
            by_name[r["name"]] = r
    order = [e["name"] for e in read_manifest(root)]
    rows = [by_name[n] for n in order if n in by_name]
    (root / "results.json").write_text(json.dumps(
        {"load_average": max(loads) if loads else 0, "results": rows,
         "sources": sources}, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir")
    ap.add_argument("--merge", nargs="+", help="results .json / run_zoo .log files, later wins")
    a = ap.parse_args()
    root = zoo_dir(a.dir)
    if a.merge:
        merge(root, a.merge)
    data = json.loads((root / "results.json").read_text())
    results = data["results"]
    entries = {e["name"]: e for e in read_manifest(root)}
    w = sys.stdout.write
    ok = [r for r in results if r["status"].startswith("ok")]
    fails = [r for r in results if not r["status"].startswith("ok")]
    w(f"Load average at the start of the run: {data.get('load_average', 0):.1f} "
      f"(2 cores). {len(results)} programs: {len(ok)} ok, {len(fails)} failing.\n\n")

    by_cause: dict[str, list[dict]] = defaultdict(list)
    for r in fails:
        by_cause[cause_of(r, entries.get(r["name"]))].append(r)
    titles = {c: t for c, _, t in CAUSES}
    titles["other"] = "other"
    w("## Failures by cause\n\n| cause | programs |\n|---|---|\n")
    for c, rs in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        w(f"| {titles[c]} | {len(rs)} |\n")
    w("\n")
    for c, rs in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        w(f"### {titles[c]} ({len(rs)})\n\n")
        msgs: dict[str, list[str]] = defaultdict(list)
        if c == "lapack":
            per: dict[str, list[str]] = defaultdict(list)
            for r in rs:
                m = re.search(r"@(lapack_\w+)", r.get("error", ""))
                per[m.group(1) if m else "?"].append(r["name"].replace("linalg_", ""))
            w("All: `run error: 'stablehlo.custom_call' op: unsupported target @T; register a "
              "Python callable for it (shlo.run(..., custom_calls={'T': fn}))`. The first "
              "target each program hits (a program may call several; all are in the inventory "
              "below):\n\n| target | n | programs (linalg_ prefix dropped) |\n|---|---|---|\n")
            for t, names in sorted(per.items()):
                w(f"| {t} | {len(names)} | {', '.join(sorted(names))} |\n")
            w("\n")
            rs_iter = []
        else:
            rs_iter = rs
        for r in rs_iter:
            msg = strip_loc(r.get("error", "")) if not r["status"].startswith("mismatch") \
                else f"err {r.get('err', 0):.3g}x tol; {r.get('err_note', '')}"
            msg = re.sub(r"%[\w#]+", "%v", msg)
            msg = re.sub(r"tensor<[^>]*>", "tensor<...>", msg)
            msgs[f"{r['status']}: {msg}"].append(r["name"])
        for msg, names in sorted(msgs.items(), key=lambda kv: -len(kv[1])):
            w(f"- `{msg[:400]}`\n  - {len(names)}: {', '.join(names[:60])}"
              f"{' ...' if len(names) > 60 else ''}\n")
        ex = rs[0]
        full = ex.get("error_full") or ex.get("error", "")
        w(f"\nExample, {ex['name']}:\n\n```\n{full[:1500]}\n```\n\n")
        if ex.get("traceback"):
            w(f"```\n{ex['traceback'][-1200:]}\n```\n\n")

    w("## Custom-call targets in the zoo (attributes exactly as emitted)\n\n")
    inv = custom_call_inventory(root, list(entries.values()))
    for target in sorted(inv):
        w(f"### `{target}`\n\n")
        for (bc, bcs, fa, api, side), slot in inv[target].items():
            w(f"- mhlo.backend_config = `{bc or '-'}`, backend_config = `{bcs or '-'}`, "
              f"frontend_attributes = `{fa or '-'}`, api_version = {api or '-'}"
              f"{', has_side_effect' if side else ''}\n")
            for t in sorted(slot["types"]):
                w(f"  - types: `{t[:300]}`\n")
            for lay in sorted(slot["layouts"]):
                w(f"  - layouts: `{lay[:300]}`\n")
            if slot["aliases"]:
                w(f"  - aliases: {'; '.join(sorted(slot['aliases']))}\n")
            progs = slot["programs"]
            w(f"  - in {len(progs)}: {', '.join(progs[:12])}{' ...' if len(progs) > 12 else ''}\n")
        w("\n")

    w("## Non-StableHLO ops and attributes seen\n\n| program | non-stablehlo ops (count) | "
      "dense_resource | sdy | mhlo attrs |\n|---|---|---|---|---|\n")
    for e in entries.values():
        ops = e.get("non_stablehlo_ops") or {}
        ops = {k: v for k, v in ops.items() if not k.startswith(("sdy.", "mhlo."))}
        if ops or e.get("dense_resource") or e.get("sdy"):
            if e["group"] == "linalg" and not ops:
                continue
            w(f"| {e['name']} | {', '.join(f'{k} ({v})' for k, v in sorted(ops.items())) or '-'}"
              f" | {e.get('dense_resource', 0)} | {' '.join(e.get('sdy') or []) or '-'} | "
              f"{' '.join(e.get('mhlo_attrs') or [])} |\n")
    lin = [e for e in entries.values() if e["group"] == "linalg"]
    if lin:
        sdy_lin = sorted({s for e in lin for s in e.get("sdy") or []})
        w(f"\nAll {len(lin)} linalg programs carry: {' '.join(sdy_lin) or 'no sdy'}\n")

    w("\n## Timing of the programs that ran (shlo vs XLA, ms; median)\n\n"
      "XLA source: x = this .mlir text compiled by jaxlib and timed right before shlo; "
      "m = export-side time from the manifest.\n\n"
      "| program | status | err/tol | f64 err shlo / XLA | shlo first | shlo | XLA | src | "
      "shlo/XLA |\n|---|---|---|---|---|---|---|---|---|\n")
    for r in results:
        if r.get("shlo_s") is None:
            continue
        e64 = (f"{r['err64_shlo']:.3g} / {r['err64_xla']:.3g}" if "err64_shlo" in r else "-")
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else "-"
        w(f"| {r['name']} | {r['status']} | {r.get('err', 0):.3g} | {e64} | "
          f"{fmt_t(r.get('first_s'))} | {fmt_t(r.get('shlo_s'))} | {fmt_t(r.get('xla_s'))} | "
          f"{r.get('xla_src', '')} | {ratio} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
