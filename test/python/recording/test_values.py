"""Values (proton.language.record_value): a time record followed by a
record holding the value's 32 bits with the end bit. Decoded from synthetic
buffers, drawn as counters in the Chrome and Perfetto traces (parsed back
here) and summed in the tree."""

import json

import numpy as np
import pytest

import synthetic_buffers as synthetic
from proton.recording import decode
from proton.contract.kernel_metadata import KernelMetadata
from proton.writers import chrome_trace, hatchet_tree, perfetto_deflate, perfetto_trace

STEP = 100
CLOCK_GHZ = 2.0
# id 0: scope "loop"; id 1: i32 value "iter"; id 2: f32 value "loss"
TABLE = [("loop", -1), ("iter", 0), ("loss", -1)]
KINDS = ["scope", "value", "value"]
DTYPES = {1: "i32", 2: "f32"}
S, E = 0, 1
CLK0 = 10**9


def build(per_warp, ctas=1, clock_bits=64, segment_bytes=1024):
    """Warp w writes per_warp[w]: (id, end, payload) records; a payload of
    None is a time (clock), else the record's low 32 bits."""
    segments, n = len(per_warp), len(per_warp[0])
    lay = synthetic.layout(num_warps=segments, segment_bytes=segment_bytes, clock_bits=clock_bits)
    ids = np.array([[r[0] for r in w] for w in per_warp])
    ends = np.array([[r[1] for r in w] for w in per_warp])
    tags = np.broadcast_to(synthetic.tag(ids, ends), (ctas, segments, n))
    clocks = np.zeros((segments, n), dtype=np.uint64)
    for w, records in enumerate(per_warp):
        for k, (_, _, payload) in enumerate(records):
            clocks[w, k] = CLK0 + STEP * (k + 1) if payload is None else payload
    clocks = np.broadcast_to(clocks, (ctas, segments, n)).copy()
    start = np.full((ctas, segments), CLK0, dtype=np.uint64)
    gt_start = np.full((ctas, segments), 5 * 10**17, dtype=np.uint64)
    buf = synthetic.build(
        lay,
        tags,
        clocks,
        clk_start=start,
        clk_end=start + np.uint64(STEP * (n + 1)),
        gt_start=gt_start,
        gt_end=gt_start + np.uint64(int(STEP * (n + 1) / CLOCK_GHZ)),
        sm=np.zeros((ctas, segments)),
    )
    return buf, synthetic.metadata(TABLE, lay, kernel="k", kinds=KINDS, dtypes=DTYPES)


def f32_bits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def i32_bits(x: int) -> int:
    return int(np.array([x], dtype=np.int32).view(np.uint32)[0])


def loop(n, base=0):
    """A scope around n iterations recording "iter" = base + i, then loss."""
    rec = [(0, S, None)]
    for i in range(n):
        rec += [(1, S, None), (1, E, i32_bits(base + i))]
    return rec + [(0, E, None), (2, S, None), (2, E, f32_bits(-1.5))]


@pytest.mark.parametrize("clock_bits", [32, 64])
def test_values_decode_with_their_time_and_type(clock_bits):
    buf, meta = build([loop(4), loop(4, base=-2)], ctas=2, clock_bits=clock_bits)
    ev = decode.decode(buf, meta, 2)
    a = ev.asynchronous
    assert a.num_values == 2 * 2 * 5 and a.unpaired_values == 0, (a.num_values, a.unpaired_values)
    it = a.value_id == 1
    warp0 = it & (a.value_row % 2 == 0)
    warp1 = it & (a.value_row % 2 == 1)
    assert sorted(a.value[warp0].tolist()) == [0, 0, 1, 1, 2, 2, 3, 3], "warp 0 records 0..3 in both CTAs"
    assert sorted(a.value[warp1].tolist()) == [-2, -2, -1, -1, 0, 0, 1, 1], "negative i32 keep their sign"
    assert (a.value[a.value_id == 2] == -1.5).all(), "f32 bits decode as floats"
    # A value's time is its time record's: record k (1-based) at k * STEP cycles.
    first = it & (a.value == 0) & (a.value_row == 0)
    assert a.value_ns[first][0] == pytest.approx(2 * STEP / CLOCK_GHZ, abs=1)
    # The scope still pairs around the value records.
    assert ev.num_events == 2 * 2 and ev.unmatched == 0 and not ev.warnings, ev.warnings


