"""The .pftrace writer: files are parsed back with the perfetto package's
protos and decoded the way Perfetto's format says (sequences, interned
names, packet defaults, incremental clocks), and every slice (track, name,
begin, end in ns) must be what the decoded events hold."""

import numpy as np
import pytest

from proton.recording import decode
from proton.contract.events import LaunchEvents
from proton.writers import perfetto_deflate, perfetto_trace, perfetto_warps

from test_decode import make

BOOTTIME = 6


def read(path):
    """(tracks {uuid: descriptor}, slices [(track uuid, name, begin, end)])
    by reading the packets in file order as trace processors do."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket, TrackEvent

    trace = Trace.FromString(perfetto_deflate.inflate(open(path, "rb").read()))
    tracks, slices, open_slices = {}, [], {}
    names, defaults = {}, {}
    clock_value, incremental, to_trace = {}, {}, {}
    for p in trace.packet:
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            names[seq], defaults[seq] = {}, None
        if p.HasField("trace_packet_defaults"):
            defaults[seq] = p.trace_packet_defaults
        for entry in p.interned_data.event_names:
            names[seq][entry.iid] = entry.name
        if p.HasField("clock_snapshot"):
            values = {}
            for c in p.clock_snapshot.clocks:
                key = (seq, c.clock_id) if 64 <= c.clock_id < 128 else c.clock_id
                assert seq or key == c.clock_id, "sequence-scoped clocks need a sequence"
                incremental[key] = c.is_incremental
                clock_value[key] = values[key] = c.timestamp
            if BOOTTIME in values:
                for key, value in values.items():
                    to_trace[key] = values[BOOTTIME] - value
            continue
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if not p.HasField("track_event"):
            continue
        clock = p.timestamp_clock_id or (defaults[seq].timestamp_clock_id if defaults.get(seq) else 0)
        if 64 <= clock < 128:
            key = (seq, clock)
            if incremental[key]:
                delta = p.timestamp if p.timestamp < 1 << 63 else p.timestamp - (1 << 64)
                clock_value[key] += delta
                ts = clock_value[key] + to_trace[key]
            else:
                ts = p.timestamp + to_trace[key]
        else:
            assert clock in (0, BOOTTIME)
            ts = p.timestamp
        event = p.track_event
        track = event.track_uuid if event.HasField("track_uuid") else defaults[seq].track_event_defaults.track_uuid
        stack = open_slices.setdefault(track, [])
        if event.type == TrackEvent.TYPE_SLICE_BEGIN:
            stack.append((names[seq][event.name_iid], ts))
        else:
            assert event.type == TrackEvent.TYPE_SLICE_END and stack, "an end without a begin"
            name, begin = stack.pop()
            assert ts >= begin
            slices.append((track, name, begin, ts))
    assert not any(open_slices.values()), "slices left open"
    return tracks, slices


def by_warp(tracks, slices):
    """Slices keyed by (CTA track name, warp track name), sorted."""
    out = []
    for track, name, begin, end in slices:
        warp = tracks[track]
        out.append(((tracks[warp.parent_uuid].name, warp.name), name, begin, end))
    return sorted(out)


def expected(launches, origin_ns=None):
    """What the decoded events say, keyed like by_warp."""
    origin = min(ev.origin_ns for ev in launches) if origin_ns is None else origin_ns
    out = []
    for ev in launches:
        shift = ev.origin_ns - origin
        begin = np.rint(np.maximum(ev.start_ns + shift, 0)).astype(np.int64)
        end = np.maximum(np.rint(np.maximum(ev.end_ns + shift, 0)).astype(np.int64), begin)
        for i in range(ev.num_events):
            out.append(
                (
                    (f"{ev.kernel} #{ev.launch} CTA {ev.cta[i]}", f"{ev.row_label} {ev.warp[i]}"),
                    ev.scope_names[ev.scope[i]],
                    int(begin[i]),
                    int(end[i]),
                )
            )
    return sorted(out)


@pytest.fixture
def launches():
    out = []
    for launch in range(2):
        buf, meta = make(ctas=3, segments=4)
        out.append(decode.decode(buf, meta, 3, kernel="vector_add", launch=launch))
    return out


def test_every_slice_is_what_the_events_hold(tmp_path, launches):
    path = tmp_path / "run.pftrace"
    assert perfetto_trace.write(str(path), launches, "GPU 0 (test)") == 72
    tracks, slices = read(path)
    assert len(slices) == 72
    assert by_warp(tracks, slices) == expected(launches)
    # GPU > SM > CTA > warp, in numerical order
    gpu = [d for d in tracks.values() if not d.HasField("parent_uuid")]
    assert [d.name for d in gpu] == ["GPU 0 (test)"]
    assert gpu[0].description == f"global timer origin ns = {min(ev.origin_ns for ev in launches)}"
    for track, *_ in slices:
        warp = tracks[track]
        cta = tracks[warp.parent_uuid]
        sm = tracks[cta.parent_uuid]
        assert warp.name.startswith("warp ") and sm.name == f"SM {sm.sibling_order_rank}"
        assert sm.parent_uuid == gpu[0].uuid
        assert warp.sibling_order_rank == int(warp.name.split()[1])
    assert all(d.child_ordering == d.EXPLICIT for d in tracks.values())


def test_the_whole_file_is_small(tmp_path):
    """About 22 bytes a slice when timestamps are less than 128 ns apart."""
    buf, meta = make(ctas=64, segments=4, reps=20)
    ev = decode.decode(buf, meta, 64)
    path = tmp_path / "run.pftrace"
    perfetto_trace.write(str(path), [ev])
    assert path.stat().st_size < 24 * ev.num_events + 4000
    tracks, slices = read(path)
    assert by_warp(tracks, slices) == expected([ev])


def synthetic_events(rows_events, segments=2, kernel="k", ctas=2):
    """LaunchEvents from explicit (row, scope, start cycle, end cycle)
    lists, 1 cycle per ns, every warp anchored at cycle 0 = 100 ns; CTA c
    on SM c."""
    row, scope, start, end = (np.array(c) for c in zip(*rows_events)) if rows_events else (np.zeros(0, np.int64),) * 4
    warps = ctas * segments
    return LaunchEvents(
        kernel=kernel,
        launch=0,
        scope_names=["outer", "inner", "leaf"],
        scope_parents=np.array([-1, 0, 1]),
        clock_ghz=1.0,
        num_segments=segments,
        origin_ns=5_000,
        row=row.astype(np.int32),
        scope=scope.astype(np.int32),
        start_cycles=start.astype(np.int64),
        end_cycles=end.astype(np.int64),
        warp_ids=np.tile(np.arange(segments, dtype=np.int32), ctas),
        warp_sm=np.repeat(np.arange(ctas, dtype=np.int32), segments),
        warp_begin_ns=np.zeros(warps),
        warp_end_ns=np.zeros(warps),
        warp_cycles=np.zeros(warps, np.int64),
        warp_clk_end=np.zeros(warps, np.int64),
        warp_offset_ns=np.full(warps, 100.0),
        dropped=np.zeros(warps, np.int64),
    )


@pytest.fixture
def packet_by_packet(monkeypatch):
    """The rows each call of the packet-by-packet path encoded, in order."""
    calls = []
    original = perfetto_warps._encode_general
    monkeypatch.setattr(
        perfetto_warps, "_encode_general", lambda w, rows, *a: (calls.append(rows.tolist()), original(w, rows, *a))
    )
    return calls


def test_ties_zero_length_slices_and_unsorted_rows(tmp_path):
    """Scopes that begin or end at the same cycle still nest; events need
    not come row by row; warps may write different scope sequences."""
    events = [
        (2, 0, 0, 50),
        (2, 1, 0, 50),
        (2, 2, 0, 0),  # three begin together, two end together
        (0, 0, 10, 40),
        (0, 1, 20, 20),
        (0, 1, 20, 30),  # a zero-length scope, then one from the same cycle
        (1, 0, 5, 6),
        (1, 0, 6, 7),
        (1, 0, 7, 7),  # back to back, then an empty one at the end
        (3, 2, 1000, 1_000_000),  # a long scope: 3-byte deltas
        (0, 2, 40, 45),
    ]
    order = [3, 9, 0, 6, 1, 4, 7, 2, 5, 8, 10]
    ev = synthetic_events([events[i] for i in order])
    path = tmp_path / "ties.pftrace"
    assert perfetto_trace.write(str(path), [ev]) == len(events)
    tracks, slices = read(path)
    assert by_warp(tracks, slices) == expected([ev])


def test_layouts_and_the_general_path_write_the_same_slices(tmp_path, monkeypatch):
    """Shared templates, the packet-by-packet path and any chunking are
    only ways of computing the same slices (a template pads a varint to the
    widest of its column, so the bytes may differ by those pads)."""
    buf, meta = make(ctas=16, segments=4, reps=3)
    launches = [decode.decode(buf, meta, 16, launch=i) for i in range(2)]
    launches[1].origin_ns += 700  # varied first timestamps and deltas
    fast = tmp_path / "fast.pftrace"
    perfetto_trace.write(str(fast), launches)
    monkeypatch.setattr(perfetto_warps, "CHUNK_PACKETS", 50)
    chunked = tmp_path / "chunked.pftrace"
    perfetto_trace.write(str(chunked), launches)
    monkeypatch.setattr(perfetto_warps, "MAX_PATTERNS", 0)
    general = tmp_path / "general.pftrace"
    perfetto_trace.write(str(general), launches)
    want = expected(launches)
    for path in (fast, chunked, general):
        assert by_warp(*read(path)) == want, path.name
    assert general.stat().st_size <= fast.stat().st_size <= 1.05 * general.stat().st_size


def jittered_events(ctas=24, segments=4, reps=12, seed=0):
    """Each warp: outer > (inner > leaf) x reps, with random gaps from 1 ns
    to 40 us, so that warps of one scope sequence need varints of 1, 2 and
    3 bytes in different places."""
    rng = np.random.default_rng(seed)
    rows = []
    for row in range(2 * segments if ctas is None else ctas * segments):
        t = int(rng.integers(0, 5000))
        begin_outer, inner = t, []
        for _ in range(reps):
            gaps = rng.choice([1, 60, 300, 9000, 40_000], size=4)
            a = t + gaps[0]
            b = a + gaps[1]
            c = b + gaps[2]
            d = c + gaps[3]
            inner.append((row, 1, a, d))
            inner.append((row, 2, b, c))
            t = d
        rows.append((row, 0, begin_outer, t + 1))
        rows.extend(inner)
    return rows


def test_warps_with_different_timings_share_a_template(tmp_path, packet_by_packet):
    """Real warps of one kernel write the same scopes at different times:
    one template per scope sequence still holds all of them (padded
    varints), and every timestamp reads back exactly."""
    segments = 4
    events = jittered_events(ctas=None, segments=segments)
    ev = synthetic_events(events, segments=segments)
    path = tmp_path / "jitter.pftrace"
    assert perfetto_trace.write(str(path), [ev]) == len(events)
    assert not packet_by_packet, "warps of one scope sequence went to the packet-by-packet path"
    assert by_warp(*read(path)) == expected([ev])


def test_many_event_counts_still_share_templates(tmp_path, packet_by_packet):
    """Causal attention's CTAs loop a different number of times: each event
    count with enough warps gets its own template (more than MAX_PATTERNS
    counts in one chunk included); a count with too few warps goes the
    packet-by-packet way. Both read back exactly."""
    segments = 4
    events = []
    for group, reps in enumerate([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]):
        for row, scope, begin, end in jittered_events(ctas=1, segments=segments, reps=reps, seed=group):
            events.append((group * segments + row, scope, begin, end))
    events += [(44, 0, 0, 10)]  # one warp alone with its count
    ev = synthetic_events(events, segments=segments, ctas=12)
    path = tmp_path / "counts.pftrace"
    assert perfetto_trace.write(str(path), [ev]) == len(events)
    assert packet_by_packet == [[44]]
    assert by_warp(*read(path)) == expected([ev])


def test_compressed_trace_holds_the_same_packets(tmp_path, monkeypatch):
    """compress=True: Perfetto's compressed_packets, a few chunks, each
    inflating to the packets of the plain file; about a third of its bytes."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    buf, meta = make(ctas=64, segments=4, reps=20)
    ev = decode.decode(buf, meta, 64)
    plain, packed = tmp_path / "plain.pftrace", tmp_path / "packed.pftrace"
    perfetto_trace.write(str(plain), [ev])
    monkeypatch.setattr(perfetto_deflate, "CHUNK_BYTES", 4096)  # several chunks, in order
    perfetto_trace.write(str(packed), [ev], compress=True)
    raw = packed.read_bytes()
    outer = Trace.FromString(raw).packet
    assert len(outer) >= 2 and all(p.HasField("compressed_packets") and p.compressed_packets for p in outer)
    assert perfetto_deflate.inflate(raw) == plain.read_bytes()
    assert packed.stat().st_size < plain.stat().st_size / 2.5
    assert by_warp(*read(packed)) == expected([ev])


