"""The host profiler on a GPU (CUPTI): kernel capture, attribution to scopes,
states and Python frames, CUDA graphs, launch-metadata metrics, copies and
sets, the timeline, several sessions."""

import json
import os

import pytest

import proton
from proton.writers.hatchet_tree import inclusive
import suite_paths

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
import triton.language as tl  # noqa: E402


def _metadata(grid, kernel, args):
    return {"name": "add_one", "flops32": 2.0 * args["n"], "bytes": 8.0 * args["n"]}


@triton.jit(launch_metadata=_metadata)
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1.0, mask=mask)


def launch(x, times=1):
    for _ in range(times):
        add_one[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)


def load(report):
    """The session's tree with inclusive metrics (the file holds each node's
    own, as Triton's Proton writes it), and its device info."""
    with open(report.files["tree"]) as f:
        root, devices = json.load(f)
    return [inclusive(root), devices]


def find(node, *names):
    for name in names:
        matches = [c for c in node["children"] if c["frame"]["name"] == name]
        assert matches, (
            f"no child {name!r} under {node['frame']['name']!r}: {[c['frame']['name'] for c in node['children']]}"
        )
        node = matches[0]
    return node


def kernel_nodes(node):
    out = [node] if node["frame"]["type"] == "kernel" else []
    for child in node["children"]:
        out += kernel_nodes(child)
    return out


@pytest.fixture
def x():
    tensor = torch.zeros(4096, device="cuda")
    launch(tensor)  # compiled outside the sessions
    torch.cuda.synchronize()
    return tensor


def test_kernels_land_in_scopes(tmp_path, x):
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    with proton.scope("outer"):
        launch(x, 3)
        with proton.scope("inner"):
            launch(x, 5)
    launch(x, 2)
    report = proton.finalize()
    root = load(report)[0]
    assert find(root, "outer", "add_one")["metrics"]["count"] == 3
    inner = find(root, "outer", "inner", "add_one")["metrics"]
    assert inner["count"] == 5 and inner["time (ns)"] > 0
    assert find(root, "add_one")["metrics"]["count"] == 2
    assert root["metrics"]["count"] == 10 and report.kernels == 10
    assert find(root, "outer")["metrics"]["count"] == 8  # inclusive
    assert torch.all(x == 11)


def test_state_overrides(tmp_path, x):
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    with proton.scope("step"):
        with proton.state("forward"):
            launch(x, 2)
            with proton.state("backward"):
                launch(x, 3)
    report = proton.finalize()
    root = load(report)[0]
    assert find(root, "step", "forward", "add_one")["metrics"]["count"] == 2
    assert find(root, "step", "backward", "add_one")["metrics"]["count"] == 3


def _python_site():
    launch(pytest.x_for_python_context, 4)


def test_python_context(tmp_path, x):
    pytest.x_for_python_context = x
    proton.start(str(tmp_path / "run"), backend="cupti", context="python", quiet=True)
    _python_site()
    report = proton.finalize()
    names = []

    def walk(node):
        names.append(node["frame"]["name"])
        for child in node["children"]:
            walk(child)

    walk(load(report)[0])
    assert any(name.endswith("@_python_site") and "test_gpu_host.py" in name for name in names), names
    assert any(name.endswith("@test_python_context") for name in names)
    assert not any(
        "/triton/" in name or "/proton/" in name.replace("test/python", "") for name in names if "@" in name
    ), names


def test_launch_metadata_hook(tmp_path, x):
    before = list(triton.knobs.runtime.launch_enter_hook.calls)
    proton.start(str(tmp_path / "run"), backend="cupti", hook="triton", quiet=True)
    launch(x, 7)
    report = proton.finalize()
    assert list(triton.knobs.runtime.launch_enter_hook.calls) == before
    metrics = find(load(report)[0], "add_one")["metrics"]
    assert metrics["count"] == 7
    assert metrics["flops32"] == 7 * 2.0 * x.numel()
    assert metrics["bytes"] == 7 * 8.0 * x.numel()


