"""Gluon kernels with Proton scopes, written for the corpus.

Version shims (Triton 3.6 to 3.9):
  * TMA copies: 3.8 added `tma.async_load` / `tma.async_store`; 3.9 turned
    `async_copy_global_to_shared` / `async_copy_shared_to_global` into stubs
    that raise. `tma_load` / `tma_store` below pick the new name where it
    exists, else the old one.
  * Blackwell TMEM loads: 3.6 and 3.7 need the register layout
    (`get_tmem_reg_layout`); 3.8 removed that helper and infers the layout
    when `load()` gets none. `TMEM_LAYOUT_HELPER` says which applies.
  * `gl.warp_specialize(functions_and_args, worker_num_warps,
    worker_num_regs)`: the same positional form in 3.6-3.9, but
    `worker_num_regs` is required in 3.6 and optional (may be None) from 3.7:
    it is always passed (`WS_WORKER_REGS`), which every version accepts.
    Before 3.6 the call took (default_args, default_partition, worker_args,
    worker_partitions, ...): `WS_PAIRS` picks the form at import.
"""

import inspect

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

from triton.experimental.gluon.language.nvidia import blackwell

import proton.language as pl

tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global


TMEM_LAYOUT_HELPER = gl.constexpr(hasattr(blackwell, "get_tmem_reg_layout"))
# A stand-in where the helper is gone, never called there (TMEM_LAYOUT_HELPER).
get_tmem_reg_layout = getattr(blackwell, "get_tmem_reg_layout", None) or blackwell.TensorMemoryLayout

# Triton 3.4/3.5 spelled it warp_specialize(default_args, default_partition,
# worker_args, worker_partitions, worker_num_warps, worker_num_regs); 3.6 on
# take (function, args) pairs. The kernel picks its call with this constexpr.
WS_PAIRS = gl.constexpr("functions_and_args" in inspect.signature(gl.warp_specialize).parameters)
WS_WORKER_REGS = gl.constexpr(48)


@gluon.jit
def gluon_elementwise(x_ptr, y_ptr, out_ptr, n, BLOCK: gl.constexpr, TPW: gl.constexpr):
    """out = x * y + x with a 1-D blocked layout (4 elements per thread);
    TPW is the target's threads per warp."""
    layout: gl.constexpr = gl.BlockedLayout([4], [TPW], [gl.num_warps()], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    mask = offs < n
    with pl.scope("load"):
        x = gl.load(x_ptr + offs, mask=mask)
        y = gl.load(y_ptr + offs, mask=mask)
    with pl.scope("compute"):
        z = x * y + x
    with pl.scope("store"):
        gl.store(out_ptr + offs, z, mask=mask)


@gluon.jit
def gluon_row_sum(x_ptr, out_ptr, ROWS: gl.constexpr, COLS: gl.constexpr, TPW: gl.constexpr):
    """Row sums of a ROWS x COLS fp32 block per program, 2-D blocked layout."""
    layout: gl.constexpr = gl.BlockedLayout([1, 1], [1, TPW], [gl.num_warps(), 1], [1, 0])
    rows = gl.program_id(0) * ROWS + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, COLS, layout=gl.SliceLayout(0, layout))
    with pl.scope("load"):
        x = gl.load(x_ptr + rows[:, None] * COLS + cols[None, :])
    with pl.scope("reduce"):
        s = gl.sum(x, axis=1)
    gl.store(out_ptr + rows, s)


