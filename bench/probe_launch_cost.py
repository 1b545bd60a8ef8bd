"""Where an instrumented launch's added time goes, on the GPU: the loop of
bench_long_loop.py (vector_add, three scopes, 132 CTAs x 4 warps) timed with
parts of the session's per-launch work taken away, each variant in its own
process, best of three loops of N launches.

    python3 bench/probe_launch_cost.py [--launches 2000] [--json OUT.json]

Variants:
    plain            no session, the kernel without markers
    plain_hook       no session, a launch hook that returns at once (Triton's
                     cost of calling a hook: launch metadata, the call)
    proton           an instrumentation session, as users run it
    proton_no_hook   the session's allocator only (its launch hook removed
                     after the compile; nothing is kept: a measurement only)
    fixed_scratch    the instrumented kernel writing into one preallocated
                     buffer through a trivial allocator, no hook (the kernel's
                     own cost plus Triton's allocator call)
    fixed_graph      fixed_scratch's launches captured in a CUDA graph and
                     replayed (device time per launch, no host work)
    plain_graph      the plain kernel the same way
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_long_loop as loop  # noqa: E402

VARIANTS = ("plain", "plain_hook", "proton", "proton_no_hook", "fixed_scratch", "plain_graph", "fixed_graph")
# Diagnostics, not in the default list: proton_big_chunks (the arena reserves
# 1 GiB at a time), proton_profile (cProfile of the proton loop, printed).


def _time(launch, launches: int, torch) -> float:
    best = None
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(launches):
            launch()
        torch.cuda.synchronize()
        took = (time.perf_counter() - t0) / launches * 1e6
        best = took if best is None else min(best, took)
    return best


def _graph_time(launch, launches: int, torch) -> float:
    graph, stream = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(100):
                launch()
    torch.cuda.synchronize()
    return _time(graph.replay, max(1, launches // 100), torch) / 100


def run(variant: str, launches: int) -> dict:
    import torch
    import triton
    from triton.runtime import _allocation

    instrumented = variant not in ("plain", "plain_hook", "plain_graph")
    kernel = loop._kernel("proton" if instrumented else "plain")
    x, y, out = loop._tensors()
    grid = (loop.CTAS,)

    def launch():
        kernel[grid](x, y, out, x.numel(), BLOCK=loop.BLOCK, num_warps=loop.WARPS)

    if variant == "plain_hook":
        triton.knobs.runtime.launch_enter_hook = lambda metadata: None
    if variant == "proton_big_chunks":
        from proton.recording import arena

        arena.MIN_CHUNK_BYTES = 1 << 30
    if instrumented:
        import proton

        proton.start(os.path.join(tempfile.mkdtemp(), "run"), backend="instrumentation", data="trace", quiet=True)
    launch()  # compiles
    torch.cuda.synchronize()
    if variant in ("proton_no_hook", "fixed_scratch", "fixed_graph"):
        triton.knobs.runtime.launch_enter_hook = None
    if variant in ("fixed_scratch", "fixed_graph"):
        scratch = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
        _allocation.set_profile_allocator(lambda size, alignment, stream: scratch)
    if variant == "proton_profile":
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        us = _time(launch, launches, torch)
        profile.disable()
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(20)
    elif variant.endswith("_graph"):
        us = _graph_time(launch, launches, torch)
    else:
        us = _time(launch, launches, torch)
    return {"variant": variant, "launches": launches, "us_per_launch": round(us, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print("RESULT " + json.dumps(run(args.child, args.launches)), flush=True)
        os._exit(0)  # the session is left open on purpose: finalize is not what this measures
    rows = []
    for variant in args.variants.split(","):
        proc = subprocess.run(
            [sys.executable, __file__, "--child", variant, "--launches", str(args.launches)],
            capture_output=True,
            text=True,
            timeout=600,
        )
        row = next(
            (json.loads(line[7:]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")),
            {"variant": variant, "error": (proc.stderr or proc.stdout)[-2000:]},
        )
        if variant == "proton_profile":
            row["profile"] = proc.stderr[-6000:]
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "profile"}), flush=True)
        print(row.get("profile", ""), end="", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
