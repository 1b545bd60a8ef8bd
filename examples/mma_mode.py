"""MMA mode: when each warp issued its matrix multiplies and how long it
waited for them, in a kernel without a single marker.

On a Hopper GPU: profiles a Triton fp16 matmul with mode="mma", checks the
result against a plain run, prints each MMA scope's count and mean duration
per warp, and writes mma.chrome_trace and mma.pftrace (ui.perfetto.dev shows
mma.issue and mma.wait slices on every warp). Without one: compiles the
kernel for sm_90 (ptxas included) in an MMA session and prints the scopes
the compiler added and the PTX around them.
"""

import json
import re
from collections import defaultdict

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton

BM, BN, BK = 128, 128, 64


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


def run_on_gpu(m=512, n=512, k=1024):
    import torch

    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    plain, profiled = (torch.empty(m, n, device="cuda", dtype=torch.float16) for _ in range(2))
    grid = (m // BM, n // BN)
    matmul[grid](a, b, plain, m, n, k, BM=BM, BN=BN, BK=BK, num_warps=4)
    proton.start("mma", backend="instrumentation", mode="mma")
    matmul[grid](a, b, profiled, m, n, k, BM=BM, BN=BN, BK=BK, num_warps=4)
    report = proton.finalize()
    assert torch.equal(plain, profiled), "the profiled matmul differs from the plain one"
    per_scope = defaultdict(list)
    for event in json.load(open(report.files["chrome_trace"]))["traceEvents"]:
        if event["ph"] == "X":
            per_scope[event["name"]].append(event["dur"])
    warps = grid[0] * grid[1] * 4
    for name, durations in sorted(per_scope.items()):
        mean_ns = 1000 * sum(durations) / len(durations)
        print(f"{name:10} {len(durations) / warps:5.1f} per warp, mean {mean_ns:8.1f} ns")
    print(f"K loop: {k // BK} iterations; trace in {report.files['chrome_trace']} and {report.files['pftrace']}")


def run_on_cpu():
    print(f"No GPU run: {proton.gpu.why_no_gpu()}. Compiling for sm_90 instead (nothing runs).")
    proton.start("mma", backend="instrumentation", mode="mma", quiet=True)
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    source = triton.compiler.ASTSource(fn=matmul, signature=signature, constexprs=dict(BM=BM, BN=BN, BK=BK))
    kernel = triton.compile(
        source,
        target=GPUTarget("cuda", 90, 32),
        options={"instrumentation_mode": triton.knobs.compilation.instrumentation_mode},
    )
    proton.finalize()
    for scope in json.loads(kernel.metadata.proton)["scopes"]:
        print(f"scope {scope['id']} {scope['name']!r:12} at {scope['loc']}")
    shown = [line.strip() for line in kernel.asm["ptx"].splitlines() if re.search(r"%clock64;|wgmma\.", line)]
    print("PTX, clock reads and wgmma in order:")
    for line in shown[1:-1]:  # without the kernel's entry and exit stamps
        print("  " + line[:70])


if __name__ == "__main__":
    if proton.gpu.why_no_gpu() is None:
        run_on_gpu()
    else:
        run_on_cpu()
