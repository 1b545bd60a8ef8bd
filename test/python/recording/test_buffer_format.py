"""The raw buffer reader on buffers written word by word to docs/buffer-format.md."""

import numpy as np
import pytest

from dataclasses import replace

from proton.recording.buffer import BufferFormatError, read
from proton.contract.kernel_metadata import BufferLayout

# Two warps, 32-byte segments of 8-byte records: blocks of 48 + 32 bytes,
# padded to 96.
LAYOUT = BufferLayout.from_dict(
    {
        "warps": [0, 1],
        "segment_bytes": 32,
        "record_bytes": 8,
        "capacity": 4,
        "clock_bits": 32,
        "buffer_type": "shared",
        "granularity": "warp",
        "bytes_per_cta": 2 * 96,
        "block_bytes": 96,
    }
)
WORD0 = 0x5250 << 16 | 3  # magic "PR", version 3, clock32, shared, warp, 1 GHz timer


def handwritten(num_ctas=3, counts=(3, 6)):
    words = np.zeros((num_ctas, 2, 24), dtype=np.uint32)
    words[:, :, 0] = WORD0
    words[:, :, 1] = 77  # kernel id
    for s, count in enumerate(counts):
        words[:, s, 2] = count
        words[:, s, 3] = (40 + s) | s << 20  # SM id, warp id
        words[:, s, 4] = 1000 + s  # gt start, low word
        words[:, s, 9] = 1  # gt end, high word
        words[:, s, 10] = 5000 + s  # clk end, low word
        # records: clock, then the tag in bits 16-31 (scope 5 + s, end bit on odd ones)
        words[:, s, 12:20:2] = np.arange(4, dtype=np.uint32) + 100 * s
        words[:, s, 13:20:2] = ((5 + s) << 16) | (np.arange(4, dtype=np.uint32) % 2 << 31)
        words[:, s, 20:24] = 0xDEADBEEF  # padding: never read
    return words.tobytes()


def test_reads_headers_records_and_counts_dropped_events():
    profile = read(handwritten(), LAYOUT, 3)
    assert profile.records.shape == (3, 2, 4, 2)
    assert profile.counts.tolist() == [[3, 6]] * 3
    assert profile.dropped.tolist() == [[0, 2]] * 3
    assert profile.warp_ids.tolist() == [[0, 1]] * 3
    assert profile.sm_ids.tolist() == [[40, 41]] * 3
    assert profile.kernel_ids.tolist() == [[77, 77]] * 3
    assert profile.ticks_per_us == 1000
    assert profile.stamps(4)[0].tolist() == [1000, 1001]
    assert profile.stamps(8)[0].tolist() == [1 << 32, 1 << 32]
    assert profile.stamps(10)[0].tolist() == [5000, 5001]
    from proton.recording.buffer import record_clocks, record_tags

    assert record_clocks(profile.records, 32)[0, 1].tolist() == [100, 101, 102, 103]
    assert record_tags(profile.records)[0, 1].tolist() == [6, 6 | 1 << 31, 6, 6 | 1 << 31]


def test_64_bit_records_keep_48_clock_bits_beside_the_tag():
    words = np.frombuffer(handwritten(), dtype=np.uint32).copy().reshape(3, 2, 24)
    words[:, :, 0] |= 1 << 4  # 64-bit clocks
    words[:, :, 13] |= 0xABCD  # clock bits 32-47 of record 0
    profile = read(words.tobytes(), replace(LAYOUT, clock_bits=64), 3)
    from proton.recording.buffer import record_clocks, record_tags

    assert record_clocks(profile.records, 64)[0, 1, 0] == (0xABCD << 32) | 100
    assert record_tags(profile.records)[0, 1, 0] == 6


def test_truncated_buffer_is_rejected():
    with pytest.raises(BufferFormatError, match="truncated: 400 bytes for 3 CTAs"):
        read(handwritten()[:400], LAYOUT, 3)


def test_corrupted_header_is_rejected_with_the_cta_and_segment():
    data = bytearray(handwritten())
    data[LAYOUT.bytes_per_cta + 96 + 3] ^= 0xFF  # CTA 1, segment 1: its magic
    with pytest.raises(BufferFormatError, match="CTA 1 segment 1 .* has no header magic"):
        read(bytes(data), LAYOUT, 3)


def test_flags_of_another_layout_are_rejected():
    with pytest.raises(BufferFormatError, match="does not match the kernel's layout: CTA 0 segment 0 has flags"):
        read(handwritten(), replace(LAYOUT, clock_bits=64), 3)


def test_layout_of_another_format_is_rejected():
    with pytest.raises(BufferFormatError, match="not of buffer format 4"):
        read(handwritten(), replace(LAYOUT, warps=(0, 1, 2)), 3)
    with pytest.raises(BufferFormatError, match="not of buffer format 4"):
        read(handwritten(), replace(LAYOUT, record_bytes=16), 3)
