"""On a GPU: a loop records its iteration index as the i32 value "iter" and
the result's first element as the f32 value "acc0"
(proton.language.record_value). The decoded values are 0..n-1 in time
order in every warp, the f32 equals the kernel's own result, and the
Chrome trace, the Perfetto trace and the tree carry them.

Run: pytest test/python/test_gpu_values.py -m gpu -q"""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import proton  # noqa: E402

from kept_launches import decode_kept  # noqa: E402
from values_kernels import sum_with_values  # noqa: E402

pytestmark = pytest.mark.gpu

CTAS, WARPS, TILES, BLOCK = 4, 4, 7, 128


@pytest.mark.parametrize("mode", ["default", "default:optimizations=clock32"])
def test_loop_index_values_come_back(tmp_path, mode):
    x = torch.randn(TILES * BLOCK, device="cuda")
    out = torch.empty(CTAS * BLOCK, device="cuda")
    proton.start(str(tmp_path / "values"), mode=mode, quiet=True)
    sum_with_values[(CTAS,)](x, out, TILES, BLOCK=BLOCK, num_warps=WARPS)
    ((ev, meta),) = decode_kept()
    report = proton.finalize()
    assert report.errors == [], report.errors
    expected = x.view(TILES, BLOCK).sum(0)
    assert torch.allclose(out.view(CTAS, BLOCK), expected.expand(CTAS, BLOCK), atol=1e-4), "results changed"

    a = ev.asynchronous
    table = {row.name: (row.kind, row.dtype) for row in meta.rows}
    assert table == {"iter": ("value", "i32"), "acc0": ("value", "f32")}, table
    ids = {row.name: row.id for row in meta.rows}
    assert a.unpaired_values == 0, f"{a.unpaired_values} value halves lost; warnings: {ev.warnings}"
    acc0_expected = float(out[0])
    for row in range(CTAS * WARPS):
        mine = (a.value_row == row) & (a.value_id == ids["iter"])
        got = a.value[mine][np.argsort(a.value_ns[mine], kind="stable")].tolist()
        assert got == list(range(TILES)), f"warp row {row}: iteration values {got}, expected 0..{TILES - 1}"
        last = (a.value_row == row) & (a.value_id == ids["acc0"])
        acc0, acc0_ns = a.value[last].tolist(), a.value_ns[last]
        assert acc0 == [acc0_expected], f"warp row {row}: acc0 {acc0}, the kernel wrote {acc0_expected}"
        assert (a.value_ns[mine] <= acc0_ns[0]).all(), f"warp row {row}: an iteration recorded after the loop"
    begin, end = ev.warp_begin_ns, ev.warp_end_ns  # ns since origin_ns, like value_ns
    assert ((begin[a.value_row] - 1e3 <= a.value_ns) & (a.value_ns <= end[a.value_row] + 1e3)).all(), (
        "a value's time lies outside its warp's life"
    )

    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    counters = [t for t in trace if t["ph"] == "C" and t["name"].startswith("iter [warp")]
    assert len(counters) == CTAS * WARPS * TILES, f"{len(counters)} Chrome counter points"

    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    pf = Trace.FromString(open(report.files["pftrace"], "rb").read())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in pf.packet if p.HasField("track_descriptor")}
    counter_tracks = {u: d.name for u, d in tracks.items() if d.HasField("counter")}
    assert sorted(counter_tracks.values()) == sorted(["iter", "acc0"] * CTAS * WARPS), "one track per warp and value"
    points = [p.track_event for p in pf.packet if p.track_event.type == TrackEvent.TYPE_COUNTER]
    assert len(points) == CTAS * WARPS * (TILES + 1), f"{len(points)} Perfetto counter points"

    root, _ = json.load(open(report.files["tree"]))
    (kernel,) = root["children"]
    nodes = {c["frame"]["name"]: c["metrics"] for c in kernel["children"]}
    per_warp = TILES * (TILES - 1) / 2
    assert nodes["iter"]["iter"] == CTAS * WARPS * per_warp, nodes["iter"]
    assert nodes["iter"]["count"] == CTAS * WARPS * TILES, nodes["iter"]
    assert nodes["acc0"]["acc0"] == pytest.approx(CTAS * WARPS * acc0_expected, rel=1e-6), nodes["acc0"]
