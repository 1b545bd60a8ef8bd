"""Kernels with asynchronous events and marks, shared by the CPU compile
tests and the GPU test."""

import triton
import triton.language as tl

import proton.language as pl


@triton.jit
def _end_copy(ev):
    # An event handle crosses a function call.
    pl.end_event(ev)


@triton.jit
def pipelined_sum(x, out, n_tiles, BLOCK: tl.constexpr):
    """Sums n_tiles tiles; the event "copy" starts before each tile's load
    is issued and ends in the next iteration (and after the loop), so it
    crosses loop iterations: n_tiles + 1 copies per warp. A mark "tile"
    per iteration."""
    ev = pl.allocate_event("copy")
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    pl.start_event(ev)
    for i in range(n_tiles):
        a = tl.load(x + i * BLOCK + offs)
        _end_copy(ev)
        pl.mark("tile")
        pl.start_event(ev)
        acc += a
    pl.end_event(ev)
    tl.store(out + tl.program_id(0) * BLOCK + offs, acc)


PIPELINED_SUM_SIGNATURE = {"x": "*fp32", "out": "*fp32", "n_tiles": "i32", "BLOCK": "constexpr"}
