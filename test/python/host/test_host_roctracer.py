"""CPU tests of the host profiler's ROCTracer (AMD) backend
(lib/Host/RoctracerTracer.cpp) through a fake libroctracer64
(fake_roctracer/fake_roctracer.c): the fake plays the HIP runtime (HIP API
callbacks, HIP_OPS records in a pool), the runtime under test is the real
one. No AMD GPU is involved: what the real library and HIP do is taken from
their headers and sources, not from a run.

The runtime keeps process-wide state shared with the CUPTI tests (one
calling-context tree, one correlation ring, one session store): each test
uses its own names and opens the session slots it uses."""

import ctypes
import json
import subprocess
import sys
import textwrap

import pytest

import proton
from proton.host import libraries, session as host_session
from proton.session.options import SessionOptions
from fake_cupti_support import reset_thread_state
from test_host_runtime import KIND_KERNEL, KIND_MEMCPY, KIND_MEMSET, NODE_SCOPE, NODE_STATE, by_path, h, node_path, take
import suite_paths

# prof_protocol.h, roctracer_hip.h; OpenCL command types (CL/cl.h) that HIP
# puts in a HIP_OPS record's kind.
DOMAIN_HIP_API = 3
OP_DISPATCH, OP_COPY, OP_BARRIER = 0, 1, 2
CL_READ_BUFFER, CL_WRITE_BUFFER, CL_COPY_BUFFER_RECT, CL_MARKER, CL_FILL_BUFFER = 0x11F3, 0x11F4, 0x1203, 0x11FE, 0x1207

LAUNCH_APIS = [
    "hipLaunchKernel",
    "hipModuleLaunchKernel",
    "hipExtModuleLaunchKernel",
    "hipLaunchCooperativeKernel",
    "hipExtLaunchKernel",
    "hipGraphLaunch",
    "hipLaunchKernelExC",
    "hipHccModuleLaunchKernel",
    "hipModuleLaunchCooperativeKernel",
]
TRANSFER_APIS = [
    "hipMemcpy",
    "hipMemcpyAsync",
    "hipMemcpyHtoD",
    "hipMemcpyDtoHAsync",
    "hipMemcpy2D",
    "hipMemcpyPeer",
    "hipMemcpyWithStream",
    "hipMemset",
    "hipMemsetAsync",
    "hipMemsetD32Async",
    "hipMemset2D",
]
UNTRACED_APIS = [
    "hipMalloc",
    "hipFree",
    "hipLaunchHostFunc",
    "hipStreamSynchronize",
    "hipDeviceSynchronize",
    "hipGetDevice",
    "hipGraphInstantiate",
    "hipStreamBeginCapture",
    "hipEventRecord",
]


@pytest.fixture(scope="module")
def api(roctracer_fake):
    """HIP API id by name, from the headers the fake was built with."""

    def lookup(name):
        op = roctracer_fake.fake_api_id(name.encode())
        assert op, name
        return op

    return lookup


_next_slot = [40]  # apart from test_host_runtime's (it counts up from 0)


def new_slot(keep_trace=False, cap=0) -> int:
    slot = _next_slot[0]
    _next_slot[0] = 40 + (slot - 39) % 24
    h.open_session(slot, keep_trace, cap)
    return slot


@pytest.fixture(autouse=True)
def tracing(roctracer_fake):
    """ROCTracer tracing on, leftovers flushed, no session active, no scope
    or state open."""
    assert not h.cupti_tracing(), "a CUPTI test left tracing on"
    if not h.roctracer_tracing():
        h.start_roctracer()
    reset_thread_state()
    h.flush_roctracer()
    roctracer_fake.fake_set_device_queue(0, 3)
    yield roctracer_fake
    reset_thread_state()
    h.flush_roctracer()


def launch(fake, api, name, start, end, through="hipModuleLaunchKernel", emit=True):
    return fake.fake_hip_launch(api(through), name.encode(), start, end, int(emit))


# ------------------------------------------------------------------ tests


