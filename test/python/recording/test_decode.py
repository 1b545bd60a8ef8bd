"""The decoder on synthetic buffers (synthetic_buffers.py writes the documented
format): counts, nesting, ring order and loss, clock32 wrap-around, the
measured clock, time_shift, and every kind of bad buffer."""

import dataclasses

import numpy as np
import pytest

from proton.recording import buffer as raw_buffer
from proton.recording import decode
import synthetic_buffers as synthetic
from proton.recording.buffer import BufferFormatError
from proton.contract.kernel_metadata import BufferLayout

SCOPES = [("kernel", -1), ("load", 0), ("store", 0)]
# kernel > load, store: start/end sequence of one warp.
IDS = [0, 1, 1, 2, 2, 0]
ENDS = [0, 0, 1, 0, 1, 1]
STEP = 100  # cycles between records
CLOCK_GHZ = 1.75


def make(
    ctas=3,
    segments=4,
    clock_bits=64,
    reps=1,
    segment_bytes=1024,
    clk0=10**12,
    kernel_id=7,
    gt0=1_763_000_000 * 10**9,
    overhang=0,
):
    """With an overhang, each repetition of the six records is one run (the
    records of a loop body share one slot computation)."""
    lay = synthetic.layout(num_warps=segments, segment_bytes=segment_bytes, clock_bits=clock_bits, overhang=overhang)
    ids, ends = np.tile(IDS, reps), np.tile(ENDS, reps)
    n = ids.size
    tags = np.broadcast_to(synthetic.tag(ids, ends), (ctas, segments, n))
    start = (
        np.uint64(clk0)
        + np.arange(ctas, dtype=np.uint64)[:, None] * np.uint64(10_000)
        + np.arange(segments, dtype=np.uint64)[None, :]
    )
    buf = synthetic.build(
        lay,
        tags,
        **synthetic.steady_times(start, n, STEP, CLOCK_GHZ, clk0, gt0),
        sm=np.arange(ctas)[:, None] + 0 * np.arange(segments)[None, :],
        kernel_id=kernel_id,
        run_starts=np.arange(n) % len(IDS) == 0 if overhang else None,
    )
    return buf, synthetic.metadata(SCOPES, lay, kernel="k", kernel_id=kernel_id)


def test_the_origin_is_the_exact_global_timer_value():
    # Ranks are aligned on it: float64 would round a 1.76e18 ns timer to 256 ns.
    gt0 = 1_763_000_000 * 10**9 + 123
    buf, meta = make(gt0=gt0)
    assert decode.decode(buf, meta, 3).origin_ns == gt0


@pytest.mark.parametrize("clock_bits", [32, 64])
def test_every_scope_of_every_warp_is_decoded(clock_bits):
    buf, meta = make(clock_bits=clock_bits)
    ev = decode.decode(buf, meta, 3)
    assert ev.num_events == 3 * 4 * 3 and ev.unmatched == 0 and ev.dropped.sum() == 0
    dur = ev.duration_cycles.reshape(12, 3)
    assert (dur == [5 * STEP, STEP, STEP]).all()
    assert (ev.scope.reshape(12, 3) == [0, 1, 2]).all()
    assert (ev.cta.reshape(12, 3)[:, 0] == np.repeat(np.arange(3), 4)).all()
    assert (ev.sm == ev.cta).all()
    # children inside their parent, in time too
    parent = ev.start_ns.reshape(12, 3)[:, 0], ev.end_ns.reshape(12, 3)[:, 0]
    for child in (1, 2):
        assert (ev.start_ns.reshape(12, 3)[:, child] >= parent[0]).all()
        assert (ev.end_ns.reshape(12, 3)[:, child] <= parent[1]).all()


def test_clock_is_measured_from_the_global_timer():
    buf, meta = make(reps=50)  # long enough for a precise rate
    ev = decode.decode(buf, meta, 3)
    assert ev.clock_ghz == pytest.approx(CLOCK_GHZ, rel=1e-3)
    ns = (ev.end_ns - ev.start_ns)[ev.scope == 1]
    assert ns == pytest.approx(STEP / CLOCK_GHZ, rel=1e-3)
    # CTAs are placed by the global timer: CTA 1 starts 10000 cycles later.
    first = [ev.start_ns[(ev.cta == c) & (ev.scope == 0)].min() for c in range(3)]
    assert first[1] - first[0] == pytest.approx(10_000 / CLOCK_GHZ, abs=2)


