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

BUFFER_TYPES = {"shared": 0, "global": 1, "registers": 2}
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
    target: str = "nvptx"  # "amdgpu": header words 6-7 are HW_ID and XCC_ID

    @property
    def counts(self) -> np.ndarray:
        """Records each segment wrote (more than capacity: the oldest were overwritten)."""
        return self.headers[:, :, W_COUNT]

    @property
    def warp_ids(self) -> np.ndarray:
        return self.headers[:, :, W_WARP]

    @property
    def sm_ids(self) -> np.ndarray:
        """NVIDIA: %smid. AMD (header words 6-7 are HW_ID and XCC_ID): the
        compute unit as one number, ((xcc * 8 + se) * 2 + sh) * 16 + cu."""
        if self.target != "amdgpu":
            return self.headers[:, :, W_HW0]
        return amd_compute_unit(self.headers[:, :, W_HW0], self.headers[:, :, W_HW1])

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


def amd_compute_unit(hw_id: np.ndarray, xcc_id: np.ndarray) -> np.ndarray:
    """The compute unit a wavefront ran on, from the gfx9 HW_ID register
    (CU_ID bits 8-11, SH_ID bit 12, SE_ID bits 13-15) and XCC_ID (bits 0-3),
    as documented in AMD's CDNA3 ISA reference."""
    hw_id = hw_id.astype(np.uint32)
    cu = (hw_id >> np.uint32(8)) & np.uint32(0xF)
    sh = (hw_id >> np.uint32(12)) & np.uint32(0x1)
    se = (hw_id >> np.uint32(13)) & np.uint32(0x7)
    xcc = xcc_id.astype(np.uint32) & np.uint32(0xF)
    return ((xcc * np.uint32(8) + se) * np.uint32(2) + sh) * np.uint32(16) + cu


def read(buffer: bytes | np.ndarray, layout: dict, num_ctas: int, target: str = "nvptx") -> RawProfile:
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
    return RawProfile(headers, records, layout, target)
