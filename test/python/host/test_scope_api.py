"""Scopes, states, metrics, NVTX ranges, CUDA graph replays and the .hatchet
layout of host sessions, with Triton's Proton semantics, through the fake
libcupti; and Triton 3.6's own viewer reading a tree we wrote."""

import json
import subprocess
import sys

import pytest

import proton
from proton.writers import hatchet_tree
from proton.host import scope as hs
from proton.host import state as hst
from proton.context import depth

from fake_cupti_support import fake_host_sessions, h  # noqa: F401 (fixture)

CBID_cuLaunchKernel = 307


pytestmark = pytest.mark.usefixtures("fake_host_sessions")


def _find(node, *names):
    for name in names:
        node = next(c for c in node["children"] if c["frame"]["name"] == name)
    return node


def _run(fake, tmp_path, body, **kw):
    proton.start(str(tmp_path / "t"), backend="cupti", quiet=True, **kw)
    body()
    report = proton.finalize()
    return json.load(open(report.files["tree"]))


def test_enter_exit_scope_ids_metrics_and_decorator(fake, tmp_path):
    def body():
        sid = hs.enter_scope("a", metrics={"tokens": 2})
        inner = hs.enter_scope("b")
        fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
        assert hs.exit_scope() == inner  # no name: the innermost
        assert hs.exit_scope("a", metrics={"tokens": 3, "loss(pty)": "nan?"}) == sid

        @hs.scope("deco")
        def work():
            fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 5, 1)

        work()
        with pytest.raises(proton.ProfilerError, match="while scope 'x' is the innermost"):
            with hs.scope("x"):
                hs.exit_scope("y")

    root = _run(fake, tmp_path, body)[0]
    assert _find(root, "a")["metrics"] == {"tokens": 5, "loss": "nan?"}
    assert _find(root, "a", "b", "k")["metrics"]["count"] == 1
    assert _find(root, "deco", "k")["metrics"]["time (ns)"] == 5


def test_metric_suffixes_and_type_errors(fake, tmp_path):
    def body():
        with hs.scope("s", metrics={"n": 1, "e(exc)": 2.5, "p(pty)": 7}):
            pass
        with hs.scope("s", metrics={"n": 1, "e(exc)": 0.5, "p(pty)": 9}):
            pass
        with pytest.raises(proton.ProfilerError, match="metric 'n' of scope 's' changed type from int to float"):
            hs.enter_scope("s", metrics={"n": 1.0})
        with pytest.raises(proton.ProfilerError, match="metric 'name' of scope 's' is str"):
            hs.enter_scope("s", metrics={"name": "x"})
        with pytest.raises(proton.ProfilerError, match="metric 'p' of scope 's' changed type"):
            hs.enter_scope("s", metrics={"p": 1})
        assert h.scope_stack() == []

    s = _find(_run(fake, tmp_path, body)[0], "s")
    assert s["metrics"] == {"n": 2, "e": 3.0, "p": 9}


def test_properties_of_any_type_per_scope_and_exclusive_strings(fake, tmp_path):
    # As Triton's Proton allows: a property is kept as the last value, of any
    # type on each scope, and an "(exc)" metric may be a string.
    def body():
        with hs.scope("s0", metrics={"a (pty)": "1"}):
            pass
        for _ in range(2):
            with hs.scope("s2", metrics={"a (pty)": 1.0}):
                pass
        with hs.scope("x", metrics={"e (exc)": "1"}):
            with hs.scope("y", metrics={"f (exc)": "2"}):
                pass

    root = _run(fake, tmp_path, body)[0]
    assert _find(root, "s0")["metrics"] == {"a": "1"} and _find(root, "s2")["metrics"] == {"a": 1.0}
    assert _find(root, "x")["metrics"] == {"e": "1"} and _find(root, "x", "y")["metrics"] == {"f": "2"}