def test_clock32_wraps_around():
    # The 32-bit counter wraps in the middle of the warps' records.
    buf, meta = make(clock_bits=32, clk0=(5 << 32) - 250)
    ev = decode.decode(buf, meta, 3)
    assert ev.num_events == 36
    assert (ev.duration_cycles.reshape(12, 3) == [5 * STEP, STEP, STEP]).all()
    assert ev.start_cycles.min() == STEP  # counted from the CTA's first entry: no wrap shows
    assert ev.warp_clk_base.min() == (5 << 32) - 250 and ev.start_cycles.dtype == np.int32


def long_clock32_warp():
    """One clock32 warp living 9e9 cycles (two counter wraps): an outer
    scope over its life and an inner one of 3e9 cycles."""
    lay = synthetic.layout(num_warps=1, clock_bits=32)
    clk0 = 1 << 40
    clocks = np.array(
        [[[clk0 + 10, clk0 + 3_000_000_000, clk0 + 6_000_000_000, clk0 + 9_000_000_000]]], dtype=np.uint64
    )
    tags = synthetic.tag([[[0, 1, 1, 0]]], [[[0, 0, 1, 1]]])
    buf = synthetic.build(
        lay, tags, clocks, clk_start=[[clk0]], clk_end=[[clk0 + 9_000_000_100]], gt_start=[[0]], gt_end=[[9_000_000]]
    )
    return buf, synthetic.metadata([("outer", -1), ("inner", 0)], lay)


def test_clock32_warp_longer_than_the_counter_period():
    buf, meta = long_clock32_warp()
    ev = decode.decode(buf, meta, 1)
    assert sorted(ev.duration_cycles.tolist()) == [3_000_000_000, 8_999_999_990]
    assert ev.end_cycles.dtype == np.int64  # past 2**31 cycles: widened, not wrapped


@pytest.mark.parametrize("clock_bits", [32, 64])
def test_full_ring_keeps_the_last_records_and_counts_the_lost(clock_bits):
    # 20 repetitions of 6 records into rings of 16.
    buf, meta = make(clock_bits=clock_bits, reps=20, segment_bytes=16 * 8)
    ev = decode.decode(buf, meta, 3)
    assert (ev.dropped == 120 - 16).all()
    # 104 % 6 = 2: the ring starts at "load end"; 7 pairs complete, 2 records orphaned
    assert ev.num_events == 12 * 7 and ev.unmatched == 12 * 2
    assert (ev.duration_cycles > 0).all()
    # the kept records are the last ones written
    assert (ev.end_cycles + ev.warp_clk_base[ev.row]).max() == 10**12 + 2 * 10_000 + 3 + STEP * 120


def test_clocks_past_2_to_the_48_decode_the_tags_from_their_sums():
    # Format 4 writes clock bits 32-63 plus the tag: at 2**48 cycles and past
    # them (a GPU up for 39 hours at 2 GHz) bits 48-63 enter the tag's half,
    # and a warp may cross 2**48 while it runs.
    small = decode.decode(*make(reps=3), 3)
    for clk0 in ((3 << 48) + 10**6, (3 << 48) - 250, (1 << 64) - (1 << 40)):
        big = decode.decode(*make(reps=3, clk0=clk0), 3)
        assert big.scope.tolist() == small.scope.tolist()
        assert (big.duration_cycles == small.duration_cycles).all()
        assert (big.start_cycles == small.start_cycles).all() and big.unmatched == 0


@pytest.mark.parametrize("reps", [2, 3, 7, 20, 21])
def test_runs_into_the_overhang_decode_as_a_plain_ring(reps):
    # Runs of six records in a ring of 16 with 5 overhang slots: runs that
    # start near the ring's end continue past it; the decoder keeps per
    # slot the newer of the ring's and the overhang's record.
    plain_buf, plain_meta = make(reps=reps, segment_bytes=16 * 8)
    runs_buf, runs_meta = make(reps=reps, segment_bytes=16 * 8, overhang=5)
    assert runs_meta.layout.bytes_per_cta > plain_meta.layout.bytes_per_cta
    plain, runs = decode.decode(plain_buf, plain_meta, 3), decode.decode(runs_buf, runs_meta, 3)
    assert decoded(runs) == decoded(plain)
    assert (runs.dropped == plain.dropped).all() and runs.unmatched == plain.unmatched
    if reps > 3:
        assert (runs.dropped > 0).all()