@pytest.mark.parametrize("workers", [1, 3])
def test_compression_on_threads_keeps_the_order(tmp_path, monkeypatch, workers):
    ev = synthetic_events(jittered_events(ctas=None, segments=4, reps=40), segments=4)
    monkeypatch.setattr(perfetto_deflate, "CHUNK_BYTES", 512)
    real = perfetto_deflate.DeflateOut
    monkeypatch.setattr(perfetto_deflate, "DeflateOut", lambda out: real(out, workers=workers))
    plain, packed = tmp_path / "plain.pftrace", tmp_path / "packed.pftrace"
    perfetto_trace.write(str(plain), [ev])
    perfetto_trace.write(str(packed), [ev], compress=True)
    assert perfetto_deflate.inflate(packed.read_bytes()) == plain.read_bytes()


def test_corrupted_compressed_trace_names_the_problem(tmp_path):
    ev = synthetic_events(jittered_events(ctas=None, segments=2, reps=3), segments=2)
    path = tmp_path / "packed.pftrace"
    perfetto_trace.write(str(path), [ev], compress=True)
    raw = bytearray(path.read_bytes())
    with pytest.raises(ValueError, match=r"bad\.pftrace: corrupted compressed Perfetto trace: .*past the end"):
        perfetto_deflate.inflate(bytes(raw[:-5]), "bad.pftrace")
    raw[12:20] = b"\xff" * 8  # inside the deflate stream
    with pytest.raises(ValueError, match=r"corrupted compressed Perfetto trace"):
        perfetto_deflate.inflate(bytes(raw), "bad.pftrace")


