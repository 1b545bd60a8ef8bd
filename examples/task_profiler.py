"""Explicit-buffer task profiling: the kernel takes a profile buffer as an
argument and records its tasks itself, with no compiler plugin.

Two kernels, as users of this API expect:
- `tile_copy`: a persistent copy whose programs walk the tiles; a full tile
  is a "perfect" task, the masked tail tile a "non-perfect" one;
- `scaled_add`: three task types per tile ("load", "compute", "store").

    python3 examples/task_profiler.py [--no-profiling]

writes tile_copy_0.pftrace and scaled_add_0.pftrace (open in
ui.perfetto.dev): tracks GPU > SM > CTA > group, one slice per task.
"""

import argparse

import triton
import triton.language as tl

from proton.gpu import why_no_gpu

from proton.tasks import Profiler, ProfilerBuffer

COPY_TASKS = ["perfect", "non-perfect"]
ADD_TASKS = ["load", "compute", "store"]


@triton.jit
def tile_copy(src, dst, n, profiler_buffer, BLOCK: tl.constexpr, ENABLE_PROFILING: tl.constexpr):
    profiler = Profiler.create(profiler_buffer, 0, 1, True, ENABLE_PROFILING)
    for tile in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
        offsets = tile * BLOCK + tl.arange(0, BLOCK)
        task = tl.where((tile + 1) * BLOCK <= n, 0, 1)  # 0: perfect, 1: non-perfect
        profiler = profiler.record(True, task)
        mask = offsets < n
        tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)
        profiler = profiler.record(False, task)


@triton.jit
def scaled_add(x_ptr, y_ptr, out_ptr, a, n, profiler_buffer, BLOCK: tl.constexpr, ENABLE_PROFILING: tl.constexpr):
    profiler = Profiler.create(profiler_buffer, 0, 1, True, ENABLE_PROFILING)
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    profiler = profiler.record(True, 0)
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    profiler = profiler.record(False, 0)
    profiler = profiler.record(True, 1)
    z = a * x + y
    profiler = profiler.record(False, 1)
    profiler = profiler.record(True, 2)
    tl.store(out_ptr + offsets, z, mask=mask)
    profiler = profiler.record(False, 2)


def run_tile_copy(n=(1 << 20) + 300, block=1024, programs=132, slots=8192, enable=True, trace="tile_copy.pftrace"):
    import torch

    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    with ProfilerBuffer(slots, trace, COPY_TASKS) as buffer:
        tile_copy[(programs,)](src, dst, n, buffer, BLOCK=block, ENABLE_PROFILING=enable)
    assert torch.equal(src, dst), "tile_copy: wrong result"
    return buffer


def run_scaled_add(n=1 << 20, block=1024, slots=None, enable=True, trace="scaled_add.pftrace"):
    import torch

    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    ctas = triton.cdiv(n, block)
    with ProfilerBuffer(slots or ctas * 8, trace, ADD_TASKS) as buffer:
        scaled_add[(ctas,)](x, y, out, 2.0, n, buffer, BLOCK=block, ENABLE_PROFILING=enable)
    assert torch.allclose(out, 2.0 * x + y), "scaled_add: wrong result"
    return buffer


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--no-profiling", action="store_true", help="ENABLE_PROFILING=False (nothing recorded)")
    args = p.parse_args()
    reason = why_no_gpu()
    if reason:
        print(f"task_profiler.py: nothing runs: {reason}")
        return 0
    run_tile_copy(enable=not args.no_profiling)
    run_scaled_add(enable=not args.no_profiling)
    print("wrote tile_copy_0.pftrace and scaled_add_0.pftrace" if not args.no_profiling else "ran unprofiled")


if __name__ == "__main__":
    main()
