"""Host sessions' Chrome traces (data="trace") in both of Triton's Proton's
layouts, over the fake libcupti: Triton 3.9's (kernel, scope, metric and
flow events, graph threads, baseTimeNanoseconds) and 3.6-3.8's (kernel
events only). activity_trace.layout_39 is forced to pick the layout."""

import ctypes
import json
import threading
import time

import pytest

import proton
from proton.host import activity_trace

from test_host_runtime import CBID_cuLaunchKernel, graph_launch, h

DAY_NS = 24 * 60 * 60 * 1_000_000_000


@pytest.fixture(autouse=True)
def session_env(fake, fake_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    fake.fake_set_timestamp.argtypes, fake.fake_set_timestamp.restype = [ctypes.c_uint64], None
    fake.fake_set_device_stream(0, 7)
    fake.fake_set_timestamp(time.time_ns())  # the fake's clock at the session's start: as CUPTI's, epoch ns
    yield
    leftover = proton.sessions()
    for s in leftover:
        proton.finalize(s)
    assert not leftover, "a test left a session open"


@pytest.fixture
def layout(monkeypatch):
    def pick(is_39: bool):
        monkeypatch.setattr(activity_trace, "layout_39", lambda: is_39)

    return pick


def tick(fake) -> int:
    """Sets the fake's clock (read for launch and scope times) to now; it
    stands still in between."""
    now = time.time_ns()
    fake.fake_set_timestamp(now)
    return now


def launch(fake, name: str, delay: int = 500, duration: int = 1000) -> int:
    """A launch now, its kernel `delay` ns later."""
    now = tick(fake)
    return fake.fake_launch(CBID_cuLaunchKernel, name.encode(), now + delay, now + delay + duration, 1)


def flexible_metrics_program(fake):
    """Triton 3.9's test_trace_flexible_metrics_scope_ranges, with the fake."""
    with proton.scope("scope_3", metrics={"m3": 3.0}):
        with proton.scope("scope_2", metrics={"m2": 2.0}):
            with proton.scope("scope_1", metrics={"m1": 1.0}):
                launch(fake, "foo")
            with proton.scope("scope_4"):
                launch(fake, "foo")
            with proton.scope("scope_5"):
                launch(fake, "foo")
        with proton.scope("scope_6"):
            with proton.scope("scope_7"):
                launch(fake, "foo")


def run(tmp_path, name, program, **kwargs) -> dict:
    proton.start(str(tmp_path / name), backend="cupti", data="trace", quiet=True, **kwargs)
    program()
    report = proton.finalize()
    return json.load(open(report.files["chrome_trace"]))


def by_cat(events, cat):
    return [e for e in events if e.get("cat") == cat]


def test_layout_follows_the_triton_version(monkeypatch):
    import triton

    for version, is_39 in (("3.6.0", False), ("3.8.1", False), ("3.9.0", True), ("3.10.0+git1234", True)):
        monkeypatch.setattr(triton, "__version__", version)
        assert activity_trace.layout_39() is is_39, version


def test_39_kernel_scope_metric_and_flow_events(fake, tmp_path, layout):
    layout(True)
    data = run(tmp_path, "flex", lambda: flexible_metrics_program(fake))
    events = data["traceEvents"]
    kernels, metrics = by_cat(events, "kernel"), by_cat(events, "metric")
    scopes, flows = by_cat(events, "scope"), by_cat(events, "flow")
    assert (len(kernels), len(metrics), len(scopes), len(flows)) == (4, 3, 4, 8)
    assert len(events) == 4 + 3 + 4 + 8  # nothing else: no graph thread to name
    assert {tuple(e["args"]["call_stack"]) for e in kernels} == {
        ("ROOT", "scope_3", "scope_2", "scope_1", "foo"),
        ("ROOT", "scope_3", "scope_2", "scope_4", "foo"),
        ("ROOT", "scope_3", "scope_2", "scope_5", "foo"),
        ("ROOT", "scope_3", "scope_6", "scope_7", "foo"),
    }
    metric_by_name = {next(iter(e["args"]["metrics"])): e for e in metrics}
    assert {
        name: (e["name"], tuple(e["args"]["call_stack"]), e["args"]["metrics"]) for name, e in metric_by_name.items()
    } == {
        "m1": ("scope_1: <m1, 1.000000>", ("ROOT", "scope_3", "scope_2", "scope_1"), {"m1": "1.000000"}),
        "m2": ("scope_2: <m2, 2.000000>", ("ROOT", "scope_3", "scope_2"), {"m2": "2.000000"}),
        "m3": ("scope_3: <m3, 3.000000>", ("ROOT", "scope_3"), {"m3": "3.000000"}),
    }
    assert all(isinstance(e["args"]["scope_id"], int) for e in metrics)
    assert {tuple(e["args"]["call_stack"]) for e in scopes} == {
        ("ROOT", "scope_3", "scope_2", "scope_4"),
        ("ROOT", "scope_3", "scope_2", "scope_5"),
        ("ROOT", "scope_3", "scope_6"),
        ("ROOT", "scope_3", "scope_6", "scope_7"),
    }
    # Host events on the launching thread; kernels on their stream.
    cpu = ("CPU", f"thread {threading.get_native_id()}")
    assert {(e["pid"], e["tid"]) for e in scopes + metrics} == {cpu}
    assert {(e["pid"], e["tid"]) for e in kernels} == {("GPU 0", "stream 7")}
    starts = {e["id"]: e for e in flows if e["ph"] == "s"}
    finishes = {e["id"]: e for e in flows if e["ph"] == "f"}
    assert set(starts) == set(finishes) == {e["args"]["correlation"] for e in kernels}
    assert all(e["name"] == "launch->kernel" and e["bp"] == "e" for e in flows)
    assert {(e["pid"], e["tid"]) for e in starts.values()} == {cpu}
    for kernel in kernels:
        start, finish = starts[kernel["args"]["correlation"]], finishes[kernel["args"]["correlation"]]
        assert (finish["pid"], finish["tid"], finish["ts"]) == (kernel["pid"], kernel["tid"], kernel["ts"])
        assert start["ts"] < kernel["ts"]  # launched 500 ns before it ran
    # A scope starts at its first launch and covers its kernels; metric
    # scopes with kernels likewise.
    for event in scopes + metrics:
        stack = event["args"]["call_stack"]
        inside = [k for k in kernels if k["args"]["call_stack"][: len(stack)] == stack]
        assert inside
        assert event["ts"] == min(starts[k["args"]["correlation"]]["ts"] for k in inside)
        assert max(k["ts"] + k["dur"] for k in inside) == pytest.approx(event["ts"] + event["dur"], abs=1e-5)
        assert max(k["ts"] + k["dur"] for k in inside) <= event["ts"] + event["dur"]  # inside, after rounding
    assert abs(time.time_ns() - data["baseTimeNanoseconds"]) < DAY_NS


def test_39_launch_flows_start_on_each_launching_thread(fake, tmp_path, layout):
    """The thread id a launch records is its own thread's, read once per
    thread: two workers' launches start their flows on their own rows."""
    layout(True)
    launched = {}

    def worker(name):
        launched[name] = (threading.get_native_id(), launch(fake, name))

    def program():
        launch(fake, "main_k")
        for name in ("worker_a", "worker_b"):
            thread = threading.Thread(target=worker, args=(name,))
            thread.start()
            thread.join()
        launch(fake, "main_k")

    events = run(tmp_path, "threads", program)["traceEvents"]
    starts = {e["id"]: e for e in by_cat(events, "flow") if e["ph"] == "s"}
    expected = {corr: f"thread {tid}" for tid, corr in launched.values()}
    main = f"thread {threading.get_native_id()}"
    by_kernel = {}
    for kernel in by_cat(events, "kernel"):
        by_kernel.setdefault(kernel["name"], set()).add(starts[kernel["args"]["correlation"]]["tid"])
    assert by_kernel == {
        "main_k": {main},
        "worker_a": {expected[launched["worker_a"][1]]},
        "worker_b": {expected[launched["worker_b"][1]]},
    }
    assert len({main, *expected.values()}) == 3


def test_39_metric_scope_without_kernels_is_the_only_event(fake, tmp_path, layout):
    layout(True)

    def program():
        tick(fake)
        with proton.scope("metric_only", metrics={"foo": 1.0}):
            time.sleep(0.002)
            tick(fake)

    before = tick(fake)
    proton.start(str(tmp_path / "metric_only"), backend="cupti", data="trace", quiet=True)
    started = time.time_ns()
    program()
    data = json.load(open(proton.finalize().files["chrome_trace"]))
    (event,) = data["traceEvents"]
    assert (event["cat"], event["name"], event["args"]["call_stack"], event["args"]["metrics"]) == (
        "metric",
        "metric_only: <foo, 1.000000>",
        ["ROOT", "metric_only"],
        {"foo": "1.000000"},
    )
    assert isinstance(event["args"]["scope_id"], int)
    # From its enter to its exit on the host, ts=0 at its enter.
    assert event["ts"] == 0 and event["dur"] >= 2000
    # The base is the enter's tracer time plus the epoch offset the session
    # read during start; the fake's clock stood still from `before` until the
    # program's first tick, so the offset is late by up to start's duration.
    assert before <= data["baseTimeNanoseconds"] <= time.time_ns() + (started - before)


def test_39_one_event_per_scope_instance(fake, tmp_path, layout):
    layout(True)

    def program():
        for step in range(3):
            with proton.scope("step"):
                with proton.scope("tokens", metrics={"tokens": 4096}):
                    launch(fake, "k")
                launch(fake, "k")
        with proton.cpu_timed_scope("cpu"):
            pass

    events = run(tmp_path, "steps", program)["traceEvents"]
    steps = sorted((e for e in by_cat(events, "scope") if e["name"] == "step"), key=lambda e: e["ts"])
    tokens = sorted(by_cat(events, "metric"), key=lambda e: e["ts"])
    kernels = sorted(by_cat(events, "kernel"), key=lambda e: e["ts"])
    assert len(steps) == 3 and len(kernels) == 6
    assert [e["name"] for e in tokens[:3]] == ["tokens: <tokens, 4096.000000>"] * 3
    for index, step in enumerate(steps):  # each instance holds its own two kernels, and only them
        own = kernels[2 * index : 2 * index + 2]
        assert step["ts"] < own[0]["ts"] and own[1]["ts"] + own[1]["dur"] == pytest.approx(step["ts"] + step["dur"])
        token = tokens[index]
        assert step["ts"] <= token["ts"] and token["ts"] + token["dur"] <= step["ts"] + step["dur"]
    # cpu_timed_scope's metric comes at its exit: a metric event of its own.
    (cpu,) = [e for e in tokens if e["args"]["call_stack"] == ["ROOT", "cpu"]]
    assert cpu["name"].startswith("cpu: <cpu_time (ns), ") and float(cpu["args"]["metrics"]["cpu_time (ns)"]) >= 0


def test_39_kernelless_metric_scope_nests_in_its_scope(fake, tmp_path, layout):
    # A metric scope entered before its parent's first launch: the parent's
    # event grows to hold it, so that the two nest.
    layout(True)

    def program():
        with proton.scope("outer"):
            tick(fake)
            with proton.scope("load", metrics={"bytes": 8}):
                time.sleep(0.001)
                tick(fake)
            launch(fake, "k")

    events = run(tmp_path, "nest", program)["traceEvents"]
    (outer,) = by_cat(events, "scope")
    (load,) = by_cat(events, "metric")
    assert outer["ts"] <= load["ts"] and load["ts"] + load["dur"] <= outer["ts"] + outer["dur"]
    assert load["dur"] >= 1000


def test_39_base_time_from_a_tracer_clock_off_the_epoch(fake, tmp_path, layout):
    # The tracer's clock is related to time.time_ns() at the session's
    # start, whatever its own origin.
    layout(True)
    fake.fake_set_timestamp(10**9)
    proton.start(str(tmp_path / "offset"), backend="cupti", data="trace", quiet=True)
    started = time.time_ns()
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 10**9 + 5000, 10**9 + 6000, 1)
    data = json.load(open(proton.finalize().files["chrome_trace"]))
    (kernel,) = by_cat(data["traceEvents"], "kernel")
    kernel_epoch = data["baseTimeNanoseconds"] + kernel["ts"] * 1000
    assert abs(kernel_epoch - (started + 5000)) < 10**8  # the test's own pauses, not the clocks'
    assert abs(time.time_ns() - data["baseTimeNanoseconds"]) < DAY_NS