def test_root_declares_summed_metrics_only(fake, tmp_path):
    # The root carries zeros of metrics that add up (so hatchet sums them);
    # exclusive metrics and properties are not meant to, and stay off it.
    def body():
        with hs.scope("t0", metrics={"a (exc)": 1, "n": 2, "p (pty)": 3}):
            with hs.scope("t1", metrics={"b (exc)": 1}):
                pass

    root = _run(fake, tmp_path, body)[0]
    assert root["metrics"] == {"n": 0}
    assert _find(root, "t0")["metrics"] == {"a": 1, "n": 2, "p": 3}
    assert _find(root, "t0", "t1")["metrics"] == {"b": 1}


def test_cpu_timed_scope(fake, tmp_path):
    def body():
        with hs.cpu_timed_scope("t0"):
            with hs.cpu_timed_scope("t1", metrics={"m": 1}):
                fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 1, 1)
        with pytest.raises(proton.ProfilerError, match="reserved"):
            hs.cpu_timed_scope("bad", metrics={"cpu_time": 1})

    root = _run(fake, tmp_path, body)[0]
    t0 = _find(root, "t0")
    t1 = _find(t0, "t1")
    assert t0["metrics"]["cpu_time (ns)"] >= t1["metrics"]["cpu_time (ns)"] > 0 and t1["metrics"]["m"] == 1


def test_states(fake, tmp_path):
    def body():
        with hs.scope("s"):
            hst.enter_state("fwd")
            fake.fake_launch(CBID_cuLaunchKernel, b"k1", 0, 1, 1)
            with hst.state("inner"):  # replaces, does not nest
                fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 1, 1)
            fake.fake_launch(CBID_cuLaunchKernel, b"k3", 0, 1, 1)
            hst.exit_state()

            @hst.state("deco")
            def f():
                fake.fake_launch(CBID_cuLaunchKernel, b"k4", 0, 1, 1)

            f()
            fake.fake_launch(CBID_cuLaunchKernel, b"k5", 0, 1, 1)

    s = _find(_run(fake, tmp_path, body)[0], "s")
    assert {c["frame"]["name"] for c in _find(s, "fwd")["children"]} == {"k1", "k3"}
    assert _find(s, "inner", "k2") and _find(s, "deco", "k4") and _find(s, "k5")
    assert _find(s, "fwd")["frame"]["type"] == "state"


def test_scope_metrics_under_a_state_go_to_the_state_node(fake, tmp_path):
    # As Triton's Proton: test0 > test1 > state, the metrics on the state.
    def body():
        hs.enter_scope("test0")
        hst.enter_state("state")
        hs.enter_scope("test1", metrics={"a": 1.0})
        hs.exit_scope()
        hst.exit_state()
        hs.exit_scope()

    test1 = _find(_run(fake, tmp_path, body)[0], "test0", "test1")
    assert [c["frame"]["name"] for c in test1["children"]] == ["state"] and test1["metrics"] == {}
    state = test1["children"][0]
    assert state["frame"]["type"] == "state" and state["metrics"] == {"a": 1.0}


def test_context_depth(fake, tmp_path):
    session = proton.start(str(tmp_path / "d"), backend="cupti", quiet=True)
    assert depth(session) == 0
    with hs.scope("a"):
        with hs.scope("b"):
            assert depth(session) == 2
    proton.deactivate(session)
    assert depth(session) is None  # as upstream when profiling is off
    proton.finalize()
    assert depth(session) is None


def test_nvtx_ranges_are_nodes(fake, tmp_path):
    def body():
        with hs.scope("proton_scope"):
            assert fake.fake_nvtx_push(b"nvtx_range0") == 1
            assert fake.fake_nvtx_push_ex(b"nvtx_range1") == 1
            fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 1, 1)
            fake.fake_nvtx_pop()
            fake.fake_nvtx_pop()
            fake.fake_nvtx_pop()  # unbalanced: does not close proton_scope
            fake.fake_nvtx_push(b"left_open")  # closed with the enclosing scope

    root = _run(fake, tmp_path, body)[0]
    scope = _find(root, "proton_scope")
    k = _find(scope, "nvtx_range0", "nvtx_range1", "k")
    assert k["metrics"]["count"] == 1 and _find(scope, "nvtx_range0")["frame"]["type"] == "nvtx"
    assert h.scope_stack() == []


