"""Reads raw profile buffers in the format of docs/buffer-format.md into numpy
arrays (no Python loop per event)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAGIC = 0x4E545250  # bytes "PRTN"
END_BIT = np.uint32(1 << 31)


class BufferFormatError(ValueError):
    """A buffer that is truncated, corrupted, or not of this layout."""


@dataclass
class RawProfile:
    cta_headers: np.ndarray      # (ctas, 8) u32
    segment_headers: np.ndarray  # (ctas, segments, 12) u32
    records: np.ndarray          # (ctas, segments, capacity, words per record) u32
    layout: dict

    @property
    def counts(self) -> np.ndarray:
        """Records each segment wrote (more than capacity: the oldest were overwritten)."""
        return self.segment_headers[:, :, 1]

    @property
    def dropped(self) -> np.ndarray:
        return np.maximum(self.counts.astype(np.int64) - self.layout["capacity"], 0)

    def stamps(self, index: int) -> np.ndarray:
        """Segment header u64 at word `index` (4: gt start, 6: clk start, 8: gt end, 10: clk end)."""
        h = self.segment_headers
        return h[:, :, index].astype(np.uint64) | (h[:, :, index + 1].astype(np.uint64) << np.uint64(32))


def read(buffer: bytes | np.ndarray, layout: dict, num_ctas: int) -> RawProfile:
    data = np.frombuffer(buffer, dtype=np.uint8) if isinstance(buffer, (bytes, bytearray)) else np.asarray(buffer)
    expected = layout["bytes_per_cta"] * num_ctas
    if data.nbytes < expected:
        raise BufferFormatError(f"profile buffer is truncated: {data.nbytes} bytes for {num_ctas} CTAs of "
                                f"{layout['bytes_per_cta']} bytes ({expected} expected)")
    words = data.reshape(-1)[:expected].view(np.uint32).reshape(num_ctas, layout["bytes_per_cta"] // 4)
    bad = np.flatnonzero(words[:, 0] != MAGIC)
    if bad.size:
        raise BufferFormatError(f"profile buffer is corrupted: CTA {bad[0]} (and {bad.size - 1} more) has no "
                                f"header magic 0x{MAGIC:08X} (found 0x{words[bad[0], 0]:08X})")
    segments = len(layout["warps"])
    if (words[:, 2] != segments).any() or (words[:, 3] != layout["segment_bytes"]).any():
        raise BufferFormatError("profile buffer does not match the kernel's layout (segment count or size)")
    seg = words[:, 8:8 + 12 * segments].reshape(num_ctas, segments, 12)
    per_record = layout["record_bytes"] // 4
    records = words[:, layout["header_bytes"] // 4:].reshape(num_ctas, segments, -1, per_record)
    return RawProfile(words[:, :8], seg, records, layout)