def test_a_value_half_without_its_partner_is_dropped_and_warned():
    # As a full ring leaves it: the oldest kept record a value half, the
    # newest a time half.
    rec = []
    for i in range(40):
        rec += [(1, S, None), (1, E, i32_bits(i))]
    rec = rec[1:] + [(2, S, None)]  # starts with an orphan value half, ends with an orphan time
    buf, meta = build([rec], segment_bytes=1024)
    ev = decode.decode(buf, meta, 1)
    a = ev.asynchronous
    assert a.num_values == 39 and a.unpaired_values == 2, (a.num_values, a.unpaired_values)
    assert sorted(a.value.tolist()) == list(range(1, 40))
    assert any("2 value records lost" in w for w in ev.warnings), ev.warnings


def test_unknown_value_type_is_refused():
    meta = synthetic.metadata_dict(TABLE, synthetic.layout(num_warps=1), kinds=KINDS, dtypes={**DTYPES, 1: "i64"})
    with pytest.raises(ValueError, match=r"scope table entry 1 \('iter'\) has value type 'i64'"):
        KernelMetadata.from_dict(meta)


def test_chrome_trace_has_a_counter_series_per_warp(tmp_path):
    buf, meta = build([loop(3), loop(3, base=10)])
    ev = decode.decode(buf, meta, 1)
    path = tmp_path / "t.json"
    chrome_trace.write(str(path), [ev], chrome_trace.session_origin([ev]))
    rows = json.loads(path.read_text())
    rows = rows["traceEvents"] if isinstance(rows, dict) else rows
    counters = [r for r in rows if r.get("ph") == "C"]
    series = {}
    for r in counters:
        series.setdefault(r["name"], []).append((r["ts"], r["args"]["value"]))
    assert set(series) == {"iter [warp 0]", "iter [warp 1]", "loss [warp 0]", "loss [warp 1]"}, set(series)
    assert [v for _, v in sorted(series["iter [warp 0]"])] == [0, 1, 2]
    assert [v for _, v in sorted(series["iter [warp 1]"])] == [10, 11, 12]
    assert series["loss [warp 1]"][0][1] == -1.5


@pytest.mark.parametrize("compress", [False, True])
def test_perfetto_trace_has_a_counter_track_per_warp_and_value(tmp_path, compress):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    buf, meta = build([loop(3), loop(3, base=10)])
    ev = decode.decode(buf, meta, 1)
    path = tmp_path / "t.pftrace"
    perfetto_trace.write(str(path), [ev], compress=compress)
    data = path.read_bytes()
    trace = Trace.FromString(perfetto_deflate.inflate(data) if compress else data)
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}
    warp_uuid = {int(d.name.split()[1]): u for u, d in tracks.items() if d.name.startswith("warp ")}
    counter_tracks = {u: d for u, d in tracks.items() if d.HasField("counter")}
    assert sorted((d.name, d.parent_uuid) for d in counter_tracks.values()) == sorted(
        (name, warp_uuid[w]) for name in ("iter", "loss") for w in (0, 1)
    ), "one counter track per value name under each warp"
    points = {}
    for p in trace.packet:
        if p.HasField("track_event") and p.track_event.type == TrackEvent.TYPE_COUNTER:
            t = p.track_event
            d = counter_tracks[t.track_uuid]
            warp = next(w for w, u in warp_uuid.items() if u == d.parent_uuid)
            points.setdefault((d.name, warp), []).append((p.timestamp, t.double_counter_value))
    assert [v for _, v in sorted(points[("iter", 0)])] == [0, 1, 2]
    assert [v for _, v in sorted(points[("iter", 1)])] == [10, 11, 12]
    assert [v for _, v in points[("loss", 0)]] == [-1.5]


def test_tree_sums_a_value_on_its_node():
    buf, meta = build([loop(4), loop(4, base=10)], ctas=2)
    ev = decode.decode(buf, meta, 2)
    root = hatchet_tree.build([ev])[0]
    kernel = root["children"][0]
    loop_node = next(c for c in kernel["children"] if c["frame"]["name"] == "loop")
    it = next(c for c in loop_node["children"] if c["frame"]["name"] == "iter")
    assert it["metrics"]["iter"] == 2 * (0 + 1 + 2 + 3 + 10 + 11 + 12 + 13), it["metrics"]
    assert it["metrics"]["count"] == 16
    loss = next(c for c in kernel["children"] if c["frame"]["name"] == "loss")
    assert loss["metrics"]["loss"] == pytest.approx(4 * -1.5)
    assert "iter" in root["metrics"] and "loss" in root["metrics"], "declared on the root for hatchet"


