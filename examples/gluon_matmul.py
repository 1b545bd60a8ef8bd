"""A Gluon matmul for Hopper (sm_90) with Proton scopes: TMA loads into
NVMMA-swizzled shared memory, WGMMA accumulation in registers, a TMA store.

    C[M, N] = A[M, K] @ B[K, N]      A, B fp16 (row-major), C fp16 or fp32

One CTA computes one BLOCK_M x BLOCK_N tile with one warp group (num_warps=4).
The K loop is single-buffered: each iteration loads an A and a B tile with
TMA, waits on an mbarrier, then runs one WGMMA over them.

Proton scopes (nesting as in the source):

    matmul                 the whole tile
      tma_load             issue + wait of the two TMA loads (per K step)
      wgmma                the MMA (per K step)
      epilogue             registers -> shared -> TMA store of C

Nothing happens at import. `run_matmul` launches on a GPU (needs torch);
`compile_for_sm90` compiles for cuda:90 on any machine, ptxas included.
Markers are emitted only while a Proton instrumentation hook is installed;
otherwise the kernel compiles exactly as without them.
"""

from __future__ import annotations

import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

import proton.language as pl

# Triton 3.8 added tma.async_load / tma.async_store; 3.9 made the old names
# (async_copy_global_to_shared / async_copy_shared_to_global) raise. Use the
# new names where they exist.
tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared
tma_store = getattr(tma, "async_store", None) or tma.async_copy_shared_to_global

#: Default tile: 128 x 128 outputs per CTA, 64-deep K steps.
BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
NUM_WARPS = 4

SM90 = GPUTarget("cuda", 90, 32)

_GL_DTYPES = {"fp16": gl.float16, "fp32": gl.float32}


@gluon.jit
def matmul_kernel(a_desc, b_desc, c_desc, K):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    dtype: gl.constexpr = a_desc.dtype

    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN

    with pl.scope("matmul"):
        a_smem = gl.allocate_shared_memory(dtype, a_desc.block_type.shape, a_desc.layout)
        b_smem = gl.allocate_shared_memory(dtype, b_desc.block_type.shape, b_desc.layout)
        bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
        mbarrier.init(bar, count=1)

        # WGMMA accumulator layout: the warp group's 4 warps stacked along M.
        acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[gl.num_warps(), 1], instr_shape=[16, BN, 16]
        )
        acc = gl.zeros((BM, BN), dtype=gl.float32, layout=acc_layout)

        phase = 0
        for k in range(0, K, BK):
            with pl.scope("tma_load"):
                mbarrier.expect(bar, a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                tma_load(a_desc, [off_m, k], bar, a_smem)
                tma_load(b_desc, [k, off_n], bar, b_smem)
                mbarrier.wait(bar, phase)
            phase ^= 1
            with pl.scope("wgmma"):
                acc = warpgroup_mma(a_smem, b_smem, acc, is_async=True)
                # Wait before the next iteration's TMA overwrites a_smem/b_smem.
                acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])

        mbarrier.invalidate(bar)

        with pl.scope("epilogue"):
            c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
            c_smem.store(acc.to(c_desc.dtype))
            fence_async_shared()
            tma_store(c_desc, [off_m, off_n], c_smem)
            tma.store_wait(0)


def _layout(block_shape, dtype: str):
    return gl.NVMMASharedLayout.get_default_for(list(block_shape), _GL_DTYPES[dtype])


def tensordesc_signature(dtype: str, block_shape) -> str:
    """The signature string Triton's launcher derives for a Gluon
    TensorDescriptor argument, e.g.
    `tensordesc<fp16[128, 64],NVMMASharedLayout(swizzle_byte_width=128, ...)>`."""
    return f"tensordesc<{dtype}{list(block_shape)},{_layout(block_shape, dtype)!r}>"


def matmul_signature(
    out_dtype: str = "fp16", block_m: int = BLOCK_M, block_n: int = BLOCK_N, block_k: int = BLOCK_K
) -> dict:
    return {
        "a_desc": tensordesc_signature("fp16", (block_m, block_k)),
        "b_desc": tensordesc_signature("fp16", (block_k, block_n)),
        "c_desc": tensordesc_signature(out_dtype, (block_m, block_n)),
        "K": "i32",
    }


def compile_for_sm90(
    out_dtype: str = "fp16",
    block_m: int = BLOCK_M,
    block_n: int = BLOCK_N,
    block_k: int = BLOCK_K,
    target: GPUTarget = SM90,
):
    """Compiles `matmul_kernel` for cuda:90 without a GPU. Like a launch, it
    passes the instrumentation_mode knob as a compile option, which keys
    Triton's cache (instrumented and plain builds stay apart)."""
    from triton.experimental.gluon._runtime import GluonASTSource

    source = GluonASTSource(fn=matmul_kernel, signature=matmul_signature(out_dtype, block_m, block_n, block_k))
    options = {"num_warps": NUM_WARPS, "instrumentation_mode": triton.knobs.compilation.instrumentation_mode}
    return triton.compile(source, target=target, options=options)


def run_matmul(M: int, N: int, K: int, device: str = "cuda", out_dtype=None, a=None, b=None):
    """Computes A @ B on the GPU with `matmul_kernel` and returns C. A and B
    are random fp16 unless given; C is fp16 unless `out_dtype` is
    torch.float32. M, N, K need not be multiples of the tile (TMA pads loads
    with zeros and clips stores), but rows must be 16-byte aligned (K and N
    multiples of 8)."""
    return _launch(M, N, K, device, out_dtype, a, b)[0]


