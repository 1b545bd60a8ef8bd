"""Chrome trace and Hatchet tree written from decoded events (the Perfetto
trace: test_perfetto_trace.py)."""

import json

import numpy as np
import pytest

from proton.instrument import decode
from proton.writers import chrome_trace as trace_chrome, hatchet_tree as tree

from test_decode import make


@pytest.fixture
def launches():
    out = []
    for launch in range(2):
        buf, meta = make(ctas=3, segments=4)
        out.append(decode.decode(buf, meta, 3, kernel="vector_add", launch=launch))
    return out


def test_chrome_trace(tmp_path, launches):
    path = tmp_path / "run.chrome_trace"
    assert trace_chrome.write(str(path), launches, trace_chrome.session_origin(launches)) == 72
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert sorted(e["name"] for e in events if e["ph"] == "M") == ["process_name"] * 7 + \
        ["process_sort_index"] * 6 + ["thread_name"] * 24
    assert len(slices) == 72
    assert {e["name"] for e in slices} == {"kernel", "load", "store"}
    # one process per launch and CTA, one thread per warp
    assert len({e["pid"] for e in slices}) == 6 and {e["tid"] for e in slices} == {0, 1, 2, 3}
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert {e["args"]["name"] for e in events if e.get("name") == "thread_name"} == {f"warp {w}" for w in range(4)}
    # values as decoded: ts/dur in us with ns precision, cycles exact
    by_key = {(e["pid"], e["tid"], e["name"]): e for e in slices}
    ev = launches[1]
    i = int(np.flatnonzero((ev.cta == 2) & (ev.warp == 3) & (ev.scope == 1))[0])
    e = by_key[(3 + 2, 3, "load")]
    assert e["args"]["cycles"] == ev.duration_cycles[i]
    t0 = trace_chrome.session_origin(launches)
    assert e["ts"] == pytest.approx((ev.start_ns[i] + (ev.origin_ns - t0)) / 1000, abs=1e-3)
    assert e["dur"] == pytest.approx((ev.end_ns[i] - ev.start_ns[i]) / 1000, abs=1e-3)
    assert names[0] == "vector_add #0 CTA 0 (SM 0)" and names[5] == "vector_add #1 CTA 2 (SM 2)"
    assert min(e["ts"] for e in slices) >= 0
    assert all(e["dur"] > 0 and e["args"]["cycles"] > 0 for e in slices)


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