def test_nvtx_knob_off(fake, tmp_path, monkeypatch):
    import triton.knobs

    monkeypatch.setattr(triton.knobs.proton, "enable_nvtx", False)

    def body():
        with hs.scope("proton_scope"):
            assert fake.fake_nvtx_push(b"nvtx_range0") == 0  # no callback enabled
            fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 1, 1)
            fake.fake_nvtx_pop()

    root = _run(fake, tmp_path, body)[0]
    assert _find(root, "proton_scope", "k")["metrics"]["count"] == 1


def test_graph_replay_under_captured_at(fake, tmp_path):
    def body():
        nodes = []
        for i in range(2):
            with hs.scope(f"iter_{i}"):
                nodes.append(fake.fake_capture_launch(b"gk"))
        import ctypes

        array = (ctypes.c_uint64 * len(nodes))(*nodes)
        with hs.scope("test0"):
            fake.fake_graph_launch(array, len(nodes), 100, 10)

    root = _run(fake, tmp_path, body)[0]
    captured = _find(root, "test0", "<captured_at>")
    assert captured["frame"]["type"] == "captured_at"
    assert [_find(captured, f"iter_{i}", "gk")["metrics"]["count"] for i in range(2)] == [1, 1]


def _tree_with_devices(fake, tmp_path):
    proton.start(str(tmp_path / "view"), backend="cupti", quiet=True)
    with hs.scope("outer", metrics={"tokens": 7}):
        fake.fake_launch(CBID_cuLaunchKernel, b"k1", 0, 1000, 1)
        with hs.scope("inner"):
            fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 3000, 1)
            fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 1000, 1)
    path = proton.finalize().files["tree"]
    data = json.load(open(path))
    # A device-info object as a GPU run writes it (no driver here).
    data[1] = {
        "CUDA": {
            "0": {"arch": "90", "num_sms": 132, "clock_rate": 1980000, "memory_clock_rate": 2619000, "bus_width": 6144}
        }
    }
    json.dump(data, open(path, "w"))
    return path, data


def test_upstream_layout(fake, tmp_path):
    path, data = _tree_with_devices(fake, tmp_path)
    assert len(data) == 2 and data[0]["frame"] == {"name": "ROOT", "type": "function"}
    assert data[0]["metrics"] == {"count": 0, "time (ns)": 0, "tokens": 0}  # zeros of every metric below
    assert _find(data[0], "outer", "inner")["metrics"] == {}
    total = hatchet_tree.inclusive(data[0])
    assert _find(total, "outer")["metrics"]["time (ns)"] == 5000
    assert _find(total, "outer", "inner")["metrics"]["count"] == 2


def test_triton_viewer_reads_our_tree(fake, tmp_path):
    pytest.importorskip("hatchet")
    from triton.profiler import viewer as upstream

    path, data = _tree_with_devices(fake, tmp_path)
    gf, metrics = upstream.parse(["time/ns"], path)
    frame = gf.dataframe.reset_index()
    got = {row["name"]: row["time/ns (inc)"] for _, row in frame.iterrows()}
    total = hatchet_tree.inclusive(data[0])
    assert got["ROOT"] == total["metrics"]["time (ns)"] == 5000
    assert got["outer"] == pytest.approx(5000) and got["inner"] == pytest.approx(4000)
    assert got["k2"] == pytest.approx(4000) and got["k1"] == pytest.approx(1000)
    out = subprocess.run(
        [sys.executable, "-m", "triton.profiler.viewer", "-m", "time/ns", str(path)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "5000" in out.stdout and "inner" in out.stdout
