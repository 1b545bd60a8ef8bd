"""Metrics recorded while a CUDA graph is captured are attributed to each
replay, below the replay's context (graph_metrics.py), as Triton's Proton
3.9 line's tests expect. Over the fake libcupti, with stand-ins for torch's
CUDAGraph (capture and replay through the fake's graph calls) and for the
session's device slots (the same books, kept on the host: the device
arithmetic itself is the GPU tests')."""

import json
import sys
import types

import pytest

import proton
from proton.host import launch_hook
from proton.host.state import COMPUTE_METADATA_SCOPE_NAME

from test_host_runtime import CBID_cuLaunchKernel, graph_launch

METADATA = COMPUTE_METADATA_SCOPE_NAME


pytestmark = pytest.mark.usefixtures("no_session_left")


class DeviceValue:
    """A device tensor as the session sees one (data_ptr, a CUDA device)."""

    device = types.SimpleNamespace(type="cuda")

    def __init__(self, value):
        self.value = value

    def data_ptr(self):
        return 1


def plus(total, value):
    """A slot's sum plus a value (numbers, or lists element-wise)."""
    if total is None:
        return value
    if isinstance(value, list):
        return [a + b for a, b in zip(total, value)]
    return total + value


def zero(value):
    return [0.0] * len(value) if isinstance(value, list) else 0


class Graphs:
    """torch.cuda's CUDAGraph and capture state, over the fake libcupti: a
    kernel launched while capturing becomes a graph node, a replay launches
    the graph's nodes and applies its captured device adds."""

    def __init__(self, fake):
        self.fake = fake
        self.capturing = None  # the graph being captured
        graphs = self

        class CUDAGraph:
            def __init__(self):
                self.nodes, self.adds = [], []

            def capture_begin(self):
                graphs.capturing = self

            def capture_end(self):
                graphs.capturing = None

            def replay(self):
                for slots, key, value in self.adds:
                    slots.sums[key] = plus(slots.sums.get(key), value)
                graph_launch(graphs.fake, self.nodes, start=0, duration=10)

        self.CUDAGraph = CUDAGraph

    def captured(self, scope: str, metrics: dict, graph=None):
        """A graph (new, or `graph` captured again) holding one launch of
        kernel "k" in `scope` with `metrics`."""
        graph = graph if graph is not None else self.CUDAGraph()
        graph.capture_begin()
        with proton.scope(scope, metrics=metrics):
            self.launch("k")
        graph.capture_end()
        return graph

    def launch(self, name: str):
        """A kernel launch: run now, or captured into the graph."""
        if self.capturing is not None:
            self.capturing.nodes.append(self.fake.fake_capture_launch(name.encode()))
        else:
            self.fake.fake_launch(CBID_cuLaunchKernel, name.encode(), 0, 10, 1)


class HostSlots:
    """DeviceSlots' books on the host: each add, move and zero is what the
    device would do, and launches a kernel as the device would."""

    def __init__(self, graphs):
        self.graphs, self.sums, self.sizes = graphs, {}, {}

    def add(self, key, name, tensor, capturing):
        assert capturing == (self.graphs.capturing is not None)  # what pins the slots' memory
        size = len(tensor.value) if isinstance(tensor.value, list) else 1
        if self.sizes.setdefault(key, size) != size:  # as DeviceSlots refuses it
            raise proton.ProfilerError(f"a tensor of {size} values where earlier ones had {self.sizes[key]}")
        self.graphs.launch("vectorized_elementwise_add")  # the add's kernel
        if self.graphs.capturing is not None:
            self.graphs.capturing.adds.append((self, key, tensor.value))
        else:
            self.sums[key] = plus(self.sums.get(key), tensor.value)

    def move(self, pairs):
        for source, target in pairs:
            self.graphs.launch("profiler_move")  # must be seen by no session
            self.sums[target] = plus(self.sums.get(target), self.sums.get(source))
        self.zero(source for source, _ in pairs)

    def zero(self, keys):
        for key in keys:
            self.sums[key] = zero(self.sums.get(key))

    def take(self):
        out, self.sums = self.sums, {key: zero(value) for key, value in self.sums.items()}
        return out

    def release(self):
        pass