def test_user_metrics(tmp_path, x):
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    for _ in range(3):
        with proton.scope("step", metrics={"tokens": 128}):
            launch(x)
    with pytest.raises(proton.ProfilerError, match="changed type from int to float"):
        with proton.scope("step", metrics={"tokens": 1.5}):
            pass
    report = proton.finalize()
    step = find(load(report)[0], "step")
    assert step["metrics"]["tokens"] == 384 and step["metrics"]["count"] == 3


def test_cuda_graph_attributed_to_capture(tmp_path, x):
    from proton import _host

    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        launch(x)  # warm-up on the capture stream
        stream.synchronize()
        with proton.scope("capture"):
            with torch.cuda.graph(graph, stream=stream):
                launch(x, 2)
    torch.cuda.synchronize()
    kept = _host.counters()["graph_nodes_kept"]
    with proton.scope("replay"):
        for _ in range(200):
            graph.replay()
    torch.cuda.synchronize()
    assert _host.counters()["graph_nodes_kept"] == kept  # no growth per replay
    report = proton.finalize()
    root = load(report)[0]
    # As in Triton's Proton: replay's context, <captured_at>, then where the
    # kernels were captured.
    captured = find(root, "replay", "<captured_at>", "capture", "add_one")["metrics"]["count"]
    assert captured == 400, json.dumps(root)[:2000]


def test_copies_and_sets(tmp_path, x):
    proton.start(str(tmp_path / "run"), backend="cupti", quiet=True)
    with proton.scope("io"):
        host = x.cpu()
        x.copy_(host.cuda())
        x.zero_()
    report = proton.finalize()
    io = find(load(report)[0], "io")
    names = {c["frame"]["name"]: c["frame"]["type"] for c in io["children"]}
    assert names.get("memcpy DtoH") == "memcpy" and names.get("memcpy HtoD") == "memcpy", names


def test_trace_timeline(tmp_path, x):
    proton.start(str(tmp_path / "run"), backend="cupti", data="trace", quiet=True)
    with proton.scope("t"):
        launch(x, 6)
    report = proton.finalize()
    with open(report.files["chrome_trace"]) as f:
        events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X" and e["name"] == "add_one"]
    assert len(events) == 6
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts) and all(e["dur"] > 0 for e in events)
    assert all(e["args"]["call_path"] == "t" for e in events)


def test_two_sessions(tmp_path, x):
    a = proton.start(str(tmp_path / "a"), backend="cupti", quiet=True)
    launch(x, 2)
    b = proton.start(str(tmp_path / "b"), backend="cupti", quiet=True)
    launch(x, 3)
    proton.deactivate(a)
    launch(x, 4)
    report_a = proton.finalize(a)
    launch(x, 1)
    report_b = proton.finalize(b)
    assert report_a.kernels == 5
    assert report_b.kernels == 8


def test_disabled_is_a_no_op(tmp_path, x, monkeypatch):
    monkeypatch.setenv("PROTON_DISABLE", "1")
    session = proton.start(str(tmp_path / "off"), backend="cupti")
    with proton.scope("s"):
        launch(x)
    assert session is None and proton.finalize() is None
    assert not os.path.exists(str(tmp_path / "off.hatchet"))


