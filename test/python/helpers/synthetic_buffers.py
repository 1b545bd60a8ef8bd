"""Builds profile buffers in the format of docs/buffer-format.md on the host,
for tests, benchmarks of the decoder and documentation. Nothing here runs on
a GPU; what it writes is what an instrumented kernel would write."""

from __future__ import annotations

import numpy as np

from proton.recording import buffer as raw_buffer
from proton.contract.kernel_metadata import BufferLayout, KernelMetadata


def layout(
    num_warps: int = 4,
    segment_bytes: int = 1024,
    clock_bits: int = 64,
    warps=None,
    buffer_type: str = "shared",
    granularity: str = "warp",
    overhang: int = 0,
) -> dict:
    """A layout dict as the compiler reports it in metadata["layout"]."""
    warps = list(range(num_warps)) if warps is None else list(warps)
    record_bytes = raw_buffer.RECORD_WORDS * 4
    block_bytes = raw_buffer.block_bytes(segment_bytes, overhang)
    return {
        "buffer_type": buffer_type,
        "granularity": granularity,
        "clock_bits": clock_bits,
        "num_warps": num_warps,
        "warps": warps,
        "segment_bytes": segment_bytes,
        "record_bytes": record_bytes,
        "capacity": segment_bytes // record_bytes,
        "overhang": overhang,
        "segment_header_bytes": raw_buffer.HEADER_WORDS * 4,
        "block_bytes": block_bytes,
        "bytes_per_cta": len(warps) * block_bytes,
        "shared_offset": 0,
        "shared_bytes": len(warps) * block_bytes if buffer_type == "shared" else 0,
    }


def metadata(scopes, layout_dict: dict, **options) -> KernelMetadata:
    """Kernel metadata for `scopes` (metadata_dict's arguments), as the session reads it."""
    return KernelMetadata.from_dict(metadata_dict(scopes, layout_dict, **options))


def metadata_dict(
    scopes,
    layout_dict: dict,
    kernel: str = "kernel",
    kernel_id: int = 0,
    target: str = "nvptx",
    kinds=None,
    dtypes=None,
) -> dict:
    """Kernel metadata for `scopes`, a list of (name, parent id), as the
    compiler and the stage hook write it; `kinds` gives each id's kind
    ("scope", "event", "mark", "value"; default all scopes), `dtypes` some
    ids' value types (id -> "i32"|"f32")."""
    kinds = kinds or ["scope"] * len(scopes)
    dtypes = dtypes or {}
    return {
        "instrumented": True,
        "kernel": kernel,
        "kernel_id": kernel_id,
        "target": target,
        "scopes": [
            {"id": i, "name": n, "parent": p, "loc": "", "kind": k, **({"dtype": dtypes[i]} if i in dtypes else {})}
            for i, ((n, p), k) in enumerate(zip(scopes, kinds))
        ],
        "layout": layout_dict,
        "profile_scratch_size": layout_dict["bytes_per_cta"],
        "profile_scratch_align": 16,
        "warnings": "",
    }


def tag(scope_id, end) -> np.ndarray:
    """Tags as decode works with them: bit 31 end, bits 0-30 the scope id."""
    return np.asarray(scope_id, dtype=np.uint32) | (np.asarray(end, dtype=np.uint32) << np.uint32(31))


def pattern_tags(rng, patterns, ctas: int, segments: int, n: int) -> np.ndarray:
    """(ctas, segments, n) tags: each segment's records are scope patterns
    (lists of (scope id, end)) drawn from `patterns` by `rng` one after
    another, cut at `n` (so a ring may end inside a scope)."""
    tags = np.zeros((ctas, segments, n), dtype=np.uint32)
    for c in range(ctas):
        for s in range(segments):
            seq = []
            while len(seq) < n:
                seq += patterns[rng.integers(len(patterns))]
            ids, ends = np.array(seq[:n]).T
            tags[c, s] = tag(ids, ends)
    return tags


def steady_times(start, n: int, step: int, clock_ghz: float, clk0: int, gt0: int) -> dict:
    """The clocks of `n` records `step` cycles apart in each segment whose
    entry clock is `start` (cycles, per CTA and segment), with the segment's
    exit clock and the global timers (ns since 1970, as on a GPU: in
    integers, where float64 alone would keep 256 ns) of a `clock_ghz` clock
    that read `clk0` at `gt0`: build()'s clocks and timer keywords."""
    clk_end = start + np.uint64(step * (n + 1))
    gt_start = np.uint64(gt0) + ((start - np.uint64(clk0)).astype(np.float64) / clock_ghz).astype(np.uint64)
    return {
        "clocks": start[:, :, None] + np.uint64(step) * (np.arange(n, dtype=np.uint64) + np.uint64(1)),
        "clk_start": start,
        "clk_end": clk_end,
        "gt_start": gt_start,
        "gt_end": gt_start + ((clk_end - start).astype(np.float64) / clock_ghz).astype(np.uint64),
    }


