"""Reads raw profile buffers in the format of docs/buffer-format.md into numpy
arrays (no Python loop per event)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contract.kernel_metadata import BufferLayout
from ..contract.compiler_exports import LAYOUT, BufferType, Granularity

MAGIC = LAYOUT.MAGIC  # header word 0, bits 16-31 (bytes "PR")
VERSION = LAYOUT.VERSION
# Still read: 64-bit clocks' bits 32-47 masked below the tag, no overhang.
PREVIOUS_VERSION = LAYOUT.PREVIOUS_VERSION
HEADER_WORDS = LAYOUT.HEADER_WORDS  # the segment header
RECORD_WORDS = LAYOUT.RECORD_WORDS
SECTOR_BYTES = LAYOUT.SECTOR_BYTES  # blocks are padded to whole sectors

# Segment header words.
W_MAGIC_FLAGS, W_KERNEL_ID, W_COUNT, W_LOCATION = (
    LAYOUT.W_MAGIC_FLAGS,
    LAYOUT.W_KERNEL_ID,
    LAYOUT.W_COUNT,
    LAYOUT.W_LOCATION,
)
W_TIMER_START, W_CLOCK_START = LAYOUT.W_TIMER_START, LAYOUT.W_CLOCK_START
W_TIMER_END, W_CLOCK_END = LAYOUT.W_TIMER_END, LAYOUT.W_CLOCK_END

# Flags (header word 0, bits 0-15).
CLOCK64_BIT = LAYOUT.CLOCK64_BIT
BUFFER_TYPE_SHIFT, GRANULARITY_SHIFT = LAYOUT.BUFFER_TYPE_SHIFT, LAYOUT.GRANULARITY_SHIFT
TIMER_100MHZ_BIT = LAYOUT.TIMER_100MHZ_BIT
WARP_SHIFT = LAYOUT.WARP_SHIFT  # header word 3: warp id above the location

# A record's second word: clock bits 32-47, then the tag (end bit, record-table
# id). The compiler's MAX_SCOPES counts every id: scopes, events, marks, values.
TAG_SHIFT, END_TAG_BIT, MAX_RECORD_IDS = LAYOUT.TAG_SHIFT, LAYOUT.END_TAG_BIT, LAYOUT.MAX_SCOPES
# The tags decode works with: bit 31 end, bits 0-30 the id.
END_BIT = np.uint32(END_TAG_BIT << TAG_SHIFT)
RECORD_ID_MASK = MAX_RECORD_IDS - 1
# The decoder reads a record's tag as the top half-word of its u64 (no shift
# or copy), which holds while the tag fills bits 16-31 of the second word.
if (TAG_SHIFT, END_TAG_BIT, MAX_RECORD_IDS) != (16, 1 << 15, 1 << 15):
    raise ImportError(
        f"proton's decoder expects the record tag in the top 16 bits (end bit 15, 15-bit ids); "
        f"the compiler says tag shift {TAG_SHIFT}, end bit {END_TAG_BIT:#x}, {MAX_RECORD_IDS} ids"
    )

# The codes a header stores ("auto" is resolved by the compiler).
BUFFER_TYPES = {kind.name: kind.value for kind in BufferType if kind.name != "auto"}
GRANULARITIES = {kind.name: kind.value for kind in Granularity}


class BufferFormatError(ValueError):
    """A buffer that is truncated, corrupted, or not of this layout."""


def block_bytes(segment_bytes: int, overhang: int = 0) -> int:
    """A segment's header, records and overhang, padded to whole sectors: the
    compiler's own formula (LayoutAttr::blockBytesFor), through `_C`."""
    from ..compiling.compiler import extension

    return extension().block_bytes(segment_bytes, overhang)


def flags_word(layout: BufferLayout, target: str = "nvptx", version: int = VERSION) -> int:
    """Segment header word 0, magic and flags, for a layout (what the kernel writes)."""
    flags = (
        version
        | (CLOCK64_BIT if layout.clock_bits == 64 else 0)
        | BUFFER_TYPES[layout.buffer_type] << BUFFER_TYPE_SHIFT
        | GRANULARITIES[layout.granularity] << GRANULARITY_SHIFT
        | (TIMER_100MHZ_BIT if target == "amdgpu" else 0)
    )
    return MAGIC << 16 | flags


@dataclass
class RawProfile:
    headers: np.ndarray  # (ctas, segments, 12) u32
    records: np.ndarray  # (ctas, segments, capacity, 2) u32: the ring
    layout: BufferLayout
    target: str = "nvptx"  # "amdgpu": the location is HW_ID[15:0] and XCC_ID
    overhang: np.ndarray | None = None  # (ctas, segments, overhang, 2) u32 after the ring
    version: int = VERSION

    @property
    def tags_added_to_clock(self) -> bool:
        """Records' second words are clock bits 32-63 plus the tag (format 4,
        64-bit clocks), not bits 32-47 below it."""
        return self.version >= 4 and self.layout.clock_bits == 64

    @property
    def counts(self) -> np.ndarray:
        """Records each segment wrote (more than capacity: the oldest were overwritten)."""
        return self.headers[:, :, W_COUNT]

    @property
    def warp_ids(self) -> np.ndarray:
        return self.headers[:, :, W_LOCATION] >> np.uint32(WARP_SHIFT)

    @property
    def sm_ids(self) -> np.ndarray:
        """NVIDIA: %smid. AMD: the compute unit as one number,
        ((xcc * 8 + se) * 2 + sh) * 16 + cu."""
        where = self.headers[:, :, W_LOCATION] & np.uint32((1 << WARP_SHIFT) - 1)
        if self.target != "amdgpu":
            return where
        return amd_compute_unit(where & np.uint32(0xFFFF), where >> np.uint32(16))

    @property
    def kernel_ids(self) -> np.ndarray:
        return self.headers[:, :, W_KERNEL_ID]

    @property
    def ticks_per_us(self) -> int:
        """Global-timer ticks per microsecond: 1000 (NVIDIA %globaltimer, ns)
        or 100 (AMD s_memrealtime, 100 MHz)."""
        return 100 if self.target == "amdgpu" else 1000

    @property
    def dropped(self) -> np.ndarray:
        return np.maximum(self.counts.astype(np.int64) - self.layout.capacity, 0)

    def stamps(self, word: int) -> np.ndarray:
        """The u64 at header word `word` (W_TIMER_START, W_CLOCK_START, W_TIMER_END, W_CLOCK_END)."""
        h = self.headers
        return h[:, :, word].astype(np.uint64) | (h[:, :, word + 1].astype(np.uint64) << np.uint64(32))