def test_empty_and_single_event_traces(tmp_path):
    path = tmp_path / "none.pftrace"
    assert perfetto_trace.write(str(path), []) == 0
    tracks, slices = read(path)
    assert slices == [] and [d.name for d in tracks.values()] == ["GPU 0"]
    empty = synthetic_events([])
    assert perfetto_trace.write(str(path), [empty]) == 0
    tracks, slices = read(path)
    assert slices == [] and sum(d.name.startswith("warp") for d in tracks.values()) == 4
    one = synthetic_events([(3, 1, 7, 9)])
    assert perfetto_trace.write(str(path), [one]) == 1
    tracks, slices = read(path)
    assert by_warp(tracks, slices) == expected([one]) == [(("k #0 CTA 1", "warp 1"), "inner", 107, 109)]


def test_host_clock_is_noted_for_merging(tmp_path, launches):
    path = tmp_path / "run.pftrace"
    clock = {"realtime_minus_globaltimer_ns": -1_234_567, "uncertainty_ns": 850, "samples": 16}
    perfetto_trace.write(str(path), launches, "GPU 3", origin_ns=10, host_clock=clock)
    tracks, _ = read(path)
    (gpu,) = [d for d in tracks.values() if d.name == "GPU 3"]
    assert gpu.description == "global timer origin ns = 10; host realtime offset ns = -1234567 +- 850 (16 samples)"
    for bad in (
        {"realtime_minus_globaltimer_ns": 1.5, "uncertainty_ns": 1, "samples": 1},
        {"realtime_minus_globaltimer_ns": 1},
        {"realtime_minus_globaltimer_ns": 1, "uncertainty_ns": -1, "samples": 1},
        "1 +- 2",
    ):
        with pytest.raises(ValueError, match="host_clock must be"):
            perfetto_trace.write(str(path), launches, host_clock=bad)


