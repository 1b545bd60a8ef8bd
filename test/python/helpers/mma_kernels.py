"""Kernels of the MMA-mode tests (CPU compiles and the GPU test): a matmul
without markers, which MMA mode instruments by itself, and two kernels for
the edge cases."""

import triton
import triton.language as tl

import proton.language as pl


@triton.jit
def matmul_plain(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C = A @ B for row-major fp16 A (M x K), B (K x N); M, N, K multiples of the block."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)  # DOT_LINE: the MMA scopes' source location
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def add_plain(x, y, out, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out + offsets, tl.load(x + offsets, mask=mask) + tl.load(y + offsets, mask=mask), mask=mask)


@triton.jit
def reserved_name(x, BLOCK: tl.constexpr):
    with pl.scope("mma.wait"):
        tl.store(x + tl.arange(0, BLOCK), tl.zeros((BLOCK,), dtype=tl.float32))


def dot_line() -> int:
    """The line of `tl.dot` in matmul_plain."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if "# DOT_LINE" in line and "tl.dot" in line)
