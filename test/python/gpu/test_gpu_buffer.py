"""On a GPU: instrumented kernels run, compute the same results as plain ones,
and write profile buffers in the documented format (docs/buffer-format.md)."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import triton  # noqa: E402
from triton.runtime import _allocation  # noqa: E402

from proton.compiling.compiler import PipelineOptions  # noqa: E402
from proton.compiling.stage_hook import StageHook  # noqa: E402

from kernels import matmul, vector_add  # noqa: E402

pytestmark = pytest.mark.gpu

MAGIC = 0x5250  # header word 0, bits 16-31
START, END = 0, 1


class Buffers:
    """A profile allocator that keeps every buffer it hands out."""

    def __init__(self):
        self.buffers = []

    def __call__(self, size, alignment, stream):
        buffer = torch.zeros(size, dtype=torch.uint8, device="cuda")
        self.buffers.append(buffer)
        return buffer

    def __enter__(self):
        _allocation.set_profile_allocator(self)
        return self

    def __exit__(self, *exc):
        _allocation.set_profile_allocator(None)


def parse(buffer, layout, num_ctas):
    """Raw buffer -> per-segment headers (12 words) and records as
    (tag, clock) pairs (tag: scope id | end bit 31; clock: the low 48 or 32
    bits), the ring's then the overhang's, written independently of
    proton.recording.buffer from docs/buffer-format.md."""
    segments = len(layout["warps"])
    data = buffer.cpu().numpy().view(np.uint32).reshape(num_ctas, segments, -1)
    slots = layout["segment_bytes"] // 8 + layout.get("overhang", 0)
    raw = data[:, :, 12 : 12 + 2 * slots].reshape(num_ctas, segments, slots, 2)
    second = raw[..., 1]
    if layout["clock_bits"] == 64:
        # Format 4: clock bits 32-63 plus the tag; less the entry's bits 32-63.
        second = second - data[:, :, 7][:, :, None]
    tags = ((second >> 16) & 0x7FFF) | (second & np.uint32(1 << 31))
    high = (raw[..., 1] & 0xFFFF).astype(np.uint64) if layout["clock_bits"] == 64 else np.uint64(0)
    clocks = raw[..., 0].astype(np.uint64) | (high << np.uint64(32))
    return data[:, :, :12], np.stack([tags.astype(np.uint64), clocks], axis=-1)


def u64(lo, hi):
    return lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))


def unpack_records(records, count, capacity):
    """The records of one segment in the order they were written: where a
    run continued past the ring's end, overhang slot p holds the newer
    record of ring slot p (no clock in these tests nears a 48-bit wrap)."""
    ring = records[:capacity].copy()
    if count > capacity:
        for p, extra in enumerate(records[capacity:]):
            if extra[1] > ring[p, 1]:
                ring[p] = extra
    if count <= capacity:
        return ring[:count]
    start = count % capacity
    return np.concatenate([ring[start:], ring[:start]])[-capacity:]


def run_vector_add(n, options=None):
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    grid = (triton.cdiv(n, 1024),)
    if options is None:
        vector_add[grid](x, y, out, n, BLOCK=1024)
        return x, y, out, None
    with Buffers() as buffers, StageHook(options, f"gpu-{options.clock_bits}-{options.buffer_type}"):
        kernel = vector_add[grid](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    return x, y, out, (kernel, buffers.buffers[-1])


@pytest.mark.parametrize("buffer_type", ["shared", "global", "registers"])
def test_vector_add_buffer_holds_every_record(buffer_type):
    n = 1 << 20
    x, y, out, (kernel, buffer) = run_vector_add(n, PipelineOptions(clock_bits=32, buffer_type=buffer_type))
    _, _, plain, _ = run_vector_add(n)
    plain_again = torch.empty_like(x)
    vector_add[(n // 1024,)](x, y, plain_again, n, BLOCK=1024)
    assert torch.equal(out, x + y)
    assert torch.equal(out, plain_again)

    meta = json.loads(kernel.metadata.proton)
    layout = meta["layout"]
    num_ctas = n // 1024
    # 48-byte header + 64 bytes of records, padded to whole 32-byte sectors.
    assert layout["segment_bytes"] == 64 and layout["bytes_per_cta"] == 4 * 128
    seg, records = parse(buffer, layout, num_ctas)
    assert (seg[:, :, 0] >> 16 == MAGIC).all()
    # Format version 4, clock32, the buffer type, warp granularity, 1 GHz timer.
    assert (seg[:, :, 0] & 0xFFFF == (4 | {"shared": 0, "global": 1, "registers": 2}[buffer_type] << 5)).all()
    assert (seg[:, :, 1] == meta["kernel_id"]).all()
    assert (seg[:, :, 2] == 6).all()  # three scopes: six records per warp
    assert (seg[:, :, 3] >> 20 == np.arange(4)).all()  # warp ids
    sm = seg[:, :, 3] & 0xFFFFF
    assert (sm < torch.cuda.get_device_properties(0).multi_processor_count).all()
    # All warps of a CTA run on one SM.
    assert (sm == sm[:, :1]).all()
    gt_start, clk_start = u64(seg[:, :, 4], seg[:, :, 5]), u64(seg[:, :, 6], seg[:, :, 7])
    gt_end, clk_end = u64(seg[:, :, 8], seg[:, :, 9]), u64(seg[:, :, 10], seg[:, :, 11])
    assert (gt_end >= gt_start).all() and (clk_end > clk_start).all()
    ghz = (clk_end - clk_start).sum() / max(1, (gt_end - gt_start).sum())
    assert 0.5 < ghz < 3.5

    tags = records[:, :, :6, 0]
    ids = {s["name"]: s["id"] for s in meta["scopes"]}
    expected = [
        ids["kernel"],
        ids["load"],
        ids["load"] | 1 << 31,
        ids["store"],
        ids["store"] | 1 << 31,
        ids["kernel"] | 1 << 31,
    ]
    assert (tags == np.array(expected, dtype=np.uint32)).all()
    clocks = records[:, :, :6, 1].astype(np.int64)
    steps = (clocks[:, :, 1:] - clocks[:, :, :-1]) % (1 << 32)
    assert (steps < 1 << 24).all()  # in order, no step of more than 16M cycles
    assert ((clocks[:, :, 0] - (clk_start & np.uint64(0xFFFFFFFF)).astype(np.int64)) % (1 << 32) < 1 << 24).all()


def test_matmul_loop_records_and_overflow_count():
    M = N = 256
    K = 512
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    grid = (M // 128, N // 128)
    results = {}
    for size in (0, 4 * 64):  # inferred (1 KiB per warp) and 8 records per warp
        c = torch.empty(M, N, device="cuda", dtype=torch.float16)
        with Buffers() as buffers, StageHook(PipelineOptions(buffer_size=size), f"mm-{size}"):
            kernel = matmul[grid](a, b, c, M, N, K, BM=128, BN=128, BK=64)
        torch.cuda.synchronize()
        results[size] = (c, kernel, buffers.buffers[-1])
    plain = torch.empty(M, N, device="cuda", dtype=torch.float16)
    matmul[grid](a, b, plain, M, N, K, BM=128, BN=128, BK=64)
    for c, _, _ in results.values():
        assert torch.equal(c, plain)

    iterations = K // 64
    for size, (_, kernel, buffer) in results.items():
        meta = json.loads(kernel.metadata.proton)
        layout = meta["layout"]
        ids = {s["name"]: s["id"] for s in meta["scopes"]}
        seg, records = parse(buffer, layout, grid[0] * grid[1])
        assert (seg[:, :, 2] == 2 + 2 * iterations).all()
        capacity = layout["capacity"]
        for cta in range(grid[0] * grid[1]):
            for s in range(len(layout["warps"])):
                kept = unpack_records(records[cta, s], int(seg[cta, s, 2]), capacity)
                tags = kept[:, 0]
                assert tags[-1] == ids["mainloop"] | 1 << 31
                if size == 0:
                    assert len(kept) == 2 + 2 * iterations
                    assert tags[0] == ids["mainloop"]
                    assert list(tags[1:-1]) == [ids["iteration"], ids["iteration"] | 1 << 31] * iterations
                else:
                    assert capacity == 8 and len(kept) == 8  # the ring kept the last 8 of 18
                clocks = kept[:, 1].astype(np.int64)  # the low 48 bits
                assert (np.diff(clocks) % (1 << 48) < 1 << 32).all()  # in order
