"""The Hatchet tree written from decoded events (the Chrome trace:
test_chrome_trace.py; the Perfetto trace: test_perfetto_trace.py)."""

import json

import pytest

from proton.recording import decode
from proton.writers import hatchet_tree as tree

from test_decode import make


@pytest.fixture
def launches():
    out = []
    for launch in range(2):
        buf, meta = make(ctas=3, segments=4)
        out.append(decode.decode(buf, meta, 3, kernel="vector_add", launch=launch))
    return out


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
    assert tree.inclusive(kernel)["metrics"]["cycles"] == 2 * 12 * 500
    assert kernel["metrics"]["cycles"] == 2 * 12 * 300
    assert kernel["metrics"]["normalized_cycles"] == pytest.approx(300)
    assert tree.inclusive(kernel)["metrics"]["normalized_cycles"] == pytest.approx(500)
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