def test_varint_encoding_matches_protobuf():
    from google.protobuf.internal import encoder
    from proton.writers import byte_rows
    from proton.writers.perfetto_packets import varint_width

    values = np.array([0, 1, 127, 128, 300, 2**32 - 1, 2**35, 2**63 + 5], dtype=np.uint64)
    matrix, lengths = byte_rows.varint(values)
    for v, row, n in zip(values.tolist(), matrix, lengths):
        assert bytes(row[:n]) == encoder._VarintBytes(v)
    assert varint_width(values).tolist() == lengths.tolist()


def test_packet_order_is_the_rule_on_every_key():
    """The packed-key sort with tie-breaks equals sorting on every key
    (group, cycle, ends before begins, the nesting tie-breaks), on slices
    with many shared cycles and zero-length ones."""
    from proton.writers.perfetto_packets import _order_by_rule, packet_order

    rng = np.random.default_rng(3)
    for trial in range(20):
        n = int(rng.integers(1, 400))
        group = np.sort(rng.integers(0, 1 + trial, size=n))
        start = rng.integers(0, 30, size=n) + group * 1000 * (trial % 2)
        end = start + rng.choice([0, 0, 1, 2, 5], size=n)
        cycle = np.concatenate((start, end))
        want = _order_by_rule(start, end, np.concatenate((group, group)), cycle, np.arange(2 * n))
        assert np.array_equal(packet_order(start, end, group), want), trial


