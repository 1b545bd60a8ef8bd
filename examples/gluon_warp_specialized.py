"""A warp-specialized Gluon matmul for Hopper (sm_90), profiled per partition.

    C[M, N] = A[M, K] @ B[K, N]      A, B fp16 (row-major), C fp16

One CTA computes one BLOCK_M x BLOCK_N tile. `gl.warp_specialize` splits its
warps into two partitions that hand K steps to each other through a ring of
STAGES shared-memory buffers and two mbarriers per buffer:

  producer  (worker partition, 1 warp): waits until a buffer is free, then
            issues the TMA loads of A and B into it ("ready" completes when
            the bytes have landed);
  consumer  (default partition, 4 warps = one warp group): waits until a
            buffer is ready, runs a WGMMA over it, frees it ("empty"), and at
            the end writes C with a TMA store.

Proton scopes (per partition):

    producer                 the producer's whole loop
      wait_empty             waiting for a free buffer (per K step)
      tma_load               expect + the two TMA loads (per K step)
    consumer                 the consumer's whole loop and epilogue
      wait_ready             waiting for the loads to land (per K step)
      wgmma                  the MMA and its wait (per K step)
      epilogue               registers -> shared -> TMA store of C

Triton gives the kernel 8 warps: the consumer's warps 0-3, the producer's
warp and three padding warps (which Triton adds so that register
reallocation covers whole warp groups); the session's traces name each
warp's track with its partition, e.g. "warp 6 (worker 0)".

On a GPU (Hopper): checks the result against torch with and without a
Proton session, and writes ws_matmul.chrome_trace, ws_matmul.pftrace (open
in ui.perfetto.dev: producer and consumer warps side by side under each CTA)
and ws_matmul.hatchet. Without one: says why, compiles the instrumented
kernel for sm_90 (ptxas included) and prints which warps record which scope.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared,
    mbarrier,
    tma,
    warpgroup_mma,
    warpgroup_mma_wait,
)

import proton
import proton.language as pl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gluon_matmul import SM90, tensordesc_signature, tma_load, tma_store  # noqa: E402

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
STAGES = 3  # buffers in the ring: 3 x 32 KiB of A and B tiles
NUM_WARPS = 4  # the consumer (default partition): one warp group
PRODUCER_WARPS = 1
PRODUCER_REGS = 40  # registers per thread the producer keeps (setmaxnreg)
SCOPES = ("producer", "wait_empty", "tma_load", "consumer", "wait_ready", "wgmma", "epilogue")


@gluon.jit
def _producer(a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, K):
    BK: gl.constexpr = a_desc.block_type.shape[1]
    NUM_STAGES: gl.constexpr = a_bufs.type.shape[0]
    with pl.scope("producer"):
        for i in range(gl.cdiv(K, BK)):
            s = i % NUM_STAGES
            phase = (i // NUM_STAGES) & 1
            with pl.scope("wait_empty"):
                # A fresh mbarrier counts as having completed the phase before
                # phase 0, so the first pass over the ring does not wait.
                mbarrier.wait(empty.index(s), phase ^ 1)
            with pl.scope("tma_load"):
                mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes)
                tma_load(a_desc, [off_m, i * BK], ready.index(s), a_bufs.index(s))
                tma_load(b_desc, [i * BK, off_n], ready.index(s), b_bufs.index(s))


@gluon.jit
def _consumer(a_bufs, b_bufs, ready, empty, c_desc, c_smem, off_m, off_n, K, WARPS: gl.constexpr):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_bufs.type.shape[2]
    NUM_STAGES: gl.constexpr = a_bufs.type.shape[0]
    with pl.scope("consumer"):
        acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
            version=[3, 0], warps_per_cta=[WARPS, 1], instr_shape=[16, BN, 16]
        )
        acc = gl.zeros((BM, BN), dtype=gl.float32, layout=acc_layout)
        for i in range(gl.cdiv(K, BK)):
            s = i % NUM_STAGES
            with pl.scope("wait_ready"):
                mbarrier.wait(ready.index(s), (i // NUM_STAGES) & 1)
            with pl.scope("wgmma"):
                acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
                # The WGMMA has read the buffer once it completes: then free it.
                acc = warpgroup_mma_wait(num_outstanding=0, deps=[acc])
            mbarrier.arrive(empty.index(s), count=1)
        with pl.scope("epilogue"):
            c_smem.store(acc.to(c_desc.dtype))
            fence_async_shared()
            tma_store(c_desc, [off_m, off_n], c_smem)
            tma.store_wait(0)


@gluon.jit
def ws_matmul_kernel(
    a_desc, b_desc, c_desc, K, NUM_STAGES: gl.constexpr, WORKER_WARPS: gl.constexpr, WORKER_REGS: gl.constexpr
):
    BM: gl.constexpr = c_desc.block_type.shape[0]
    BN: gl.constexpr = c_desc.block_type.shape[1]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    off_m = gl.program_id(0) * BM
    off_n = gl.program_id(1) * BN

    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [NUM_STAGES, BM, BK], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [NUM_STAGES, BK, BN], b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, [BM, BN], c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [NUM_STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(NUM_STAGES):
        mbarrier.init(ready.index(s), count=1)
        mbarrier.init(empty.index(s), count=1)

    # The default partition (first pair) runs on the kernel's num_warps warps;
    # each worker gets its own warp count and register budget.
    gl.warp_specialize(
        [
            (_consumer, (a_bufs, b_bufs, ready, empty, c_desc, c_smem, off_m, off_n, K, gl.num_warps())),
            (_producer, (a_desc, b_desc, a_bufs, b_bufs, ready, empty, off_m, off_n, K)),
        ],
        [WORKER_WARPS],
        [WORKER_REGS],
    )

    for s in gl.static_range(NUM_STAGES):
        mbarrier.invalidate(ready.index(s))
        mbarrier.invalidate(empty.index(s))


def _nvmma(block_shape, dtype=gl.float16):
    return gl.NVMMASharedLayout.get_default_for(list(block_shape), dtype)


CONSTEXPRS = {"NUM_STAGES": STAGES, "WORKER_WARPS": PRODUCER_WARPS, "WORKER_REGS": PRODUCER_REGS}


def compile_for_sm90(target=SM90):
    """Compiles `ws_matmul_kernel` for cuda:90 without a GPU (ptxas
    included). Like a launch, it passes the instrumentation_mode knob as a
    compile option, which keys Triton 3.6's cache."""
    from triton.experimental.gluon._runtime import GluonASTSource

    signature = {
        "a_desc": tensordesc_signature("fp16", (BLOCK_M, BLOCK_K)),
        "b_desc": tensordesc_signature("fp16", (BLOCK_K, BLOCK_N)),
        "c_desc": tensordesc_signature("fp16", (BLOCK_M, BLOCK_N)),
        "K": "i32",
        **{name: "constexpr" for name in CONSTEXPRS},
    }
    source = GluonASTSource(fn=ws_matmul_kernel, signature=signature, constexprs=CONSTEXPRS)
    options = {"num_warps": NUM_WARPS, "instrumentation_mode": triton.knobs.compilation.instrumentation_mode}
    return triton.compile(source, target=target, options=options)


