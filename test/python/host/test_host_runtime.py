"""CPU tests of the host profiler's runtime (proton._host, lib/Host)
through a fake libcupti (fake_cupti/fake_cupti.c): the fake plays the CUDA
driver (API and resource callbacks, activity records), the runtime under
test is the real one.

The runtime keeps process-wide state (one CUPTI, one calling-context tree,
one correlation ring): the fake is loaded once per test session, each test
uses its own scope names and session slots."""

import ctypes
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from fake_cupti_support import reset_thread_state

h = pytest.importorskip("proton._host", reason="proton._host (the host profiler runtime) is not built")
from proton.host import records  # noqa: E402 (needs proton._host)


# CUPTI constants (cupti_callbacks.h, cupti_driver_cbid.h, cupti_activity.h).
DOMAIN_DRIVER = 1
DOMAIN_RESOURCE = 3
CBID_cuMemAlloc_v2 = 243
CBID_cuMemsetD8_v2 = 249
CBID_cuMemcpyHtoD_v2 = 276
CBID_cuMemcpyDtoH_v2 = 278
CBID_cuCtxGetCurrent = 304
CBID_cuLaunchKernel = 307
CBID_cuGraphLaunch = 514
CBID_cuLaunchKernelEx = 652
RESOURCE_GRAPHNODE_CREATE_STARTING = 12
RESOURCE_GRAPHNODE_CREATED = 13
RESOURCE_GRAPHNODE_DESTROY_STARTING = 14
RESOURCE_GRAPHNODE_CLONED = 20
ACTIVITY_MEMCPY, ACTIVITY_MEMSET, ACTIVITY_KERNEL, ACTIVITY_CONCURRENT_KERNEL = 1, 2, 3, 10
MEMCPY_HTOD, MEMCPY_DTOH = 1, 2
RING_SIZE = 1 << 17  # ActivityStore::kRingSize

# Kinds by name, as proton._host numbers them.
ACTIVITY_KIND = {name: number for number, name in records.ACTIVITY_KINDS.items()}
NODE_KIND = {name: number for number, name in records.NODE_KINDS.items()}
KIND_KERNEL, KIND_MEMCPY, KIND_MEMSET = ACTIVITY_KIND["kernel"], ACTIVITY_KIND["memcpy"], ACTIVITY_KIND["memset"]
NODE_SCOPE, NODE_FRAME, NODE_STATE = NODE_KIND["scope"], NODE_KIND["frame"], NODE_KIND["state"]


# Fixtures `fake_path` and `fake` (the fake libcupti): fake_cupti_support.py, via conftest.py.

_next_slot = [0]


def new_slot(keep_trace=False, cap=0) -> int:
    """A session slot no other test of this run has used."""
    slot = _next_slot[0]
    _next_slot[0] = (slot + 1) % 64
    h.open_session(slot, keep_trace, cap)
    return slot


@pytest.fixture(autouse=True)
def tracing(fake):
    """Tracing on, leftovers of earlier tests flushed, no session active, no
    scope or state open."""
    if not h.cupti_tracing():
        h.start_cupti()
    reset_thread_state()
    h.flush_cupti()
    fake.fake_set_device_stream(0, 7)
    yield fake
    reset_thread_state()
    h.flush_cupti()


# ---------------------------------------------------------------- helpers


def launch(fake, name, start, end, cbid=CBID_cuLaunchKernel, emit=True):
    return fake.fake_launch(cbid, name.encode(), start, end, int(emit))


def graph_launch(fake, nodes, start=0, duration=10):
    array = (ctypes.c_uint64 * len(nodes))(*nodes)
    return fake.fake_graph_launch(array, len(nodes), start, duration)


def node_path(node: int) -> tuple:
    """The names from the root (excluded) down to `node`, each with its kind."""
    nodes = records.nodes(h.nodes())
    names = h.names()
    path = []
    while node != 0:
        path.append((names[nodes[node]["name"]], int(nodes[node]["kind"])))
        node = int(nodes[node]["parent"])
    return tuple(reversed(path))


def names_of(node: int) -> tuple:
    return tuple(name for name, _ in node_path(node))


def take(slot):
    aggregates, trace, dropped = h.take_session(slot)
    assert len(aggregates) % records.AGGREGATE.itemsize == 0
    assert len(trace) % records.TRACE.itemsize == 0
    return records.aggregates(aggregates), records.trace_rows(trace), dropped


def by_path(aggregates) -> dict:
    """{(scope names..., activity name): row}; fails on duplicate keys."""
    names = h.names()
    out = {}
    for row in aggregates:
        key = names_of(int(row["node"])) + (names[row["name"]],)
        assert key not in out, f"two aggregates for {key}"
        out[key] = row
    return out


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# ------------------------------------------------------------------ tests


