"""The host profiler's Python API without a GPU: argument and misuse errors,
missing CUPTI / ROCm, PROTON_DISABLE, and whole sessions (start, scopes,
states, user and launch metrics, finalize, tree and trace files) over the
fake libcupti of test_host_runtime.py."""

import json

import numpy as np
import pytest

import proton
from proton.writers.hatchet_tree import inclusive
from proton.host import activity_trace, libraries, session as host_session

from test_host_runtime import CBID_cuLaunchKernel, h


pytestmark = pytest.mark.usefixtures("no_session_left")


def test_argument_errors():
    with pytest.raises(proton.ProfilerError, match="unknown context 'stack'; valid: shadow, python"):
        proton.start("x", backend="cupti", context="stack")
    with pytest.raises(proton.ProfilerError, match="unknown data 'json'"):
        proton.start("x", backend="cupti", data="json")
    with pytest.raises(proton.ProfilerError, match="unknown hook 'torch'"):
        proton.start("x", backend="cupti", hook="torch")
    with pytest.raises(proton.ProfilerError, match="is an instrumentation mode"):
        proton.start("x", backend="cupti", mode="default:optimizations=clock32")
    with pytest.raises(proton.ModeError, match="interval is a period exponent in 5..31"):
        proton.start("x", mode="pcsampling:interval=2")
    with pytest.raises(proton.ProfilerError, match="outputs and max_launches_per_kernel apply"):
        proton.start("x", backend="cupti", outputs=["tree"])
    with pytest.raises(proton.ProfilerError, match="7"):
        proton.finalize(7)


def test_missing_cupti_names_what_was_searched(monkeypatch, tmp_path):
    monkeypatch.delenv("PROTON_CUPTI_LIB", raising=False)
    monkeypatch.setattr(libraries, "cupti_candidates", lambda: [str(tmp_path / "nowhere")])
    with pytest.raises(proton.ProfilerError, match="CUPTI \\(libcupti.so\\) not found; searched: .*nowhere"):
        libraries.find_cupti()
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(tmp_path / "libcupti.so.99"))
    with pytest.raises(proton.ProfilerError, match="PROTON_CUPTI_LIB=.*libcupti.so.99 is not a file"):
        proton.start("x", backend="cupti")
    assert proton.sessions() == []


def test_missing_rocm_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("PROTON_ROCTRACER_LIB", raising=False)
    monkeypatch.setenv("ROCM_PATH", str(tmp_path / "rocm"))
    monkeypatch.setattr(libraries.glob, "glob", lambda pattern: [])
    with pytest.raises(proton.ProfilerError, match="ROCTracer \\(libroctracer64.so\\) not found; searched: .*rocm/lib"):
        proton.start("x", backend="roctracer")


def test_disabled_switch(monkeypatch, tmp_path):
    monkeypatch.setenv("PROTON_DISABLE", "1")
    session = proton.start(str(tmp_path / "off"), backend="cupti")
    with proton.scope("s", metrics={"x": 1}):
        with proton.state("t"):
            assert h.scope_stack() == []
    assert proton.finalize() is None and proton.sessions() == []
    assert not (tmp_path / "off.hatchet").exists() and session is None


def _find(node, *names):
    for name in names:
        node = next(c for c in node["children"] if c["frame"]["name"] == name)
    return node