def test_load_errors(roctracer_fake_path, fake_path, fake_amdhip_path):
    # Loading happens once per process: the cases run in a fresh interpreter.
    script = textwrap.dedent(f"""
        import ctypes, ctypes.util, json, sys
        sys.path[:0] = {suite_paths.IMPORT_PATH!r}
        import proton._host as h
        from fake_roctracer_support import bind
        def error(call, *args):
            try:
                call(*args)
            except RuntimeError as e:
                return str(e)
            return None
        libm = ctypes.util.find_library("m") or "libm.so.6"
        out = {{"libm": libm}}
        out["missing"] = error(h.load_roctracer, "/nonexistent/dir/libroctracer64.so.99")
        out["no_symbols"] = error(h.load_roctracer, libm)
        out["after_failures"] = [h.roctracer_path(), list(h.roctracer_version()), h.roctracer_tracing()]
        out["start_unloaded"] = error(h.start_roctracer)
        out["fake"] = error(h.load_roctracer, {str(roctracer_fake_path)!r})
        out["loaded"] = [h.roctracer_path(), list(h.roctracer_version())]
        out["same_again"] = error(h.load_roctracer, {str(roctracer_fake_path)!r})
        out["other"] = error(h.load_roctracer, libm)
        # The CUPTI fake loads beside it: separate tables.
        out["cupti"] = error(h.load_cupti, {str(fake_path)!r})
        out["both"] = [h.cupti_path(), h.roctracer_path()]
        fake = bind({str(roctracer_fake_path)!r})
        # Start failures leave nothing open, and say why.
        fake.fake_fail_open_pool(1)
        out["pool_error"] = error(h.start_roctracer)
        fake.fake_fail_open_pool(0)
        fake.fake_names_unavailable(1)
        out["names_error"] = error(h.start_roctracer)
        fake.fake_names_unavailable(0)
        out["after_start_errors"] = [h.roctracer_tracing(), fake.fake_open_pools(), fake.fake_callbacks_enabled()]
        # Flush and stop wait for the device through a HIP runtime already
        # in the process (never one of their own).
        out["start"] = error(h.start_roctracer)
        out["flush_without_hip"] = error(h.flush_roctracer)
        hip = ctypes.CDLL({str(fake_amdhip_path)!r})
        hip.fake_hip_synchronizations.restype = ctypes.c_uint64
        out["flush"] = error(h.flush_roctracer)
        out["synchronized_after_flush"] = hip.fake_hip_synchronizations()
        out["stop"] = error(h.stop_roctracer)
        out["synchronized_after_stop"] = hip.fake_hip_synchronizations()
        out["after_stop"] = [h.roctracer_tracing(), fake.fake_open_pools(), fake.fake_callbacks_enabled()]
        print(json.dumps(out))
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.splitlines()[-1])
    assert out["missing"] is not None
    assert "/nonexistent/dir/libroctracer64.so.99" in out["missing"] and "cannot load ROCTracer" in out["missing"]
    assert out["no_symbols"] is not None
    assert out["libm"] in out["no_symbols"] and "roctracer_version_major" in out["no_symbols"]
    assert out["after_failures"] == ["", [0, 0], False]
    assert out["start_unloaded"] == "ROCTracer is not loaded"
    assert out["fake"] is None
    assert out["loaded"] == [str(roctracer_fake_path), [4, 1]]
    assert out["same_again"] is None
    assert "already loaded" in out["other"] and str(roctracer_fake_path) in out["other"]
    assert out["cupti"] is None and out["both"] == [str(fake_path), str(roctracer_fake_path)]
    assert out["pool_error"] == (
        "roctracer_open_pool_expl failed: ROCTRACER_STATUS_ERROR_MEMORY_ALLOCATION: MemoryPool() error"
    )
    assert "enabled no HIP launch, copy or set callback" in out["names_error"]
    assert str(roctracer_fake_path) in out["names_error"]
    assert out["after_start_errors"] == [False, 0, 0]
    assert out["start"] is None and out["flush_without_hip"] is None and out["flush"] is None
    assert out["synchronized_after_flush"] == 1
    assert out["stop"] is None and out["synchronized_after_stop"] == 2
    assert out["after_stop"] == [False, 0, 0]


def test_only_launch_copy_set_callbacks(roctracer_fake, api):
    fake = roctracer_fake
    assert h.roctracer_tracing() and h.roctracer_version() == (4, 1)
    for name in LAUNCH_APIS + TRANSFER_APIS:
        assert fake.fake_callback_enabled(api(name)) == 1, name
    for name in UNTRACED_APIS:
        assert fake.fake_callback_enabled(api(name)) == 0, name
    # Every traced id is a launch, copy or set, by the library's own names;
    # every copy or set API the headers know is traced.
    op_string = fake.roctracer_op_string
    op_string.restype, op_string.argtypes = ctypes.c_char_p, [ctypes.c_uint32] * 3
    traced = set()
    for op in range(1, fake.fake_last_api_id() + 1):
        name = op_string(DOMAIN_HIP_API, op, 0).decode()
        if fake.fake_callback_enabled(op):
            traced.add(name)
        elif name.startswith(("hipMemcpy", "hipMemset")):
            pytest.fail(f"{name} is not traced")
    prefixes = (
        "hipLaunch",
        "hipModuleLaunch",
        "hipExtLaunch",
        "hipExtModuleLaunch",
        "hipHccModuleLaunch",
        "hipGraphLaunch",
        "hipDrvLaunch",
        "hipMemcpy",
        "hipMemset",
        "hipDrvMemcpy",
    )
    assert all(name.startswith(prefixes) and name != "hipLaunchHostFunc" for name in traced), traced
    assert fake.fake_callbacks_enabled() == len(traced)
    # Kernel dispatches and copies (fills included) are recorded, markers not.
    assert [fake.fake_activity_enabled(op) for op in (OP_DISPATCH, OP_COPY, OP_BARRIER)] == [1, 1, 0]
    assert fake.fake_open_pools() == 1
    # Untraced calls reach no callback and get no correlation id.
    before = fake.fake_callback_count()
    assert fake.fake_hip_api_call(api("hipMalloc")) == 0
    assert fake.fake_hip_api_call(api("hipStreamSynchronize")) == 0
    assert fake.fake_callback_count() == before
    assert launch(fake, api, "rt_probe", 0, 1) != 0
    assert fake.fake_callback_count() == before + 2  # enter and exit


def test_api_ids_come_from_the_library(roctracer_fake, api):
    # A HIP runtime newer than our headers may name ids past their last one:
    # those are traced too, by name.
    fake = roctracer_fake
    extra = fake.fake_last_api_id() + 17
    h.stop_roctracer()
    fake.fake_name_api(extra, b"hipModuleLaunchKernelFuture")
    fake.fake_name_api(extra + 1, b"hipSomethingElse")
    try:
        h.start_roctracer()
        assert fake.fake_callback_enabled(extra) == 1
        assert fake.fake_callback_enabled(extra + 1) == 0
        slot = new_slot()
        h.set_active_sessions(1 << slot)
        h.set_launch_metrics(0, 5.0, 0, 0, 0)
        fake.fake_hip_launch(extra, b"rt_future_k", 0, 9, 1)
        h.flush_roctracer()
        row = by_path(take(slot)[0])[("rt_future_k",)]
        assert (row["count"], row["total_ns"], row["flops"][1]) == (1, 9, 5.0)  # a launch: metrics attach
    finally:
        h.set_active_sessions(0)
        h.stop_roctracer()
        fake.fake_name_api(extra, None)
        fake.fake_name_api(extra + 1, None)
        h.start_roctracer()
    assert fake.fake_callback_enabled(extra) == 0


def test_kernels_land_in_scopes_and_states(roctracer_fake, api):
    fake = roctracer_fake
    slot = new_slot(keep_trace=True, cap=100)
    h.set_active_sessions(1 << slot)
    fake.fake_set_device_queue(2, 9)
    scope = h.enter_scope("rt_outer")
    launch(fake, api, "rt_k1", 100, 300)  # 200
    h.set_state("rt_fwd")
    launch(fake, api, "rt_k2", 400, 1000, through="hipLaunchKernel")  # 600
    launch(fake, api, "rt_k2", 1000, 1010, through="hipExtLaunchKernel")  # 10
    h.set_state(None)
    h.exit_scope("rt_outer")
    launch(fake, api, "rt_k1", 0, 50, through="hipExtModuleLaunchKernel")
    launch(fake, api, "rt_k1", 60, 130, through="hipLaunchCooperativeKernel")
    h.flush_roctracer()
    aggregates, trace, dropped = take(slot)
    rows = by_path(aggregates)
    assert set(rows) == {("rt_outer", "rt_k1"), ("rt_outer", "rt_fwd", "rt_k2"), ("rt_k1",)}
    outer = rows[("rt_outer", "rt_k1")]
    assert (outer["count"], outer["total_ns"], outer["node"]) == (1, 200, scope)
    fwd = rows[("rt_outer", "rt_fwd", "rt_k2")]
    assert (fwd["count"], fwd["total_ns"], fwd["min_ns"], fwd["max_ns"]) == (2, 610, 10, 600)
    assert node_path(int(fwd["node"])) == (("rt_outer", NODE_SCOPE), ("rt_fwd", NODE_STATE))
    root = rows[("rt_k1",)]
    assert (root["count"], root["total_ns"], root["min_ns"], root["max_ns"], root["node"]) == (2, 120, 50, 70, 0)
    assert all(row["kind"] == KIND_KERNEL and row["device"] == 2 for row in aggregates)
    # The timeline keeps each record's times, queue (as the stream) and
    # correlation id.
    assert dropped == 0
    assert [(int(t["start"]), int(t["end"]), int(t["stream"]), int(t["device"])) for t in trace] == [
        (100, 300, 9, 2),
        (400, 1000, 9, 2),
        (1000, 1010, 9, 2),
        (0, 50, 9, 2),
        (60, 130, 9, 2),
    ]
    assert len({int(t["correlation"]) for t in trace}) == 5


def test_launch_metrics(roctracer_fake, api):
    fake = roctracer_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.set_launch_metrics(1.0, 2.0, 3.0, 4.0, 512.0)
    # A copy does not take the kernel's metrics...
    fake.fake_hip_memcpy(api("hipMemcpyHtoDAsync"), CL_WRITE_BUFFER, 64, 0, 5)
    # ...the next kernel launch does.
    launch(fake, api, "rt_metrics_k", 10, 20)
    launch(fake, api, "rt_metrics_k", 30, 40)  # none pending any more
    # Metrics set while no session is active go with that launch, unrecorded.
    h.set_active_sessions(0)
    h.set_launch_metrics(0, 100.0, 0, 0, 0)
    launch(fake, api, "rt_metrics_k", 50, 60)
    h.set_active_sessions(1 << slot)
    launch(fake, api, "rt_metrics_k", 70, 80)
    h.flush_roctracer()
    rows = by_path(take(slot)[0])
    k = rows[("rt_metrics_k",)]
    assert (k["count"], list(k["flops"]), k["bytes"]) == (3, [1.0, 2.0, 3.0, 4.0], 512.0)
    copy = rows[("memcpy HtoD",)]
    assert list(copy["flops"]) == [0, 0, 0, 0] and copy["bytes"] == 0


def test_copies_and_sets(roctracer_fake, api):
    fake = roctracer_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.enter_scope("rt_io")
    fake.fake_hip_memcpy(api("hipMemcpyHtoDAsync"), CL_WRITE_BUFFER, 1 << 20, 0, 100)
    fake.fake_hip_memcpy(api("hipMemcpy"), CL_READ_BUFFER, 1 << 20, 200, 260)
    fake.fake_hip_memcpy(api("hipMemcpy2D"), CL_COPY_BUFFER_RECT, 4096, 300, 303)
    fake.fake_hip_memcpy(api("hipMemcpyPeer"), 0x1234, 4096, 400, 440)  # a kind without a direction
    fake.fake_hip_memset(api("hipMemsetAsync"), 256, 500, 507)
    fake.fake_hip_memset(api("hipMemsetD32Async"), 256, 600, 601)
    h.exit_scope("rt_io")
    h.flush_roctracer()
    rows = by_path(take(slot)[0])
    assert set(rows) == {
        ("rt_io", "memcpy HtoD"),
        ("rt_io", "memcpy DtoH"),
        ("rt_io", "memcpy DtoD"),
        ("rt_io", "memcpy"),
        ("rt_io", "memset"),
    }
    summary = {key[-1]: (int(r["kind"]), int(r["count"]), int(r["total_ns"])) for key, r in rows.items()}
    assert summary == {
        "memcpy HtoD": (KIND_MEMCPY, 1, 100),
        "memcpy DtoH": (KIND_MEMCPY, 1, 60),
        "memcpy DtoD": (KIND_MEMCPY, 1, 3),
        "memcpy": (KIND_MEMCPY, 1, 40),
        "memset": (KIND_MEMSET, 2, 8),
    }


def test_graph_launch(roctracer_fake, api):
    # HIP reports a graph's kernels under the hipGraphLaunch's correlation
    # id: they belong where the graph was launched.
    fake = roctracer_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    kernels = (ctypes.c_char_p * 3)(b"rt_graph_a", b"rt_graph_b", b"rt_graph_a")
    with_scope = h.enter_scope("rt_graph_scope")
    fake.fake_hip_graph_launch(kernels, 3, 1000, 10)
    h.exit_scope("rt_graph_scope")
    h.flush_roctracer()
    rows = by_path(take(slot)[0])
    assert {key: (int(r["count"]), int(r["total_ns"])) for key, r in rows.items()} == {
        ("rt_graph_scope", "rt_graph_a"): (2, 20),
        ("rt_graph_scope", "rt_graph_b"): (1, 10),
    }
    assert all(int(r["node"]) == with_scope for r in rows.values())


def test_session_windows_and_counters(roctracer_fake, api):
    fake = roctracer_fake
    first, second = new_slot(), new_slot()
    before = h.counters()
    h.set_active_sessions(1 << first)
    launch(fake, api, "rt_win_first", 0, 10)
    h.set_active_sessions((1 << first) | (1 << second))
    launch(fake, api, "rt_win_both", 100, 120)
    h.set_active_sessions(1 << second)
    launch(fake, api, "rt_win_second", 200, 230)
    h.set_active_sessions(0)
    launch(fake, api, "rt_win_none", 300, 301)
    h.flush_roctracer()
    after = h.counters()
    assert after["launches"] == before["launches"] + 3
    assert after["activities"] == before["activities"] + 4
    assert after["unattributed"] == before["unattributed"] + 1
    rows_first, rows_second = by_path(take(first)[0]), by_path(take(second)[0])
    assert set(rows_first) == {("rt_win_first",), ("rt_win_both",)}
    assert set(rows_second) == {("rt_win_both",), ("rt_win_second",)}
    assert rows_first[("rt_win_both",)]["total_ns"] == rows_second[("rt_win_both",)]["total_ns"] == 20


def test_unmatched_and_foreign_records(roctracer_fake, api):
    fake = roctracer_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    before = h.counters()
    # A kernel enqueued by an untraced API carries correlation id 0.
    fake.fake_hip_ops_record(OP_DISPATCH, 0x11F0, 0, 0, 10)
    # Barrier (marker) activity is off: the library writes nothing.
    fake.fake_hip_ops_record(OP_BARRIER, CL_MARKER, 12345, 0, 10)
    # A kernel whose launch was traced but emitted no record adds nothing.
    launch(fake, api, "rt_no_record", 0, 1, emit=False)
    h.flush_roctracer()
    after = h.counters()
    assert after["activities"] == before["activities"] + 1
    assert after["unattributed"] == before["unattributed"] + 1
    assert len(take(slot)[0]) == 0


def test_full_buffer_goes_out_on_another_thread(roctracer_fake, api):
    # A full pool buffer is handed over on ROCTracer's thread, not the
    # launching one; the kernel names in it are only lent (the fake
    # overwrites them right after) and must have been copied.
    fake = roctracer_fake
    capacity = fake.fake_pool_capacity()
    assert capacity > 1000
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    deliveries = fake.fake_async_deliveries()
    h.enter_scope("rt_full")
    fake.fake_hip_launch_many(api("hipModuleLaunchKernel"), b"rt_full_k", capacity + 10, 1)
    h.exit_scope("rt_full")
    assert fake.fake_async_deliveries() == deliveries + 1
    assert fake.fake_pending_records() == 10
    h.flush_roctracer()
    rows = by_path(take(slot)[0])
    assert list(rows) == [("rt_full", "rt_full_k")]
    assert (rows[("rt_full", "rt_full_k")]["count"], rows[("rt_full", "rt_full_k")]["total_ns"]) == (
        capacity + 10,
        5 * (capacity + 10),
    )
    assert not any("#" in name for name in h.names())


def test_stop_delivers_and_releases(roctracer_fake, api):
    fake = roctracer_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    launch(fake, api, "rt_stop_k", 0, 42)
    h.set_active_sessions(0)
    assert fake.fake_pending_records() == 1
    h.stop_roctracer()  # flushes first: the pending record reaches the session
    assert not h.roctracer_tracing()
    assert (fake.fake_open_pools(), fake.fake_callbacks_enabled()) == (0, 0)
    assert [fake.fake_activity_enabled(op) for op in (OP_DISPATCH, OP_COPY)] == [0, 0]
    assert fake.fake_hip_api_call(api("hipLaunchKernel")) == 0  # nothing traces it now
    h.stop_roctracer()  # again: nothing to do
    h.flush_roctracer()
    rows = by_path(take(slot)[0])
    assert (rows[("rt_stop_k",)]["count"], rows[("rt_stop_k",)]["total_ns"]) == (1, 42)


# ------------------------------------------------- whole sessions (proton.*)


def _find(node, *names):
    for name in names:
        node = next(c for c in node["children"] if c["frame"]["name"] == name)
    return node


def test_session_end_to_end(roctracer_fake, roctracer_fake_path, api, tmp_path, monkeypatch, no_session_left):
    fake = roctracer_fake
    h.stop_roctracer()  # the session loads (the same library again) and starts ROCTracer itself
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(roctracer_fake_path))
    proton.start(str(tmp_path / "amd"), backend="roctracer", data="trace", hook="triton", quiet=True)
    assert h.roctracer_tracing() and not h.cupti_tracing()
    with proton.scope("outer", metrics={"tokens": 3}):
        launch(fake, api, "k1", 100, 300)
        with proton.state("fwd"):
            launch(fake, api, "k2", 400, 1000, through="hipLaunchKernel")
        fake.fake_hip_memcpy(api("hipMemcpyDtoHAsync"), CL_READ_BUFFER, 64, 1100, 1150)
        fake.fake_hip_memset(api("hipMemsetAsync"), 64, 1200, 1204)

    # hook="triton": Triton calls the hook with each launch's LazyDict.
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    metadata = LazyDict({"name": "k3"})
    metadata.add(lambda: {"flops16": 1e6, "bytes": 4096}, ())
    triton.knobs.runtime.launch_enter_hook(metadata)
    launch(fake, api, "k3", 2000, 2100)

    report = proton.finalize()
    assert not h.roctracer_tracing()  # the last session stopped tracing
    assert (report.kernels, report.activities, report.warnings) == (3, 5, [])
    tree = json.load(open(report.files["tree"]))
    assert tree[1] == {}  # an empty device-info object: none for AMD yet
    from proton.writers.hatchet_tree import inclusive

    assert tree[0]["metrics"] == {
        "bytes": 0,
        "count": 0,
        "flops16": 0,
        "time (ns)": 0,
        "tokens": 0,
    }  # zeros, as upstream
    root = inclusive(tree[0])
    assert root["metrics"]["count"] == 5 and root["metrics"]["time (ns)"] == 200 + 600 + 50 + 4 + 100
    outer = _find(root, "outer")
    assert outer["metrics"]["tokens"] == 3 and outer["metrics"]["time (ns)"] == 854
    assert _find(outer, "k1")["metrics"] == {"time (ns)": 200, "count": 1, "device_id": "0", "device_type": "HIP"}
    assert _find(outer, "k1")["frame"]["type"] == "kernel"
    assert _find(outer, "fwd")["frame"]["type"] == "state"
    assert _find(outer, "fwd", "k2")["metrics"]["time (ns)"] == 600
    assert _find(outer, "memcpy DtoH")["frame"]["type"] == "memcpy"
    assert _find(outer, "memset")["frame"]["type"] == "memset"
    k3 = _find(root, "k3")["metrics"]
    assert k3["count"] == 1 and k3["flops16"] == 1e6 and k3["bytes"] == 4096

    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    events = [e for e in trace if e.get("cat") in ("kernel", "memcpy", "memset")]  # either layout
    assert [(e["name"], e["args"]["call_path"]) for e in events] == [
        ("k1", "outer"),
        ("k2", "outer/fwd"),
        ("memcpy DtoH", "outer"),
        ("memset", "outer"),
        ("k3", "ROOT"),
    ]

    # Without device info the viewer says utilization is unavailable.
    from proton import viewer

    with pytest.raises(viewer.ViewerError, match="'util' is unavailable: .* has no device info"):
        viewer.resolve("util", viewer.load(report.files["tree"]))


def test_sessions_share_one_tracer(roctracer_fake, roctracer_fake_path, api, tmp_path, monkeypatch, no_session_left):
    fake = roctracer_fake
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(roctracer_fake_path))
    a = proton.start(str(tmp_path / "a"), backend="roctracer", quiet=True)
    launch(fake, api, "rt_two", 0, 10)
    proton.start(str(tmp_path / "b"), backend="roctracer", quiet=True)
    with pytest.raises(
        proton.ProfilerError,
        match="open with backend='roctracer'; host sessions open at the same "
        "time share one tracer, not backend='cupti'",
    ):
        proton.start(str(tmp_path / "c"), backend="cupti")
    launch(fake, api, "rt_two", 0, 10)
    proton.deactivate(a)
    launch(fake, api, "rt_two", 0, 10)
    proton.activate(a)
    launch(fake, api, "rt_two", 0, 10)
    reports = proton.finalize()
    assert [r.kernels for r in reports] == [3, 3]
    assert not h.roctracer_tracing() and not h.cupti_tracing()


def test_pc_sampling_needs_cupti(roctracer_fake_path, monkeypatch, no_session_left):
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(roctracer_fake_path))
    with pytest.raises(proton.ProfilerError, match="PC sampling \\(mode='pcsampling'\\) is a CUPTI feature"):
        proton.start("x", backend="roctracer", mode="pcsampling")
    assert proton.sessions() == []


def test_missing_rocm_is_a_clear_error(roctracer_fake, monkeypatch, tmp_path, no_session_left):
    h.stop_roctracer()
    monkeypatch.delenv("PROTON_ROCTRACER_LIB", raising=False)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setattr(libraries.glob, "glob", lambda pattern: [])
    with pytest.raises(proton.ProfilerError, match="ROCTracer \\(libroctracer64.so\\) not found; searched: .*rocm/lib"):
        proton.start("x", backend="roctracer")
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(tmp_path / "libroctracer64.so.4"))
    with pytest.raises(proton.ProfilerError, match="PROTON_ROCTRACER_LIB=.*libroctracer64.so.4 is not a file"):
        proton.start("x", backend="roctracer")
    assert proton.sessions() == [] and not h.roctracer_tracing()


def test_not_built_is_a_clear_error(monkeypatch, tmp_path):
    # A _host built without AMD's headers refuses to load ROCTracer; the
    # session passes its words on. (The C++ side of that build is checked by
    # building it: CMakeLists.txt with -DPROTON_ROCTRACER_INCLUDE_DIR=/none.)
    class NotBuilt:
        def roctracer_tracing(self):
            return False

        def load_roctracer(self, path):
            raise RuntimeError("the ROCTracer backend is not built into this install of proton._host")

    library = tmp_path / "libroctracer64.so"
    library.write_bytes(b"")
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(library))
    session = host_session.HostSession(SessionOptions("x", "roctracer"))
    with pytest.raises(
        proton.ProfilerError,
        match="cannot start ROCTracer tracing: the ROCTracer backend is not built into this install",
    ):
        session.tracer.start(NotBuilt(), session)


def test_therock_rocm_wheels(monkeypatch, tmp_path):
    # ROCm from Python wheels (rocm_sdk): its libraries are found and handed
    # to the AMD backends through their variables, which a user's own
    # setting overrides.
    import sys
    import types

    from proton import _rocm

    monkeypatch.delitem(sys.modules, "rocm_sdk", raising=False)
    monkeypatch.setattr("builtins.__import__", _blocking_import("rocm_sdk", __import__))
    assert _rocm.find_therock_rocm_libraries() is None and _rocm.configure_runtime() is None
    monkeypatch.undo()

    libs = {name: tmp_path / f"lib{name}.so" for name in ("amdhip64", "rocprofiler-sdk", "roctracer64")}
    fake_sdk = types.SimpleNamespace(find_libraries=lambda name: [libs[name]] if name in libs else [])
    monkeypatch.setitem(sys.modules, "rocm_sdk", fake_sdk)
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", "")  # recorded, so restored after the test
    monkeypatch.delenv("PROTON_ROCPROFILER_LIB")
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", "/mine/libroctracer64.so")
    found = _rocm.configure_runtime()
    assert found == {name: str(path) for name, path in libs.items()}
    import os

    assert os.environ["PROTON_ROCPROFILER_LIB"] == str(libs["rocprofiler-sdk"])
    assert os.environ["PROTON_ROCTRACER_LIB"] == "/mine/libroctracer64.so"
    monkeypatch.setitem(sys.modules, "rocm_sdk", types.SimpleNamespace(find_libraries=lambda name: []))
    assert _rocm.find_therock_rocm_libraries() is None  # no HIP runtime: not a usable install


def _blocking_import(blocked, real_import):
    def importer(name, *args, **kwargs):
        if name == blocked:
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    return importer
