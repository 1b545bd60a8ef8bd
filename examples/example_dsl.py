"""Profile the inside of Triton and Gluon kernels with Proton scopes.

On a GPU: profiles a Triton vector add with nested scopes and a Gluon Hopper
matmul (WGMMA + TMA, sm_90 only) in one session, checks both results against
plain runs, and writes example.chrome_trace, example.pftrace (open in
ui.perfetto.dev) and example.hatchet (per-scope cycles; `--op-measure` writes
only this tree). Without a GPU: says so, compiles both instrumented kernels
for sm_90 (ptxas included) and prints what each warp would record.
"""

import argparse
import json
import os
import sys

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton
import proton.writers.hatchet_tree
import proton.language as pl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gluon_matmul  # noqa: E402


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
    return proton.gpu.why_no_gpu() is None


def build_mode(args) -> proton.mode.Default:
    optimizations = ("clock32", "time_shift") if args.increase_accuracy else ()
    warps = tuple(int(w) for w in args.warp_ids.split(",") if w) if args.warp_sampling else ()
    cls = proton.mode.OpMeasure if args.op_measure else proton.mode.Default
    return cls(
        optimizations=optimizations,
        sampling_strategy="selective" if warps else "none",
        sampling_options=warps,
        buffer_size=args.buffer_size,
    )


def print_layout(meta):
    layout = meta["layout"]
    print(
        f"kernel {meta['kernel']}: {len(meta['scopes'])} scopes, {layout['num_warps']} warps, "
        f"warps recording {layout['warps']}, {layout['clock_bits']}-bit clock, {layout['buffer_type']} buffer, "
        f"{layout['capacity']} records per warp, {meta['profile_scratch_size']} B of profile_scratch per CTA"
    )
    for scope in meta["scopes"]:
        parent = meta["scopes"][scope["parent"]]["name"] if scope["parent"] >= 0 else "-"
        print(f"  scope {scope['id']} {scope['name']!r:12} parent {parent!r:10} at {scope['loc']}")


def run_on_cpu(mode):
    print(
        f"No GPU run: {proton.gpu.why_no_gpu()}. Compiling the instrumented kernels for sm_90 instead (nothing runs)."
    )
    proton.start("example", backend="instrumentation", mode=mode, quiet=True)
    source = triton.compiler.ASTSource(
        fn=vector_add, signature={"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, constexprs={"BLOCK": 1024}
    )
    kernels = [
        triton.compile(
            source,
            target=GPUTarget("cuda", 90, 32),
            options={"instrumentation_mode": triton.knobs.compilation.instrumentation_mode},
        ),
        gluon_matmul.compile_for_sm90(),
    ]
    proton.finalize()
    for kernel in kernels:
        meta = json.loads(kernel.metadata.proton)
        print_layout(meta)
        clock_reads = [line.strip() for line in kernel.asm["ptx"].splitlines() if "%clock" in line]
        print(f"  PTX: {len(clock_reads)} clock reads, e.g. {clock_reads[0]!r}; cubin {len(kernel.asm['cubin'])} B")


def run_on_gpu(mode, n):
    import torch

    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    plain_add = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    vector_add[grid](x, y, plain_add, n, BLOCK=1024)
    hopper = torch.cuda.get_device_capability()[0] == 9
    if hopper:
        a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
        plain_mm = gluon_matmul.run_matmul(1024, 1024, 1024, a=a, b=b)

    proton.start("example", backend="instrumentation", mode=mode)
    out = torch.empty_like(x)
    vector_add[grid](x, y, out, n, BLOCK=1024)
    if hopper:
        profiled_mm = gluon_matmul.run_matmul(1024, 1024, 1024, a=a, b=b)
    report = proton.finalize()

    assert torch.equal(out, plain_add), "the instrumented vector add computed a different result"
    if hopper:
        assert torch.equal(profiled_mm, plain_mm), "the instrumented matmul computed a different result"
    else:
        print("(the Gluon matmul needs a Hopper GPU: skipped)")
    if "tree" in report.files:
        root, _devices = json.load(open(report.files["tree"]))  # [ROOT, device info]
        for kernel in root["children"]:
            _print_tree(kernel, 0)


def _print_tree(node, depth):
    # Nodes hold their own (exclusive) cycles; a scope took its own and its children's.
    cycles = proton.writers.hatchet_tree.inclusive(node)["metrics"].get("normalized_cycles", 0)
    print(
        f"{'  ' * depth}{node['frame']['name']:<{24 - 2 * depth}} {cycles:10.1f} cycles per warp"
        f"  ({node['metrics']['count']} instances)"
    )
    for child in node["children"]:
        _print_tree(child, depth + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 20, help="vector add elements")
    parser.add_argument("--op-measure", action="store_true", help="only the per-scope cycle tree (example.hatchet)")
    parser.add_argument("--warp-sampling", action="store_true", help="only the warps in --warp-ids record")
    parser.add_argument("--warp-ids", type=str, default="0,1,2,3", help="with --warp-sampling: warp ids")
    parser.add_argument(
        "--increase-accuracy",
        action="store_true",
        help="clock32 (half the record size) and time_shift (subtract the measured record cost)",
    )
    parser.add_argument(
        "--buffer-size",
        type=int,
        default=8192,
        help="record bytes per CTA (0: inferred, at most 1 KiB per warp); the matmul's 16 K steps "
        "write 68 records per warp",
    )
    args = parser.parse_args()
    mode = build_mode(args)
    print(f"mode: {mode}")
    if gpu_available():
        run_on_gpu(mode, args.n)
    else:
        run_on_cpu(mode)


if __name__ == "__main__":
    main()
