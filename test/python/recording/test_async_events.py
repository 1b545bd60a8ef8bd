"""Asynchronous events and marks (proton.language.allocate_event,
start_event, end_event): decoded from synthetic buffers, paired by the rule
of proton.recording.decode_non_scope, and drawn in the Chrome and Perfetto
traces (parsed back here)."""

import json
import random

import numpy as np
import pytest

import synthetic_buffers as synthetic
from proton.recording import decode
from proton.contract.kernel_metadata import KernelMetadata
from proton.recording.decode_non_scope import pair_events
from proton.writers import chrome_trace, perfetto_trace

STEP = 100
CLOCK_GHZ = 2.0
# id 0: scope "loop", id 1: event "copy", id 2: mark "tick"
TABLE = [("loop", -1), ("copy", -1), ("tick", 0)]
KINDS = ["scope", "event", "mark"]
S, E = 0, 1


def build(per_warp, ctas=1, segment_bytes=1024, clock_bits=64, table=TABLE, kinds=KINDS):
    """A buffer whose warp w writes per_warp[w] (a list of (id, end) records,
    one every STEP cycles; all warps the same length), in every CTA."""
    segments, n = len(per_warp), len(per_warp[0])
    lay = synthetic.layout(num_warps=segments, segment_bytes=segment_bytes, clock_bits=clock_bits)
    ids = np.array([[i for i, _ in w] for w in per_warp])
    ends = np.array([[e for _, e in w] for w in per_warp])
    tags = np.broadcast_to(synthetic.tag(ids, ends), (ctas, segments, n))
    clk0 = np.uint64(10**9)
    start = np.full((ctas, segments), clk0, dtype=np.uint64)
    clocks = start[:, :, None] + np.uint64(STEP) * (np.arange(n, dtype=np.uint64) + np.uint64(1))
    clk_end = start + np.uint64(STEP * (n + 1))
    gt_start = np.full((ctas, segments), 5 * 10**17, dtype=np.uint64)
    gt_end = gt_start + np.uint64(int(STEP * (n + 1) / CLOCK_GHZ))
    buf = synthetic.build(
        lay,
        tags,
        clocks,
        clk_start=start,
        clk_end=clk_end,
        gt_start=gt_start,
        gt_end=gt_end,
        sm=np.zeros((ctas, segments)),
    )
    return buf, synthetic.metadata(table, lay, kernel="k", kinds=kinds)


def producer_consumer():
    # Warp 0 starts the copy at records 1-3, warp 1 ends it at records 3-5
    # (each copy lasts two record steps: two copies are in flight at once);
    # both warps also run two scopes.
    w0 = [(0, S), (1, S), (1, S), (1, S), (0, E), (0, S), (0, E)]
    w1 = [(0, S), (0, E), (0, S), (1, E), (1, E), (1, E), (0, E)]
    return [w0, w1]


def test_an_event_started_in_one_warp_and_ended_in_another_is_paired_across_warps():
    buf, meta = build(producer_consumer(), ctas=2)
    ev = decode.decode(buf, meta, 2)
    a = ev.asynchronous
    assert a.num_events == 6 and a.unpaired == 0, (a.num_events, a.unpaired)
    assert (a.start_row % 2 == 0).all() and (a.end_row % 2 == 1).all(), "started by warp 0, ended by warp 1"
    assert sorted(a.event_cta.tolist()) == [0, 0, 0, 1, 1, 1]
    # The k-th start pairs with the k-th end: each copy lasts 2 STEP cycles.
    assert (a.end_ns - a.start_ns) == pytest.approx(np.full(6, 2 * STEP / CLOCK_GHZ), abs=1)
    assert (a.event_id == 1).all()
    # The scopes are decoded as before, and event records count as matched.
    assert ev.num_events == 2 * 2 * 2 and ev.unmatched == 0 and set(ev.scope.tolist()) == {0}


