"""One Perfetto timeline from torch.profiler and Proton (docs/torch_profiler.md).

On a GPU: runs a Triton vector add with Proton scopes and a torch op
inside torch.profiler.profile(), with a Proton instrumentation session
(no CUPTI, so torch.profiler keeps its kernels), checks the results, writes
torch_trace.json and run.pftrace, and merges them into timeline.pftrace:
each Proton launch's SM > CTA > warp tracks under its kernel on torch's
stream track, and timeline.svg, a picture of the first launches. Open
timeline.pftrace at https://ui.perfetto.dev. Without a GPU: says why and
exits.
"""

import argparse
import os
import sys

import triton
import triton.language as tl

import proton
import proton.language as pl


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    with pl.scope("load"):
        a = tl.load(x + offsets, mask=mask)
        b = tl.load(y + offsets, mask=mask)
    with pl.scope("store"):
        tl.store(out + offsets, a + b, mask=mask)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", default=".", help="where the three traces go")
    parser.add_argument("--launches", type=int, default=5)
    args = parser.parse_args()
    why = proton.gpu.why_no_gpu()
    if why is not None:
        print(f"no GPU ({why}): nothing to profile; see docs/torch_profiler.md")
        return 0
    import torch
    from torch.profiler import ProfilerActivity, profile

    n, block = 1 << 20, 1024
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, block),)
    run = os.path.join(args.out_dir, "run")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        proton.start(run, mode="default:optimizations=clock32")
        for _ in range(args.launches):
            add_kernel[grid](x, y, out, n, BLOCK=block)
            z = torch.relu(out)  # a torch kernel between them, on the same timeline
        torch.cuda.synchronize()
        report = proton.finalize()
    torch.testing.assert_close(out, x + y)
    torch.testing.assert_close(z, torch.relu(x + y))
    torch_trace = os.path.join(args.out_dir, "torch_trace.json")
    prof.export_chrome_trace(torch_trace)
    timeline = os.path.join(args.out_dir, "timeline.pftrace")
    picture = os.path.join(args.out_dir, "timeline.svg")
    merged = proton.export_with_torch(torch_trace, report.files["pftrace"], timeline, svg=picture)
    print(f"wrote {merged.output}: {len(merged.matched)} launches under torch's kernels; a picture in {picture}")
    return 0 if not merged.unmatched else 1


if __name__ == "__main__":
    sys.exit(main())
