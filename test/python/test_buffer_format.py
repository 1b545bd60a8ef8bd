"""The raw buffer reader on buffers written word by word to docs/buffer-format.md."""

import numpy as np
import pytest

from proton.buffer import MAGIC, BufferFormatError, read

# Two warps, 32-byte segments of 8-byte (clock32) records: blocks of 64 + 32 bytes.
LAYOUT = {"warps": [0, 1], "segment_bytes": 32, "record_bytes": 8, "capacity": 4, "clock_bits": 32,
          "buffer_type": "shared", "granularity": "warp", "bytes_per_cta": 2 * (64 + 32)}
FLAGS = 2 | 32 << 8  # version 2, clock32, shared, warp


def handwritten(num_ctas=3, counts=(3, 6)):
    words = np.zeros((num_ctas, 2, 24), dtype=np.uint32)
    words[:, :, 0] = MAGIC
    words[:, :, 1] = FLAGS
    words[:, :, 2] = 77    # kernel id
    words[:, :, 3] = 1000  # ticks per microsecond
    for s, count in enumerate(counts):
        words[:, s, 4] = s
        words[:, s, 5] = count
        words[:, s, 6] = 40 + s         # SM id
        words[:, s, 8] = 1000 + s       # gt start, low word
        words[:, s, 13] = 1             # gt end, high word
        words[:, s, 14] = 5000 + s      # clk end, low word
        words[:, s, 16:24] = np.arange(8, dtype=np.uint32) + 100 * s
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
    assert profile.stamps(8)[0].tolist() == [1000, 1001]
    assert profile.stamps(12)[0].tolist() == [1 << 32, 1 << 32]
    assert profile.stamps(14)[0].tolist() == [5000, 5001]
    assert profile.records[0, 1, 0].tolist() == [100, 101]


def test_truncated_buffer_is_rejected():
    with pytest.raises(BufferFormatError, match="truncated: 400 bytes for 3 CTAs"):
        read(handwritten()[:400], LAYOUT, 3)


def test_corrupted_header_is_rejected_with_the_cta_and_segment():
    data = bytearray(handwritten())
    data[LAYOUT["bytes_per_cta"] + 96] ^= 0xFF  # CTA 1, segment 1: its magic
    with pytest.raises(BufferFormatError, match="CTA 1 segment 1 .* has no header magic"):
        read(bytes(data), LAYOUT, 3)


def test_flags_of_another_layout_are_rejected():
    with pytest.raises(BufferFormatError, match="does not match the kernel's layout: CTA 0 segment 0 has flags"):
        read(handwritten(), {**LAYOUT, "clock_bits": 64, "record_bytes": 16, "capacity": 2}, 3)


def test_layout_of_another_format_is_rejected():
    with pytest.raises(BufferFormatError, match="not of buffer format 2"):
        read(handwritten(), {**LAYOUT, "warps": [0, 1, 2]}, 3)
