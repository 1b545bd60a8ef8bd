"""Reads raw profile buffers in the format of docs/buffer-format.md into numpy
arrays (no Python loop per event)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAGIC = 0x4E545250  # bytes "PRTN"
VERSION = 2
END_BIT = np.uint32(1 << 31)
HEADER_WORDS = 16  # the segment header: 64 bytes

# Segment header words.
W_MAGIC, W_FLAGS, W_KERNEL_ID, W_TICKS_PER_US = 0, 1, 2, 3
W_WARP, W_COUNT, W_HW0, W_HW1 = 4, 5, 6, 7
W_GT_START, W_CLK_START, W_GT_END, W_CLK_END = 8, 10, 12, 14

BUFFER_TYPES = {"shared": 0, "global": 1}
GRANULARITIES = {"warp": 0, "warp_group": 1, "cta": 2}


class BufferFormatError(ValueError):
    """A buffer that is truncated, corrupted, or not of this layout."""


def flags_word(layout: dict) -> int:
    """Segment header word 1 for a layout (what the kernel writes)."""
    return (VERSION | layout["clock_bits"] << 8 | BUFFER_TYPES[layout["buffer_type"]] << 16
            | GRANULARITIES[layout["granularity"]] << 24)


@dataclass
class RawProfile:
    headers: np.ndarray  # (ctas, segments, 16) u32
    records: np.ndarray  # (ctas, segments, capacity, words per record) u32
    layout: dict

    @property
    def counts(self) -> np.ndarray:
        """Records each segment wrote (more than capacity: the oldest were overwritten)."""
        return self.headers[:, :, W_COUNT]

    @property
    def warp_ids(self) -> np.ndarray:
        return self.headers[:, :, W_WARP]

    @property
    def sm_ids(self) -> np.ndarray:
        return self.headers[:, :, W_HW0]

    @property
    def kernel_ids(self) -> np.ndarray:
        return self.headers[:, :, W_KERNEL_ID]

    @property
    def ticks_per_us(self) -> int:
        return int(self.headers[0, 0, W_TICKS_PER_US]) if self.headers.size else 1000

    @property
    def dropped(self) -> np.ndarray:
        return np.maximum(self.counts.astype(np.int64) - self.layout["capacity"], 0)

    def stamps(self, word: int) -> np.ndarray:
        """The u64 at header word `word` (W_GT_START, W_CLK_START, W_GT_END, W_CLK_END)."""
        h = self.headers
        return h[:, :, word].astype(np.uint64) | (h[:, :, word + 1].astype(np.uint64) << np.uint64(32))


def read(buffer: bytes | np.ndarray, layout: dict, num_ctas: int) -> RawProfile:
    data = np.frombuffer(buffer, dtype=np.uint8) if isinstance(buffer, (bytes, bytearray)) else np.asarray(buffer)
    expected = layout["bytes_per_cta"] * num_ctas
    if data.nbytes < expected:
        raise BufferFormatError(f"profile buffer is truncated: {data.nbytes} bytes for {num_ctas} CTAs of "
                                f"{layout['bytes_per_cta']} bytes ({expected} expected)")
    segments = len(layout["warps"])
    block_words = (HEADER_WORDS * 4 + layout["segment_bytes"]) // 4
    if block_words * 4 * segments != layout["bytes_per_cta"]:
        raise BufferFormatError(f"layout is not of buffer format {VERSION}: {segments} segments of "
                                f"{layout['segment_bytes']} bytes do not make {layout['bytes_per_cta']} bytes per CTA")
    blocks = data.reshape(-1)[:expected].view(np.uint32).reshape(num_ctas, segments, block_words)
    headers = blocks[:, :, :HEADER_WORDS]
    bad = np.argwhere(headers[:, :, W_MAGIC] != MAGIC)
    if bad.size:
        cta, seg = bad[0]
        raise BufferFormatError(f"profile buffer is corrupted: CTA {cta} segment {seg} (and {len(bad) - 1} more) "
                                f"has no header magic 0x{MAGIC:08X} (found 0x{headers[cta, seg, W_MAGIC]:08X}); "
                                "was the kernel launched, and did it return normally?")
    flags = np.uint32(flags_word(layout))
    bad = np.argwhere(headers[:, :, W_FLAGS] != flags)
    if bad.size:
        cta, seg = bad[0]
        raise BufferFormatError(f"profile buffer does not match the kernel's layout: CTA {cta} segment {seg} has "
                                f"flags 0x{headers[cta, seg, W_FLAGS]:08X}, expected 0x{int(flags):08X} "
                                f"(format version {VERSION}, clock bits, buffer type, granularity)")
    per_record = layout["record_bytes"] // 4
    records = blocks[:, :, HEADER_WORDS:].reshape(num_ctas, segments, -1, per_record)
    return RawProfile(headers, records, layout)