def test_value_bits_do_not_disturb_a_long_clock32_warp():
    # One clock32 warp living 9e9 cycles (two counter wraps): a warp that
    # long is unwrapped record by record, and a value half holds no clock.
    # 2e9 lies off the arc from the time half's clock bits to the next
    # record's, so read as a clock it would add a whole wrap.
    lay = synthetic.layout(num_warps=1, clock_bits=32)
    clk0 = 1 << 40
    records = [
        (0, S, clk0 + 10),
        (1, S, clk0 + 3_000_000_000),
        (1, E, 2_000_000_000),
        (1, S, clk0 + 6_000_000_000),
        (1, E, i32_bits(-7)),
        (0, E, clk0 + 9_000_000_000),
    ]
    tags = synthetic.tag([[[r[0] for r in records]]], [[[r[1] for r in records]]])
    clocks = np.array([[[r[2] for r in records]]], dtype=np.uint64)
    clk_end = clk0 + 9_000_000_100
    buf = synthetic.build(
        lay, tags, clocks, clk_start=[[clk0]], clk_end=[[clk_end]], gt_start=[[0]], gt_end=[[4_500_000_050]]
    )
    meta = synthetic.metadata([("loop", -1), ("iter", 0)], lay, kinds=["scope", "value"], dtypes={1: "i32"})
    ev = decode.decode(buf, meta, 1)
    assert ev.duration_cycles.tolist() == [8_999_999_990], "the scope spans the warp's life"
    a = ev.asynchronous
    assert a.value.tolist() == [2_000_000_000, -7]
    gaps = np.diff(np.concatenate([a.value_ns, [ev.end_ns[0]]]))
    assert gaps == pytest.approx([1.5e9, 1.5e9], rel=1e-6), f"value times {a.value_ns} (scope end {ev.end_ns[0]})"


def test_sites_sharing_a_name_share_a_warps_counter_track(tmp_path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    # ids 1 and 3 are two sites of "iter"; the tracks are per name and warp.
    table = [("loop", -1), ("iter", 0), ("loss", -1), ("iter", -1)]
    lay = synthetic.layout(num_warps=1, segment_bytes=1024, clock_bits=64)
    records = [(0, S, None), (1, S, None), (1, E, 5), (0, E, None), (3, S, None), (3, E, 6)]
    tags = synthetic.tag([[[r[0] for r in records]]], [[[r[1] for r in records]]])
    clocks = np.array([[[CLK0 + STEP * (k + 1) if r[2] is None else r[2] for k, r in enumerate(records)]]])
    start = np.full((1, 1), CLK0, dtype=np.uint64)
    buf = synthetic.build(
        lay,
        tags,
        clocks.astype(np.uint64),
        clk_start=start,
        clk_end=start + np.uint64(STEP * 8),
        gt_start=[[0]],
        gt_end=[[STEP * 4]],
        sm=np.zeros((1, 1)),
    )
    meta = synthetic.metadata(
        table, lay, kinds=["scope", "value", "value", "value"], dtypes=dict.fromkeys((1, 2, 3), "i32")
    )
    ev = decode.decode(buf, meta, 1)
    path = tmp_path / "t.pftrace"
    perfetto_trace.write(str(path), [ev])
    trace = Trace.FromString(path.read_bytes())
    counters = [p.track_descriptor for p in trace.packet if p.track_descriptor.HasField("counter")]
    assert [d.name for d in counters] == ["iter"], "one track for both sites of 'iter'"
    points = [
        (p.timestamp, p.track_event.double_counter_value)
        for p in trace.packet
        if p.track_event.type == TrackEvent.TYPE_COUNTER and p.track_event.track_uuid == counters[0].uuid
    ]
    # Records 2 and 5 (1-based) at k * STEP cycles, 2 GHz, from the warp's entry.
    assert points == [(STEP, 5.0), (STEP * 5 // 2, 6.0)], points


def test_proton_view_shows_a_value_sum(tmp_path, capsys):
    from proton import viewer

    buf, meta = build([loop(4), loop(4, base=10)], ctas=2)
    ev = decode.decode(buf, meta, 2)
    path = tmp_path / "t.hatchet"
    hatchet_tree.write(str(path), [ev])
    assert viewer.main(["-m", "iter,count", "--no-color", str(path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[-1]: line.split()[:2] for line in out.splitlines()[1:] if line.strip()}
    # 2 CTAs x (0+1+2+3 + 10+11+12+13) over 16 records; viewers show
    # inclusive metrics, so the scope around it holds the sum too.
    assert rows["iter"] == ["104.000", "16"], out
    assert rows["loop"] == ["104.000", "20"], out
    assert viewer.main(["-m", "loss", "--no-color", str(path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert ["-6.000", "└─", "loss"] in rows, rows
