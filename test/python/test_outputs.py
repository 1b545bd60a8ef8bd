"""Perfetto trace and Hatchet tree written from decoded events (the Chrome
trace: test_chrome_trace.py); the Perfetto file is parsed back with the
perfetto package's own protos."""

import json

import numpy as np
import pytest

from proton.instrument import decode
from proton.writers import byte_rows as rowbytes, perfetto_trace as trace_perfetto, hatchet_tree as tree

from test_decode import make


@pytest.fixture
def launches():
    out = []
    for launch in range(2):
        buf, meta = make(ctas=3, segments=4)
        out.append(decode.decode(buf, meta, 3, kernel="vector_add", launch=launch))
    return out


def test_perfetto_trace_parses_back(tmp_path, launches):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent
    path = tmp_path / "run.pftrace"
    assert trace_perfetto.write(str(path), launches, "GPU 0 (test)") == 72
    trace = Trace()
    trace.ParseFromString(path.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}
    names = {}
    for p in trace.packet:
        for entry in p.interned_data.event_names:
            names[entry.iid] = entry.name
    assert sorted(names.values()) == ["kernel", "load", "store"]
    events = [p for p in trace.packet if p.HasField("track_event")]
    begins = [p for p in events if p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN]
    ends = [p for p in events if p.track_event.type == TrackEvent.TYPE_SLICE_END]
    assert len(begins) == len(ends) == 72
    assert all(p.trusted_packet_sequence_id == trace_perfetto.SEQUENCE_ID for p in events)
    # GPU > SM > CTA > warp
    def depth(uuid):
        d = 0
        while tracks[uuid].HasField("parent_uuid"):
            uuid, d = tracks[uuid].parent_uuid, d + 1
        return d
    assert {depth(p.track_event.track_uuid) for p in events} == {3}
    warp_track = tracks[begins[0].track_event.track_uuid]
    cta_track = tracks[warp_track.parent_uuid]
    sm_track = tracks[cta_track.parent_uuid]
    assert warp_track.name.startswith("warp ") and " CTA " in cta_track.name and sm_track.name.startswith("SM ")
    assert tracks[sm_track.parent_uuid].name == "GPU 0 (test)"
    # time order, and per track a proper nesting of begins and ends
    ts = [p.timestamp for p in events]
    assert ts == sorted(ts)
    open_per_track = {}
    for p in events:
        stack = open_per_track.setdefault(p.track_event.track_uuid, [])
        if p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN:
            stack.append(names[p.track_event.name_iid])
        else:
            stack.pop()
    assert all(not s for s in open_per_track.values())


def test_varint_encoding_matches_protobuf():
    from google.protobuf.internal import encoder
    values = np.array([0, 1, 127, 128, 300, 2**32 - 1, 2**35, 2**63 + 5], dtype=np.uint64)
    matrix, lengths = rowbytes.varint(values)
    for v, row, n in zip(values.tolist(), matrix, lengths):
        assert bytes(row[:n]) == encoder._VarintBytes(v)


def test_tree(tmp_path, launches):
    # Triton's Proton's layout: [ROOT, device info]; kernels under ROOT,
    # scopes under their kernel; each node's own (exclusive) metrics.
    written = tree.write(str(tmp_path / "run.hatchet"), launches, {"CUDA": {"0": {"arch": "90"}}})
    root, devices = written
    assert root["frame"]["name"] == "ROOT" and devices == {"CUDA": {"0": {"arch": "90"}}}
    (kernel_node,) = root["children"]
    assert kernel_node["frame"]["name"] == "vector_add" and kernel_node["metrics"]["count"] == 2
    (kernel,) = kernel_node["children"]
    assert kernel["frame"]["name"] == "kernel"
    assert kernel["metrics"]["count"] == 2 * 12
    # The scope measured 500 cycles per warp; its loads and stores 100 each.
    assert tree.inclusive(kernel, "cycles") == 2 * 12 * 500
    assert kernel["metrics"]["cycles"] == 2 * 12 * 300
    assert kernel["metrics"]["normalized_cycles"] == pytest.approx(300)
    assert tree.inclusive(kernel, "normalized_cycles") == pytest.approx(500)
    assert sorted(c["frame"]["name"] for c in kernel["children"]) == ["load", "store"]
    assert all(c["metrics"]["normalized_cycles"] == pytest.approx(100) for c in kernel["children"])
    assert all(c["metrics"]["device_type"] == "CUDA" and c["metrics"]["device_id"] == "0" for c in kernel["children"])
    assert json.loads((tmp_path / "run.hatchet").read_text()) == written


def test_tree_loads_in_hatchet(tmp_path, launches):
    ht = pytest.importorskip("hatchet")
    root, _ = tree.build(launches)
    gf = ht.GraphFrame.from_literal([root])
    assert set(gf.dataframe["name"]) == {"ROOT", "vector_add", "kernel", "load", "store"}
    assert "normalized_cycles" in gf.dataframe.columns