def packet_sequence(path):
    """Per track, its (kind, name iid, timestamp) packets in file order."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace.FromString(perfetto_deflate.inflate(open(path, "rb").read()))
    tracks, default, clock = {}, None, 0
    for p in trace.packet:
        if p.HasField("trace_packet_defaults"):
            default = p.trace_packet_defaults.track_event_defaults.track_uuid
        if p.HasField("clock_snapshot"):
            clock = next((c.timestamp for c in p.clock_snapshot.clocks if c.is_incremental), clock)
            continue
        if p.HasField("track_event") and p.trusted_packet_sequence_id == 1:
            clock += p.timestamp
            tracks.setdefault(default, []).append((p.track_event.type, p.track_event.name_iid, clock))
    return tracks


def test_zero_length_and_touching_scopes_keep_the_template_and_the_rule(tmp_path, monkeypatch, packet_by_packet):
    """Warps whose scopes touch (one ends at the cycle the next begins) or
    are empty (time_shift makes empty scopes zero-length) share a template
    when its order is the rule's for them too; a warp where the rule orders
    a tie otherwise goes the packet-by-packet way. Packets come out in the
    same order either way."""
    segments = 4
    events = []
    for row in range(8 * segments):
        t = 1000 * row
        events.append((row, 0, t, t + 100))  # outer
        events.append((row, 1, t + 10, t + 10))  # zero-length
        events.append((row, 1, t + 20, t + 30))
        events.append((row, 2, t + 30, t + 40 + row % 3))  # begins as the one before ends
    events.append((3, 2, 2090, 2100))  # row 3 gets a scope ending with its outer one
    ev = synthetic_events(events, segments=segments, ctas=8)
    fast = tmp_path / "fast.pftrace"
    perfetto_trace.write(str(fast), [ev])
    assert packet_by_packet == [[3]], packet_by_packet  # only the warp with another scope sequence
    monkeypatch.setattr(perfetto_warps, "MAX_PATTERNS", 0)
    general = tmp_path / "general.pftrace"
    perfetto_trace.write(str(general), [ev])
    assert packet_sequence(fast) == packet_sequence(general)
    assert by_warp(*read(fast)) == expected([ev])


def test_a_tie_the_rule_orders_otherwise_leaves_the_template(tmp_path, monkeypatch, packet_by_packet):
    """Same scope sequence (outer > inner), but in warp 4 the inner scope
    is empty at the outer one's end: the rule puts the outer end first
    there, unlike the template, so that warp goes packet by packet."""
    segments = 4
    events = [(row, 0, 0, 100) for row in range(8)] + [(row, 1, 50, 60) for row in range(8) if row != 4]
    events.append((4, 1, 100, 100))
    ev = synthetic_events(events, segments=segments)
    fast = tmp_path / "fast.pftrace"
    perfetto_trace.write(str(fast), [ev])
    assert packet_by_packet == [[4]], packet_by_packet
    monkeypatch.setattr(perfetto_warps, "MAX_PATTERNS", 0)
    general = tmp_path / "general.pftrace"
    perfetto_trace.write(str(general), [ev])
    assert packet_sequence(fast) == packet_sequence(general)
    assert by_warp(*read(fast)) == expected([ev])


def test_a_failing_write_stops_the_compression_threads(tmp_path):
    """An error while writing a compressed trace reaches the caller, and
    the worker threads are stopped, not left waiting."""
    path = tmp_path / "t.pftrace"
    with open(path, "wb") as file:
        with pytest.raises(RuntimeError, match="disk full"):
            with perfetto_deflate.sink(file, True) as out:
                out.write(b"\x0a\x02\x50\x01" * 100_000)  # whole packets
                sinks = [out]
                raise RuntimeError("disk full")
    assert sinks[0].pool is None and not sinks[0].in_flight