def test_session_end_to_end(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    monkeypatch.setattr(activity_trace, "layout_39", lambda: False)  # 3.9's: test_host_trace_layout.py
    proton.start(str(tmp_path / "run"), data="trace", hook="triton", quiet=True)  # host: from its arguments
    with proton.scope("outer", metrics={"tokens": 3}):
        fake.fake_launch(CBID_cuLaunchKernel, b"k1", 100, 300, 1)
        with proton.state("fwd"):
            fake.fake_launch(CBID_cuLaunchKernel, b"k2", 400, 1000, 1)
    with pytest.raises(proton.ProfilerError, match="metric 'tokens' of scope 'outer' changed type from int to float"):
        with proton.scope("outer", metrics={"tokens": 0.5}):
            pass
    assert h.scope_stack() == []  # the rejected scope was not left open

    # hook="triton": Triton calls the hook with each launch's LazyDict.
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    assert h.triton_launch_hook in triton.knobs.runtime.launch_enter_hook.calls
    metadata = LazyDict({"name": "k3"})
    metadata.add(lambda: {"flops16": 1e6, "bytes": 4096}, ())
    triton.knobs.runtime.launch_enter_hook(metadata)
    fake.fake_launch(CBID_cuLaunchKernel, b"k3", 2000, 2100, 1)
    fake.fake_launch(CBID_cuLaunchKernel, b"k3", 2200, 2300, 1)  # no metadata for this one

    report = proton.finalize()
    assert h.triton_launch_hook not in triton.knobs.runtime.launch_enter_hook.calls
    assert report.kernels == 4
    data = json.load(open(report.files["tree"]))
    root = data[0]
    # The root's own values are zero, and it names every numeric metric below
    # it (hatchet sums only those into inclusive values), as upstream writes it.
    assert set(root["metrics"].values()) == {0} and {"count", "time (ns)"} <= set(root["metrics"])
    assert isinstance(data[1], dict) and "frame" not in data[1]  # the device-info object, always there
    outer = _find(root, "outer")
    assert outer["metrics"] == {"tokens": 3}
    assert _find(outer, "k1")["metrics"] == {"time (ns)": 200, "count": 1, "device_id": "0", "device_type": "CUDA"}
    total = inclusive(root)
    assert total["metrics"]["count"] == 4 and total["metrics"]["time (ns)"] == 200 + 600 + 200
    assert _find(total, "outer")["metrics"]["time (ns)"] == 800
    assert _find(outer, "fwd")["frame"]["type"] == "state"
    assert _find(outer, "fwd", "k2")["metrics"]["time (ns)"] == 600
    k3 = _find(root, "k3")["metrics"]
    assert k3["count"] == 2 and k3["flops16"] == 1e6 and k3["bytes"] == 4096

    events = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    # Triton's Proton's layout: complete events only, the calling context as a list
    assert {e["ph"] for e in events} == {"X"} and {e["pid"] for e in events} == {"GPU 0"}
    assert [e["args"]["call_stack"] for e in events] == [
        ["ROOT", "outer", "k1"],
        ["ROOT", "outer", "fwd", "k2"],
        ["ROOT", "k3"],
        ["ROOT", "k3"],
    ]
    assert [(e["name"], e["args"]["call_path"], e["ts"], e["dur"]) for e in events] == [
        ("k1", "outer", 0.0, 0.2),
        ("k2", "outer/fwd", 0.3, 0.6),
        ("k3", "ROOT", 1.9, 0.1),
        ("k3", "ROOT", 2.1, 0.1),
    ]


def test_sessions_and_activation(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    a = proton.start(str(tmp_path / "a"), backend="cupti", quiet=True)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    proton.start(str(tmp_path / "b"), backend="cupti", quiet=True)
    with pytest.raises(proton.ProfilerError, match="share one context mode"):
        proton.start(str(tmp_path / "c"), backend="cupti", context="python")
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    proton.deactivate(a)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    proton.activate(a)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    reports = proton.finalize()
    assert [r.kernels for r in reports] == [3, 3]
    assert [s.name for s in host_session.open_sessions()] == []
    assert not h.cupti_tracing()  # the last session stopped tracing


def test_profile_decorator(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))

    @proton.profile(name=str(tmp_path / "deco"), backend="cupti", quiet=True)
    @proton.scope("work")
    def work():
        fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 50, 1)

    work()
    proton.finalize()  # the decorator deactivates, as upstream; finalize writes
    tree = json.load(open(tmp_path / "deco.hatchet"))[0]
    assert _find(tree, "work", "k")["metrics"]["count"] == 1