def _launch(M, N, K, device="cuda", out_dtype=None, a=None, b=None):
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    out_dtype = out_dtype or torch.float16
    if a is None:
        a = torch.randn((M, K), device=device, dtype=torch.float16)
    if b is None:
        b = torch.randn((K, N), device=device, dtype=torch.float16)
    c = torch.empty((M, N), device=device, dtype=out_dtype)
    c_name = {torch.float16: "fp16", torch.float32: "fp32"}[out_dtype]

    a_desc = TensorDescriptor.from_tensor(a, [BLOCK_M, BLOCK_K], _layout((BLOCK_M, BLOCK_K), "fp16"))
    b_desc = TensorDescriptor.from_tensor(b, [BLOCK_K, BLOCK_N], _layout((BLOCK_K, BLOCK_N), "fp16"))
    c_desc = TensorDescriptor.from_tensor(c, [BLOCK_M, BLOCK_N], _layout((BLOCK_M, BLOCK_N), c_name))
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    compiled = matmul_kernel[grid](a_desc, b_desc, c_desc, K, num_warps=NUM_WARPS)
    return c, compiled, grid


def _gpu_available() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def _print_scopes(meta):
    for scope in meta["scopes"]:
        parent = meta["scopes"][scope["parent"]]["name"] if scope["parent"] >= 0 else "-"
        print(f"  scope {scope['id']} {scope['name']!r:11} parent {parent!r:9} at {scope['loc']}")


def _main():
    """On a GPU: checks plain and instrumented results against torch and prints
    what the warps recorded. Without one: compiles for sm_90 and says so."""
    import json

    import numpy as np

    from proton.recording import buffer as raw_buffer
    from proton.compiling.compiler import PipelineOptions
    from proton.compiling.stage_hook import StageHook

    options = PipelineOptions(clock_bits=32)
    if not _gpu_available():
        print("No GPU found: compiling the instrumented kernel for sm_90 instead (nothing runs).")
        with StageHook(options, "gluon-matmul-cpu"):
            kernel = compile_for_sm90()
        _print_scopes(json.loads(kernel.metadata.proton))
        ptx = kernel.asm["ptx"]
        print(
            f"  PTX: {ptx.count('wgmma.mma_async')} wgmma.mma_async, {ptx.count('cp.async.bulk.tensor')} "
            f"cp.async.bulk.tensor, {sum('%clock' in line for line in ptx.splitlines())} clock reads"
        )
        return

    import torch
    from triton.runtime import _allocation

    M, N, K = 1024, 1024, 1024
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    plain = run_matmul(M, N, K, a=a, b=b)
    torch.testing.assert_close(plain.float(), ref, atol=0.25, rtol=1e-2)
    out32 = run_matmul(M, N, K, a=a, b=b, out_dtype=torch.float32)
    torch.testing.assert_close(out32, ref, atol=1e-2, rtol=1e-3)
    a2 = torch.randn((300, 136), device="cuda", dtype=torch.float16)
    b2 = torch.randn((136, 200), device="cuda", dtype=torch.float16)
    torch.testing.assert_close(
        run_matmul(300, 200, 136, a=a2, b=b2).float(), a2.float() @ b2.float(), atol=0.1, rtol=1e-2
    )
    print(f"C = A @ B ({M}x{K} @ {K}x{N}, fp16): fp16 and fp32 outputs match torch, and so does 300x136 @ 136x200")

    # Needs the TMA-descriptor parameters to stay "nvvm.grid_constant" through Proton's LLVM IR round trip
    # (see test_tma_descriptor_params_stay_grid_constant); without it the instrumented TMA loads fault.
    buffers = []
    _allocation.set_profile_allocator(
        lambda size, align, stream: buffers.append(torch.zeros(size, dtype=torch.uint8, device="cuda")) or buffers[-1]
    )
    try:
        with StageHook(options, "gluon-matmul-gpu"):
            instrumented, kernel, grid = _launch(M, N, K, a=a, b=b)
        torch.cuda.synchronize()
    finally:
        _allocation.set_profile_allocator(None)
    assert torch.equal(instrumented, plain), "the instrumented kernel computed a different result"
    print("instrumented result identical to the plain one")

    meta = json.loads(kernel.metadata.proton)
    _print_scopes(meta)
    num_ctas = grid[0] * grid[1]
    profile = raw_buffer.read(buffers[-1].cpu().numpy(), meta["layout"], num_ctas)
    tags = profile.records[..., 0].astype(np.int64)
    clocks = profile.records[..., 1].astype(np.int64)
    # Slots past a warp's record count are unused (zero, which is also scope 0's start tag).
    written = np.arange(tags.shape[-1]) < np.minimum(profile.counts, meta["layout"]["capacity"])[..., None]
    tags = np.where(written, tags, -1)
    print(
        f"{num_ctas} CTAs, events per warp {np.unique(profile.counts).tolist()} "
        f"(capacity {meta['layout']['capacity']}), dropped {int(profile.dropped.sum())}"
    )
    for scope in meta["scopes"]:
        is_start, is_end = tags == scope["id"], tags == (scope["id"] | 1 << 31)
        start, end = np.argmax(is_start, axis=-1), np.argmax(is_end, axis=-1)
        cycles = np.take_along_axis(clocks, end[..., None], -1) - np.take_along_axis(clocks, start[..., None], -1)
        cycles %= 1 << 32
        print(
            f"  {scope['name']:9} {np.unique(is_start.sum(-1)).tolist()} starts and "
            f"{np.unique(is_end.sum(-1)).tolist()} ends per warp; first occurrence mean {cycles.mean():8.1f} "
            f"cycles (min {cycles.min()}, max {cycles.max()})"
        )


if __name__ == "__main__":
    _main()