def test_39_graph_kernels_on_a_graph_thread(fake, tmp_path, layout):
    layout(True)

    def program():
        with proton.scope("a"):
            with proton.scope("b"):
                with proton.scope("c", metrics={"m1": 1.0}):
                    captured = [fake.fake_capture_launch(b"foo")]
                captured.append(fake.fake_capture_launch(b"foo"))
            captured.append(fake.fake_capture_launch(b"foo"))
        with proton.scope("test0"):
            now = tick(fake)
            graph_launch(fake, captured, start=now + 1000, duration=100)

    events = run(tmp_path, "graph", program)["traceEvents"]
    names = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"]
    assert [e["args"]["name"] for e in names] == ["Graph: Stream 7"]
    graph_tid = names[0]["tid"]
    kernels = by_cat(events, "kernel")
    assert {e["tid"] for e in kernels} == {graph_tid}
    assert {tuple(e["args"]["call_stack"]) for e in kernels} == {
        ("ROOT", "test0", "<captured_at>", "a", "b", "c", "foo"),
        ("ROOT", "test0", "<captured_at>", "a", "b", "foo"),
        ("ROOT", "test0", "<captured_at>", "a", "foo"),
    }
    graph_scopes = [e for e in by_cat(events, "scope") if e["tid"] == graph_tid]
    assert sorted(e["name"] for e in graph_scopes) == ["<captured_at>", "a", "b", "c"]
    assert not [e for e in by_cat(events, "metric") if e["tid"] == graph_tid]
    (captured_at,) = [e for e in graph_scopes if e["name"] == "<captured_at>"]
    assert (captured_at["ts"], captured_at["dur"]) == (min(k["ts"] for k in kernels), pytest.approx(0.3, abs=1e-5))
    # The replaying scope, on the host thread, covers the replay.
    (test0,) = [e for e in by_cat(events, "scope") if e["args"]["call_stack"] == ["ROOT", "test0"]]
    assert test0["pid"] == "CPU"
    assert test0["ts"] + test0["dur"] == pytest.approx(max(k["ts"] + k["dur"] for k in kernels))
    # c's metric, recorded at the capture (which launched nothing), on the host.
    (c,) = by_cat(events, "metric")
    assert (c["name"], c["pid"]) == ("c: <m1, 1.000000>", "CPU")


