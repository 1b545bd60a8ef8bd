"""Builds profile buffers in the format of docs/buffer-format.md on the host,
for tests, benchmarks of the decoder and documentation. Nothing here runs on
a GPU; what it writes is what an instrumented kernel would write."""

from __future__ import annotations

import numpy as np

from .buffer import MAGIC

GRANULARITY_CODES = {"warp": 0, "warp_group": 1, "cta": 2}
BUFFER_TYPE_CODES = {"shared": 0, "global": 1}


def layout(num_warps: int = 4, segment_bytes: int = 1024, clock_bits: int = 64, warps=None,
           buffer_type: str = "shared", granularity: str = "warp") -> dict:
    """A layout dict as the compiler reports it in metadata["layout"]."""
    warps = list(range(num_warps)) if warps is None else list(warps)
    record_bytes = 8 if clock_bits == 32 else 16
    header_bytes = 32 + 48 * len(warps)
    return {
        "buffer_type": buffer_type, "granularity": granularity, "clock_bits": clock_bits,
        "num_warps": num_warps, "warps": warps, "segment_bytes": segment_bytes,
        "record_bytes": record_bytes, "capacity": segment_bytes // record_bytes,
        "cta_header_bytes": 32, "segment_header_bytes": 48, "header_bytes": header_bytes,
        "bytes_per_cta": header_bytes + len(warps) * segment_bytes, "shared_offset": 0,
        "shared_bytes": len(warps) * segment_bytes if buffer_type == "shared" else 0,
    }


def metadata(scopes, layout_dict: dict, kernel: str = "kernel", kernel_id: int = 0) -> dict:
    """Kernel metadata for `scopes`, a list of (name, parent id)."""
    return {
        "instrumented": True, "kernel": kernel, "kernel_id": kernel_id,
        "scopes": [{"id": i, "name": n, "parent": p, "loc": ""} for i, (n, p) in enumerate(scopes)],
        "layout": layout_dict, "profile_scratch_size": layout_dict["bytes_per_cta"],
        "profile_scratch_align": 16, "warnings": "",
    }


def tag(scope_id, end) -> np.ndarray:
    return (np.asarray(scope_id, dtype=np.uint32) | (np.asarray(end, dtype=np.uint32) << np.uint32(31)))


def build(layout_dict: dict, tags: np.ndarray, clocks: np.ndarray, *, clk_start, clk_end, gt_start, gt_end,
          sm=None, kernel_id: int = 0, ticks_per_us: int = 1000, warp_size: int = 32) -> np.ndarray:
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
    words = np.zeros((ctas, lay["bytes_per_cta"] // 4), dtype=np.uint32)
    flags = 1 | (lay["clock_bits"] << 8) | (BUFFER_TYPE_CODES[lay["buffer_type"]] << 16) | \
        (GRANULARITY_CODES[lay["granularity"]] << 24)
    words[:, :8] = [MAGIC, flags, segments, lay["segment_bytes"], ticks_per_us, lay["num_warps"], warp_size,
                    kernel_id]
    seg = words[:, 8:8 + 12 * segments].reshape(ctas, segments, 12)
    seg[:, :, 0] = np.asarray(lay["warps"], dtype=np.uint32)
    seg[:, :, 1] = n
    seg[:, :, 2] = 0 if sm is None else np.asarray(sm, dtype=np.uint32)
    for word, value in ((4, gt_start), (6, clk_start), (8, gt_end), (10, clk_end)):
        value = np.broadcast_to(np.asarray(value, dtype=np.uint64), (ctas, segments))
        seg[:, :, word] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        seg[:, :, word + 1] = (value >> np.uint64(32)).astype(np.uint32)
    per = lay["record_bytes"] // 4
    records = words[:, lay["header_bytes"] // 4:].reshape(ctas, segments, cap, per)
    kept = min(n, cap)
    order = np.arange(n - kept, n)
    slots = order % cap
    records[:, :, slots, 0] = tags[:, :, order]
    records[:, :, slots, 1] = (clocks[:, :, order] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if per == 4:
        records[:, :, slots, 2] = (clocks[:, :, order] >> np.uint64(32)).astype(np.uint32)
    return words.view(np.uint8).reshape(-1)
