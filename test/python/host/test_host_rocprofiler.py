"""CPU tests of the host profiler's rocprofiler-sdk (AMD) backend
(lib/Host/RocprofilerTracer.cpp) through a fake librocprofiler-sdk
(fake_rocprofiler/fake_rocprofiler_sdk.c): the fake plays the SDK and the HIP
runtime (tool configuration, HIP API callbacks, kernel-symbol callbacks,
dispatch and copy records in a buffer), the runtime under test is the real
one. No AMD GPU is involved: what the real SDK does is taken from its
headers and documentation, not from a run.

The SDK takes a tool once per process: this module configures the fake once
(its fixture, rocprofiler_fake in fake_rocprofiler_support.py, via
conftest.py); configuration failures run in fresh interpreters."""

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
from test_host_runtime import KIND_KERNEL, KIND_MEMCPY, NODE_SCOPE, NODE_STATE, by_path, h, node_path, take
import suite_paths

# rocprofiler_memory_copy_operation_t
HTOH, HTOD, DTOH, DTOD = 1, 2, 3, 4

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
    "hipMemcpyHtoDAsync",
    "hipMemcpyDtoHAsync",
    "hipMemcpy2D",
    "hipMemcpyPeer",
    "hipMemcpyWithStream",
    "hipMemset",
    "hipMemsetAsync",
    "hipMemsetD32Async",
]
UNTRACED_APIS = [
    "__hipPopCallConfiguration",
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

_next_slot = [24]  # apart from test_host_runtime's (from 0) and test_host_roctracer's (40..63)


def new_slot(keep_trace=False, cap=0) -> int:
    slot = _next_slot[0]
    _next_slot[0] = 24 + (slot - 23) % 16
    h.open_session(slot, keep_trace, cap)
    return slot


@pytest.fixture(autouse=True)
def tracing(rocprofiler_fake):
    """rocprofiler-sdk tracing on, leftovers flushed, no session active, no
    scope or state open."""
    assert not h.cupti_tracing() and not h.roctracer_tracing(), "another tracer was left on"
    if not h.rocprofiler_tracing():
        h.start_rocprofiler()
    reset_thread_state()
    h.flush_rocprofiler()
    yield rocprofiler_fake
    reset_thread_state()
    h.flush_rocprofiler()


_kernel_ids = {}


def kernel(fake, name: str) -> int:
    """The kernel id of `name`, registered with the fake on first use."""
    if name not in _kernel_ids:
        _kernel_ids[name] = 1000 + len(_kernel_ids)
        fake.fake_register_kernel(_kernel_ids[name], name.encode())
    return _kernel_ids[name]


def launch(fake, name, start, end, through="hipModuleLaunchKernel", agent=0, queue=0x7000, emit=True):
    return fake.fake_hip_launch(
        fake.fake_op_id(through.encode()), kernel(fake, name), start, end, agent, queue, int(emit)
    )


def memcpy(fake, direction, start, end, through="hipMemcpyAsync"):
    return fake.fake_hip_memcpy(fake.fake_op_id(through.encode()), direction, 64, start, end)


# ----------------------------------------------- configuration (fresh processes)


def _run(script: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


_PRELUDE = """
    import ctypes, ctypes.util, json, sys
    sys.path[:0] = {import_path!r}
    import proton._host as h
    from fake_rocprofiler_support import bind
    def error(call, *args):
        try:
            call(*args)
        except RuntimeError as e:
            return str(e)
        return None
    fake = bind({path!r})
    out = {{}}
"""


def _prelude(path) -> str:
    return _PRELUDE.format(import_path=suite_paths.IMPORT_PATH, path=str(path))


def test_load_errors_and_one_configuration(rocprofiler_fake_path, fake_amdhip_path):
    out = _run(
        _prelude(rocprofiler_fake_path)
        + f"""
    libm = ctypes.util.find_library("m") or "libm.so.6"
    out["libm"] = libm
    out["missing"] = error(h.load_rocprofiler, "/nonexistent/dir/librocprofiler-sdk.so.1")
    out["no_symbols"] = error(h.load_rocprofiler, libm)
    out["after_failures"] = [h.rocprofiler_path(), list(h.rocprofiler_version()), h.rocprofiler_tracing()]
    out["start_unloaded"] = error(h.start_rocprofiler)
    out["load"] = error(h.load_rocprofiler, {str(rocprofiler_fake_path)!r})
    out["loaded"] = [h.rocprofiler_path(), list(h.rocprofiler_version())]
    out["other"] = error(h.load_rocprofiler, libm)
    out["before_start"] = [fake.fake_initialized(), h.rocprofiler_configured()]
    out["start"] = error(h.start_rocprofiler)
    out["configured"] = [fake.fake_initialized(), h.rocprofiler_configured(), h.rocprofiler_tracing(),
                         fake.fake_client_name().decode()]
    # Flush and stop wait for the device through a HIP runtime already in
    # the process (never one of their own).
    out["flush_without_hip"] = error(h.flush_rocprofiler)
    hip = ctypes.CDLL({str(fake_amdhip_path)!r})
    hip.fake_hip_synchronizations.restype = ctypes.c_uint64
    out["flush"] = error(h.flush_rocprofiler)
    out["synchronized"] = hip.fake_hip_synchronizations()
    out["stop"] = error(h.stop_rocprofiler)
    out["after_stop"] = [h.rocprofiler_tracing(), h.rocprofiler_configured(), fake.fake_context_active()]
    out["restart"] = [error(h.start_rocprofiler), h.rocprofiler_tracing()]
    print(json.dumps(out))
    """
    )
    assert "cannot load rocprofiler-sdk from /nonexistent/dir/librocprofiler-sdk.so.1" in out["missing"]
    assert out["libm"] in out["no_symbols"] and "rocprofiler_get_version" in out["no_symbols"]
    assert "not a usable librocprofiler-sdk" in out["no_symbols"]
    assert out["after_failures"] == ["", [0, 0, 0], False]
    assert out["start_unloaded"] == "rocprofiler-sdk is not loaded"
    assert out["load"] is None and out["loaded"] == [str(rocprofiler_fake_path), [1, 0, 0]]
    assert "rocprofiler-sdk is already loaded from " + str(rocprofiler_fake_path) in out["other"]
    # Loading configures nothing; the first start does, once.
    assert out["before_start"] == [0, False]
    assert out["start"] is None
    assert out["configured"] == [1, True, True, "proton-host"]
    assert out["flush_without_hip"] is None and out["flush"] is None and out["synchronized"] == 1
    # Stop keeps the SDK's context started (it would not trace again).
    assert out["stop"] is None and out["after_stop"] == [False, True, 1]
    assert out["restart"] == [None, True]


@pytest.mark.parametrize(
    "case, setup, expected",
    [
        (
            "other_tool",
            "fake.fake_configured_by_other_tool()",
            "was configured in this process before Proton asked (by rocprofv3, Triton's own Proton, or another tool)",
        ),
        (
            "buffer",
            "fake.fake_fail_create_buffer(1)",
            "failed: rocprofiler_create_buffer failed: General error (status 19) (it configures once per process)",
        ),
        (
            "names",
            "fake.fake_names_unavailable(1)",
            "failed: it named no HIP launch, copy or set API among its 30 HIP runtime operations",
        ),
        (
            "no_initialize",
            "fake.fake_skip_initialize(1)",
            "failed: rocprofiler_force_configure returned without initializing the tool",
        ),
    ],
)
def test_configuration_failures_are_clear_and_final(rocprofiler_fake_path, case, setup, expected):
    out = _run(
        _prelude(rocprofiler_fake_path)
        + f"""
    h.load_rocprofiler({str(rocprofiler_fake_path)!r})
    {setup}
    out["first"] = error(h.start_rocprofiler)
    fake.fake_fail_create_buffer(0)
    fake.fake_names_unavailable(0)
    fake.fake_skip_initialize(0)
    out["second"] = error(h.start_rocprofiler)  # the SDK configures once: same answer
    out["state"] = [h.rocprofiler_tracing(), h.rocprofiler_configured(), fake.fake_context_active()]
    print(json.dumps(out))
    """
    )
    assert out["first"] is not None and expected in out["first"], out["first"]
    assert str(rocprofiler_fake_path) in out["first"]
    assert out["second"] == out["first"]
    assert out["state"] == [False, False, 0]


# ------------------------------------------------------- in this process


def test_services_configured(rocprofiler_fake):
    fake = rocprofiler_fake
    assert h.rocprofiler_configured() and h.rocprofiler_tracing() and h.rocprofiler_version() == (1, 0, 0)
    assert fake.fake_client_name() == b"proton-host"
    for name in LAUNCH_APIS + TRANSFER_APIS:
        assert fake.fake_op_traced(fake.fake_op_id(name.encode())), f"{name} is not traced"
    for name in UNTRACED_APIS:
        assert not fake.fake_op_traced(fake.fake_op_id(name.encode())), f"{name} is traced"
    assert fake.fake_ops_traced() == len(LAUNCH_APIS + TRANSFER_APIS)
    assert fake.fake_symbols_traced(), "kernel symbol registrations are not traced"
    assert fake.fake_buffer_services() == 7, "dispatch and copy records, on a callback thread of their own"
    assert fake.fake_context_active()
    # Untraced calls reach no callback.
    before = fake.fake_callback_count()
    fake.fake_hip_api_call(fake.fake_op_id(b"hipMalloc"))
    assert fake.fake_callback_count() == before
    launch(fake, "rp_probe", 0, 1)
    assert fake.fake_callback_count() == before + 2  # enter and exit


def test_kernels_scopes_and_states(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot(keep_trace=True, cap=100)
    h.set_active_sessions(1 << slot)
    scope = h.enter_scope("rp_outer")
    launch(fake, "rp_k1", 100, 300, agent=1, queue=0xA000)
    h.set_state("rp_fwd")
    launch(fake, "rp_k2", 400, 1000, through="hipLaunchKernel", agent=1, queue=0xB000)
    launch(fake, "rp_k2", 1000, 1010, through="hipExtLaunchKernel", agent=1, queue=0xA000)
    h.set_state(None)
    h.exit_scope("rp_outer")
    # A kernel registered before the SDK took the tool (named by replay, its
    # ".kd" dropped), and one it never named.
    fake.fake_hip_launch(fake.fake_op_id(b"hipLaunchKernel"), 1, 0, 50, 2, 0xA000, 1)
    fake.fake_hip_launch(fake.fake_op_id(b"hipLaunchKernel"), 999999, 60, 130, 2, 0xA000, 1)
    h.flush_rocprofiler()
    aggregates, trace, dropped = take(slot)
    rows = by_path(aggregates)
    assert set(rows) == {
        ("rp_outer", "rp_k1"),
        ("rp_outer", "rp_fwd", "rp_k2"),
        ("rp_early_kernel",),
        ("<unknown kernel>",),
    }
    outer = rows[("rp_outer", "rp_k1")]
    assert (outer["count"], outer["total_ns"], outer["node"], outer["device"]) == (1, 200, scope, 1)
    fwd = rows[("rp_outer", "rp_fwd", "rp_k2")]
    assert (fwd["count"], fwd["total_ns"], fwd["min_ns"], fwd["max_ns"]) == (2, 610, 10, 600)
    assert node_path(int(fwd["node"])) == (("rp_outer", NODE_SCOPE), ("rp_fwd", NODE_STATE))
    assert rows[("rp_early_kernel",)]["device"] == 2 and rows[("rp_early_kernel",)]["total_ns"] == 50
    assert all(row["kind"] == KIND_KERNEL for row in aggregates)
    # The timeline: times, GPU index, one stream per queue (first seen first),
    # one correlation per launch.
    assert dropped == 0
    streams = [int(t["stream"]) for t in trace]
    assert streams[0] == streams[2] == streams[3] == streams[4] and streams[1] != streams[0] and min(streams) >= 1
    assert [(int(t["start"]), int(t["end"]), int(t["device"])) for t in trace] == [
        (100, 300, 1),
        (400, 1000, 1),
        (1000, 1010, 1),
        (0, 50, 2),
        (60, 130, 2),
    ]
    assert len({int(t["correlation"]) for t in trace}) == 5
    # The names were copied: the fake scribbled over the lent ones.
    assert not any("#" in name for name in h.names())


def test_launch_metrics(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.set_launch_metrics(1.0, 2.0, 3.0, 4.0, 512.0)
    memcpy(fake, HTOD, 0, 5)  # a copy does not take the kernel's metrics...
    launch(fake, "rp_metrics_k", 10, 20)  # ...the next kernel launch does
    launch(fake, "rp_metrics_k", 30, 40)
    h.flush_rocprofiler()
    rows = by_path(take(slot)[0])
    k = rows[("rp_metrics_k",)]
    assert (k["count"], list(k["flops"]), k["bytes"]) == (2, [1.0, 2.0, 3.0, 4.0], 512.0)
    assert list(rows[("memcpy HtoD",)]["flops"]) == [0, 0, 0, 0] and rows[("memcpy HtoD",)]["bytes"] == 0


def test_copies_and_sets(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    h.enter_scope("rp_io")
    memcpy(fake, HTOD, 0, 100, through="hipMemcpyHtoDAsync")
    memcpy(fake, DTOH, 200, 260, through="hipMemcpy")
    memcpy(fake, DTOD, 300, 303, through="hipMemcpy2D")
    memcpy(fake, HTOH, 400, 440, through="hipMemcpyPeer")
    # HIP runs a set as a fill kernel, under the set's correlation id.
    launch(fake, "__amd_rocclr_fillBufferAligned", 500, 507, through="hipMemsetAsync")
    h.exit_scope("rp_io")
    h.flush_rocprofiler()
    rows = by_path(take(slot)[0])
    summary = {key: (int(r["kind"]), int(r["count"]), int(r["total_ns"]), int(r["device"])) for key, r in rows.items()}
    assert summary == {
        ("rp_io", "memcpy HtoD"): (KIND_MEMCPY, 1, 100, 0),
        ("rp_io", "memcpy DtoH"): (KIND_MEMCPY, 1, 60, 0),
        ("rp_io", "memcpy DtoD"): (KIND_MEMCPY, 1, 3, 0),
        ("rp_io", "memcpy"): (KIND_MEMCPY, 1, 40, 0),
        ("rp_io", "__amd_rocclr_fillBufferAligned"): (KIND_KERNEL, 1, 7, 0),
    }


def test_graph_launch(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    ids = (ctypes.c_uint64 * 3)(kernel(fake, "rp_graph_a"), kernel(fake, "rp_graph_b"), kernel(fake, "rp_graph_a"))
    scope = h.enter_scope("rp_graph_scope")
    fake.fake_hip_graph_launch(fake.fake_op_id(b"hipGraphLaunch"), ids, 3, 1000, 10)
    h.exit_scope("rp_graph_scope")
    h.flush_rocprofiler()
    rows = by_path(take(slot)[0])
    assert {key: (int(r["count"]), int(r["total_ns"])) for key, r in rows.items()} == {
        ("rp_graph_scope", "rp_graph_a"): (2, 20),
        ("rp_graph_scope", "rp_graph_b"): (1, 10),
    }
    assert all(int(r["node"]) == scope for r in rows.values())


def test_session_windows_and_counters(rocprofiler_fake):
    fake = rocprofiler_fake
    first, second = new_slot(), new_slot()
    before = h.counters()
    h.set_active_sessions(1 << first)
    launch(fake, "rp_win_first", 0, 10)
    h.set_active_sessions((1 << first) | (1 << second))
    launch(fake, "rp_win_both", 100, 120)
    h.set_active_sessions(1 << second)
    launch(fake, "rp_win_second", 200, 230)
    h.set_active_sessions(0)
    launch(fake, "rp_win_none", 300, 301)
    h.flush_rocprofiler()
    after = h.counters()
    assert after["launches"] == before["launches"] + 3
    assert after["activities"] == before["activities"] + 4
    assert after["unattributed"] == before["unattributed"] + 1
    rows_first, rows_second = by_path(take(first)[0]), by_path(take(second)[0])
    assert set(rows_first) == {("rp_win_first",), ("rp_win_both",)}
    assert set(rows_second) == {("rp_win_both",), ("rp_win_second",)}


def test_unmatched_and_dropped_records(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    before = h.counters()
    fake.fake_dispatch_record(0, kernel(fake, "rp_orphan"), 0, 10)  # no API call behind it
    launch(fake, "rp_no_record", 0, 1, emit=False)  # traced, but no record
    fake.fake_drop_records(5)
    h.flush_rocprofiler()
    after = h.counters()
    assert after["activities"] == before["activities"] + 1
    assert after["unattributed"] == before["unattributed"] + 1
    assert after["rocprofiler_dropped_records"] == before["rocprofiler_dropped_records"] + 5
    assert after["dropped_records"] == before["dropped_records"]  # CUPTI's
    assert len(take(slot)[0]) == 0


def test_full_buffer_goes_out_on_another_thread(rocprofiler_fake):
    fake = rocprofiler_fake
    watermark = fake.fake_watermark_records()
    assert 1 < watermark < 64, "the buffer is handed over before it is full (7/8)"
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    deliveries = fake.fake_async_deliveries()
    h.enter_scope("rp_full")
    fake.fake_hip_launch_many(fake.fake_op_id(b"hipModuleLaunchKernel"), kernel(fake, "rp_full_k"), watermark + 3)
    h.exit_scope("rp_full")
    assert fake.fake_async_deliveries() == deliveries + 1
    assert fake.fake_pending_records() == 3
    h.flush_rocprofiler()
    rows = by_path(take(slot)[0])
    assert list(rows) == [("rp_full", "rp_full_k")]
    assert (rows[("rp_full", "rp_full_k")]["count"], rows[("rp_full", "rp_full_k")]["total_ns"]) == (
        watermark + 3,
        5 * (watermark + 3),
    )


def test_stop_delivers_and_keeps_the_context(rocprofiler_fake):
    fake = rocprofiler_fake
    slot = new_slot()
    h.set_active_sessions(1 << slot)
    launch(fake, "rp_stop_k", 0, 42)
    h.set_active_sessions(0)
    assert fake.fake_pending_records() == 1
    h.stop_rocprofiler()  # flushes first: the pending record reaches the session
    assert not h.rocprofiler_tracing() and fake.fake_context_active()
    rows = by_path(take(slot)[0])
    assert (rows[("rp_stop_k",)]["count"], rows[("rp_stop_k",)]["total_ns"]) == (1, 42)
    # Stopped: callbacks return at once, records are not read.
    before = h.counters()
    h.set_active_sessions(1 << slot)
    launch(fake, "rp_stopped_k", 0, 1)
    fake.fake_hip_api_call(fake.fake_op_id(b"hipLaunchKernel"))
    h.flush_rocprofiler()  # nothing to do while stopped
    h.stop_rocprofiler()  # again: nothing to do
    h.set_active_sessions(0)
    after = h.counters()
    assert (after["launches"], after["activities"]) == (before["launches"], before["activities"])
    h.start_rocprofiler()
    assert h.rocprofiler_tracing()


# ------------------------------------------------- whole sessions (proton.*)


def _find(node, *names):
    for name in names:
        node = next(c for c in node["children"] if c["frame"]["name"] == name)
    return node


def test_session_end_to_end(rocprofiler_fake, rocprofiler_fake_path, tmp_path, monkeypatch, no_session_left):
    fake = rocprofiler_fake
    h.stop_rocprofiler()  # the session starts it itself
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(rocprofiler_fake_path))
    proton.start(str(tmp_path / "amd"), backend="rocprofiler", data="trace", hook="triton", quiet=True)
    assert h.rocprofiler_tracing() and not h.roctracer_tracing() and not h.cupti_tracing()
    with proton.scope("outer", metrics={"tokens": 3}):
        launch(fake, "k1", 100, 300)
        with proton.state("fwd"):
            launch(fake, "k2", 400, 1000, through="hipLaunchKernel")
        memcpy(fake, DTOH, 1100, 1150, through="hipMemcpyDtoHAsync")

    import triton.knobs
    from triton.compiler.compiler import LazyDict

    metadata = LazyDict({"name": "k3"})
    metadata.add(lambda: {"flops16": 1e6, "bytes": 4096}, ())
    triton.knobs.runtime.launch_enter_hook(metadata)
    launch(fake, "k3", 2000, 2100)

    report = proton.finalize()
    assert not h.rocprofiler_tracing()  # the last session stopped tracing
    # (Dropped records are counted process-wide: an earlier test dropped some.)
    assert (report.kernels, report.activities) == (3, 4)
    assert [w for w in report.warnings if "dropped" not in w] == []
    tree = json.load(open(report.files["tree"]))
    assert tree[1] == {}  # no AMD device info yet
    from proton.writers.hatchet_tree import inclusive

    root = inclusive(tree[0])
    assert root["metrics"]["count"] == 4 and root["metrics"]["time (ns)"] == 200 + 600 + 50 + 100
    outer = _find(root, "outer")
    assert outer["metrics"]["tokens"] == 3 and outer["metrics"]["time (ns)"] == 850
    assert _find(outer, "k1")["metrics"] == {"time (ns)": 200, "count": 1, "device_id": "0", "device_type": "HIP"}
    assert _find(outer, "fwd", "k2")["metrics"]["time (ns)"] == 600
    assert _find(outer, "memcpy DtoH")["frame"]["type"] == "memcpy"
    k3 = _find(root, "k3")["metrics"]
    assert k3["count"] == 1 and k3["flops16"] == 1e6 and k3["bytes"] == 4096
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    events = [e for e in trace if e.get("cat") in ("kernel", "memcpy", "memset")]  # either layout
    assert [(e["name"], e["args"]["call_path"]) for e in events] == [
        ("k1", "outer"),
        ("k2", "outer/fwd"),
        ("memcpy DtoH", "outer"),
        ("k3", "ROOT"),
    ]


def test_dropped_records_warn(rocprofiler_fake, rocprofiler_fake_path, tmp_path, monkeypatch, no_session_left):
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(rocprofiler_fake_path))
    before = h.counters()["rocprofiler_dropped_records"]
    proton.start(str(tmp_path / "drops"), backend="rocprofiler", quiet=True)
    launch(rocprofiler_fake, "rp_drop_k", 0, 10)
    rocprofiler_fake.fake_drop_records(7)
    report = proton.finalize()
    assert report.kernels == 1 and report.dropped_records == before + 7
    assert f"rocprofiler-sdk dropped {before + 7} activity records" in report.warnings, report.warnings


def test_roctracer_backend_prefers_rocprofiler_sdk(
    rocprofiler_fake, rocprofiler_fake_path, tmp_path, monkeypatch, no_session_left
):
    # backend="roctracer" (and the default host backend on AMD) takes the
    # SDK where it is found; PROTON_ROCTRACER_LIB pins ROCTracer.
    monkeypatch.delenv("PROTON_ROCTRACER_LIB", raising=False)
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(rocprofiler_fake_path))
    assert host_session.HostSession(SessionOptions("x", "roctracer")).tracer.name == "rocprofiler-sdk"
    a = proton.start(str(tmp_path / "a"), backend="roctracer", quiet=True)
    proton.start(str(tmp_path / "b"), backend="rocprofiler", quiet=True)  # the same tracer
    with pytest.raises(
        proton.ProfilerError,
        match="open with backend='roctracer'; host sessions open at the same "
        "time share one tracer, not backend='cupti'",
    ):
        proton.start(str(tmp_path / "c"), backend="cupti")
    launch(rocprofiler_fake, "rp_pref_k", 0, 10)
    proton.deactivate(a)
    launch(rocprofiler_fake, "rp_pref_k", 0, 10)
    assert [r.kernels for r in proton.finalize()] == [1, 2]
    monkeypatch.delenv("PROTON_ROCPROFILER_LIB")
    monkeypatch.setattr(
        libraries.glob,
        "glob",
        lambda pattern: ["/opt/rocm/lib/librocprofiler-sdk.so"] if "rocprofiler-sdk" in pattern else [],
    )
    assert host_session.HostSession(SessionOptions("x", "roctracer")).tracer.name == "rocprofiler-sdk"
    monkeypatch.setattr(libraries.glob, "glob", lambda pattern: [])
    assert host_session.HostSession(SessionOptions("x", "roctracer")).tracer.name == "ROCTracer"
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(rocprofiler_fake_path))
    monkeypatch.setenv("PROTON_ROCTRACER_LIB", str(tmp_path / "libroctracer64.so"))
    assert host_session.HostSession(SessionOptions("x", "roctracer")).tracer.name == "ROCTracer"
    assert host_session.HostSession(SessionOptions("x", "rocprofiler")).tracer.name == "rocprofiler-sdk"


class _Unloaded:
    """A runtime with no rocprofiler-sdk or ROCTracer loaded yet."""

    def rocprofiler_tracing(self):
        return False

    def rocprofiler_path(self):
        return ""

    def roctracer_tracing(self):
        return False


def test_missing_library_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("PROTON_ROCPROFILER_LIB", raising=False)
    monkeypatch.delenv("PROTON_ROCTRACER_LIB", raising=False)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setattr(libraries.glob, "glob", lambda pattern: [])
    session = host_session.HostSession(SessionOptions("x", "rocprofiler"))
    with pytest.raises(
        proton.ProfilerError,
        match=r"rocprofiler-sdk \(librocprofiler-sdk.so\) not found; searched: "
        r".*rocm/lib.*set PROTON_ROCPROFILER_LIB",
    ):
        session.tracer.start(_Unloaded(), session)
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(tmp_path / "librocprofiler-sdk.so"))
    with pytest.raises(proton.ProfilerError, match="PROTON_ROCPROFILER_LIB=.*librocprofiler-sdk.so is not a file"):
        session.tracer.start(_Unloaded(), session)
    # backend="roctracer" with neither library names both.
    monkeypatch.delenv("PROTON_ROCPROFILER_LIB")
    session = host_session.HostSession(SessionOptions("x", "roctracer"))
    with pytest.raises(
        proton.ProfilerError,
        match=r"ROCTracer \(libroctracer64.so\) not found; .*rocprofiler-sdk, "
        r"which backend='roctracer' prefers, was not found either",
    ):
        session.tracer.start(_Unloaded(), session)


def test_pc_sampling_needs_cupti(rocprofiler_fake_path, monkeypatch, no_session_left):
    monkeypatch.setenv("PROTON_ROCPROFILER_LIB", str(rocprofiler_fake_path))
    with pytest.raises(proton.ProfilerError, match="PC sampling \\(mode='pcsampling'\\) is a CUPTI feature"):
        proton.start("x", backend="rocprofiler", mode="pcsampling")
    assert proton.sessions() == []
