"""Finalize memory: writers convert cycles to ns a slice at a
time instead of caching per-event ns columns, and the slicing does not
change a byte of the outputs."""

import numpy as np
import pytest

import synthetic_buffers as sb
from proton.recording import decode
from proton.writers import hatchet_tree, perfetto_trace, perfetto_warps

SCOPES = [("kernel", -1), ("a", 0), ("b", 0), ("c", 1)]


def irregular_events(clock_bits=64):
    """Warps with different scope sequences, gaps wide enough for multi-byte
    varints, and some full rings (records lost, unmatched ones left)."""
    rng = np.random.default_rng(3)
    ctas, segments, n = 40, 4, 70
    lay = sb.layout(num_warps=segments, segment_bytes=512, clock_bits=clock_bits)  # capacity 64 < n
    patterns = [
        [(0, 0), (1, 0), (3, 0), (3, 1), (1, 1), (2, 0), (2, 1), (0, 1)],
        [(0, 0), (2, 0), (2, 1), (0, 1)],
        [(1, 0), (1, 1)],
    ]
    tags = sb.pattern_tags(rng, patterns, ctas, segments, n)
    start = np.uint64(10**10) + rng.integers(0, 10**6, size=(ctas, segments)).astype(np.uint64)
    gaps = rng.integers(1, 400, size=(ctas, segments, n)).astype(np.uint64)
    clocks = start[:, :, None] + np.cumsum(gaps, axis=2, dtype=np.uint64)
    end = clocks[:, :, -1] + np.uint64(50)
    gt0 = np.uint64(1_700_000_000 * 10**9)
    data = sb.build(
        lay,
        tags,
        clocks,
        clk_start=start,
        clk_end=end,
        gt_start=gt0 + start // np.uint64(2),
        gt_end=gt0 + end // np.uint64(2),
        sm=rng.integers(0, 8, size=(ctas, segments)),
    )
    return decode.decode(data, sb.metadata(SCOPES, lay), ctas)


def outputs(ev, tmp_path, tag):
    pf, tree = tmp_path / f"{tag}.pftrace", tmp_path / f"{tag}.hatchet"
    perfetto_trace.write(str(pf), [ev])
    hatchet_tree.write(str(tree), [ev], {})
    return pf.read_bytes(), tree.read_bytes()


@pytest.mark.parametrize("clock_bits", [64, 32])
def test_slices_do_not_change_outputs(tmp_path, monkeypatch, clock_bits):
    ev = irregular_events(clock_bits)
    assert ev.unmatched > 0 and len(np.unique(ev.row)) > 1
    whole = outputs(ev, tmp_path, "whole")
    # The same events written a few packets, rows and events at a time.
    monkeypatch.setattr(perfetto_warps, "CHUNK_PACKETS", 37)
    monkeypatch.setattr(perfetto_warps._row_counts, "__defaults__", (7,))
    monkeypatch.setattr(hatchet_tree._scope_sums, "__defaults__", (11,))
    assert outputs(ev, tmp_path, "sliced") == whole


def test_writers_keep_no_ns_columns(tmp_path):
    ev = irregular_events()
    outputs(ev, tmp_path, "t")
    # cached_property stores into the instance dict: nothing was cached.
    assert "start_ns" not in ev.__dict__ and "end_ns" not in ev.__dict__


def test_row_counts_in_slices():
    rng = np.random.default_rng(5)
    row = rng.integers(0, 13, size=1000).astype(np.int32)
    counts, ordered = perfetto_warps._row_counts(row, 15, at_once=64)
    assert counts.tolist() == np.bincount(row, minlength=15).tolist() and not ordered
    counts, ordered = perfetto_warps._row_counts(np.sort(row), 15, at_once=64)
    assert counts.tolist() == np.bincount(row, minlength=15).tolist() and ordered
    # Out of order only across a slice boundary.
    row = np.arange(128, dtype=np.int32)
    row[64], row[63] = 63, 64
    assert not perfetto_warps._row_counts(row, 128, at_once=64)[1]


def test_cycles_computed_by_row_blocks():
    """The decoder computes cycles a block of rows (or events) at a time,
    as int32 from the base; that equals the whole computation, and a value
    past int32 widens the result instead of wrapping."""
    rng = np.random.default_rng(2)
    rows, width = 10, 9
    clk_end = np.full(rows, 5 << 40, dtype=np.int64) + rng.integers(0, 1000, rows)
    clk_start = clk_end - 100_000
    base = clk_start - 7
    cycles = clk_end[:, None] - rng.integers(0, 100_000, size=(rows, width))
    tags = np.uint64(3 << 48)
    words = (np.zeros((rows, 12), np.uint64) | tags)[:, :width]  # not contiguous, like the buffer
    words |= cycles.astype(np.uint64) & np.uint64((1 << 48) - 1)
    cols = np.array([0, 3, 8])
    want = (cycles - base[:, None])[:, cols]
    uniform = decode._EventIndex(cols, cols, None, num_rows=rows)
    for step in (3, 1 << 12):
        got = decode._cycles(words, 64, uniform, cols, clk_end, clk_start, base, rows_at_once=step)
        assert got.dtype == np.int32 and (got == want).all(), step
    each = decode._EventIndex(np.tile(cols, rows), None, None, rows=np.repeat(np.arange(rows), 3), num_rows=rows)
    got = decode._cycles(words, 64, each, each.start_col, clk_end, clk_start, base, rows_at_once=1)
    assert (got == want.reshape(-1)).all()
    far = decode._cycles(words, 64, uniform, cols, clk_end, clk_start, base - (1 << 33), rows_at_once=3)
    assert far.dtype == np.int64 and (far == want + (1 << 33)).all()
