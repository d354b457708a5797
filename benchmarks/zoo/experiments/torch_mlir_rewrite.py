"""Catalogue experiment: torch-mlir text with dense_resource -> dense<"0x..."> (4-byte alignment
prefix dropped) and arith.constant -> stablehlo.constant, run on shlo against PyTorch.

    PYTHONPATH=/path/to/shlo python torch_mlir_rewrite.py torch_resnet18
"""
import re, sys, time, json
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from zoo_common import unpack, read_manifest, zoo_dir
root = zoo_dir()
name = sys.argv[1]
text = (root / f"{name}.mlir").read_text()
body, _, res = text.partition("{-#")
blobs = dict(re.findall(r'^\s*([\w.]+): "0x([0-9A-Fa-f]*)"', res, re.M))
def sub(m):
    return f'dense<"0x{blobs[m.group(1)][8:]}">'
body = re.sub(r"dense_resource<([\w.]+)>", sub, body)
body = body.replace("arith.constant", "stablehlo.constant")
import shlo
e = next(x for x in read_manifest(root) if x["name"] == name)
ins = unpack(root / e["files"]["inputs"], e["in_dtypes"]); refs = unpack(root / e["files"]["ref"], e["out_dtypes"])
try:
    m = shlo.parse(body, name + ".rewritten.mlir"); shlo.verify(m)
    t0 = time.perf_counter(); out = shlo.run(m, *ins); t1 = time.perf_counter() - t0
    t0 = time.perf_counter(); out = shlo.run(m, *ins); t2 = time.perf_counter() - t0
    err = max(float(np.max(np.abs(np.asarray(o, np.float64) - r))) for o, r in zip(out, refs))
    print(json.dumps({"name": name, "status": "ok", "max_abs_err_vs_torch": err, "first_s": t1, "second_s": t2, "eager_s": e.get("torch_eager_time_s")}))
except Exception as ex:
    print(json.dumps({"name": name, "status": type(ex).__name__, "error": str(ex)[:500]}))