def test_old_layout_unchanged_before_triton_39(fake, tmp_path, layout):
    layout(False)
    data = run(tmp_path, "old", lambda: flexible_metrics_program(fake))
    assert set(data) == {"traceEvents", "displayTimeUnit", "otherData"}
    events = data["traceEvents"]
    assert len(events) == 4  # Triton 3.6's test_trace counts the kernel events only
    assert {(e["ph"], e["cat"], e["pid"], e["tid"]) for e in events} == {("X", "kernel", "GPU 0", "stream 7")}
    assert [set(e) for e in events] == [{"ph", "name", "cat", "pid", "tid", "ts", "dur", "args"}] * 4
    assert [set(e["args"]) for e in events] == [{"call_stack", "call_path", "correlation"}] * 4
    assert events[0]["ts"] == 0 and data["otherData"]["origin_ns"] > 0


def test_scope_records_only_while_a_trace_is_recorded(tmp_path):
    tree = proton.start(str(tmp_path / "tree"), backend="cupti", quiet=True)
    assert not activity_trace.recording
    trace = proton.start(str(tmp_path / "trace"), backend="cupti", data="trace", quiet=True)
    assert activity_trace.recording
    proton.deactivate(trace)
    assert not activity_trace.recording
    with proton.scope("unseen"):
        pass
    proton.activate(trace)
    with proton.scope("seen", metrics={"x": 1}):
        pass
    sessions = {s.name: s for s in proton.host.session.open_sessions()}
    assert [r.metrics for r in sessions[str(tmp_path / "trace")].scope_records()] == [{"x": 1}]
    assert sessions[str(tmp_path / "tree")].scope_records() == []
    proton.finalize(trace)
    proton.finalize(tree)
    assert not activity_trace.recording
    assert h.scope_stack() == []


