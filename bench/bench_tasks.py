"""Device time of the explicit-buffer task profiler (proton.tasks) side by side
with the compiler plugin (proton.language scopes around the same regions) on
the same kernel, in one run: CUPTI kernel durations (torch.profiler), median
of N launches, ratio to the kernel with ENABLE_PROFILING=False.

    python3 bench/bench_tasks.py --out bench/results/<dir>
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import proton  # noqa: E402
import proton.language as pl  # noqa: E402
from proton.tasks import alloc_profiler_buffer  # noqa: E402
import task_profiler  # noqa: E402
from overhead.timing import cupti_launch_durations_us  # noqa: E402


@triton.jit
def scaled_add_scopes(
    x_ptr, y_ptr, out_ptr, a, n, profiler_buffer, BLOCK: tl.constexpr, ENABLE_PROFILING: tl.constexpr
):
    # examples/task_profiler.py's scaled_add with the plugin's scopes instead.
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    pl.enter_scope("load")
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    pl.exit_scope("load")
    pl.enter_scope("compute")
    z = a * x + y
    pl.exit_scope("compute")
    pl.enter_scope("store")
    tl.store(out_ptr + offsets, z, mask=mask)
    pl.exit_scope("store")


def measure(kernel, enable, n, launches, session=False):
    import torch

    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    ctas = triton.cdiv(n, 1024)
    buffer = alloc_profiler_buffer(ctas * 8)

    def launch():
        return kernel[(ctas,)](x, y, out, 2.0, n, buffer, BLOCK=1024, ENABLE_PROFILING=enable)

    if session:
        proton.start(os.path.join(tempfile.mkdtemp(), "bench_tasks"), backend="instrumentation", quiet=True)
    try:
        _, durations = cupti_launch_durations_us(launch, launches)
    finally:
        if session:
            proton.finalize()
    assert torch.allclose(out, 2.0 * x + y)
    return statistics.median(durations)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=None)
    p.add_argument("--launches", type=int, default=100)
    args = p.parse_args()
    rows = []
    for log2n in (20, 26):
        n = 1 << log2n
        plain = measure(task_profiler.scaled_add, False, n, args.launches)
        tasks = measure(task_profiler.scaled_add, True, n, args.launches)
        plugin = measure(scaled_add_scopes, False, n, args.launches, session=True)
        for variant, us in (
            ("plain (ENABLE_PROFILING=False)", plain),
            ("proton.tasks", tasks),
            ("plugin (proton.language, default mode)", plugin),
        ):
            rows.append({"n": f"2^{log2n}", "variant": variant, "median_us": us, "ratio": us / plain})
    lines = ["| n | variant | median us | ratio |", "| --- | --- | --- | --- |"]
    lines += [f"| {r['n']} | {r['variant']} | {r['median_us']:.2f} | {r['ratio']:.3f}x |" for r in rows]
    print("\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "tasks_overhead.json"), "w") as f:
            json.dump(rows, f, indent=1)
        with open(os.path.join(args.out, "tasks_overhead.md"), "w") as f:
            f.write("# proton.tasks vs the plugin: scaled_add (3 tasks/scopes per CTA), CUPTI median\n\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