def test_overhang_record_older_than_the_ring_is_ignored():
    # A stale overhang record (from a run two laps ago) loses to the ring's.
    buf, meta = make(reps=8, segment_bytes=16 * 8, overhang=5)
    ev = decode.decode(buf, meta, 3)
    raw = raw_buffer.read(buf, meta.layout, 3)
    assert raw.overhang.shape == (3, 4, 5, 2)
    clocks = raw.overhang[..., 0].astype(np.uint64) | (
        raw.overhang[..., 1].astype(np.uint64) & np.uint64(0xFFFF)
    ) << np.uint64(32)
    newest = (ev.end_cycles + ev.warp_clk_base[ev.row]).max()
    assert (clocks < np.uint64(newest)).all()
    assert decoded(ev) == decoded(decode.decode(*make(reps=8, segment_bytes=16 * 8), 3))


def test_warps_with_different_sequences():
    lay = synthetic.layout(num_warps=2)
    tags = np.zeros((1, 2, 6), dtype=np.uint32)
    tags[0, 0] = synthetic.tag(IDS, ENDS)
    tags[0, 1] = synthetic.tag([1, 1, 2, 2, 0, 0], [0, 1, 0, 1, 0, 1])
    clocks = (
        np.uint64(1000) + np.arange(6, dtype=np.uint64)[None, None, :] * np.uint64(10) + np.zeros((1, 2, 1), np.uint64)
    )
    buf = synthetic.build(
        lay, tags, clocks, clk_start=[[900, 900]], clk_end=[[1100, 1100]], gt_start=[[0, 0]], gt_end=[[200, 200]]
    )
    ev = decode.decode(buf, synthetic.metadata(SCOPES, lay), 1)
    got = sorted(zip(ev.row.tolist(), ev.scope.tolist(), ev.duration_cycles.tolist()))
    assert got == [(0, 0, 50), (0, 1, 10), (0, 2, 10), (1, 0, 10), (1, 1, 10), (1, 2, 10)]


def test_time_shift_subtracts_the_cost_of_earlier_records():
    buf, meta = make()
    plain = decode.decode(buf, meta, 3)
    shifted = decode.decode(buf, meta, 3, record_cost_cycles=20)
    # kernel spans 5 records, load and store one each
    assert (shifted.duration_cycles.reshape(12, 3) == [5 * STEP - 5 * 20, STEP - 20, STEP - 20]).all()
    assert (shifted.start_cycles <= plain.start_cycles).all()


def test_truncated_buffer():
    buf, meta = make()
    with pytest.raises(BufferFormatError, match="truncated"):
        decode.decode(buf[:-10], meta, 3)


def test_corrupted_magic():
    buf, meta = make()
    buf = buf.copy()
    buf[meta.layout.bytes_per_cta + 3] ^= 0xFF  # the magic: word 0, bits 16-31
    with pytest.raises(BufferFormatError, match="CTA 1 .*magic"):
        decode.decode(buf, meta, 3)


def test_buffer_of_another_kernel():
    buf, meta = make(kernel_id=7)
    meta = dataclasses.replace(meta, kernel_id=8)
    with pytest.raises(BufferFormatError, match="kernel id 7, not 8"):
        decode.decode(buf, meta, 3)


def test_scope_id_out_of_range():
    buf, meta = make()
    meta = dataclasses.replace(meta, rows=meta.rows[:2])
    with pytest.raises(BufferFormatError, match="scope id 2, but the kernel has 2 scopes"):
        decode.decode(buf, meta, 3)


def test_clock_outside_the_warp_lifetime():
    buf, meta = make()
    words = buf.copy().view(np.uint32)
    lay = meta.layout
    # CTA 0 segment 0 entry cycle moved after its records
    words[raw_buffer.W_CLOCK_START] += 10_000
    with pytest.raises(BufferFormatError, match="CTA 0 segment 0 .*outside the warp's lifetime"):
        decode.decode(words.view(np.uint8), meta, 3)
    assert lay.capacity == 128


def test_segment_layout_mismatch():
    buf, meta = make()
    other = synthetic.layout(num_warps=4, segment_bytes=512)
    with pytest.raises(BufferFormatError):
        decode.decode(buf, dataclasses.replace(meta, layout=BufferLayout.from_dict(other)), 3)


