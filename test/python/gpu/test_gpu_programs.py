"""Real programs on a GPU lose nothing silently: every launch kept by
default (compiled variants named apart), do_bench repetitions, two streams
overlapping on the global timer, CUDA graphs captured and replayed (several
graphs, a replay after the session ended), and a torchrun job of two ranks
merged into one trace. Values are checked against plain runs, events
counted exactly."""

import json
import os
import subprocess
import sys

import pytest
import suite_paths

torch = pytest.importorskip("torch")
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import proton  # noqa: E402
import proton.language as pl  # noqa: E402

from kernels import vector_add  # noqa: E402

pytestmark = pytest.mark.gpu

WARPS, SCOPES = 4, 3  # vector_add: kernel > load, store in each of 4 warps


def vadd(x, y, block=1024):
    out = torch.empty_like(x)
    vector_add[(triton.cdiv(x.numel(), block),)](x, y, out, x.numel(), BLOCK=block, num_warps=4)
    return out


def events_of(ctas):
    return ctas * WARPS * SCOPES


def inputs(n, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)


def test_every_launch_and_variant_is_kept(tmp_path):
    x, y = inputs(1 << 16)
    plain = [vadd(x, y, 1024), vadd(x, y, 256), vadd(x[:4096], y[:4096], 1024)]
    proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    profiled = [vadd(x, y, 1024), vadd(x, y, 256), vadd(x[:4096], y[:4096], 1024)]
    report = proton.finalize()
    assert all(torch.equal(a, b) for a, b in zip(plain, profiled))
    assert report.launches_kept == 3 and report.launches_skipped == 0 and report.errors == []
    big, small = "vector_add[BLOCK=1024, num_warps=4, num_stages=3]", "vector_add[BLOCK=256, num_warps=4, num_stages=3]"
    assert report.per_kernel[big]["kept"] == 2 and report.per_kernel[small]["kept"] == 1
    assert report.per_kernel[big]["events"] == events_of(64) + events_of(4)
    assert report.per_kernel[small]["events"] == events_of(256)
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    assert sum(1 for e in trace if e["ph"] == "X") == report.events == events_of(64 + 4 + 256)


def test_do_bench_keeps_its_last_repetition(tmp_path):
    x, y = inputs(1 << 20)
    proton.start(str(tmp_path / "bench"), backend="instrumentation", quiet=True)
    vadd(x, y)  # before the benchmark: kept
    triton.testing.do_bench(lambda: vadd(x, y), warmup=5, rep=20)
    report = proton.finalize()
    info = report.per_kernel["vector_add"]
    assert info["kept"] == 2 and info["not_kept"]["do_bench"] > 10
    assert report.events == 2 * events_of(1024)


@triton.jit
def _globaltimer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def wait_ns(out, NS: tl.constexpr):
    with pl.scope("wait"):
        g0 = _globaltimer()
        g = g0
        while g - g0 < NS:
            g = _globaltimer()
    tl.store(out + tl.program_id(0), (g - g0).to(tl.int32))


def test_two_streams_overlap_on_the_global_timer(tmp_path):
    outs = [torch.zeros(8, dtype=torch.int32, device="cuda") for _ in range(3)]
    streams = [torch.cuda.Stream() for _ in range(2)]
    proton.start(str(tmp_path / "streams"), backend="instrumentation", quiet=True)
    wait_ns[(8,)](outs[2], NS=2_000_000)  # compiles the instrumented build: launch 0
    torch.cuda.synchronize()
    for out, stream in zip(outs, streams):
        with torch.cuda.stream(stream):
            wait_ns[(8,)](out, NS=2_000_000)  # 2 ms each, 8 CTAs: both fit the GPU at once
    torch.cuda.synchronize()
    report = proton.finalize()
    assert all(bool((o >= 2_000_000).all()) for o in outs)
    assert report.launches_kept == 3 and report.events == 3 * 8 * 4
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    spans = {}
    for e in trace:
        launch = e["pid"].rsplit(" Core", 1)[0]  # "<kernel> #<launch> Core<sm> CTA<cta>"
        lo, hi = spans.get(launch, (float("inf"), 0))
        spans[launch] = (min(lo, e["ts"]), max(hi, e["ts"] + e["dur"]))
    (a0, a1), (b0, b1) = spans["wait_ns #1"], spans["wait_ns #2"]
    overlap = min(a1, b1) - max(a0, b0)  # microseconds
    assert overlap > 1000, spans  # they ran side by side for most of their 2 ms