def build(
    layout_dict: dict,
    tags: np.ndarray,
    clocks: np.ndarray,
    *,
    clk_start,
    clk_end,
    gt_start,
    gt_end,
    sm=None,
    xcc=None,
    kernel_id: int = 0,
    target: str = "nvptx",
    run_starts=None,
) -> np.ndarray:
    """A buffer of `tags.shape[0]` CTAs.

    run_starts: (n,) bools, True where a run of records starts (a layout
    with an overhang): a run's records follow its first one in memory, past
    the ring's end into the overhang, as the kernel writes them.

    tags, clocks: (ctas, segments, n) in the order written (n may exceed the
    capacity: the ring then keeps the last `capacity`, as the kernel does).
    clk_start ... gt_end: (ctas, segments) u64 header stamps. sm: the SM id
    (NVIDIA) or the HW_ID register (AMD, with xcc the XCC_ID register).
    Returns u8 bytes.
    """
    tags = np.asarray(tags, dtype=np.uint32)
    clocks = np.asarray(clocks, dtype=np.uint64)
    ctas, segments, n = tags.shape
    lay = layout_dict
    assert segments == len(lay["warps"])
    cap = lay["capacity"]
    blocks = np.zeros((ctas, segments, lay["bytes_per_cta"] // 4 // segments), dtype=np.uint32)
    head = blocks[:, :, : raw_buffer.HEADER_WORDS]
    head[:, :, raw_buffer.W_MAGIC_FLAGS] = raw_buffer.flags_word(BufferLayout.from_dict(lay), target)
    head[:, :, raw_buffer.W_KERNEL_ID] = kernel_id
    head[:, :, raw_buffer.W_COUNT] = n
    where = np.zeros((ctas, segments), dtype=np.uint32) if sm is None else np.asarray(sm, dtype=np.uint32)
    if target == "amdgpu":
        where = (where & np.uint32(0xFFFF)) | (
            (np.asarray(0 if xcc is None else xcc, dtype=np.uint32) & np.uint32(0xF)) << np.uint32(16)
        )
    head[:, :, raw_buffer.W_LOCATION] = where | (
        np.asarray(lay["warps"], dtype=np.uint32) << np.uint32(raw_buffer.WARP_SHIFT)
    )
    for word, value in (
        (raw_buffer.W_TIMER_START, gt_start),
        (raw_buffer.W_CLOCK_START, clk_start),
        (raw_buffer.W_TIMER_END, gt_end),
        (raw_buffer.W_CLOCK_END, clk_end),
    ):
        value = np.broadcast_to(np.asarray(value, dtype=np.uint64), (ctas, segments))
        head[:, :, word] = (value & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        head[:, :, word + 1] = (value >> np.uint64(32)).astype(np.uint32)
    overhang = lay.get("overhang", 0)
    slots_total = cap + overhang
    records = blocks[
        :, :, raw_buffer.HEADER_WORDS : raw_buffer.HEADER_WORDS + slots_total * raw_buffer.RECORD_WORDS
    ].reshape(ctas, segments, slots_total, raw_buffer.RECORD_WORDS)
    if overhang:
        # The kernel's entry fills the overhang with the entry clock (tag 0).
        entry = np.broadcast_to(np.asarray(clk_start, dtype=np.uint64), (ctas, segments))
        records[:, :, cap:, 0] = (entry & np.uint64(0xFFFFFFFF)).astype(np.uint32)[:, :, None]
        records[:, :, cap:, 1] = (entry >> np.uint64(32)).astype(np.uint32)[:, :, None]
    if run_starts is None:
        kept = min(n, cap)
        order = np.arange(n - kept, n)
        slots = order % cap
    else:
        # In the order written (a later record overwrites an earlier one).
        order, slots, first = np.arange(n), np.empty(n, dtype=np.int64), 0
        for i in range(n):
            first = i if run_starts[i] else first
            slots[i] = first % cap + (i - first)
    t = tags[:, :, order]
    c = clocks[:, :, order]
    tag_word = ((t & np.uint32(0x7FFF)) << np.uint32(16)) | (t & raw_buffer.END_BIT)
    if lay["clock_bits"] == 64:
        # Format 4: clock bits 32-63 plus the tag, modulo 2**32.
        second = (((c >> np.uint64(32)) + tag_word.astype(np.uint64)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    else:
        second = tag_word
    low = (c & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if run_starts is None:
        records[:, :, slots, 0] = low
        records[:, :, slots, 1] = second
    else:
        for i, slot in enumerate(slots):
            records[:, :, slot, 0] = low[:, :, i]
            records[:, :, slot, 1] = second[:, :, i]
    return blocks.view(np.uint8).reshape(-1)