def test_amd_buffer_uses_the_100mhz_timer_and_decodes_the_compute_unit():
    """An AMD buffer: s_memrealtime ticks at 100 MHz (flags bit 9) and the
    location word holds HW_ID[15:0] and XCC_ID."""
    lay = synthetic.layout(num_warps=2, segment_bytes=256, clock_bits=32)
    n = len(IDS)
    tags = np.broadcast_to(synthetic.tag(IDS, ENDS), (2, 2, n))
    start = (
        np.uint64(5_000_000) + np.arange(2, dtype=np.uint64)[:, None] * np.uint64(3000) + np.zeros((1, 2), np.uint64)
    )
    clocks = start[:, :, None] + np.uint64(STEP) * (np.arange(n, dtype=np.uint64) + np.uint64(1))
    # Each wave lives 1 ms: 2,100,000 cycles at 2.1 GHz, 100,000 ticks of the
    # 100 MHz timer.
    clk_end = start + np.uint64(2_100_000)
    gt_start = np.uint64(10**12) + (start - np.uint64(5_000_000)) // np.uint64(21)
    gt_end = gt_start + np.uint64(100_000)
    # CTA 0: XCC 3, SE 5, SH 1, CU 9 (wave 2, SIMD 1); CTA 1: XCC 0, SE 0, SH 0, CU 4.
    hw_id = np.array([[(5 << 13) | (1 << 12) | (9 << 8) | (1 << 4) | 2] * 2, [4 << 8] * 2], dtype=np.uint32)
    xcc = np.array([[3, 3], [0, 0]], dtype=np.uint32)
    buf = synthetic.build(
        lay,
        tags,
        clocks,
        clk_start=start,
        clk_end=clk_end,
        gt_start=gt_start,
        gt_end=gt_end,
        sm=hw_id,
        xcc=xcc,
        target="amdgpu",
    )
    ev = decode.decode(buf, synthetic.metadata(SCOPES, lay, target="amdgpu"), 2)
    assert ev.num_events == 2 * 2 * 3
    assert abs(ev.clock_ghz - 2.1) < 0.01
    assert ev.warp_sm.tolist() == [((3 * 8 + 5) * 2 + 1) * 16 + 9] * 2 + [4] * 2
    # The outer scope: 5 steps of 100 cycles at 2.1 GHz.
    outer = ev.end_ns[ev.scope == 0] - ev.start_ns[ev.scope == 0]
    assert np.allclose(outer, 5 * STEP / 2.1, atol=1.0)
    # Read as an NVIDIA buffer, the timer flag does not match.
    with pytest.raises(BufferFormatError, match="flags 0x0204, expected 0x0004"):
        decode.decode(buf, synthetic.metadata(SCOPES, lay), 2)


def test_registers_buffer_with_an_impossible_count_is_corrupt_not_lossy():
    # A corrupted count is not 4,294,967,287 records "lost
    # to full buffers" (registers have no ring to lose them in).
    lay = synthetic.layout(num_warps=2, segment_bytes=64, buffer_type="registers")
    ids, ends = np.array([0, 0]), np.array([0, 1])
    tags = np.broadcast_to(synthetic.tag(ids, ends), (1, 2, 2))
    start = np.full((1, 2), 10**12, dtype=np.uint64)
    clocks = start[:, :, None] + np.arange(1, 3, dtype=np.uint64) * np.uint64(100)
    end = start + np.uint64(400)
    gt = np.full((1, 2), 1_763_000_000 * 10**9, dtype=np.uint64)
    buf = synthetic.build(lay, tags, clocks, clk_start=start, clk_end=end, gt_start=gt, gt_end=gt + np.uint64(200))
    meta = synthetic.metadata([("s", -1)], lay)
    decode.decode(buf, meta, 1)  # intact: fine
    words = buf.view(np.uint32)
    block_words = lay["block_bytes"] // 4
    words[block_words + 2] = 0xFFFFFFF7  # segment 1's count word (W_COUNT)
    with pytest.raises(
        BufferFormatError, match="CTA 0 segment 1 counts 4294967287 records, but its registers hold at most 8"
    ):
        decode.decode(buf, meta, 1)