def test_39_graph_replay_flow_from_its_graph_launch():
    # The writer alone, on rows as the runtime gives them when a replayed
    # kernel carries its graph launch's time and thread (Triton 3.9's
    # test_trace_cudagraph_graph_scope_ranges): the replaying scope starts at
    # the graph launch, and one flow goes from there to the replay's first
    # kernel on the graph's thread.
    import numpy as np

    from proton.host import records

    kind = {name: number for number, name in records.NODE_KINDS.items()}
    names = ["ROOT", "test0", "<captured_at>", "a", "b", "foo"]
    tree = [(0, 0, "root"), (0, 1, "scope"), (1, 2, "captured_at"), (2, 3, "scope"), (3, 4, "scope")]
    nodes = np.array([(parent, name, kind[k]) for parent, name, k in tree], dtype=records.NODE)
    rows = np.zeros(2, dtype=records.TRACE)
    for row, (node, start) in zip(rows, ((4, 5000), (3, 5100))):
        row["node"], row["name"], row["stream"], row["correlation"] = node, 5, 7, 42
        row["start"], row["end"], row["launch"], row["thread"] = start, start + 100, 4000, 99
    trace = activity_trace._trace_39(rows, nodes, names, [], 10**18)
    events = trace["traceEvents"]
    assert trace["baseTimeNanoseconds"] == 10**18 + 4000
    (test0,) = [e for e in by_cat(events, "scope") if e["pid"] == "CPU"]
    (start,) = [e for e in by_cat(events, "flow") if e["ph"] == "s"]
    (finish,) = [e for e in by_cat(events, "flow") if e["ph"] == "f"]
    assert (test0["name"], test0["tid"], test0["ts"], test0["dur"]) == (
        "test0",
        "thread 99",
        0.0,
        pytest.approx(1.2, abs=1e-5),
    )
    assert (start["tid"], start["ts"], start["id"]) == ("thread 99", 0.0, finish["id"])
    assert (finish["pid"], finish["tid"], finish["ts"]) == ("GPU 0", "Graph: Stream 7", 1.0)
    graph_scopes = {e["name"]: (e["ts"], e["dur"]) for e in by_cat(events, "scope") if e["pid"] == "GPU 0"}
    assert graph_scopes == {
        "<captured_at>": (1.0, pytest.approx(0.2, abs=1e-5)),
        "a": (1.0, pytest.approx(0.2, abs=1e-5)),
        "b": (1.0, pytest.approx(0.1, abs=1e-5)),
    }


