"""A kernel that records values, shared by the CPU compile test and the
GPU test."""

import triton
import triton.language as tl

import proton.language as pl


@triton.jit
def sum_with_values(x, out, n_tiles, BLOCK: tl.constexpr):
    """Sums n_tiles tiles; records each iteration's index as the i32 value
    "iter" and the final partial sum's first element as the f32 value
    "acc0"."""
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n_tiles):
        pl.record_value("iter", i)
        acc += tl.load(x + i * BLOCK + offs)
    pl.record_value("acc0", tl.sum(tl.where(offs == 0, acc, 0.0)))
    tl.store(out + tl.program_id(0) * BLOCK + offs, acc)


SUM_WITH_VALUES_SIGNATURE = {"x": "*fp32", "out": "*fp32", "n_tiles": "i32", "BLOCK": "constexpr"}
