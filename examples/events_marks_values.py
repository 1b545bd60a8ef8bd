"""Asynchronous events, marks and values in one kernel.

A row-sum kernel walks its tiles in a loop. Around that loop it records:

    scope  "sum"      the whole loop (a slice per warp)
    event  "copy"     starts before a tile's load is issued and ends in the
                      next iteration, once the data is in use: an interval
                      that crosses loop iterations (pl.allocate_event,
                      pl.start_event, pl.end_event)
    mark   "tile"     an instant per iteration (pl.mark)
    value  "iter"     the iteration index, an int32 (pl.record_value)
    value  "acc0"     the first element of the result, a float32

On a GPU: checks the result against torch, then prints, per warp of CTA 0,
how many of each the decoder found and the "iter" values in time order, and
writes events.chrome_trace, events.pftrace (ui.perfetto.dev: the events on
a per-CTA track with flow arrows, the marks as instants, the values as
counter tracks under each warp) and events.hatchet (proton-view -m
count,acc0 events.hatchet). Without one: compiles the kernel for sm_90
(ptxas included) and prints its record table.
"""

import json
from collections import Counter

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton
import proton.language as pl

CTAS, TILES, BLOCK, WARPS = 4, 6, 256, 4


@triton.jit
def row_sum(x, out, n_tiles, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    row = x + tl.program_id(0) * n_tiles * BLOCK
    acc = tl.zeros([BLOCK], tl.float32)
    copy = pl.allocate_event("copy")
    pl.enter_scope("sum")
    pl.start_event(copy)
    for i in range(n_tiles):
        tile = tl.load(row + i * BLOCK + offs)
        pl.end_event(copy)  # the previous iteration's copy is in use
        pl.mark("tile")
        pl.record_value("iter", i)
        pl.start_event(copy)
        acc += tile
    pl.end_event(copy)
    pl.exit_scope("sum")
    pl.record_value("acc0", tl.sum(tl.where(offs == 0, acc, 0.0)))
    tl.store(out + tl.program_id(0) * BLOCK + offs, acc)


def run_on_gpu():
    import torch

    x = torch.randn(CTAS, TILES, BLOCK, device="cuda")
    out = torch.empty(CTAS, BLOCK, device="cuda")
    proton.start("events", backend="instrumentation")
    row_sum[(CTAS,)](x, out, TILES, BLOCK=BLOCK, num_warps=WARPS)
    report = proton.finalize()
    torch.testing.assert_close(out, x.sum(dim=1))
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    kinds = Counter(t["ph"] for t in trace if t["ph"] != "M")
    print(f"Chrome trace events by phase: {dict(sorted(kinds.items()))} (X slices, s/f flows, i marks, C counters)")
    for warp in range(WARPS):  # CTA 0's warps: its process comes first
        series = [t for t in trace if t["ph"] == "C" and t["name"] == f"iter [warp {warp}]"]
        first_cta = [t for t in series if t["pid"] == series[0]["pid"]]
        print(f"  warp {warp}: iter {[int(t['args']['value']) for t in sorted(first_cta, key=lambda t: t['ts'])]}")
    root, _ = json.load(open(report.files["tree"]))

    def show(node, depth):
        metrics = {k: v for k, v in node["metrics"].items() if k in ("count", "iter", "acc0")}
        print(f"  {'  ' * depth}{node['frame']['name']!r}: {metrics}")
        for child in node["children"]:
            show(child, depth + 1)

    for node in root["children"][0]["children"]:
        show(node, 0)
    # Every warp records acc0: the tree's sum is WARPS times the CTAs' first elements.
    print(f"acc0 as the kernels wrote it, summed over warps: {WARPS * out[:, 0].sum().item():.6f}")
    print(f"wrote {report.files['chrome_trace']}, {report.files['pftrace']}, {report.files['tree']}")


def run_on_cpu():
    print(f"No GPU run: {proton.gpu.why_no_gpu()}. Compiling for sm_90 instead (nothing runs).")
    proton.start("events", backend="instrumentation", quiet=True)
    signature = {"x": "*fp32", "out": "*fp32", "n_tiles": "i32"}
    source = triton.compiler.ASTSource(fn=row_sum, signature=signature, constexprs={"BLOCK": BLOCK})
    kernel = triton.compile(
        source,
        target=GPUTarget("cuda", 90, 32),
        options={"instrumentation_mode": triton.knobs.compilation.instrumentation_mode, "num_warps": WARPS},
    )
    proton.finalize()
    for entry in json.loads(kernel.metadata.proton)["scopes"]:
        kind = entry.get("kind", "scope")
        print(f"record id {entry['id']}: {kind:6} {entry['name']!r:8} at {entry['loc']}")


if __name__ == "__main__":
    if proton.gpu.why_no_gpu() is None:
        run_on_gpu()
    else:
        run_on_cpu()