def test_scope_exit_keeps_records_of_outer_scopes(fake, tmp_path, layout):
    # A scope entered while the trace was paused has no record: its exit
    # must not close (or drop) the outer scope's.
    layout(True)
    session = proton.start(str(tmp_path / "paused"), backend="cupti", data="trace", quiet=True)
    with proton.scope("outer", metrics={"n": 1}):
        proton.deactivate(session)
        with proton.scope("inner"):
            proton.activate(session)
        tick(fake)
    events = json.load(open(proton.finalize().files["chrome_trace"]))["traceEvents"]
    assert [(e["name"], e["dur"] > 0) for e in events] == [("outer: <n, 1.000000>", True)]


def test_39_without_launch_times_one_event_per_scope_node():
    # ROCm gives no launch times: a kernel may run after the next instance
    # began, so a scope's activities go to one event of its node.
    import numpy as np

    from proton.host import records

    kind = {name: number for number, name in records.NODE_KINDS.items()}
    nodes = np.array([(0, 0, kind["root"]), (0, 1, kind["scope"])], dtype=records.NODE)
    scopes = [activity_trace.ScopeRecord(1, 5, enter, None) for enter in (100, 300)]
    rows = np.zeros(2, dtype=records.TRACE)
    for row, start in zip(rows, (250, 450)):
        row["node"], row["name"], row["correlation"], row["start"], row["end"] = 1, 2, start, start, start + 10
    events = activity_trace._trace_39(rows, nodes, ["ROOT", "step", "k"], scopes, 0)["traceEvents"]
    assert [(e["name"], e["ts"], e["dur"]) for e in by_cat(events, "scope")] == [
        ("step", 0.0, pytest.approx(0.21, abs=1e-5))
    ]
    assert not by_cat(events, "flow")