def test_launch_metadata_name_and_demangling(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    proton.start(str(tmp_path / "names"), backend="cupti", hook="triton", quiet=True)
    for size in (64, 128, 64):
        metadata = LazyDict({"name": "matmul"})
        metadata.add(lambda size=size: {"name": f"matmul_{size}", "flops16": 2.0 * size**3}, ())
        triton.knobs.runtime.launch_enter_hook(metadata)
        fake.fake_launch(CBID_cuLaunchKernel, b"matmul", 0, 10, 1)
    fake.fake_launch(CBID_cuLaunchKernel, b"_ZN2at6native4workEv", 0, 5, 1)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert _find(root, "matmul_64")["metrics"]["count"] == 2
    assert _find(root, "matmul_64")["metrics"]["flops16"] == 2 * 2.0 * 64**3
    assert _find(root, "matmul_128")["metrics"]["count"] == 1
    assert not [c for c in root["children"] if c["frame"]["name"] == "matmul"]
    assert _find(root, "at::native::work()")["metrics"]["count"] == 1


def test_launch_metadata_evaluation_and_errors(fake, fake_path, tmp_path, monkeypatch):
    # The hook calls a LazyDict's one launch_metadata function itself; a
    # LazyDict with several goes through get(), later results overriding.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    proton.start(str(tmp_path / "md"), backend="cupti", hook="triton", quiet=True)
    calls = []
    single = LazyDict({"name": "k"})
    single.add(lambda n: calls.append(n) or {"bytes": 8.0 * n}, (16,))
    triton.knobs.runtime.launch_enter_hook(single)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    assert calls == [16]
    assert single.get()["bytes"] == 128.0 and calls == [16, 16]  # still usable by other hooks
    several = LazyDict({"name": "k"})
    several.add(lambda: {"flops32": 1.0, "bytes": 1.0}, ())
    several.add(lambda: {"bytes": 2.0}, ())
    triton.knobs.runtime.launch_enter_hook(several)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)

    def broken(grid, metadata, args):
        raise KeyError("n")

    for function, error in (
        (lambda: [1, 2], "must return a dict"),
        (lambda: {"bytes": "many"}, "launch_metadata of kernel k gave a non-numeric 'bytes'"),
        (broken, "'n'"),
    ):
        metadata = LazyDict({"name": "k"})
        metadata.add(function, () if function is not broken else (None, None, {}))
        with pytest.raises((TypeError, ValueError, KeyError), match=error):
            triton.knobs.runtime.launch_enter_hook(metadata)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    k = _find(root, "k")["metrics"]
    assert k["count"] == 2 and k["bytes"] == 128.0 + 2.0 and k["flops32"] == 1.0


def test_session_tree_loads_in_hatchet(fake, fake_path, tmp_path, monkeypatch):
    hatchet = pytest.importorskip("hatchet")
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    proton.start(str(tmp_path / "ht"), backend="cupti", quiet=True)
    with proton.scope("outer", metrics={"tokens": 7}):
        fake.fake_launch(CBID_cuLaunchKernel, b"k1", 0, 100, 1)
        with proton.state("fwd"):
            fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 300, 1)
    report = proton.finalize()
    data = json.load(open(report.files["tree"]))
    roots = [node for node in data if "frame" in node]
    gf = hatchet.GraphFrame.from_literal(roots)
    frame = gf.dataframe.reset_index()
    by_name = {row["name"]: row for _, row in frame.iterrows()}
    gf.update_inclusive_columns()
    by_name = {row["name"]: row for _, row in gf.dataframe.reset_index().iterrows()}
    assert by_name["ROOT"]["time (ns) (inc)"] == 400 and by_name["outer"]["tokens"] == 7
    assert by_name["k2"]["count"] == 1 and by_name["fwd"]["time (ns) (inc)"] == 300


def test_kernels_launched_by_launch_metadata_are_kept_apart(fake, fake_path, tmp_path, monkeypatch):
    # As in Triton's Proton: what launch_metadata itself launches goes under
    # a __proton_launch_metadata node, not among the user's kernels.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    def metadata_that_launches():
        fake.fake_launch(CBID_cuLaunchKernel, b"item_copy", 0, 3, 1)
        return {"flops32": 10.0}

    from proton.host import launch_hook

    monkeypatch.setattr(launch_hook, "_triton_version", lambda: (3, 6))  # 3.8+ adds the kernel's frame
    proton.start(str(tmp_path / "apart"), backend="cupti", hook="triton", quiet=True)
    with proton.scope("step"):
        lazy = LazyDict({"name": "k"})
        lazy.add(metadata_that_launches, ())
        triton.knobs.runtime.launch_enter_hook(lazy)
        fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
        assert h.scope_stack() == ["step"]  # the metadata scope is closed again
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert _find(root, "step", "__proton_launch_metadata", "item_copy")["metrics"]["count"] == 1
    kernel = _find(root, "step", "k")["metrics"]
    assert kernel["count"] == 1 and kernel["flops32"] == 10.0