def test_an_event_crossing_loop_iterations_pairs_within_its_warp():
    # start(0) | end(0) start(1) | end(1) start(2) | end(2): all warps alike.
    seq = [(1, S)] + [r for i in range(3) for r in ((1, E), (1, S))] + [(1, E)]
    buf, meta = build([seq] * 4)
    a = decode.decode(buf, meta, 1).asynchronous
    assert a.num_events == 4 * 4 and a.unpaired == 0
    assert (a.start_row == a.end_row).all(), "an event that never leaves its warp pairs within the warp"
    assert (a.end_ns - a.start_ns) == pytest.approx(np.full(16, STEP / CLOCK_GHZ), abs=1)


def test_unpaired_event_records_are_counted_and_not_drawn():
    # An end before any start, then a start that is never ended.
    w = [(1, E), (1, S), (1, E), (1, S)]
    buf, meta = build([w])
    ev = decode.decode(buf, meta, 1)
    assert ev.asynchronous.num_events == 1 and ev.asynchronous.unpaired == 2
    assert any("2 asynchronous event records have no partner" in w for w in ev.warnings), ev.warnings


def test_a_full_ring_that_lost_a_start_leaves_its_end_unpaired():
    w = [(1, S), (1, E)] * 5  # 10 records into a ring of 4 (32 bytes)
    buf, meta = build([w], segment_bytes=32)
    ev = decode.decode(buf, meta, 1)
    assert ev.dropped.sum() == 6 and ev.asynchronous.num_events == 2 and ev.asynchronous.unpaired == 0
    w = [(1, S), (1, S), (1, E), (1, E), (1, E)]  # the ring keeps S E E E: two ends are orphans
    buf, meta = build([w], segment_bytes=32)
    assert decode.decode(buf, meta, 1).asynchronous.unpaired == 2


def test_marks_are_instants_on_their_warps():
    w = [(0, S), (2, S), (2, S), (0, E), (2, S)]
    buf, meta = build([w, w, w])
    ev = decode.decode(buf, meta, 1)
    a = ev.asynchronous
    assert a.num_marks == 9 and (a.mark_id == 2).all()
    assert sorted(a.mark_row.tolist()) == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    # Marks are at records 2, 3 and 5 of each warp.
    assert np.sort(a.mark_ns[a.mark_row == 0]) == pytest.approx(np.array([2, 3, 5]) * STEP / CLOCK_GHZ, abs=1)
    assert ev.num_events == 3 and ev.unmatched == 0


def test_unknown_kind_in_the_scope_table_is_an_error():
    meta = synthetic.metadata_dict(TABLE, synthetic.layout(num_warps=2), kinds=["scope", "no_such_kind", "mark"])
    with pytest.raises(ValueError, match=r"scope table entry 1 \('copy'\) has unknown kind 'no_such_kind'"):
        KernelMetadata.from_dict(meta)