@gluon.jit
def gluon_hopper_matmul(a_desc, b_desc, c_desc, K):
    """C = A @ B for one BM x BN tile per CTA: TMA loads into NVMMA shared
    memory, WGMMA into registers, a TMA store. sm_90 only."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BN, 16]
    )
    acc = gl.zeros((BM, BN), dtype=gl.float32, layout=acc_layout)
    phase = 0
    with pl.scope("k_loop"):
        for k in range(0, K, BK):
            with pl.scope("tma"):
                mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                tma_load(a_desc, [off_m, k], bar, a_smem)
                tma_load(b_desc, [k, off_n], bar, b_smem)
                mbarrier.wait(bar, phase)
            phase ^= 1
            with pl.scope("mma"):
                acc = warpgroup_mma(a_smem, b_smem, acc, is_async=True)
                acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
    mbarrier.invalidate(bar)
    with pl.scope("epilogue"):
        c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        tma_store(c_desc, [off_m, off_n], c_smem)
        tma.store_wait(0)


@gluon.jit
def gluon_blackwell_matmul(a_desc, b_desc, c_desc, K):
    """C = A @ B for one BM x BN tile per CTA on datacenter Blackwell: TMA
    loads into NVMMA shared memory, a tcgen05 MMA into tensor memory (its
    completion tracked by an mbarrier), a TMEM load and a TMA store. sm_100
    only (tcgen05 and TMEM do not exist on sm_90 or sm_120)."""
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN
    a_smem = gl.allocate_shared_memory(a_desc.dtype, a_desc.block_type.shape, a_desc.layout)
    b_smem = gl.allocate_shared_memory(b_desc.dtype, b_desc.block_type.shape, b_desc.layout)
    tma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mma_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    tmem_layout: gl.constexpr = blackwell.TensorMemoryLayout(block=(BM, BN), col_stride=1)
    acc_tmem = blackwell.allocate_tensor_memory(gl.float32, [BM, BN], tmem_layout)
    phase = 0
    use_acc = False
    with pl.scope("k_loop"):
        for k in range(0, K, BK):
            with pl.scope("tma"):
                mbarrier.expect(tma_bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                tma_load(a_desc, [off_m, k], tma_bar, a_smem)
                tma_load(b_desc, [k, off_n], tma_bar, b_smem)
                mbarrier.wait(tma_bar, phase)
            with pl.scope("mma"):
                blackwell.tcgen05_mma(a_smem, b_smem, acc_tmem, use_acc=use_acc)
                blackwell.tcgen05_commit(mma_bar)
                mbarrier.wait(mma_bar, phase)
            use_acc = True
            phase ^= 1
    mbarrier.invalidate(tma_bar)
    mbarrier.invalidate(mma_bar)
    with pl.scope("epilogue"):
        if TMEM_LAYOUT_HELPER:
            acc = acc_tmem.load(get_tmem_reg_layout(gl.float32, (BM, BN), tmem_layout, gl.num_warps()))
        else:
            acc = acc_tmem.load()
        c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
        c_smem.store(acc.to(c_desc.dtype))
        fence_async_shared()
        tma_store(c_desc, [off_m, off_n], c_smem)
        tma.store_wait(0)


@gluon.jit
def _ws_scale(x_ptr, out_ptr, n, BLOCK: gl.constexpr, WARPS: gl.constexpr, FACTOR: gl.constexpr):
    layout: gl.constexpr = gl.BlockedLayout([1], [32], [WARPS], [0])
    offs = gl.program_id(0) * BLOCK + gl.arange(0, BLOCK, layout=layout)
    x = gl.load(x_ptr + offs, mask=offs < n)
    gl.store(out_ptr + offs, x * FACTOR, mask=offs < n)


@gluon.jit
def _ws_default(x_ptr, out_ptr, n, BLOCK: gl.constexpr, WARPS: gl.constexpr):
    with pl.scope("default_partition"):
        _ws_scale(x_ptr, out_ptr, n, BLOCK, WARPS, 2.0)


@gluon.jit
def _ws_worker(x_ptr, out_ptr, n, BLOCK: gl.constexpr, WARPS: gl.constexpr):
    with pl.scope("worker_partition"):
        _ws_scale(x_ptr, out_ptr, n, BLOCK, WARPS, 3.0)


@gluon.jit
def gluon_warp_specialized(x_ptr, y_ptr, out_x, out_y, n, BLOCK: gl.constexpr, WORKER_WARPS: gl.constexpr):
    """The default partition (num_warps warps) scales x by 2, one worker
    partition (WORKER_WARPS warps) scales y by 3."""
    if WS_PAIRS:
        gl.warp_specialize(
            [
                (_ws_default, (x_ptr, out_x, n, BLOCK, gl.num_warps())),
                (_ws_worker, (y_ptr, out_y, n, BLOCK, WORKER_WARPS)),
            ],
            [WORKER_WARPS],
            [WS_WORKER_REGS],
        )
    else:
        gl.warp_specialize(
            (x_ptr, out_x, n, BLOCK, gl.num_warps()),
            _ws_default,
            (y_ptr, out_y, n, BLOCK, WORKER_WARPS),
            [_ws_worker],
            [WORKER_WARPS],
            [WS_WORKER_REGS],
        )
