#!/usr/bin/env python3
"""Proton overhead benchmark: plain vs proton vs Triton's built-in instrumentation.

Runs in one process, on the same kernels (bench/kernels.py), three variants:

    plain      no profiling (the kernels' markers are no-op builtins)
    proton     this project: proton.start(backend="instrumentation") ... proton.finalize()
    reference  Triton 3.6's own: triton.profiler.start(backend="instrumentation") ... finalize()

and measures
    device   CUPTI kernel durations (torch.profiler) of vector add 1M / 64M, a
             4096^3 fp16 matmul (one outer scope / one scope in the K loop), a fused
             row softmax (4096 x 4096 fp32) and a flash-attention forward
             (4 x 32 heads x 4096 x 64 fp16; scopes per KV block)
    dobench  wall time of a whole profiling session around a do_bench-style run of
             vector add 1M (start -> launches -> finalize), and the trace files' sizes
    compile  cold compile time (fresh Triton cache directory per compile)

Results: <out>/overhead_<gpu-slug>.json and .md (see bench/README.md).
Without a GPU it prints why and exits 0. The parts live in bench/overhead/
(one module each); this file wires them.
"""

import contextlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from overhead.cli import gpu_status, parse_args  # noqa: E402
from overhead.harness import Bench  # noqa: E402
from overhead.preflight import preflight_child  # noqa: E402


def main(argv=None):
    args = parse_args(argv)
    ok, why = gpu_status()
    if not ok:
        print(
            f"No GPU available: {why}.\n"
            "bench_overhead.py measures on an NVIDIA GPU (H100/H200, torch + triton 3.6); nothing was measured "
            "and no results were written."
        )
        return 0
    if args._preflight:
        return preflight_child(args)
    bench = Bench(args, why)
    try:
        return bench.run()
    finally:
        with contextlib.suppress(Exception):
            bench.save()


if __name__ == "__main__":
    sys.exit(main())