def test_command_line_profiles_a_script(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "work.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path[:0] = {suite_paths.IMPORT_PATH!r}
        import torch, proton
        from test_gpu_host import launch
        x = torch.zeros(4096, device="cuda")
        with proton.scope("cli_scope"):
            launch(x, 4)
        torch.cuda.synchronize()
        sys.exit(3)
    """)
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "proton.commands.profile",
            "--backend",
            "cupti",
            "--name",
            str(tmp_path / "cli"),
            str(script),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 3, result.stderr  # the script's exit code
    root = json.load(open(tmp_path / "cli.hatchet"))[0]
    assert find(root, "cli_scope", "add_one")["metrics"]["count"] == 4
    view = subprocess.run(
        [sys.executable, "-m", "proton.viewer", "-m", "count", str(tmp_path / "cli.hatchet")],
        capture_output=True,
        text=True,
    )
    assert view.returncode == 0 and "cli_scope" in view.stdout and "add_one" in view.stdout


def _tensor_metadata(grid, kernel, args):
    # A metric only the device knows (a count computed by earlier kernels).
    return {"name": "tensor_flops", "flops": args["counter"], "tokens": args["counter"].to(torch.int64)}


@triton.jit(launch_metadata=_tensor_metadata)
def counted(x_ptr, counter, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)


def test_device_tensor_metrics(tmp_path, x):
    # Scope metrics and launch_metadata values that are device tensors are
    # summed on the device, in stream order, and read at finalize; inside a
    # CUDA graph every replay adds its value again.
    counter = torch.full((), 8.0, device="cuda")
    vector = torch.tensor([1.0, 2.0], device="cuda")
    counted[(1,)](x, counter, BLOCK=128)  # compiled outside the session
    torch.cuda.synchronize()
    proton.start(str(tmp_path / "tensors"), backend="cupti", hook="triton", quiet=True)
    with proton.scope("eager", metrics={"loss": counter, "vec": vector, "n": 1}):
        counted[(1,)](x, counter, BLOCK=128)
    counter.fill_(3.0)  # after the scope: its value was taken in stream order
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream):
        counted[(1,)](x, counter, BLOCK=128)  # warm-up on the capture stream
        stream.synchronize()
        with torch.cuda.graph(graph, stream=stream):
            with proton.scope("captured", metrics={"loss": counter}):
                counted[(1,)](x, counter, BLOCK=128)
    for _ in range(4):
        graph.replay()
    torch.cuda.synchronize()
    report = proton.finalize()
    with open(report.files["tree"]) as f:
        root = json.load(f)[0]
    eager = find(root, "eager")
    assert eager["metrics"]["loss"] == 8.0 and eager["metrics"]["vec"] == [1.0, 2.0] and eager["metrics"]["n"] == 1
    assert find(eager, "tensor_flops")["metrics"]["flops"] == 8.0
    assert find(eager, "tensor_flops")["metrics"]["tokens"] == 8
    captured = [n for n in _all(root) if n["frame"]["name"] == "captured"]
    assert sum(n["metrics"].get("loss", 0) for n in captured) == 4 * 3.0, json.dumps(root)[:3000]


def test_a_capture_across_streams_with_device_tensor_metrics_stays_valid(tmp_path, x):
    """A capture that forks onto a second stream and joins back, with a
    device-tensor launch metric (launch_metadata) and a scope metric on the
    forked stream: the profiler's adds are captured on the stream of the
    launch, so the capture stays valid, replays compute right, and each
    replay adds its values."""
    counter = torch.full((), 5.0, device="cuda")
    counted[(1,)](x, counter, BLOCK=128)  # compiled outside the session
    torch.cuda.synchronize()
    proton.start(str(tmp_path / "streams"), backend="cupti", hook="triton", quiet=True)
    main, side = torch.cuda.Stream(), torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    before = x.clone()
    with torch.cuda.stream(main):
        with torch.cuda.graph(graph, stream=main):
            side.wait_stream(main)
            with torch.cuda.stream(side):
                with proton.scope("forked", metrics={"loss": counter}):
                    counted[(1,)](x, counter, BLOCK=128)
            main.wait_stream(side)
            counted[(1,)](x, counter, BLOCK=128)
    torch.cuda.synchronize()
    for _ in range(3):
        graph.replay()
    torch.cuda.synchronize()
    report = proton.finalize()
    assert torch.equal(x[:128], before[:128] + 6.0)  # two kernels x three replays
    root = json.load(open(report.files["tree"]))[0]
    forked = [n for n in _all(root) if n["frame"]["name"] == "forked"]
    assert sum(n["metrics"].get("loss", 0) for n in forked) == 3 * 5.0, json.dumps(root)[:3000]
    flops = [n["metrics"].get("flops", 0) for n in _all(root) if n["frame"]["name"] == "tensor_flops"]
    assert sum(flops) == 6 * 5.0, json.dumps(root)[:3000]


def _all(node):
    out = [node]
    for child in node["children"]:
        out += _all(child)
    return out


def _branch_metadata(grid, kernel, args):
    # Like upstream's hook test: launch_metadata launches a kernel of its own
    # (here, setting the flops count), inside the capture as well.
    set_value[(1,)](args["flops"], 2.0)
    return {"name": "branch_kernel", "flops": args["flops"], "bytes": args["nbytes"], "rows": 3}


@triton.jit
def set_value(ptr, value):
    tl.store(ptr, value)


@triton.jit(launch_metadata=_branch_metadata)
def branch_kernel(y_ptr, flops, nbytes):
    tl.store(y_ptr, tl.load(y_ptr) + 1.0)


def test_a_graph_on_three_streams_is_attributed_per_replay(tmp_path):
    """A graph captured on three streams, each branch in a scope with a
    device-tensor metric and a host one, its kernel with device-tensor
    flops and bytes from launch_metadata (which launches a kernel itself),
    replayed 100 times, 20 of them while the session is deactivated: the
    capture stays valid, every replay computes, and the metrics of the 80
    active replays, and only those, are added below the replays' scope,
    at <captured_at>, as Triton's Proton 3.9 line attributes them."""
    ys = [torch.zeros(1, device="cuda") for _ in range(3)]
    losses = [torch.full((), float(i + 1), device="cuda") for i in range(3)]
    flops = [torch.zeros(1, device="cuda") for _ in range(3)]
    nbytes = torch.tensor([64], device="cuda", dtype=torch.int64)
    set_value[(1,)](flops[0], 0.0)
    branch_kernel[(1,)](ys[0], flops[0], nbytes)  # compiled outside the session
    torch.cuda.synchronize()
    ys[0].zero_()
    session = proton.start(str(tmp_path / "three"), backend="cupti", hook="triton", quiet=True)
    streams = [torch.cuda.Stream() for _ in range(3)]
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=streams[0]):
        for side in streams[1:]:
            side.wait_stream(streams[0])
        for i, stream in enumerate(streams):
            with torch.cuda.stream(stream), proton.scope(f"branch{i}", metrics={"loss": losses[i], "tokens": 5}):
                branch_kernel[(1,)](ys[i], flops[i], nbytes)
        for side in streams[1:]:
            streams[0].wait_stream(side)
    for replay in range(100):
        if replay == 40:
            proton.deactivate(session)
        if replay == 60:
            proton.activate(session)
        with proton.scope("replay"):
            graph.replay()
    torch.cuda.synchronize()
    report = proton.finalize(session)
    assert all(y.item() == 100.0 for y in ys), [y.item() for y in ys]  # every replay ran
    root = json.load(open(report.files["tree"]))[0]
    at = find(root, "replay", "<captured_at>")
    branches = sorted(c["frame"]["name"] for c in at["children"])
    assert branches == ["branch0", "branch1", "branch2"], json.dumps(at)[:2000]
    for i in range(3):
        branch = find(at, f"branch{i}")
        assert branch["metrics"]["loss"] == 80 * (i + 1.0) and branch["metrics"]["tokens"] == 80 * 5, branch["metrics"]
        kernel = find(branch, "branch_kernel")["metrics"]
        assert kernel["count"] == 80 and kernel["flops"] == 80 * 2.0, kernel
        assert kernel["bytes"] == 80 * 64 and kernel["rows"] == 80 * 3, kernel
        shown = {n["frame"]["name"] for n in _all(branch)}
        assert "<metric>" in shown and "set_value" in shown, shown
    # Nothing of the capture is shown where it was made (no kernel ran there;
    # torch's own fill of its RNG offset at capture_begin does run).
    made = [c["frame"]["name"] for c in root["children"]]
    assert not any(name.startswith("branch") for name in made), made
