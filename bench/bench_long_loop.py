"""Long programs on the GPU: a loop of many launches of a small instrumented
kernel, and a CUDA graph replayed many times, each variant in its own process.

    python3 bench/bench_long_loop.py [--launches 2000] [--long-launches 20000]
        [--replays 1000] [--json OUT.json] [--markdown OUT.md]

Variants of the loop (the same kernel source, bench/kernels.py's vector_add:
three scopes, 132 CTAs x 4 warps, 1,584 events per launch):
    plain       no session
    proton      this package, `data="trace"` (Chrome + Perfetto traces)
    reference   Triton's own `triton.profiler` instrumentation backend, trace data
Each process times the loop (wall clock around N launches and one
synchronize, after a first launch that compiles), finalize, the events
recorded, the bytes written and the peak resident memory. Ratios are against
the plain loop measured in the same run. The graph case captures 10 launches
in a `torch.cuda.CUDAGraph` inside a proton session, replays it, and reports
how many replays' events the session recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CTAS, BLOCK, WARPS = 132, 1024, 4
EVENTS_PER_LAUNCH = CTAS * WARPS * 3


def _kernel(variant):
    sys.path.insert(0, HERE)
    import kernels

    return kernels.build("vector_add", variant)


def _tensors():
    import torch

    n = CTAS * BLOCK
    x = torch.rand(n, device="cuda")
    return x, torch.rand(n, device="cuda"), torch.empty(n, device="cuda")


def _start(variant, base):
    if variant == "proton":
        import proton

        proton.start(base, backend="instrumentation", data="trace", quiet=True)
    elif variant == "reference":
        import triton.profiler as tp

        tp.start(base, backend="instrumentation", data="trace")


def _finalize(variant):
    if variant == "proton":
        import proton

        report = proton.finalize()
        return {"events": report.events, "launches_kept": report.launches_kept, "errors": len(report.errors)}
    if variant == "reference":
        import triton.profiler as tp

        tp.finalize()
    return {}


def _written(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def run_loop(variant: str, launches: int) -> dict:
    import torch

    kernel = _kernel("plain" if variant == "plain" else variant)
    x, y, out = _tensors()
    folder = tempfile.mkdtemp(prefix=f"loop_{variant}_")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _start(variant, os.path.join(folder, "run"))
    grid = (CTAS,)
    kernel[grid](x, y, out, x.numel(), BLOCK=BLOCK, num_warps=WARPS)  # compiles
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        kernel[grid](x, y, out, x.numel(), BLOCK=BLOCK, num_warps=WARPS)
    torch.cuda.synchronize()
    loop_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    result = _finalize(variant)
    finalize_s = time.perf_counter() - t1
    right = bool(torch.equal(out, x + y))
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "variant": variant,
        "launches": launches,
        "loop_s": loop_s,
        "us_per_launch": 1e6 * loop_s / launches,
        "finalize_s": finalize_s if variant != "plain" else None,
        "bytes_written": _written(folder),
        "peak_rss_growth_mb": (rss1 - rss0) / 1024,
        "output_right": right,
        "expected_events": (launches + 1) * EVENTS_PER_LAUNCH,
        **result,
    }


def run_graph(replays: int) -> dict:
    import torch

    kernel = _kernel("proton")
    x, y, out = _tensors()
    folder = tempfile.mkdtemp(prefix="graph_")
    _start("proton", os.path.join(folder, "run"))
    grid = (CTAS,)
    kernel[grid](x, y, out, x.numel(), BLOCK=BLOCK, num_warps=WARPS)  # compiles outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(10):
                kernel[grid](x, y, out, x.numel(), BLOCK=BLOCK, num_warps=WARPS)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    torch.cuda.synchronize()
    replay_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    result = _finalize("proton")
    return {
        "variant": "proton_graph",
        "replays": replays,
        "launches_per_replay": 10,
        "us_per_replay": 1e6 * replay_s / replays,
        "finalize_s": time.perf_counter() - t1,
        "expected_events_all_replays": (1 + 10 * replays) * EVENTS_PER_LAUNCH,
        "output_right": bool(torch.equal(out, x + y)),
        **result,
    }


def _child(args) -> int:
    if args.child == "graph":
        result = run_graph(args.replays)
    else:
        result = run_loop(args.child, args.launches)
    print("RESULT " + json.dumps(result))
    return 0


def _spawn(*extra) -> dict:
    proc = subprocess.run([sys.executable, __file__, *extra], capture_output=True, text=True, timeout=900)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"args": list(extra), "error": (proc.stderr or proc.stdout)[-3000:]}


def _markdown(rows, plain) -> str:
    lines = [
        "| case | launches | us/launch | ratio to plain | added us/launch | finalize s | s per M events "
        "| events (expected) | MB written | peak RSS growth MB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        if "error" in r:
            last = r["error"].splitlines()[-1][:80] if r["error"] else ""
            lines.append(f"| {' '.join(r['args'])} | failed: {last} |||||||||")
            continue
        if r["variant"] == "proton_graph":
            lines.append(
                f"| CUDA graph, 10 launches x {r['replays']} replays | {10 * r['replays']} | "
                f"{r['us_per_replay'] / 10:.1f} | | | "
                f"{r['finalize_s']:.2f} | | {r.get('events')} ({r['expected_events_all_replays']}) | | |"
            )
            continue
        us = r["us_per_launch"]
        base = plain.get(r["launches"])
        ratio = f"{us / base:.2f}x" if base else ""
        added = f"{us - base:.1f}" if base else ""
        fin = f"{r['finalize_s']:.2f}" if r.get("finalize_s") is not None else ""
        events = r.get("events")
        per_m = f"{r['finalize_s'] / (events / 1e6):.2f}" if events else ""
        lines.append(
            f"| {r['variant']} | {r['launches']} | {us:.1f} | {ratio} | {added} | {fin} | {per_m} | "
            f"{events if events is not None else ''} ({r['expected_events'] if r['variant'] != 'plain' else ''}) | "
            f"{r['bytes_written'] / 1e6:.0f} | {r['peak_rss_growth_mb']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--long-launches", type=int, default=20000, help="proton only, for peak memory (0: skip)")
    parser.add_argument("--replays", type=int, default=1000)
    parser.add_argument("--variants", default="plain,proton,reference")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _child(args)
    rows = []
    for variant in args.variants.split(","):
        rows.append(_spawn("--child", variant, "--launches", str(args.launches)))
        print(json.dumps(rows[-1])[:400], flush=True)
    if args.long_launches:
        for variant in ("plain", "proton"):
            rows.append(_spawn("--child", variant, "--launches", str(args.long_launches)))
            print(json.dumps(rows[-1])[:400], flush=True)
    if args.replays:
        rows.append(_spawn("--child", "graph", "--replays", str(args.replays)))
        print(json.dumps(rows[-1])[:400], flush=True)
    plain = {r["launches"]: r["us_per_launch"] for r in rows if r.get("variant") == "plain"}
    table = _markdown(rows, plain)
    print(table)
    meta = {"date": time.strftime("%Y-%m-%d"), "host": platform.node(), "python": platform.python_version()}
    try:
        import torch
        import triton

        meta.update(gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__)
    except Exception as error:  # noqa: BLE001 - the table is still worth writing
        meta["environment_error"] = str(error)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            where = f"{meta.get('gpu', '?')}, Triton {meta.get('triton', '?')}, {meta['date']}"
            title = f"Long loop and graph replays ({where})"
            f.write(f"# {title}\n\n")
            f.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