def test_row_layouts_come_from_cpp():
    # records.py's dtypes are the layouts C++ exports, field for field.
    dtypes = {"aggregate": records.AGGREGATE, "trace": records.TRACE, "node": records.NODE}
    assert set(h.ROW_LAYOUTS) == set(dtypes)
    for row, layout in h.ROW_LAYOUTS.items():
        dtype = dtypes[row]
        assert dtype.itemsize == layout["itemsize"], row
        assert list(dtype.names) == [name for name, _, _, _ in layout["fields"]], row
        for name, scalar, count, offset in layout["fields"]:
            field, field_offset = dtype.fields[name][:2]
            assert field_offset == offset, (row, name)
            assert field.base == np.dtype(scalar) and int(np.prod(field.shape)) == count, (row, name)
    # The wire format itself is unchanged (packed, little-endian).
    assert (records.AGGREGATE.itemsize, records.TRACE.itemsize, records.NODE.itemsize) == (96, 52, 12)
    assert records.NODE_KINDS == h.NODE_KINDS and records.ACTIVITY_KINDS == h.ACTIVITY_KINDS
    assert records.NODE_KINDS == {0: "root", 1: "scope", 2: "frame", 3: "state", 4: "captured_at", 5: "nvtx"}
    assert records.ACTIVITY_KINDS == {0: "kernel", 1: "memcpy", 2: "memset"}


def test_rows_round_trip(fake):
    # Real rows (the runtime's, from the fake's records) read through
    # records.py give back every field C++ wrote, and their bytes unchanged.
    slot = new_slot(keep_trace=True, cap=10)
    h.set_active_sessions(1 << slot)
    fake.fake_set_device_stream(3, 9)
    h.enter_scope("roundtrip_scope")
    h.set_launch_metrics(1.5, 2.5, 3.5, 4.5, 64.0)
    correlation = launch(fake, "roundtrip_k", 100, 175)
    h.exit_scope("roundtrip_scope")
    h.flush_cupti()
    aggregate_bytes, trace_bytes, dropped = h.take_session(slot)
    aggregates, trace = records.aggregates(aggregate_bytes), records.trace_rows(trace_bytes)
    assert aggregates.tobytes() == aggregate_bytes and trace.tobytes() == trace_bytes and dropped == 0
    names = h.names()
    (row,) = aggregates
    assert names_of(int(row["node"])) == ("roundtrip_scope",) and names[row["name"]] == "roundtrip_k"
    assert (row["device"], row["kind"], row["count"]) == (3, KIND_KERNEL, 1)
    assert (row["total_ns"], row["min_ns"], row["max_ns"]) == (75, 75, 75)
    assert list(row["flops"]) == [1.5, 2.5, 3.5, 4.5] and row["bytes"] == 64.0
    (event,) = trace
    assert (event["node"], event["name"]) == (row["node"], row["name"])
    assert (event["device"], event["stream"], event["kind"]) == (3, 9, KIND_KERNEL)
    assert (event["correlation"], event["start"], event["end"]) == (correlation, 100, 175)
    nodes = records.nodes(h.nodes())
    assert records.nodes(nodes.tobytes()).tobytes() == nodes.tobytes()
    scope = nodes[int(row["node"])]
    assert (names[scope["name"]], scope["parent"], scope["kind"]) == ("roundtrip_scope", 0, NODE_SCOPE)