@pytest.fixture
def graphs(fake, fake_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    graphs = Graphs(fake)
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(
        CUDAGraph=graphs.CUDAGraph, is_current_stream_capturing=lambda: graphs.capturing is not None
    )
    monkeypatch.setitem(sys.modules, "torch", torch)
    return graphs


def start(tmp_path, graphs, name="graph", **options):
    session = proton.start(str(tmp_path / name), backend="cupti", quiet=True, **options)
    from proton.host.runtime import _sessions

    host_session = next(s for s in _sessions.values() if s.name == str(tmp_path / name))
    host_session.device_slots = HostSlots(graphs)
    return session


def load(report):
    return json.load(open(report.files["tree"]))[0]


def child(node, name):
    found = [c for c in node["children"] if c["frame"]["name"] == name]
    return found[0] if found else None


def path(node, *names):
    for name in names:
        node = child(node, name)
        assert node is not None, name
    return node


def names(node):
    out = {node["frame"]["name"]}
    for c in node["children"]:
        out |= names(c)
    return out


def test_scope_metrics_captured_in_a_graph_are_added_at_each_active_replay(tmp_path, graphs):
    session = start(tmp_path, graphs)

    def step():
        with proton.scope("a", metrics={"bytes": 16, "loss": DeviceValue(4.0)}):
            graphs.launch("fill")

    step()  # eager: where it runs
    g = graphs.CUDAGraph()
    g.capture_begin()
    for _ in range(3):
        step()
    g.capture_end()
    with proton.scope("test0"):
        g.replay()
    proton.deactivate(session)
    g.replay()  # inactive: nothing of it is added, its device sums are dropped
    proton.activate(session)
    with proton.scope("test1"):
        g.replay()
        g.replay()
    root = load(proton.finalize(session))

    eager = path(root, "a")
    assert eager["metrics"]["bytes"] == 16 and eager["metrics"]["loss"] == 4.0
    for replay, times in (("test0", 1), ("test1", 2)):
        captured = path(root, replay, "<captured_at>", "a")
        assert captured["metrics"]["bytes"] == 3 * 16 * times, (replay, captured)
        assert captured["metrics"]["loss"] == 3 * 4.0 * times, (replay, captured)
        assert path(captured, "fill")["metrics"]["count"] == 3 * times
        # The captured adds are the graph's kernels, shown as Triton's Proton shows its own.
        assert path(captured, METADATA, "<metric>")["metrics"]["count"] == 3 * times
    assert path(eager, METADATA, "<metric>")["metrics"]["count"] == 1
    assert "profiler_move" not in names(root)


def test_launch_metadata_metrics_captured_in_a_graph_go_to_the_replayed_kernel(tmp_path, graphs, fake):
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    start(tmp_path, graphs, hook="triton")

    def launch_foo():
        lazy = LazyDict({"name": "foo"})
        lazy.add(lambda: {"name": "foo_test", "flops": DeviceValue(4.0), "bytes": 16, "extra": 2}, ())
        triton.knobs.runtime.launch_enter_hook(lazy)
        graphs.launch("foo")

    g = graphs.CUDAGraph()
    g.capture_begin()
    with proton.scope("captured"):
        for _ in range(10):
            launch_foo()
    g.capture_end()
    with proton.scope("test0"):
        g.replay()
    root = load(proton.finalize())

    at = path(root, "test0", "<captured_at>", "captured")
    foo = path(at, "foo_test")["metrics"]
    assert (foo["count"], foo["bytes"], foo["flops"], foo["extra"]) == (10, 160, 40.0, 20), foo
    # Triton 3.8+ shows launch_metadata's kernels below the launching kernel's name.
    below = ("foo",) if launch_hook._triton_version() >= (3, 8) else ()
    assert path(at, METADATA, *below, "<metric>")["metrics"]["count"] == 10
    # Nothing is shown where the graph was captured (no kernel ran there).
    assert child(root, "captured") is None


def test_a_graph_captured_while_the_session_was_inactive_adds_nothing(tmp_path, graphs):
    session = start(tmp_path, graphs)
    proton.deactivate(session)
    g = graphs.captured("hidden", {"bytes": 8, "loss": DeviceValue(1.0)})
    proton.activate(session)
    with proton.scope("replayed"):
        g.replay()
    root = load(proton.finalize(session))
    assert "hidden" not in names(root), json.dumps(root)[:2000]


def test_two_sessions_each_see_the_replays_made_while_they_are_active(tmp_path, graphs):
    first = start(tmp_path, graphs, name="first")
    second = start(tmp_path, graphs, name="second")
    g = graphs.captured("s", {"tokens": 5, "loss": DeviceValue(2.0)})
    with proton.scope("both"):
        g.replay()
    proton.deactivate(second)
    with proton.scope("first_only"):
        g.replay()
    roots = [load(proton.finalize(first)), load(proton.finalize(second))]
    for root, replays in zip(roots, (("both", "first_only"), ("both",))):
        seen = {c["frame"]["name"] for c in root["children"]}
        assert seen == set(replays), seen
        for replay in replays:
            metrics = path(root, replay, "<captured_at>", "s")["metrics"]
            assert (metrics["tokens"], metrics["loss"]) == (5, 2.0), metrics


def test_a_graph_captured_again_keeps_only_its_new_metrics(tmp_path, graphs):
    start(tmp_path, graphs)
    g = graphs.captured("old", {"n": 1})
    g.nodes, g.adds = [], []  # reset: the old graph is gone
    graphs.captured("new", {"n": 2}, graph=g)
    with proton.scope("r"):
        g.replay()
    root = load(proton.finalize())
    at = path(root, "r", "<captured_at>")
    assert [c["frame"]["name"] for c in at["children"]] == ["new"]
    assert path(at, "new")["metrics"]["n"] == 2


def test_replays_the_session_did_not_see_stay_where_the_graph_was_captured(tmp_path, graphs):
    # A replay made other than through CUDAGraph.replay (a C++ library's
    # cudaGraphLaunch): its device sums stay in the graph's slots and are
    # shown where they were captured.
    start(tmp_path, graphs)
    g = graphs.captured("cap", {"loss": DeviceValue(3.0)})
    type(g).replay.__wrapped__(g)  # the replay without the session's wrapper
    root = load(proton.finalize())
    assert path(root, "cap")["metrics"]["loss"] == 3.0


def test_each_phase_gets_the_replays_made_in_it(tmp_path, graphs):
    session = start(tmp_path, graphs)
    g = graphs.captured("s", {"n": 1, "loss": DeviceValue(2.0)})
    with proton.scope("r"):
        g.replay()
    proton.data.advance_phase(session)
    with proton.scope("r"):
        g.replay()
        g.replay()
    report = proton.finalize(session)
    for part, times in zip(report.parts, (1, 2)):
        root = json.load(open(part["files"]["tree"]))[0]
        metrics = path(root, "r", "<captured_at>", "s")["metrics"]
        assert (metrics["n"], metrics["loss"], path(root, "r", "<captured_at>", "s", "k")["metrics"]["count"]) == (
            times,
            2.0 * times,
            times,
        ), (part, metrics)


def test_a_metric_the_capture_cannot_take_is_left_out_and_reported(tmp_path, graphs):
    # Inside a capture, a device metric the session refuses (here, a vector
    # whose length changed) never raises into the program's capture.
    start(tmp_path, graphs)
    g = graphs.CUDAGraph()
    g.capture_begin()
    for values in ([1.0, 2.0], [1.0, 2.0, 3.0], [3.0, 4.0]):
        with proton.scope("s", metrics={"vec": DeviceValue(values)}):
            graphs.launch("k")
    g.capture_end()
    with proton.scope("r"):
        g.replay()
    report = proton.finalize()
    root = load(report)
    assert path(root, "r", "<captured_at>", "s")["metrics"]["vec"] == [4.0, 6.0]
    assert any("left out of a CUDA graph capture 1 time(s)" in w and "'vec'" in w for w in report.warnings), (
        report.warnings
    )
    # Outside a capture the same mistake is the program's error, as before.
    start(tmp_path, graphs, name="eager")
    with proton.scope("e", metrics={"vec": DeviceValue([1.0, 2.0])}):
        pass
    with pytest.raises(proton.ProfilerError, match="3 values where earlier ones had 2"):
        with proton.scope("e", metrics={"vec": DeviceValue([1.0, 2.0, 3.0])}):
            pass
    proton.finalize()