def reference(buf, meta, ctas, record_cost_cycles=0.0):
    """A straightforward decoding, one warp and one record at a time: the
    events as sorted (row, scope, start cycles, end cycles), and the
    unmatched count."""
    lay = meta.layout
    raw = raw_buffer.read(buf, lay, ctas)
    cap, segments = lay.capacity, len(lay.warps)
    wrap = 1 << (48 if lay.clock_bits == 64 else 32)
    events, unmatched = [], 0
    for c in range(ctas):
        for s in range(segments):
            count = int(raw.counts[c, s])
            kept = min(count, cap)
            first = count % cap if count > cap else 0
            words = [
                int(raw.records[c, s, (first + i) % cap, 0]) | int(raw.records[c, s, (first + i) % cap, 1]) << 32
                for i in range(kept)
            ]
            clk_start, clk_end = (
                int(raw.stamps(raw_buffer.W_CLOCK_START)[c, s]),
                int(raw.stamps(raw_buffer.W_CLOCK_END)[c, s]),
            )
            cyc = [0] * kept
            later = clk_end
            for i in reversed(range(kept)):
                # Long-lived warps: step back record by record; others: from the exit stamp.
                base = later if clk_end - clk_start >= wrap else clk_end
                cyc[i] = later = base - ((base - words[i]) % wrap)
            is_end = [w >> 63 for w in words]
            ids = [(w >> 48) & 0x7FFF for w in words]
            level, levels = 0, []
            for e in is_end:
                level -= e
                levels.append(level)
                level += 1 - e
            paired = 0
            for i in range(kept):
                if is_end[i]:
                    continue
                j = next((j for j in range(i + 1, kept) if levels[j] == levels[i]), None)
                if j is None or not is_end[j] or ids[j] != ids[i]:
                    continue
                start, end = cyc[i], cyc[j]
                if record_cost_cycles > 0:
                    start -= int(np.rint((count - kept + i) * record_cost_cycles))
                    end = max(end - int(np.rint((count - kept + j) * record_cost_cycles)), start)
                events.append((c * segments + s, ids[i], start, end))
                paired += 2
            unmatched += kept - paired
    return sorted(events), unmatched


def random_buffer(seed, clock_bits, ctas=3, segments=4, cap=16):
    """Warps of random nesting and length (some overflow their ring, some
    leave scopes open), clock32 wrapping inside them."""
    rng = np.random.default_rng(seed)
    one = synthetic.layout(num_warps=1, segment_bytes=cap * 8, clock_bits=clock_bits)
    clk0 = (5 << 32) - 3000
    blocks = []
    for _ in range(ctas * segments):
        seq, stack = [], []
        for _ in range(int(rng.integers(0, 30))):
            if stack and rng.random() < 0.5:
                seq.append((stack.pop(), 1))
            else:
                stack.append(int(rng.integers(0, 3)))
                seq.append((stack[-1], 0))
        if rng.random() < 0.8:
            seq += [(i, 1) for i in reversed(stack)]
        n = len(seq)
        tags = synthetic.tag([[[i for i, _ in seq]]], [[[e for _, e in seq]]]).reshape(1, 1, n)
        clocks = np.uint64(clk0) + np.cumsum(rng.integers(1, 500, size=n + 1)).astype(np.uint64)
        blocks.append(
            synthetic.build(
                one,
                tags,
                clocks[:-1].reshape(1, 1, n),
                clk_start=clk0,
                clk_end=int(clocks[-1]) + 7,
                gt_start=10**9,
                gt_end=10**9 + 10**6,
            )
        )
    lay = synthetic.layout(num_warps=segments, segment_bytes=cap * 8, clock_bits=clock_bits)
    return np.concatenate(blocks), synthetic.metadata(SCOPES, lay)


def decoded(ev):
    """(row, scope, start, end) with the SM counter's values."""
    base = ev.warp_clk_base[ev.row]
    start, end = ev.start_cycles + base, ev.end_cycles + base
    return sorted(zip(ev.row.tolist(), ev.scope.tolist(), start.tolist(), end.tolist()))


CASES = {
    "uniform 64-bit": lambda: make(),
    "uniform clock32 wrapping": lambda: make(clock_bits=32, clk0=(5 << 32) - 250),
    "full rings": lambda: make(reps=20, segment_bytes=16 * 8),
    "full rings clock32": lambda: make(clock_bits=32, reps=20, segment_bytes=16 * 8, clk0=(7 << 32) - 1000),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("cost", [0.0, 12.5])
def test_matches_a_straightforward_decoding(case, cost):
    buf, meta = CASES[case]()
    ev = decode.decode(buf, meta, 3, record_cost_cycles=cost)
    events, unmatched = reference(buf, meta, 3, cost)
    assert decoded(ev) == events and ev.unmatched == unmatched and len(events) > 0


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("clock_bits", [32, 64])
def test_random_warps_match_a_straightforward_decoding(seed, clock_bits):
    buf, meta = random_buffer(seed, clock_bits)
    for cost in (0.0, 3.0):
        ev = decode.decode(buf, meta, 3, record_cost_cycles=cost)
        events, unmatched = reference(buf, meta, 3, cost)
        assert decoded(ev) == events and ev.unmatched == unmatched
    assert (ev.dropped > 0).any() and ev.unmatched > 0 and ev.num_events > 0


def test_long_clock32_warp_matches_a_straightforward_decoding():
    buf, meta = long_clock32_warp()
    assert decoded(decode.decode(buf, meta, 1)) == reference(buf, meta, 1)[0]
