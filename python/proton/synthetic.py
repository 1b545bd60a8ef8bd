"""Builds profile buffers in the format of docs/buffer-format.md on the host,
for tests, benchmarks of the decoder and documentation. Nothing here runs on
a GPU; what it writes is what an instrumented kernel would write."""

from __future__ import annotations

import numpy as np

from . import buffer as fmt


def layout(num_warps: int = 4, segment_bytes: int = 1024, clock_bits: int = 64, warps=None,
           buffer_type: str = "shared", granularity: str = "warp") -> dict:
    """A layout dict as the compiler reports it in metadata["layout"]."""
    warps = list(range(num_warps)) if warps is None else list(warps)
    record_bytes = 8 if clock_bits == 32 else 16
    block_bytes = fmt.HEADER_WORDS * 4 + segment_bytes
    return {
        "buffer_type": buffer_type, "granularity": granularity, "clock_bits": clock_bits,
        "num_warps": num_warps, "warps": warps, "segment_bytes": segment_bytes,
        "record_bytes": record_bytes, "capacity": segment_bytes // record_bytes,
        "segment_header_bytes": fmt.HEADER_WORDS * 4, "block_bytes": block_bytes,
        "bytes_per_cta": len(warps) * block_bytes, "shared_offset": 0,
        "shared_bytes": len(warps) * block_bytes if buffer_type == "shared" else 0,
    }


def metadata(scopes, layout_dict: dict, kernel: str = "kernel", kernel_id: int = 0, target: str = "nvptx") -> dict:
    """Kernel metadata for `scopes`, a list of (name, parent id)."""
    return {
        "instrumented": True, "kernel": kernel, "kernel_id": kernel_id, "target": target,
        "scopes": [{"id": i, "name": n, "parent": p, "loc": ""} for i, (n, p) in enumerate(scopes)],
        "layout": layout_dict, "profile_scratch_size": layout_dict["bytes_per_cta"],
        "profile_scratch_align": 16, "warnings": "",
    }


def tag(scope_id, end) -> np.ndarray:
    return (np.asarray(scope_id, dtype=np.uint32) | (np.asarray(end, dtype=np.uint32) << np.uint32(31)))


def build(layout_dict: dict, tags: np.ndarray, clocks: np.ndarray, *, clk_start, clk_end, gt_start, gt_end,
          sm=None, hw1=None, kernel_id: int = 0, ticks_per_us: int = 1000) -> np.ndarray:
    """A buffer of `tags.shape[0]` CTAs.

    tags, clocks: (ctas, segments, n) in the order written (n may exceed the
    capacity: the ring then keeps the last `capacity`, as the kernel does).
    clk_start ... gt_end: (ctas, segments) u64 header stamps. Returns u8 bytes.
    """
    tags = np.asarray(tags, dtype=np.uint32)
    clocks = np.asarray(clocks, dtype=np.uint64)
    ctas, segments, n = tags.shape
    lay = layout_dict
    assert segments == len(lay["warps"])
    cap = lay["capacity"]
    blocks = np.zeros((ctas, segments, lay["bytes_per_cta"] // 4 // segments), dtype=np.uint32)
    head = blocks[:, :, :fmt.HEADER_WORDS]
    head[:, :, fmt.W_MAGIC] = fmt.MAGIC
    head[:, :, fmt.W_FLAGS] = fmt.flags_word(lay)
    head[:, :, fmt.W_KERNEL_ID] = kernel_id
    head[:, :, fmt.W_TICKS_PER_US] = ticks_per_us
    head[:, :, fmt.W_WARP] = np.asarray(lay["warps"], dtype=np.uint32)
    head[:, :, fmt.W_COUNT] = n
    head[:, :, fmt.W_HW0] = 0 if sm is None else np.asarray(sm, dtype=np.uint32)
    head[:, :, fmt.W_HW1] = 0 if hw1 is None else np.asarray(hw1, dtype=np.uint32)
    for word, value in ((fmt.W_GT_START, gt_start), (fmt.W_CLK_START, clk_start), (fmt.W_GT_END, gt_end),
                        (fmt.W_CLK_END, clk_end)):
        value = np.broadcast_to(np.asarray(value, dtype=np.uint64), (ctas, segments))
        head[:, :, word] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        head[:, :, word + 1] = (value >> np.uint64(32)).astype(np.uint32)
    per = lay["record_bytes"] // 4
    records = blocks[:, :, fmt.HEADER_WORDS:].reshape(ctas, segments, cap, per)
    kept = min(n, cap)
    order = np.arange(n - kept, n)
    slots = order % cap
    records[:, :, slots, 0] = tags[:, :, order]
    records[:, :, slots, 1] = (clocks[:, :, order] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if per == 4:
        records[:, :, slots, 2] = (clocks[:, :, order] >> np.uint64(32)).astype(np.uint32)
    return blocks.view(np.uint8).reshape(-1)