def record_tags(records: np.ndarray) -> np.ndarray:
    """Tags of (..., 2)-word records: bit 31 end, bits 0-30 the scope id."""
    second = records[..., 1]
    return ((second >> np.uint32(TAG_SHIFT)) & np.uint32(RECORD_ID_MASK)) | (second & END_BIT)


def record_clocks(records: np.ndarray, clock_bits: int) -> np.ndarray:
    """Clock bits of (..., 2)-word records as u64: the low 48 bits (64-bit
    clocks) or the low 32 bits (32-bit clocks). A record read as one
    little-endian u64 holds them in its low bits."""
    whole = records.view("<u8")[..., 0]
    return whole & np.uint64((1 << (48 if clock_bits == 64 else 32)) - 1)


def record_words(records: np.ndarray) -> np.ndarray:
    """(..., 2)-word records as one little-endian u64 each, a view (no copy):
    the clock bits are the low 48 (or 32), the tag half-word the top 16."""
    return records.view("<u8")[..., 0]


def tag_halves(words: np.ndarray) -> np.ndarray:
    """The top 16 bits of u64 records, a u16 view (no copy): bit 15 end, bits
    0-14 the scope id; equal half-words mean equal tags."""
    return words.view(np.uint16).reshape(*words.shape, 4)[..., 3]


def tags_of_halves(halves: np.ndarray) -> np.ndarray:
    """Tags as decode works with them (bit 31 end, bits 0-30 the scope id)
    from the top half-words of records."""
    halves = halves.astype(np.uint32)
    return (halves & np.uint32(RECORD_ID_MASK)) | ((halves & np.uint32(END_TAG_BIT)) << np.uint32(TAG_SHIFT))


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


def read(buffer: bytes | np.ndarray, layout: BufferLayout, num_ctas: int, target: str = "nvptx") -> RawProfile:
    data = np.frombuffer(buffer, dtype=np.uint8) if isinstance(buffer, (bytes, bytearray)) else np.asarray(buffer)
    expected = layout.bytes_per_cta * num_ctas
    if data.nbytes < expected:
        raise BufferFormatError(
            f"profile buffer is truncated: {data.nbytes} bytes for {num_ctas} CTAs of "
            f"{layout.bytes_per_cta} bytes ({expected} expected)"
        )
    segments = len(layout.warps)
    overhang = layout.overhang
    block = block_bytes(layout.segment_bytes, overhang)
    if (
        block * segments != layout.bytes_per_cta
        or layout.block_bytes not in (None, block)
        or layout.record_bytes != 4 * RECORD_WORDS
    ):
        raise BufferFormatError(
            f"layout is not of buffer format {VERSION}: {segments} segments of "
            f"{layout.segment_bytes} bytes of {layout.record_bytes}-byte records do not "
            f"make {layout.bytes_per_cta} bytes per CTA"
        )
    blocks = data.reshape(-1)[:expected].view(np.uint32).reshape(num_ctas, segments, block // 4)
    headers = blocks[:, :, :HEADER_WORDS]
    first = headers[:, :, W_MAGIC_FLAGS]
    bad = np.argwhere(first >> np.uint32(16) != MAGIC)
    if bad.size:
        cta, seg = bad[0]
        raise BufferFormatError(
            f"profile buffer is corrupted: CTA {cta} segment {seg} (and {len(bad) - 1} more) "
            f"has no header magic 0x{MAGIC:04X} (found 0x{first[cta, seg] >> 16:04X}); "
            "was the kernel launched, and did it return normally?"
        )
    word = np.uint32(flags_word(layout, target))
    version = VERSION
    if overhang == 0 and (first == np.uint32(flags_word(layout, target, PREVIOUS_VERSION))).all():
        version = PREVIOUS_VERSION  # a buffer saved by an earlier release
    else:
        bad = np.argwhere(first != word)
        if bad.size:
            cta, seg = bad[0]
            raise BufferFormatError(
                f"profile buffer does not match the kernel's layout: CTA {cta} segment {seg} has "
                f"flags 0x{first[cta, seg] & 0xFFFF:04X}, expected 0x{int(word) & 0xFFFF:04X} "
                f"(format version {VERSION}, clock bits, buffer type, granularity, timer)"
            )
    capacity = layout.segment_bytes // (4 * RECORD_WORDS)
    ring_end = HEADER_WORDS + capacity * RECORD_WORDS
    records = blocks[:, :, HEADER_WORDS:ring_end].reshape(num_ctas, segments, capacity, RECORD_WORDS)
    extra = blocks[:, :, ring_end : ring_end + overhang * RECORD_WORDS]
    extra = extra.reshape(num_ctas, segments, overhang, RECORD_WORDS)
    return RawProfile(headers, records, layout, target, extra, version)
