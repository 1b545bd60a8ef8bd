"""Profile every kernel launch of a small program on the host side (CUPTI).

A few "training steps", each a Triton matmul and a Triton vector add inside
proton scopes, plus PyTorch copies. Each Triton kernel declares its flops and
bytes through `launch_metadata`, which `hook="triton"` records per launch.

    python examples/host_profile.py                 # profiles itself: host_example.hatchet
    proton-view -m time/us,tflop16/s,gbyte/s,util host_example.hatchet
    proton-profile --backend cupti --hook triton --context python examples/host_profile.py

Without a GPU it says so and exits.
"""

import sys

import triton
import triton.language as tl

import proton


def _matmul_metadata(grid, kernel, args):
    m, n, k = args["M"], args["N"], args["K"]
    return {"name": f"matmul_{m}x{n}x{k}", "flops16": 2.0 * m * n * k, "bytes": 2.0 * (m * k + k * n + m * n)}


@triton.jit(launch_metadata=_matmul_metadata)
def matmul(a, b, c, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        tile_a = tl.load(a + rows[:, None] * K + ks[None, :])
        tile_b = tl.load(b + ks[:, None] * N + cols[None, :])
        acc = tl.dot(tile_a, tile_b, acc)
    tl.store(c + rows[:, None] * N + cols[None, :], acc.to(tl.float16))


def _add_metadata(grid, kernel, args):
    return {"name": "add", "bytes": 12.0 * args["n"]}


@triton.jit(launch_metadata=_add_metadata)
def add(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)


def run(steps: int = 5) -> None:
    import torch

    size = 2048
    a = torch.randn(size, size, device="cuda", dtype=torch.float16)
    b = torch.randn(size, size, device="cuda", dtype=torch.float16)
    c = torch.empty_like(a)
    x = torch.randn(1 << 22, device="cuda")
    out = torch.empty_like(x)
    for _ in range(steps):
        with proton.scope("step"):
            with proton.scope("matmul"):
                matmul[(size // 128, size // 128)](a, b, c, size, size, size, BLOCK_M=128, BLOCK_N=128, BLOCK_K=64)
            with proton.scope("add"):
                add[(triton.cdiv(x.numel(), 1024),)](x, out, out, x.numel(), BLOCK=1024)
            with proton.scope("copy_back"):
                host = out[:1024].cpu()
    torch.cuda.synchronize()
    reference = (a.float() @ b.float()).half()
    error = (c.float() - reference.float()).abs().max().item()
    print(f"matmul max abs error vs torch: {error:.3f}; last value {float(host[0]):.3f}")


def main() -> int:
    reason = proton.gpu.why_no_gpu()
    if reason:
        print(f"host_profile.py: nothing to profile: {reason}")
        return 0
    if proton.sessions():  # already under proton-profile
        run()
    else:
        with proton.profile("host_example", backend="cupti", hook="triton") as profiled:
            run()
        print(
            f"wrote {profiled.report.files['tree']}: view with proton-view -m time/us,tflop16/s,util "
            "host_example.hatchet"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