def test_launch_metadata_kernels_under_python_frames(fake, fake_path, tmp_path, monkeypatch):
    # context="python": frames replace scopes, and what launch_metadata
    # launches still goes under __proton_launch_metadata (its parent).
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    def metadata_that_launches():
        fake.fake_launch(CBID_cuLaunchKernel, b"reduce_in_metadata", 0, 3, 1)
        return {"name": "renamed"}

    from proton.host import launch_hook

    monkeypatch.setattr(launch_hook, "_triton_version", lambda: (3, 6))  # 3.8+ adds the kernel's frame
    proton.start(str(tmp_path / "pyctx"), backend="cupti", hook="triton", context="python", quiet=True)
    lazy = LazyDict({"name": "k"})
    lazy.add(metadata_that_launches, ())
    triton.knobs.runtime.launch_enter_hook(lazy)
    fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    fake.fake_launch(CBID_cuLaunchKernel, b"after", 0, 10, 1)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    parents = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node["children"]:
            parents[child["frame"]["name"]] = node["frame"]["name"]
            stack.append(child)
    assert parents["reduce_in_metadata"] == "__proton_launch_metadata"
    assert parents["__proton_launch_metadata"] != "ROOT"  # below the Python frames
    assert "renamed" in parents and parents["after"] != "__proton_launch_metadata"