def run_ws_matmul(M: int, N: int, K: int, a=None, b=None):
    """C = A @ B on the GPU; returns (C, the compiled kernel, the grid). A and
    B are random fp16 unless given; K and N must be multiples of 8 (16-byte
    rows for TMA)."""
    import torch
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    a = torch.randn((M, K), device="cuda", dtype=torch.float16) if a is None else a
    b = torch.randn((K, N), device="cuda", dtype=torch.float16) if b is None else b
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    descs = [
        TensorDescriptor.from_tensor(t, list(shape), _nvmma(shape))
        for t, shape in ((a, (BLOCK_M, BLOCK_K)), (b, (BLOCK_K, BLOCK_N)), (c, (BLOCK_M, BLOCK_N)))
    ]
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    compiled = ws_matmul_kernel[grid](*descs, K, **CONSTEXPRS, num_warps=NUM_WARPS)
    return c, compiled, grid


def print_partitions(meta):
    """Which warps run which partition, and which record each scope."""
    from proton.compiling.warp_specialize import scope_warps, warp_labels

    ws = meta["warp_specialize"]
    labels = warp_labels(ws)
    print(
        f"kernel {meta['kernel']}: {ws['total_warps']} warps; partitions: "
        + ", ".join(f"warp {w} {labels[w]}" for w in sorted(labels))
    )
    for name, warps in scope_warps(ws).items():
        print(f"  scope {name!r:13} recorded by warps {warps}")


def run_on_cpu():
    print(f"No GPU run: {proton.gpu.why_no_gpu()}. Compiling the instrumented kernel for sm_90 instead (nothing runs).")
    proton.start("ws_matmul", backend="instrumentation", outputs=[], quiet=True)  # nothing runs: no files
    kernel = compile_for_sm90()
    proton.finalize()
    print_partitions(json.loads(kernel.metadata.proton))
    ptx = kernel.asm["ptx"]
    print(
        f"  PTX: {ptx.count('wgmma.mma_async')} wgmma.mma_async, {ptx.count('cp.async.bulk.tensor')} "
        f"cp.async.bulk.tensor, {ptx.count('setmaxnreg')} setmaxnreg, "
        f"{sum('%clock' in line for line in ptx.splitlines())} clock reads"
    )


def run_on_gpu(M, N, K):
    import torch

    if torch.cuda.get_device_capability()[0] != 9:
        print(f"This example's WGMMA and TMA need a Hopper GPU (sm_90), not {torch.cuda.get_device_name()}.")
        return
    a = torch.randn((M, K), device="cuda", dtype=torch.float16)
    b = torch.randn((K, N), device="cuda", dtype=torch.float16)
    plain, _, _ = run_ws_matmul(M, N, K, a=a, b=b)
    torch.testing.assert_close(plain.float(), a.float() @ b.float(), atol=0.25, rtol=1e-2)

    proton.start("ws_matmul", backend="instrumentation")
    profiled, kernel, grid = run_ws_matmul(M, N, K, a=a, b=b)
    report = proton.finalize()
    assert torch.equal(profiled, plain), "the instrumented kernel computed a different result"
    print(f"C = A @ B ({M}x{K} @ {K}x{N}, fp16) matches torch, profiled and plain results identical")
    print_partitions(json.loads(kernel.metadata.proton))

    # Events per warp track of the first CTA, as the Chrome trace names them.
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    counts: dict[str, dict[str, int]] = {}
    for e in trace:
        if e["ph"] == "X" and e["pid"].endswith(" CTA0"):  # "<kernel> #<launch> Core<sm> CTA0"
            counts.setdefault(e["tid"], {}).setdefault(e["name"], 0)
            counts[e["tid"]][e["name"]] += 1
    print("CTA 0:")
    for tid in sorted(counts, key=lambda t: int(t.split()[1])):  # "warp 6 (worker 0)"
        print(f"  {tid:18} {counts[tid]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024, help="M = N = K (a multiple of 8)")
    args = parser.parse_args()
    if proton.gpu.why_no_gpu() is None:
        run_on_gpu(args.size, args.size, args.size)
    else:
        run_on_cpu()


if __name__ == "__main__":
    main()