def _reference_fifo(ids, rows, is_end, ns, segments):
    """The pairing rule of decode_non_scope, one record at a time."""
    groups, out, unpaired = {}, [], 0
    for i in range(len(ids)):
        groups.setdefault((rows[i] // segments, ids[i]), []).append(i)
    for idx in groups.values():
        balance = {}
        for i in idx:
            balance[rows[i]] = balance.get(rows[i], 0) + (-1 if is_end[i] else 1)
        local = all(v == 0 for v in balance.values())
        subgroups = {}
        for i in idx:
            subgroups.setdefault(rows[i] if local else 0, []).append(i)
        for sub in subgroups.values():
            sub.sort(key=lambda i: (ns[i], is_end[i]))
            open_starts = []
            for i in sub:
                if not is_end[i]:
                    open_starts.append(i)
                elif open_starts:
                    out.append((open_starts.pop(0), i))
                else:
                    unpaired += 1
            unpaired += len(open_starts)
    return out, unpaired


@pytest.mark.parametrize("seed", range(200))
def test_vectorized_pairing_matches_the_rule(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 40)
    ids = [rng.randint(0, 2) for _ in range(n)]
    rows = [rng.randint(0, 5) for _ in range(n)]
    is_end = [rng.random() < 0.5 for _ in range(n)]
    ns = [float(rng.randint(0, 30)) for _ in range(n)]
    r = pair_events(ids, rows, is_end, ns, 3)
    got = sorted(zip(r[0].tolist(), r[2].tolist(), r[3].tolist(), r[4].tolist(), r[5].tolist()))
    pairs, unpaired = _reference_fifo(ids, rows, is_end, ns, 3)
    assert got == sorted((ids[s], rows[s], rows[e], ns[s], ns[e]) for s, e in pairs)
    assert r[6] == unpaired


def _trace(tmp_path, launches):
    path = tmp_path / "t.json"
    chrome_trace.write(str(path), launches, chrome_trace.session_origin(launches))
    return json.loads(path.read_text())["traceEvents"]


def test_chrome_trace_binds_an_event_across_warps_with_flow_endpoints_and_marks_as_instants(tmp_path):
    w0, w1 = producer_consumer()
    w0 = w0[:-2] + [(2, S), (2, S)]  # two marks instead of the last scope
    buf, meta = build([w0, w1])
    events = _trace(tmp_path, [decode.decode(buf, meta, 1)])
    # Triton's Proton's layout: per pair, a zero-length X endpoint on each
    # warp, bound by bind_id; no slice of its own, no s/f flow events.
    copies = [e for e in events if e["name"] == "copy"]
    assert len(copies) == 6 and {e["ph"] for e in copies} == {"X"} and {e["cat"] for e in copies} == {"flow"}
    assert all(e["dur"] == 0 for e in copies)
    assert not [e for e in events if e["ph"] in ("s", "f", "t")] and not [e for e in events if e.get("cat") == "async"]
    links = {}
    for e in copies:
        links.setdefault(e["bind_id"], []).append(e)
    assert len(links) == 3 and all(isinstance(b, int) for b in links)
    for pair in links.values():
        (out,) = [e for e in pair if e.get("flow_out")]
        (into,) = [e for e in pair if e.get("flow_in")]
        assert "flow_in" not in out and "flow_out" not in into
        assert out["tid"] == "warp 0" and into["tid"] == "warp 1" and out["pid"] == into["pid"] == "k #0 Core0 CTA0"
        # Each copy lasts two record steps.
        assert into["ts"] - out["ts"] == pytest.approx(2 * STEP / CLOCK_GHZ / 1000, abs=2e-3)
        for e in pair:  # what the lane slice showed, kept on the endpoints
            assert e["args"]["start_warp"] == 0 and e["args"]["end_warp"] == 1
            assert e["args"]["cycles"] == pytest.approx(2 * STEP, abs=2)
    marks = [e for e in events if e["ph"] == "i"]
    assert len(marks) == 2 and all(m["tid"] == "warp 0" and m["name"] == "tick" for m in marks)


def test_chrome_trace_draws_an_event_of_one_warp_as_an_async_slice_on_the_warp(tmp_path):
    # The copy starts in one iteration and ends in the next, in every warp.
    seq = [(1, S)] + [r for i in range(2) for r in ((1, E), (1, S))] + [(1, E)]
    events = _trace(tmp_path, [decode.decode(*build([seq] * 4), 1)])
    copies = [e for e in events if e["name"] == "copy"]
    by_warp = {}
    for e in copies:
        assert e["ph"] == "X" and e["cat"] == "async" and e["dur"] > 0
        assert not {"bind_id", "flow_in", "flow_out"} & set(e)
        assert e["dur"] == pytest.approx(STEP / CLOCK_GHZ / 1000, abs=1e-3)
        assert e["args"]["cycles"] == STEP
        by_warp.setdefault(e["tid"], []).append(e)
    assert {tid: len(v) for tid, v in by_warp.items()} == {f"warp {w}": 3 for w in range(4)}
    assert all(e["pid"] == "k #0 Core0 CTA0" for e in copies)


def test_an_event_that_would_not_nest_on_its_warp_goes_to_a_line_of_the_warp(tmp_path):
    # Viewers drop slices of one thread that overlap without nesting. With
    # record k at (k + 1) STEP: copy A [1, 3] crosses scope loop [2, 5];
    # copy B [7, 8] nests in event wait [6, 9]; copy D [11, 13] crosses
    # wait [10, 12]. A and D go to line 1, the rest stay on the warp.
    table = TABLE + [("wait", -1)]
    w = [(1, S), (0, S), (1, E), (2, S), (0, E), (3, S), (1, S), (1, E), (3, E), (3, S), (1, S), (3, E), (1, E)]
    events = _trace(tmp_path, [decode.decode(*build([w], table=table, kinds=KINDS + ["event"]), 1)])
    step_us = STEP / CLOCK_GHZ / 1000
    tids = {(e["name"], round(e["ts"] / step_us)): e["tid"] for e in events if e.get("cat") == "async"}
    assert tids == {
        ("copy", 1): "warp 0 (line 1)",
        ("wait", 6): "warp 0",
        ("copy", 7): "warp 0",
        ("wait", 10): "warp 0",
        ("copy", 11): "warp 0 (line 1)",
    }
    for tid in {e["tid"] for e in events if e["ph"] == "X"}:
        mine = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["ph"] == "X" and e["tid"] == tid]
        for a in mine:
            for b in mine:
                overlap = min(a[1], b[1]) - max(a[0], b[0]) > 1e-9
                assert not overlap or a[0] <= b[0] <= b[1] <= a[1] or b[0] <= a[0] <= a[1] <= b[1], (tid, a, b)


def test_flow_bind_ids_are_unique_in_the_file(tmp_path):
    launches = [decode.decode(*build(producer_consumer(), ctas=2), 2, launch=n) for n in range(2)]
    flows = [e for e in _trace(tmp_path, launches) if e.get("cat") == "flow"]
    assert len(flows) == 2 * 2 * 2 * 3
    assert sorted({e["bind_id"] for e in flows}) == list(range(1, 13))


def test_chrome_trace_like_upstreams_warp_specialized_event(tmp_path):
    # Triton 3.9's test_gluon_warp_specialized_event, on a synthetic buffer:
    # four producer warps start the event, four consumer warps end it.
    producer, consumer = [(1, S), (0, S), (0, E)], [(0, S), (0, E), (1, E)]
    events = _trace(tmp_path, [decode.decode(*build([consumer] * 4 + [producer] * 4), 1)])
    copies = [e for e in events if e["name"] == "copy"]
    links = {}
    for e in copies:
        assert e["ph"] == "X" and e["dur"] == 0 and "bind_id" in e
        links.setdefault(e["bind_id"], []).append(e)
    assert len(links) == 4
    for endpoints in links.values():
        assert len(endpoints) == 2
        start = next(e for e in endpoints if e.get("flow_out"))
        end = next(e for e in endpoints if e.get("flow_in"))
        assert start["tid"] != end["tid"] and start["ts"] <= end["ts"]


def test_every_intra_kernel_event_carries_the_ctas_timer_args(tmp_path):
    # Triton 3.9's test_event_args: scope slices, async slices, flow
    # endpoints and marks. The synthetic warps enter at global timer 5e17
    # and return (n + 1) STEP cycles later.
    w0, w1 = producer_consumer()
    w0 = w0[:-2] + [(2, S), (2, S)]
    seq = [(1, S), (0, S), (0, E), (1, E), (2, S), (0, S), (0, E)]
    launches = [decode.decode(*build([w0, w1], ctas=2), 2), decode.decode(*build([seq] * 2), 1, launch=1)]
    events = _trace(tmp_path, launches)
    assert {e["ph"] for e in events} == {"X", "i"} and {e.get("cat") for e in events} >= {"k", "async", "flow"}
    for e in events:
        args = e["args"]
        assert args["Init Time (ns)"] == 5 * 10**17
        assert args["Post Final Time (ns)"] == 5 * 10**17 + int(STEP * 8 / CLOCK_GHZ)
        assert args["Finalization Time (ns)"] == 0
        assert args["call_stack"] == ["ROOT", "k"]


def test_perfetto_trace_draws_events_on_event_tracks_with_flows(tmp_path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    w0, w1 = producer_consumer()
    w0 = w0[:-2] + [(2, S), (2, S)]
    buf, meta = build([w0, w1])
    ev = decode.decode(buf, meta, 1)
    path = tmp_path / "t.pftrace"
    perfetto_trace.write(str(path), [ev])
    trace = Trace.FromString(path.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}
    warp_uuid = {int(d.name.split()[1]): u for u, d in tracks.items() if d.name.startswith("warp ")}
    event_tracks = {u for u, d in tracks.items() if d.name.startswith("event copy")}
    assert event_tracks and all(
        tracks[u].parent_uuid in {d.uuid for d in tracks.values() if d.name.startswith("k #0 CTA")}
        for u in event_tracks
    )
    te = [
        (p.timestamp, p.track_event)
        for p in trace.packet
        if p.HasField("track_event") and p.trusted_packet_sequence_id == 2
    ]
    begins = [t for t in te if t[1].type == TrackEvent.TYPE_SLICE_BEGIN]
    ends = [t for t in te if t[1].type == TrackEvent.TYPE_SLICE_END]
    assert len(begins) == len(ends) == 3 and all(
        t[1].track_uuid in event_tracks and t[1].name == "copy" for t in begins
    )
    # Slices on one track must not overlap: per track, begin/end alternate in time.
    for track in event_tracks:
        marks = sorted(
            [(ts, 1) for ts, t in begins if t.track_uuid == track]
            + [(ts, -1) for ts, t in ends if t.track_uuid == track]
        )
        assert np.cumsum([m for _, m in marks]).max() == 1, "overlapping slices on one event track"
    instants = [t for _, t in te if t.type == TrackEvent.TYPE_INSTANT]
    out = [t for t in instants if t.flow_ids]
    into = [t for t in instants if t.terminating_flow_ids]
    assert len(out) == len(into) == 3
    assert {f for t in out for f in t.flow_ids} == {f for t in into for f in t.terminating_flow_ids}
    assert all(t.track_uuid == warp_uuid[0] for t in out) and all(t.track_uuid == warp_uuid[1] for t in into)
    marks = [t for t in instants if t.name == "tick"]
    assert len(marks) == 2 and all(m.track_uuid == warp_uuid[0] for m in marks)
    assert sum(
        b - a for (a, _), (b, _) in zip(sorted(begins, key=lambda t: t[0]), sorted(ends, key=lambda t: t[0]))
    ) == pytest.approx(3 * 2 * STEP / CLOCK_GHZ, abs=3)


def test_tree_gives_events_their_cycles_and_counts_marks():
    from proton.writers import hatchet_tree

    w0, w1 = producer_consumer()
    w0 = w0[:-2] + [(2, S), (2, S)]  # two marks, outside any open scope on warp 0
    buf, meta = build([w0, w1])
    ev = decode.decode(buf, meta, 1)
    root, _ = hatchet_tree.build([ev])
    kernel = root["children"][0]
    nodes = {c["frame"]["name"]: c for c in kernel["children"]}
    # tick's parent in the table is "loop" (id 0): it sits under it.
    loop = nodes["loop"]
    tick = {c["frame"]["name"]: c for c in loop["children"]}["tick"]
    assert tick["metrics"]["count"] == 2 and tick["metrics"]["time (ns)"] == 0
    # The event's node: its three pairs of two steps each (Triton's Proton
    # puts cycles there), in cycles and ns.
    copy = nodes["copy"]["metrics"]
    assert copy["count"] == 3 and copy["cycles"] == 3 * 2 * STEP
    assert copy["time (ns)"] == copy["event time (ns)"] == pytest.approx(3 * 2 * STEP / CLOCK_GHZ, abs=3)
    assert copy["normalized_cycles"] == copy["cycles"] / 2
    # They come out of the kernel's own values as a child's do: the kernel's
    # inclusive cycles stay the warps' lifetimes (8 steps each).
    assert hatchet_tree.inclusive(kernel)["metrics"]["cycles"] == 2 * 8 * STEP
    assert hatchet_tree.inclusive(kernel)["metrics"]["time (ns)"] == pytest.approx(2 * 8 * STEP / CLOCK_GHZ, abs=3)
