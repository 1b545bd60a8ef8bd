"""Profile the inside of a Triton vector add with nested Proton scopes.

On a GPU: runs the instrumented kernel, checks its result against the plain
one, reads the profile buffer and prints each scope's cycles per warp.
Without a GPU: says so, compiles the instrumented kernel for sm_90 (ptxas
included) and prints what each warp would record.
"""

import argparse
import json

import numpy as np
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton.language as pl
from proton import buffer
from proton.compiler import PipelineOptions
from proton.hook import InstrumentationHook


@triton.jit
def vector_add(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    with pl.scope("kernel"):
        with pl.scope("load"):
            a = tl.load(x + offsets, mask=mask)
            b = tl.load(y + offsets, mask=mask)
        with pl.scope("store"):
            tl.store(out + offsets, a + b, mask=mask)


def gpu_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def print_layout(meta):
    layout = meta["layout"]
    print(f"kernel {meta['kernel']}: {len(meta['scopes'])} scopes, {layout['num_warps']} warps, "
          f"warps recording {layout['warps']}, {layout['clock_bits']}-bit clock, {layout['buffer_type']} buffer")
    print(f"  {layout['capacity']} records per warp ({layout['segment_bytes']} B), "
          f"{meta['profile_scratch_size']} B of profile_scratch per CTA")
    for scope in meta["scopes"]:
        parent = meta["scopes"][scope["parent"]]["name"] if scope["parent"] >= 0 else "-"
        print(f"  scope {scope['id']} {scope['name']!r:10} parent {parent!r:10} at {scope['loc']}")


def run_on_cpu(options):
    print("No GPU found: compiling the instrumented kernel for sm_90 instead (nothing runs).")
    source = triton.compiler.ASTSource(fn=vector_add, signature={"x": "*fp32", "y": "*fp32", "out": "*fp32",
                                                                 "n": "i32"}, constexprs={"BLOCK": 1024})
    with InstrumentationHook(options, "example-cpu"):
        kernel = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                                options={"instrumentation_mode": triton.knobs.compilation.instrumentation_mode})
    meta = json.loads(kernel.metadata.proton)
    print_layout(meta)
    clock_reads = [l.strip() for l in kernel.asm["ptx"].splitlines() if "%clock" in l]
    print(f"  PTX: {len(clock_reads)} clock reads, e.g. {clock_reads[0]!r}; cubin {len(kernel.asm['cubin'])} B")
    print(f"Each warp of each CTA would record {2 * len(meta['scopes'])} events.")


def run_on_gpu(options, n):
    import torch
    from triton.runtime import _allocation

    buffers = []
    _allocation.set_profile_allocator(
        lambda size, align, stream: buffers.append(torch.zeros(size, dtype=torch.uint8, device="cuda")) or buffers[-1])
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    with InstrumentationHook(options, "example-gpu"):
        kernel = vector_add[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    _allocation.set_profile_allocator(None)
    assert torch.equal(out, x + y), "instrumented kernel computed a wrong result"
    meta = json.loads(kernel.metadata.proton)
    print_layout(meta)
    profile = buffer.read(buffers[-1].cpu().numpy(), meta["layout"], grid[0])
    tags = profile.records[..., 0]
    clocks = profile.records[..., 1].astype(np.int64)
    print(f"{grid[0]} CTAs, events per warp {np.unique(profile.counts).tolist()}, dropped {int(profile.dropped.sum())}")
    for scope in meta["scopes"]:
        start = np.argmax(tags == scope["id"], axis=-1)
        end = np.argmax(tags == (scope["id"] | 1 << 31), axis=-1)
        cycles = (np.take_along_axis(clocks, end[..., None], -1) - np.take_along_axis(clocks, start[..., None], -1))
        cycles %= 1 << 32
        print(f"  {scope['name']:8} mean {cycles.mean():8.1f} cycles per warp (min {cycles.min()}, max {cycles.max()})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20)
    parser.add_argument("--clock64", action="store_true", help="store 64-bit clocks (16-byte records)")
    parser.add_argument("--warp-ids", type=str, default="", help="selective sampling: comma-separated warp ids")
    args = parser.parse_args()
    warps = tuple(int(w) for w in args.warp_ids.split(",") if w)
    options = PipelineOptions(clock_bits=64 if args.clock64 else 32,
                              sampling_strategy="selective" if warps else "none", sampling_options=warps)
    if gpu_available():
        run_on_gpu(options, args.n)
    else:
        run_on_cpu(options)


if __name__ == "__main__":
    main()