def test_launch_id_per_launch_and_thread(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import threading

    import triton.knobs
    from triton.compiler.compiler import LazyDict

    from proton.hooks import launch as launch_hook

    proton.start(str(tmp_path / "ids"), backend="cupti", hook="triton", quiet=True)
    ids = {}

    def worker(name):
        seen = [launch_hook.id.get()]  # a new thread's context: no launch yet
        for _ in range(50):
            triton.knobs.runtime.launch_enter_hook(LazyDict({"name": name}))
            fake.fake_launch(CBID_cuLaunchKernel, name.encode(), 0, 1, 1)
            seen.append(launch_hook.id.get())
        ids[name] = seen

    threads = [threading.Thread(target=worker, args=(name,)) for name in ("idk_a", "idk_b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    proton.finalize()
    assert ids["idk_a"][0] is None and ids["idk_b"][0] is None
    every = ids["idk_a"][1:] + ids["idk_b"][1:]
    assert len(set(every)) == 100 and all(isinstance(i, int) for i in every)


def test_threads_without_scopes_launch_under_the_main_threads_scope(fake, fake_path, tmp_path, monkeypatch):
    # As autograd's backward thread: its kernels belong to the scope the
    # main thread has open (Triton's Proton counts them there too).
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import threading

    proton.start(str(tmp_path / "bwd"), backend="cupti", quiet=True)
    with proton.scope("forward"):
        fake.fake_launch(CBID_cuLaunchKernel, b"fwd_k", 0, 1, 1)
    with proton.scope("backward"):
        thread = threading.Thread(target=lambda: fake.fake_launch(CBID_cuLaunchKernel, b"bwd_k", 0, 2, 1))
        thread.start()
        thread.join()

    def own_scope():
        with proton.scope("worker_scope"):
            fake.fake_launch(CBID_cuLaunchKernel, b"own_k", 0, 3, 1)

    with proton.scope("main_other"):
        thread = threading.Thread(target=own_scope)
        thread.start()
        thread.join()
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["forward", "backward", "worker_scope"]
    assert _find(root, "backward", "bwd_k")["metrics"]["count"] == 1
    assert _find(root, "worker_scope", "own_k")["metrics"]["count"] == 1


def test_launch_metadata_kernels_below_the_kernel_on_triton_38(fake, fake_path, tmp_path, monkeypatch):
    # Triton 3.8+ shows what launch_metadata launches below the launching
    # kernel's name inside the metadata frame; metadata_state(kernel) is the
    # same place, for launches a user makes on a kernel's behalf.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    from proton.host import launch_hook

    monkeypatch.setattr(launch_hook, "_triton_version", lambda: (3, 9))

    def metadata_that_launches():
        fake.fake_launch(CBID_cuLaunchKernel, b"item_copy", 0, 3, 1)
        return {"flops32": 10.0}

    proton.start(str(tmp_path / "perkernel"), backend="cupti", hook="triton", quiet=True)
    try:
        with proton.scope("step"):
            lazy = LazyDict({"name": "k"})
            lazy.add(metadata_that_launches, ())
            triton.knobs.runtime.launch_enter_hook(lazy)
            fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
            with proton.metadata_state("k2"):
                fake.fake_launch(CBID_cuLaunchKernel, b"fill", 0, 4, 1)
            with proton.metadata_state():
                fake.fake_launch(CBID_cuLaunchKernel, b"plain_fill", 0, 5, 1)
        root = json.load(open(proton.finalize().files["tree"]))[0]
    finally:
        from proton import _host

        _host.set_launch_metadata_per_kernel(False)
    assert _find(root, "step", "__proton_launch_metadata", "k", "item_copy")["metrics"]["count"] == 1
    assert _find(root, "step", "k")["metrics"]["flops32"] == 10.0
    assert _find(root, "step", "__proton_launch_metadata", "k2", "fill")["metrics"]["count"] == 1
    assert _find(root, "step", "__proton_launch_metadata", "plain_fill")["metrics"]["count"] == 1


def test_vector_metrics_sum_element_wise(fake, fake_path, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    proton.start(str(tmp_path / "vec"), backend="cupti", quiet=True)
    for _ in range(2):
        with proton.scope("s", metrics={"veci": [1, 2, 3], "vecd": (1.0, 2.0, 3.0), "n": 1}):
            pass
    with pytest.raises(proton.ProfilerError, match="vector metric of 3 values"):
        proton.enter_scope("s", metrics={"veci": [1, 2]})
    with pytest.raises(proton.ProfilerError, match="metric 'bad' of scope 's' is list"):
        proton.enter_scope("s", metrics={"bad": [1, "x"]})
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert _find(root, "s")["metrics"] == {"veci": [2, 4, 6], "vecd": [2.0, 4.0, 6.0], "n": 2}


def test_launch_metadata_metrics_beyond_flops_and_bytes(fake, fake_path, tmp_path, monkeypatch):
    # Any numeric key of launch_metadata's result is a metric of the launch
    # ("flops" and "extra_metric" here), typed as Triton's Proton types them.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    proton.start(str(tmp_path / "extra"), backend="cupti", hook="triton", quiet=True)
    with proton.scope("test0"):
        for _ in range(2):
            lazy = LazyDict({"name": "foo"})
            lazy.add(
                lambda: {"name": "foo_named", "flops32": 1.0, "flops": 3, "extra_metric": 7.0, "note": "x", "bytes": 4},
                (),
            )
            triton.knobs.runtime.launch_enter_hook(lazy)
            fake.fake_launch(CBID_cuLaunchKernel, b"foo", 0, 10, 1)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    metrics = _find(root, "test0", "foo_named")["metrics"]
    assert metrics["flops32"] == 2.0 and metrics["bytes"] == 8 and metrics["count"] == 2
    assert metrics["flops"] == 6.0 and isinstance(metrics["flops"], float)
    assert metrics["extra_metric"] == 14.0 and "note" not in metrics


def test_launch_hook_filter_and_hook_object(fake, fake_path, tmp_path, monkeypatch):
    # LaunchHook().configure(include=, exclude=): launch_metadata is evaluated
    # only for kernels whose name matches; start(hook=LaunchHook()) is hook="triton".
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    from proton.hooks.launch import LaunchHook

    called = []

    def launch(kernel):
        lazy = LazyDict({"name": kernel})
        lazy.add(lambda: called.append(kernel) or {"name": kernel + "_meta", "flops32": 1.0}, ())
        triton.knobs.runtime.launch_enter_hook(lazy)
        fake.fake_launch(CBID_cuLaunchKernel, kernel.encode(), 0, 10, 1)

    hook = LaunchHook()
    assert hook is LaunchHook()
    hook.configure(include=".*foo", exclude="foo_skip")
    try:
        proton.start(str(tmp_path / "filter"), backend="cupti", hook=hook, quiet=True)
        with proton.scope("t"):
            for kernel in ("my_foo", "bar", "foo_skip"):
                launch(kernel)
        root = json.load(open(proton.finalize().files["tree"]))[0]
    finally:
        hook.configure(include=None, exclude=None)
    assert called == ["my_foo"]
    assert sorted(c["frame"]["name"] for c in _find(root, "t")["children"]) == ["bar", "foo_skip", "my_foo_meta"]
    with pytest.raises(proton.ProfilerError, match="unknown hook 'torch'"):
        proton.start("x", backend="cupti", hook="torch")


class CpuTensor:
    """A tensor on the CPU as the session relies on one (data_ptr, device,
    numel, item, tolist)."""

    device = type("Device", (), {"type": "cpu"})()

    def __init__(self, values):
        self.values = np.asarray(values)

    def data_ptr(self):
        return 0

    def numel(self):
        return self.values.size

    def item(self):
        return self.values.item()

    def tolist(self):
        return self.values.tolist()


def test_cpu_tensor_metrics_are_their_values(fake, fake_path, tmp_path, monkeypatch):
    # A tensor on the CPU is read at once (its number or list); a device
    # tensor would be summed on the device (GPU tests).
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    proton.start(str(tmp_path / "cpu_t"), backend="cupti", quiet=True)
    with proton.scope("s", metrics={"one": CpuTensor(2.5), "many": CpuTensor([1, 2])}):
        pass
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert _find(root, "s")["metrics"] == {"one": 2.5, "many": [1, 2]}


def test_tensor_flops_and_bytes_are_never_read_by_the_hook(fake, fake_path, tmp_path, monkeypatch):
    # flops8..64 and bytes given as tensors are handed to the Python side
    # whole: float() of a one-value GPU tensor reads it back, a
    # synchronization that invalidates a CUDA graph capture.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    import triton.knobs
    from triton.compiler.compiler import LazyDict

    floats = []

    class OneValueTensor(CpuTensor):  # whose float() is counted
        def __float__(self):
            floats.append(self)
            return float(self.values)

    proton.start(str(tmp_path / "one_value"), backend="cupti", hook="triton", quiet=True)
    with proton.scope("s"):
        lazy = LazyDict({"name": "k"})
        lazy.add(lambda: {"bytes": OneValueTensor(64), "flops32": OneValueTensor(2.5), "flops16": 1.0}, ())
        triton.knobs.runtime.launch_enter_hook(lazy)
        fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert floats == []
    metrics = _find(root, "s", "k")["metrics"]
    assert (metrics["bytes"], metrics["flops32"], metrics["flops16"]) == (64, 2.5, 1.0), metrics


def test_children_in_the_order_this_session_used_them(fake, fake_path, tmp_path, monkeypatch):
    # Context nodes are process-wide: a scope an earlier session made first
    # must not come first in a later session that used it second.
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    proton.start(str(tmp_path / "earlier"), backend="cupti", quiet=True)
    with proton.scope("order_second"):
        fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 1, 1)
    proton.finalize()
    proton.start(str(tmp_path / "later"), backend="cupti", quiet=True)
    fake.fake_launch(CBID_cuLaunchKernel, b"at_root", 0, 1, 1)
    with proton.scope("order_first"):
        fake.fake_launch(CBID_cuLaunchKernel, b"k1", 0, 1, 1)
    with proton.scope("order_second"):
        fake.fake_launch(CBID_cuLaunchKernel, b"k2", 0, 1, 1)
    root = json.load(open(proton.finalize().files["tree"]))[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["at_root", "order_first", "order_second"]