def test_a_graph_replayed_a_thousand_times_records_every_replay(tmp_path):
    """A decode-step-like graph replayed 1,000 times with new inputs each
    time: every replay is a launch of its own, with every event, in replay
    order on the timeline, and the outputs are right."""
    x, y = inputs(1 << 16)
    proton.start(str(tmp_path / "replays"), backend="instrumentation", quiet=True, outputs="chrome_trace")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        vadd(x, y, 1024)  # compiles off the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = vadd(x, y, 1024)
    sums = torch.empty(1000, device="cuda")
    for step in range(1000):
        x.add_(1.0)  # the next token's input
        graph.replay()
        sums[step] = out.sum()
    report = proton.finalize()
    assert report.errors == [] and report.launches_skipped == 0
    assert report.launches_kept == 1 + 1000
    assert report.events == 1001 * events_of(64)
    assert torch.equal(out, x + y)
    steps = torch.arange(1, 1001, device="cuda", dtype=torch.float32)
    assert torch.allclose(sums, (x - 1000 + y).sum() + steps * x.numel(), rtol=1e-4)
    # Each replay is its own launch, in order on the timeline.
    starts = {}
    for e in json.load(open(report.files["chrome_trace"]))["traceEvents"]:
        if e.get("ph") == "X":
            launch = int(e["pid"].split(" #", 1)[1].split()[0])
            starts[launch] = min(starts.get(launch, e["ts"]), e["ts"])
    assert len(starts) == 1001
    replay_starts = [starts[k] for k in sorted(starts)][1:]
    assert all(a < b for a, b in zip(replay_starts, replay_starts[1:]))


def test_cuda_graphs_record_every_replay(tmp_path):
    x, y = inputs(1 << 16)
    expected = x + y
    proton.start(str(tmp_path / "graphs"), backend="instrumentation", quiet=True)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        vadd(x, y, 1024)  # warm-up (compiles) off the capture, as PyTorch asks: kept
        vadd(x, y, 512)
    torch.cuda.current_stream().wait_stream(side)
    graphs, outs = [], []
    for block in (1024, 512):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs.append(vadd(x, y, block))
        graphs.append(graph)
    never = torch.cuda.CUDAGraph()
    with torch.cuda.graph(never):
        vadd(x, y, 512)
    for _ in range(3):
        graphs[0].replay()
    graphs[1].replay()
    report = proton.finalize()
    assert all(torch.equal(o, expected) for o in outs)
    assert report.errors == []
    # the two eager warm-ups, graph 0's three replays, graph 1's replay
    assert report.launches_kept == 6
    assert report.events == 4 * events_of(64) + 2 * events_of(128)
    text = "\n".join(report.graphs)
    assert "captured in graph 0: 3 replays, each recorded as a launch of its own" in text
    assert "captured in graph 1: 1 replay, each recorded as a launch of its own" in text
    assert "captured in graph 2: never replayed while the session was open, no records" in text
    # After the session: replays still run right, into the graph's own buffers.
    outs[0].zero_()
    graphs[0].replay()
    never.replay()
    torch.cuda.synchronize()
    assert torch.equal(outs[0], expected)


RANK_SCRIPT = """
import os, sys
import torch, torch.distributed as dist
sys.path[:0] = {import_path!r}
import proton
from kernels import vector_add
dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.full((1 << 16,), float(rank + 1), device="cuda")
proton.start("run", backend="instrumentation", quiet=True)
out = torch.empty_like(x)
vector_add[(64,)](x, x, out, x.numel(), BLOCK=1024, num_warps=4)
dist.all_reduce(out)
report = proton.finalize()
assert torch.all(out == 6.0), out
assert report.events == 64 * 4 * 3, report.summary()
dist.destroy_process_group()
"""


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_torchrun_two_ranks_merge_into_one_timeline(tmp_path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    script = tmp_path / "job.py"
    script.write_text(RANK_SCRIPT.format(import_path=suite_paths.IMPORT_PATH))
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), NCCL_NVLS_ENABLE="0")
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    inputs = sorted(p.name for p in tmp_path.glob("run.rank_*.pftrace"))
    assert inputs == ["run.rank_0.pftrace", "run.rank_1.pftrace"]
    merged = tmp_path / "merged.pftrace"
    done = subprocess.run(
        [sys.executable, "-m", "proton.commands.merge_traces", "-o", str(merged), *inputs],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    trace = Trace.FromString(merged.read_bytes())
    processes = sorted(
        p.track_descriptor.process.process_name.split(":")[0]
        for p in trace.packet
        if p.HasField("track_descriptor") and p.track_descriptor.HasField("process")
    )
    assert processes == ["rank 0", "rank 1"]
    slices = sum(1 for p in trace.packet if p.HasField("track_event") and p.track_event.type == 1)
    assert slices == 2 * 64 * 4 * 3
    print(done.stderr)