def test_load_errors(fake_path):
    # Loading happens once per process: the cases run in a fresh interpreter.
    script = textwrap.dedent(f"""
        import ctypes.util, json
        import proton._host as h
        def error(path):
            try:
                h.load_cupti(path)
            except RuntimeError as e:
                return str(e)
            return None
        libm = ctypes.util.find_library("m") or "libm.so.6"
        out = {{"libm": libm}}
        out["missing"] = error("/nonexistent/dir/libcupti.so.99")
        out["no_symbols"] = error(libm)
        out["after_failures"] = [h.cupti_path(), h.cupti_version()]
        out["fake"] = error({str(fake_path)!r})
        out["loaded"] = [h.cupti_path(), h.cupti_version()]
        out["same_again"] = error({str(fake_path)!r})
        out["other"] = error(libm)
        print(json.dumps(out))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.splitlines()[-1])
    assert out["missing"] is not None
    assert "/nonexistent/dir/libcupti.so.99" in out["missing"] and "cannot load CUPTI" in out["missing"]
    assert out["no_symbols"] is not None
    assert out["libm"] in out["no_symbols"] and "cuptiGetVersion" in out["no_symbols"]
    # Failed loads leave nothing behind...
    assert out["after_failures"] == ["", 0]
    # ...so the fake then loads, and reports its version.
    assert out["fake"] is None
    assert out["loaded"] == [str(fake_path), 26]
    # Loading the same library again is a no-op; another one is refused.
    assert out["same_again"] is None
    assert out["other"] is not None and "already loaded" in out["other"] and str(fake_path) in out["other"]


def test_only_traced_callbacks_enabled(fake):
    assert h.cupti_version() == 26
    assert h.cupti_tracing()
    assert fake.fake_subscribed() == 1
    for cbid in (
        CBID_cuLaunchKernel,
        CBID_cuLaunchKernelEx,
        CBID_cuGraphLaunch,
        CBID_cuMemcpyHtoD_v2,
        CBID_cuMemcpyDtoH_v2,
        CBID_cuMemsetD8_v2,
    ):
        assert fake.fake_is_enabled(DOMAIN_DRIVER, cbid) == 1, cbid
    for cbid in (CBID_cuCtxGetCurrent, CBID_cuMemAlloc_v2):
        assert fake.fake_is_enabled(DOMAIN_DRIVER, cbid) == 0, cbid
    for cbid in (RESOURCE_GRAPHNODE_CREATED, RESOURCE_GRAPHNODE_CLONED, RESOURCE_GRAPHNODE_DESTROY_STARTING):
        assert fake.fake_is_enabled(DOMAIN_RESOURCE, cbid) == 1, cbid
    assert fake.fake_is_enabled(DOMAIN_RESOURCE, RESOURCE_GRAPHNODE_CREATE_STARTING) == 0
    for kind in (ACTIVITY_CONCURRENT_KERNEL, ACTIVITY_MEMCPY, ACTIVITY_MEMSET):
        assert fake.fake_activity_enabled(kind) == 1, kind
    # Untraced driver calls reach no callback at all.
    before = fake.fake_callback_count()
    fake.fake_api_call(CBID_cuCtxGetCurrent)
    fake.fake_api_call(CBID_cuMemAlloc_v2)
    assert fake.fake_callback_count() == before
    launch(fake, "enabled_probe", 0, 1)
    assert fake.fake_callback_count() == before + 2  # enter and exit


def test_scopes_aggregate(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.enter_scope("agg_a")
    launch(fake, "agg_k1", 1000, 1100)  # 100
    launch(fake, "agg_k1", 2000, 2300)  # 300
    h.enter_scope("agg_b")
    launch(fake, "agg_k1", 3000, 3050, cbid=CBID_cuLaunchKernelEx)  # 50
    launch(fake, "agg_k2", 4000, 4007)  # 7
    h.exit_scope("agg_b")
    launch(fake, "agg_k2", 5000, 5001)  # 1
    h.exit_scope("agg_a")
    launch(fake, "agg_k2", 6000, 6020)  # 20, at the root
    h.flush_cupti()
    aggregates, trace, dropped = take(slot)
    assert len(trace) == 0 and dropped == 0
    rows = by_path(aggregates)
    assert set(rows) == {
        ("agg_a", "agg_k1"),
        ("agg_a", "agg_b", "agg_k1"),
        ("agg_a", "agg_b", "agg_k2"),
        ("agg_a", "agg_k2"),
        ("agg_k2",),
    }
    k1 = rows[("agg_a", "agg_k1")]
    assert (k1["count"], k1["total_ns"], k1["min_ns"], k1["max_ns"]) == (2, 400, 100, 300)
    inner = rows[("agg_a", "agg_b", "agg_k1")]
    assert (inner["count"], inner["total_ns"], inner["min_ns"], inner["max_ns"]) == (1, 50, 50, 50)
    assert rows[("agg_a", "agg_b", "agg_k2")]["total_ns"] == 7
    assert rows[("agg_a", "agg_k2")]["total_ns"] == 1
    assert rows[("agg_k2",)]["total_ns"] == 20 and rows[("agg_k2",)]["node"] == 0
    for row in aggregates:
        assert row["kind"] == KIND_KERNEL and row["device"] == 0
        assert list(row["flops"]) == [0, 0, 0, 0] and row["bytes"] == 0
    # The scope nodes are scopes, nested as entered.
    assert node_path(int(inner["node"])) == (("agg_a", NODE_SCOPE), ("agg_b", NODE_SCOPE))
    # A taken session is closed: later activities do not reach it.
    h.set_active_sessions(1 << slot)
    launch(fake, "agg_k1", 0, 5)
    h.flush_cupti()
    assert len(take(slot)[0]) == 0


def test_inactive_launches_not_counted(fake):
    slot = new_slot()
    before = h.counters()
    for i in range(5):
        launch(fake, "inactive_k", i * 100, i * 100 + 10)
    h.flush_cupti()
    after = h.counters()
    assert after["launches"] == before["launches"]
    assert after["activities"] == before["activities"] + 5
    assert after["unattributed"] == before["unattributed"] + 5
    h.set_active_sessions(1 << slot)
    launch(fake, "inactive_k", 1000, 1042)
    h.set_active_sessions(0)
    launch(fake, "inactive_k", 2000, 2999)
    h.flush_cupti()
    assert h.counters()["launches"] == before["launches"] + 1
    aggregates, _, _ = take(slot)
    rows = by_path(aggregates)
    assert list(rows) == [("inactive_k",)]
    assert (rows[("inactive_k",)]["count"], rows[("inactive_k",)]["total_ns"]) == (1, 42)


def test_two_sessions_windows(fake):
    first, second = new_slot(), new_slot()
    h.set_active_sessions(1 << first)
    launch(fake, "win_only_first", 0, 10)
    h.set_active_sessions((1 << first) | (1 << second))
    launch(fake, "win_both", 100, 120)
    h.set_active_sessions(1 << second)
    launch(fake, "win_only_second", 200, 230)
    h.set_active_sessions(0)
    h.flush_cupti()
    rows_first = by_path(take(first)[0])
    rows_second = by_path(take(second)[0])
    assert set(rows_first) == {("win_only_first",), ("win_both",)}
    assert set(rows_second) == {("win_both",), ("win_only_second",)}
    assert rows_first[("win_both",)]["total_ns"] == rows_second[("win_both",)]["total_ns"] == 20
    assert rows_second[("win_only_second",)]["total_ns"] == 30


def test_state_overrides(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    scope = h.enter_scope("state_scope")
    assert h.set_state("state_s1") is None
    launch(fake, "state_k", 0, 1)
    assert h.set_state("state_s2") == "state_s1"
    launch(fake, "state_k", 0, 2)
    launch(fake, "state_k", 0, 3)
    assert h.set_state(None) == "state_s2"
    launch(fake, "state_k", 0, 4)
    h.exit_scope("state_scope")
    h.flush_cupti()
    aggregates, _, _ = take(slot)
    rows = by_path(aggregates)
    assert set(rows) == {
        ("state_scope", "state_s1", "state_k"),
        ("state_scope", "state_s2", "state_k"),
        ("state_scope", "state_k"),
    }
    s1 = rows[("state_scope", "state_s1", "state_k")]
    s2 = rows[("state_scope", "state_s2", "state_k")]
    assert (s1["count"], s1["total_ns"]) == (1, 1)
    assert (s2["count"], s2["total_ns"]) == (2, 5)
    assert rows[("state_scope", "state_k")]["node"] == scope
    # Both states hang directly below the scope (the second replaced the
    # first rather than nesting in it), as State nodes.
    assert node_path(int(s2["node"])) == (("state_scope", NODE_SCOPE), ("state_s2", NODE_STATE))
    nodes = records.nodes(h.nodes())
    assert nodes[int(s1["node"])]["parent"] == nodes[int(s2["node"])]["parent"] == scope


def test_scopes_are_per_thread(fake):
    # Each thread has its own scope stack; a thread with none open (autograd's
    # backward thread, a worker) launches below the main thread's innermost.
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.mark_main_thread()
    h.enter_scope("thread_main_scope")
    seen = {}

    def worker():
        seen["stack"] = h.scope_stack()
        launch(fake, "thread_worker_k", 0, 3)  # no scope open on this thread
        h.enter_scope("thread_worker_scope")
        launch(fake, "thread_worker_k", 0, 4)
        h.exit_scope("thread_worker_scope")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    launch(fake, "thread_main_k", 0, 5)
    h.exit_scope("thread_main_scope")
    thread = threading.Thread(target=lambda: launch(fake, "thread_late_k", 0, 6))
    thread.start()  # the main thread's scope is closed again: the root
    thread.join()
    h.flush_cupti()
    rows = by_path(take(slot)[0])
    assert seen["stack"] == []
    assert set(rows) == {
        ("thread_main_scope", "thread_worker_k"),
        ("thread_worker_scope", "thread_worker_k"),
        ("thread_main_scope", "thread_main_k"),
        ("thread_late_k",),
    }
    assert rows[("thread_main_scope", "thread_worker_k")]["total_ns"] == 3


def _python_context_launch(fake, name):
    return launch(fake, name, 0, 6)


def test_python_context(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    here = str(Path(__file__).resolve())
    try:
        # Frames from everything but this file are skipped.
        skipped = sorted(
            {
                p
                for p in (
                    sysconfig.get_paths()["stdlib"],
                    sysconfig.get_paths()["purelib"],
                    sysconfig.get_paths()["platlib"],
                    "<",
                )
            }
        )
        h.set_python_context(True, skipped)
        h.enter_scope("pyctx_scope")  # frames replace scopes
        for state in (None, "pyctx_state"):  # the same line both times
            h.set_state(state)
            _python_context_launch(fake, "pyctx_k")
    finally:
        h.set_python_context(False, [])
        h.set_state(None)
        h.exit_scope("pyctx_scope")
    h.flush_cupti()
    aggregates, _, _ = take(slot)
    assert len(aggregates) == 2
    paths = sorted((node_path(int(row["node"])) for row in aggregates), key=len)
    plain, stated = paths
    assert stated[:-1] == plain and stated[-1] == ("pyctx_state", NODE_STATE)
    assert plain and all(kind == NODE_FRAME for _, kind in plain)
    assert all(name.startswith(here + ":") for name, _ in plain), plain
    functions = [name.rsplit("@", 1)[1] for name, _ in plain]
    assert functions[-3:] == ["test_python_context", "_python_context_launch", "launch"]
    assert "pyctx_scope" not in [name for name, _ in plain]


def test_launch_metrics_next_kernel_only(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.set_launch_metrics(1.0, 2.0, 3.0, 4.0, 5.0)
    fake.fake_memcpy(CBID_cuMemcpyHtoD_v2, MEMCPY_HTOD, 64, 0, 10)  # not a kernel launch
    launch(fake, "metrics_first", 10, 20)
    launch(fake, "metrics_second", 20, 30)
    h.set_launch_metrics(0.0, 0.0, 10.0, 0.0, 100.0)
    h.clear_launch_metrics()
    launch(fake, "metrics_third", 30, 40)
    h.flush_cupti()
    rows = by_path(take(slot)[0])
    first = rows[("metrics_first",)]
    assert list(first["flops"]) == [1.0, 2.0, 3.0, 4.0] and first["bytes"] == 5.0
    for key in (("metrics_second",), ("metrics_third",), ("memcpy HtoD",)):
        assert list(rows[key]["flops"]) == [0, 0, 0, 0] and rows[key]["bytes"] == 0, key


def test_launch_metrics_not_carried_past_an_untraced_launch(fake):
    # Metrics are meant for the launch that follows; if that launch happens
    # with no session active, they must not move on to a later launch.
    slot = new_slot()
    h.set_launch_metrics(7.0, 0.0, 0.0, 0.0, 70.0)
    launch(fake, "metrics_inactive", 0, 10)
    h.set_active_sessions(1 << slot)
    launch(fake, "metrics_later", 10, 20)
    h.flush_cupti()
    row = by_path(take(slot)[0])[("metrics_later",)]
    assert list(row["flops"]) == [0, 0, 0, 0] and row["bytes"] == 0


def test_trace_cap(fake):
    slot = new_slot(keep_trace=True, cap=3)
    h.set_active_sessions(1 << slot)
    fake.fake_set_device_stream(2, 13)
    h.enter_scope("trace_scope")
    correlations = [launch(fake, "trace_k", 1000 * i, 1000 * i + 10 + i) for i in range(5)]
    h.exit_scope("trace_scope")
    h.flush_cupti()
    aggregates, trace, dropped = take(slot)
    assert dropped == 2
    assert len(trace) == 3
    names = h.names()
    for i, row in enumerate(trace):
        assert names_of(int(row["node"])) == ("trace_scope",)
        assert names[row["name"]] == "trace_k"
        assert (row["device"], row["stream"], row["kind"]) == (2, 13, KIND_KERNEL)
        assert row["correlation"] == correlations[i]
        assert (row["start"], row["end"]) == (1000 * i, 1000 * i + 10 + i)
    (row,) = aggregates
    assert (row["count"], row["total_ns"], row["min_ns"], row["max_ns"], row["device"]) == (5, 60, 10, 14, 2)
    # Without keep_trace, no trace at all.
    plain = new_slot(keep_trace=False, cap=100)
    h.set_active_sessions(1 << plain)
    launch(fake, "trace_k", 0, 1)
    h.flush_cupti()
    _, trace, dropped = take(plain)
    assert len(trace) == 0 and dropped == 0


def test_graph_capture_then_replay(fake):
    slot = new_slot()
    baseline = h.counters()["graph_nodes_kept"]
    h.set_active_sessions(1 << slot)
    h.enter_scope("g_capture")
    h.set_launch_metrics(0.0, 0.0, 10.0, 0.0, 100.0)
    captured = [fake.fake_capture_launch(b"g_k1"), fake.fake_capture_launch(b"g_k2")]
    h.exit_scope("g_capture")
    assert h.counters()["graph_nodes_kept"] == baseline + 2
    # Capturing runs no kernel.
    h.flush_cupti()
    assert len(take(slot)[0]) == 0

    replay = new_slot()
    h.set_active_sessions(1 << replay)
    h.enter_scope("g_replay")
    graph_launch(fake, captured, start=0, duration=10)
    graph_launch(fake, captured, start=100, duration=30)
    h.exit_scope("g_replay")
    h.flush_cupti()
    rows = by_path(take(replay)[0])
    assert set(rows) == {
        ("g_replay", "<captured_at>", "g_capture", "g_k1"),
        ("g_replay", "<captured_at>", "g_capture", "g_k2"),
    }
    k1 = rows[("g_replay", "<captured_at>", "g_capture", "g_k1")]
    assert (k1["count"], k1["total_ns"], k1["min_ns"], k1["max_ns"]) == (2, 40, 10, 30)
    # The captured launch's metrics go with its node, on every replay.
    assert list(k1["flops"]) == [0, 0, 20.0, 0] and k1["bytes"] == 200.0
    assert list(rows[("g_replay", "<captured_at>", "g_capture", "g_k2")]["flops"]) == [0, 0, 0, 0]

    # Instantiation clones the nodes; the originals then go away.
    clones = [fake.fake_clone_node(node) for node in captured]
    assert all(clones) and set(clones).isdisjoint(captured)
    assert h.counters()["graph_nodes_kept"] == baseline + 4
    for node in captured:
        assert fake.fake_destroy_node(node) == 0
    assert h.counters()["graph_nodes_kept"] == baseline + 2
    again = new_slot()
    h.set_active_sessions(1 << again)
    h.enter_scope("g_replay")
    graph_launch(fake, clones, start=0, duration=5)
    h.exit_scope("g_replay")
    h.flush_cupti()
    rows = by_path(take(again)[0])
    assert set(rows) == {
        ("g_replay", "<captured_at>", "g_capture", "g_k1"),
        ("g_replay", "<captured_at>", "g_capture", "g_k2"),
    }
    assert rows[("g_replay", "<captured_at>", "g_capture", "g_k2")]["total_ns"] == 5
    for node in clones:
        fake.fake_destroy_node(node)
    assert h.counters()["graph_nodes_kept"] == baseline


def test_graph_destroyed_before_its_records_arrive(fake):
    # A graph reset right after its replay (before a synchronize): the
    # replay's records still go under <captured_at>; the nodes are forgotten
    # once a flush has delivered them.
    baseline = h.counters()["graph_nodes_kept"]
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.enter_scope("gd_capture")
    nodes = [fake.fake_capture_launch(b"gd_k1"), fake.fake_capture_launch(b"gd_k2")]
    h.exit_scope("gd_capture")
    h.enter_scope("gd_replay")
    graph_launch(fake, nodes, start=0, duration=10)
    h.exit_scope("gd_replay")
    for node in nodes:
        assert fake.fake_destroy_node(node) == 0
    assert h.counters()["graph_nodes_kept"] == baseline  # retired, not live
    h.flush_cupti()
    rows = by_path(take(slot)[0])
    assert set(rows) == {
        ("gd_replay", "<captured_at>", "gd_capture", "gd_k1"),
        ("gd_replay", "<captured_at>", "gd_capture", "gd_k2"),
    }
    # After that flush the nodes are forgotten: a later record of them goes
    # where its graph launch was made, as for any unknown node.
    late = new_slot()
    h.set_active_sessions(1 << late)
    graph_launch(fake, nodes, start=20, duration=10)
    h.flush_cupti()
    assert set(by_path(take(late)[0])) == {("gd_k1",), ("gd_k2",)}


def test_graph_sessions_come_from_the_graph_launch(fake):
    baseline = h.counters()["graph_nodes_kept"]
    # Captured with no session active: still attributed to where it was captured.
    h.enter_scope("gs_capture")
    quiet = fake.fake_capture_launch(b"gs_quiet")
    h.exit_scope("gs_capture")
    # Captured inside a session.
    capture = new_slot()
    h.set_active_sessions(1 << capture)
    h.enter_scope("gs_capture")
    loud = fake.fake_capture_launch(b"gs_loud")
    h.exit_scope("gs_capture")
    # Built with the graph API (no launch around it).
    h.enter_scope("gs_api")
    built = fake.fake_add_kernel_node(b"gs_built")
    h.exit_scope("gs_api")

    # Launched with no session active: nobody sees it, not even the session
    # that was active at capture time.
    h.set_active_sessions(0)
    before = h.counters()["unattributed"]
    graph_launch(fake, [quiet, loud, built], start=0, duration=10)
    h.flush_cupti()
    assert h.counters()["unattributed"] == before + 3
    assert len(take(capture)[0]) == 0

    replay = new_slot()
    h.set_active_sessions(1 << replay)
    graph_launch(fake, [quiet, loud, built], start=0, duration=10)
    h.flush_cupti()
    rows = by_path(take(replay)[0])
    assert set(rows) == {
        ("<captured_at>", "gs_capture", "gs_quiet"),
        ("<captured_at>", "gs_capture", "gs_loud"),
        ("<captured_at>", "gs_api", "gs_built"),
    }
    for node in (quiet, loud, built):
        fake.fake_destroy_node(node)
    assert h.counters()["graph_nodes_kept"] == baseline


def test_graph_launches_do_not_leak(fake):
    baseline = h.counters()["graph_nodes_kept"]
    h.enter_scope("leak_capture")
    nodes = [fake.fake_capture_launch(f"leak_k{i}".encode()) for i in range(3)]
    h.exit_scope("leak_capture")
    assert h.counters()["graph_nodes_kept"] == baseline + 3
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    array = (ctypes.c_uint64 * 3)(*nodes)
    rss = None
    for batch in range(5):
        for i in range(2000):
            fake.fake_graph_launch(array, 3, i * 100, 7)
        h.flush_cupti()
        assert h.counters()["graph_nodes_kept"] == baseline + 3
        if batch == 0:
            rss = rss_bytes()
    assert rss_bytes() - rss < 4 << 20
    rows = by_path(take(slot)[0])
    assert set(rows) == {("<captured_at>", "leak_capture", f"leak_k{i}") for i in range(3)}
    for row in rows.values():
        assert (row["count"], row["total_ns"], row["min_ns"], row["max_ns"]) == (10_000, 70_000, 7, 7)
    for node in nodes:
        fake.fake_destroy_node(node)
    assert h.counters()["graph_nodes_kept"] == baseline


def test_correlation_ring_is_bounded(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    old = launch(fake, "ring_old", 0, 10, emit=False)
    first = fake.fake_launch_many(b"ring_filler", 1000, 0)
    rss = rss_bytes()
    counters = h.counters()
    last = fake.fake_launch_many(b"ring_filler", 3 * RING_SIZE, 0)
    assert last - first == 3 * RING_SIZE
    assert rss_bytes() - rss < 2 << 20  # the ring does not grow with launches
    after = h.counters()
    assert after["launches"] == counters["launches"] + 3 * RING_SIZE
    assert after["graph_nodes_kept"] == counters["graph_nodes_kept"]
    assert after["activities"] == counters["activities"]
    # The old launch's context was overwritten; the latest one is still there.
    fake.fake_kernel_record(old, 0, b"ring_old", 0, 10)
    fake.fake_kernel_record(last, 0, b"ring_new", 0, 20)
    # A correlation no launch ever had.
    fake.fake_kernel_record(last + 12345, 0, b"ring_unseen", 0, 30)
    h.flush_cupti()
    final = h.counters()
    assert final["unattributed"] == after["unattributed"] + 2
    assert final["activities"] == after["activities"] + 3
    rows = by_path(take(slot)[0])
    assert list(rows) == [("ring_new",)]


def test_memcpy_and_memset(fake):
    slot = new_slot(keep_trace=True, cap=10)
    h.set_active_sessions(1 << slot)
    h.enter_scope("mem_scope")
    copy = fake.fake_memcpy(CBID_cuMemcpyHtoD_v2, MEMCPY_HTOD, 4096, 100, 150)
    fake.fake_memcpy(CBID_cuMemcpyHtoD_v2, MEMCPY_HTOD, 4096, 200, 210)
    fake.fake_memcpy(CBID_cuMemcpyDtoH_v2, MEMCPY_DTOH, 16, 300, 303)
    fill = fake.fake_memset(1 << 20, 400, 480)
    h.exit_scope("mem_scope")
    h.flush_cupti()
    aggregates, trace, _ = take(slot)
    rows = by_path(aggregates)
    assert set(rows) == {("mem_scope", "memcpy HtoD"), ("mem_scope", "memcpy DtoH"), ("mem_scope", "memset")}
    htod = rows[("mem_scope", "memcpy HtoD")]
    assert (htod["kind"], htod["count"], htod["total_ns"], htod["min_ns"], htod["max_ns"]) == (
        KIND_MEMCPY,
        2,
        60,
        10,
        50,
    )
    assert rows[("mem_scope", "memcpy DtoH")]["kind"] == KIND_MEMCPY
    memset = rows[("mem_scope", "memset")]
    assert (memset["kind"], memset["count"], memset["total_ns"]) == (KIND_MEMSET, 1, 80)
    by_correlation = {int(row["correlation"]): row for row in trace}
    assert by_correlation[copy]["kind"] == KIND_MEMCPY and by_correlation[copy]["stream"] == 7
    assert (by_correlation[fill]["kind"], by_correlation[fill]["start"], by_correlation[fill]["end"]) == (
        KIND_MEMSET,
        400,
        480,
    )


def test_dropped_records(fake):
    before = h.counters()["dropped_records"]
    fake.fake_set_dropped(7)
    launch(fake, "dropped_k", 0, 1)
    h.flush_cupti()
    assert h.counters()["dropped_records"] == before + 7
    # CUPTI resets its count when read: nothing is counted twice.
    launch(fake, "dropped_k", 0, 1)
    h.flush_cupti()
    assert h.counters()["dropped_records"] == before + 7


def test_many_records_span_buffers(fake):
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    buffers = fake.fake_buffers_completed()
    count = (4 << 20) // fake.fake_slot_bytes() * 2 + 5  # more than two 4 MiB buffers hold
    fake.fake_launch_many(b"span_k", count, 1)
    h.flush_cupti()
    assert fake.fake_buffers_completed() - buffers == 3
    (row,) = take(slot)[0]
    assert (row["count"], row["total_ns"]) == (count, count)


def test_stop_unsubscribes_and_restart_works(fake):
    finalized = fake.fake_finalize_count()
    h.stop_cupti()
    assert not h.cupti_tracing()
    assert fake.fake_subscribed() == 0
    assert fake.fake_finalize_count() == finalized + 1  # CUPTI detached from the process
    assert fake.fake_is_enabled(DOMAIN_DRIVER, CBID_cuLaunchKernel) == 0
    assert fake.fake_activity_enabled(ACTIVITY_CONCURRENT_KERNEL) == 0
    h.stop_cupti()  # stopping twice is harmless
    assert fake.fake_finalize_count() == finalized + 1
    # While stopped, launches reach nothing.
    before = fake.fake_callback_count()
    launch(fake, "stopped_k", 0, 1)
    assert fake.fake_callback_count() == before
    assert fake.fake_pending_records() == 0

    # Another CUPTI client holding the subscription: a clear error.
    assert fake.fake_subscribe_other() == 0
    try:
        with pytest.raises(RuntimeError, match="CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"):
            h.start_cupti()
        assert not h.cupti_tracing()
    finally:
        fake.fake_release_other()

    # CUPTI refusing an activity kind: the start fails whole, and leaves no
    # half-started tracer (subscribed, no activities) for the next start.
    fake.fake_refuse_activity_once(ACTIVITY_MEMCPY)
    with pytest.raises(RuntimeError, match="cuptiActivityEnable failed"):
        h.start_cupti()
    assert not h.cupti_tracing() and fake.fake_subscribed() == 0
    assert fake.fake_activity_enabled(ACTIVITY_CONCURRENT_KERNEL) == 0

    h.start_cupti()
    assert h.cupti_tracing() and fake.fake_subscribed() == 1
    assert fake.fake_is_enabled(DOMAIN_DRIVER, CBID_cuLaunchKernel) == 1
    assert fake.fake_activity_enabled(ACTIVITY_CONCURRENT_KERNEL) == 1
    h.start_cupti()  # starting twice is harmless
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.enter_scope("restart_scope")
    launch(fake, "restart_k", 0, 9)
    h.exit_scope("restart_scope")
    h.flush_cupti()
    rows = by_path(take(slot)[0])
    assert list(rows) == [("restart_scope", "restart_k")] and rows[("restart_scope", "restart_k")]["total_ns"] == 9


def test_graph_nodes_captured_while_deactivated_are_not_seen(fake):
    # A session open but deactivated while a graph was captured does not see
    # those nodes' replays (Triton's Proton skips them); nodes captured while
    # it was active, or before it was opened, it sees.
    before = new_slot()  # opened before the capture, active throughout
    h.set_active_sessions(1 << before)
    h.enter_scope("gd2_on")
    seen = fake.fake_capture_launch(b"gd2_seen")
    h.exit_scope("gd2_on")
    h.set_active_sessions(0)  # deactivated
    h.enter_scope("gd2_off")
    skipped = fake.fake_capture_launch(b"gd2_skipped")
    h.exit_scope("gd2_off")
    later = new_slot()  # opened after the capture
    h.set_active_sessions((1 << before) | (1 << later))
    graph_launch(fake, [seen, skipped], start=0, duration=10)
    h.flush_cupti()
    assert set(by_path(take(before)[0])) == {("<captured_at>", "gd2_on", "gd2_seen")}
    assert set(by_path(take(later)[0])) == {
        ("<captured_at>", "gd2_on", "gd2_seen"),
        ("<captured_at>", "gd2_off", "gd2_skipped"),
    }
    for node in (seen, skipped):
        fake.fake_destroy_node(node)
