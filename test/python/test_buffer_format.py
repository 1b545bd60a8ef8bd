"""The raw buffer reader on synthetic buffers written to docs/buffer-format.md."""

import numpy as np
import pytest

from proton.buffer import MAGIC, BufferFormatError, read

LAYOUT = {"warps": [0, 1], "segment_bytes": 32, "record_bytes": 8, "capacity": 4,
          "header_bytes": 32 + 2 * 48, "bytes_per_cta": 32 + 2 * 48 + 2 * 32}


def synthetic(num_ctas=3, counts=(3, 6)):
    words = np.zeros((num_ctas, LAYOUT["bytes_per_cta"] // 4), dtype=np.uint32)
    words[:, 0] = MAGIC
    words[:, 2] = 2
    words[:, 3] = 32
    for s, count in enumerate(counts):
        base = 8 + 12 * s
        words[:, base] = s
        words[:, base + 1] = count
        words[:, base + 4] = 1000 + s  # gt start, low word
        words[:, base + 8] = 5000 + s  # gt end, low word
        rec = LAYOUT["header_bytes"] // 4 + s * 8
        words[:, rec:rec + 8] = np.arange(8, dtype=np.uint32) + 100 * s
    return words.tobytes()


def test_reads_headers_records_and_counts_dropped_events():
    profile = read(synthetic(), LAYOUT, 3)
    assert profile.records.shape == (3, 2, 4, 2)
    assert profile.counts.tolist() == [[3, 6]] * 3
    assert profile.dropped.tolist() == [[0, 2]] * 3
    assert profile.stamps(4)[0].tolist() == [1000, 1001]
    assert profile.stamps(8)[0].tolist() == [5000, 5001]
    assert profile.records[0, 1, 0].tolist() == [100, 101]


def test_truncated_buffer_is_rejected():
    with pytest.raises(BufferFormatError, match="truncated: 400 bytes for 3 CTAs"):
        read(synthetic()[:400], LAYOUT, 3)


def test_corrupted_header_is_rejected_with_the_cta():
    data = bytearray(synthetic())
    data[LAYOUT["bytes_per_cta"]] ^= 0xFF  # CTA 1's magic
    with pytest.raises(BufferFormatError, match="CTA 1 .* has no header magic"):
        read(bytes(data), LAYOUT, 3)


def test_layout_mismatch_is_rejected():
    with pytest.raises(BufferFormatError, match="does not match the kernel's layout"):
        read(synthetic(), {**LAYOUT, "warps": [0, 1, 2], "header_bytes": 32 + 3 * 48}, 3)
