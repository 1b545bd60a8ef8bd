"""What a session keeps of real programs, on the CPU with simulated launches
(FakeTorch, synthetic buffers): every launch by default, in order; the
memory budget and its counted policy; do_bench repetitions; compiled
variants named apart; CUDA graph captures and replays; kernels launched
without records. The GPU side is test_gpu_programs.py."""

import json
import sys

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.contract.kernel_metadata import BufferLayout
from proton.recording import benchmark_loops, cuda_graphs, launches, instrumentation_session as runtime, session_outputs

from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
import synthetic_buffers as synthetic
from test_decode import make
from test_session import FakeTorch
from fake_gpu_memory_support import write

EVENTS_PER_LAUNCH = 36  # make(ctas=3): 3 CTAs x 4 warps x 3 scopes


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


@pytest.fixture
def buffer():
    data, meta = make(ctas=3, kernel_id=41)
    kernel_metadata.register(meta)
    return data


class Launch:
    """What Triton's launcher passes to launch_enter_hook: the kernel's name and
    its CUfunction handle (one per compiled variant)."""

    def __init__(self, name, handle=None):
        self.data = {"name": name, "function": handle, "stream": 0}
        self.extras = []  # no launch_metadata function


class CompiledVariant:
    """Stands in for Triton's CompiledKernel in JITFunction.run's frame."""

    def __init__(self, num_warps, **constants):
        self.src = type("Src", (), {"constants": constants, "fn": None})()
        self.metadata = type("Meta", (), {"num_warps": num_warps, "num_stages": 3})()


def run(kernel, session, data, name, handle=None):
    """A launch as JITFunction.run makes it: `kernel` is a local of a frame
    named run, the launcher allocates the buffer, then calls the hook."""
    session._torch = session._torch or GraphTorch()
    if data is not None:
        if handle is not None:  # Triton's load hook registered the kernel's handle with its id
            kernel_metadata.register_loaded(handle, int(data[4:8].view("<u4")[0]))
        scratch = _allocation._profile_allocator(data.size, 16, 0)
        write(scratch, data)
    triton.knobs.runtime.launch_enter_hook(Launch(name, handle))


def start(tmp_path, **options):
    session = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True, **options)
    session._torch = GraphTorch()
    return session


def test_every_launch_is_kept_by_default_in_launch_order(tmp_path, buffer):
    session = start(tmp_path)
    for name in ("a", "b", "a", "c", "a"):
        run(None, session, buffer, name)
    assert [(k.kernel, k.index) for k in session.kept] == [("a", 0), ("b", 0), ("a", 1), ("c", 0), ("a", 2)]
    report = proton.finalize()
    assert report.launches_kept == 5 and report.launches_skipped == 0
    assert report.events == 5 * EVENTS_PER_LAUNCH and report.per_kernel["a"]["kept"] == 3
    assert "not kept" not in report.summary()


def test_budget_keeps_the_first_launches_and_counts_the_rest_per_kernel(tmp_path, buffer):
    session = start(tmp_path, max_buffer_bytes=3 * buffer.size)
    for name in ("a", "b", "a", "b", "a"):
        run(None, session, buffer, name)
    assert session.kept_bytes == 3 * buffer.size
    assert [(k.kernel, k.index) for k in session.kept] == [("a", 0), ("b", 0), ("a", 1)]
    report = proton.finalize()
    assert report.launches_kept == 3 and report.launches_skipped == 2
    assert report.per_kernel["a"]["not_kept"] == {"budget": 1} and report.per_kernel["b"]["skipped"] == 1
    summary = report.summary()
    assert "a: 2 launches kept, 72 events (shared buffer, 1024 B (128 records) per warp); not kept: 1 over " in summary
    assert "1 over max_buffer_bytes" in summary


def test_max_launches_per_kernel_keeps_the_last_launches(tmp_path, buffer):
    session = start(tmp_path, max_launches_per_kernel=2)
    for name in ("a", "a", "b", "a"):
        run(None, session, buffer, name)
    assert [(k.kernel, k.index) for k in session.kept] == [("a", 1), ("b", 0), ("a", 2)]
    report = proton.finalize()
    assert report.per_kernel["a"]["not_kept"] == {"max_launches_per_kernel": 1}


@pytest.mark.parametrize("monitoring", [True, False], ids=["sys.monitoring", "stack walk"])
def test_do_bench_repetitions_keep_the_last_launch(tmp_path, buffer, monkeypatch, monitoring):
    def bench(fn, reps):  # stands in for triton.testing.do_bench
        for _ in range(reps):
            fn()

    def failing_bench(fn):  # a benchmark that ends by an exception (an autotuner's config out of resources)
        fn()
        raise RuntimeError("out of resources")

    monkeypatch.setattr(benchmark_loops, "benchmark_codes", lambda: frozenset({bench.__code__, failing_bench.__code__}))
    if not monitoring:
        monkeypatch.setattr(benchmark_loops.sys, "monitoring", None, raising=False)
    elif not hasattr(sys, "monitoring"):
        pytest.skip("sys.monitoring is Python 3.12+")
    session = start(tmp_path)
    assert (session.benchmarks._tool is not None) == monitoring
    run(None, session, buffer, "a")  # before the benchmark: kept
    bench(lambda: run(None, session, buffer, "a"), 10)
    with pytest.raises(RuntimeError):
        failing_bench(lambda: run(None, session, buffer, "b"))
    run(None, session, buffer, "a")  # after them: kept (the failed benchmark left no trace)
    assert [(k.kernel, k.index) for k in session.kept] == [("a", 0), ("a", 10), ("b", 0), ("a", 11)]
    report = proton.finalize()
    assert report.per_kernel["a"]["not_kept"] == {"do_bench": 9}
    assert "9 do_bench repetitions (the last is kept)" in report.summary()
    if monitoring:
        assert session.benchmarks._tool is None  # the monitoring tool id is free again


def test_triton_benchmark_loops_are_known():
    import triton.testing

    assert triton.testing.do_bench.__code__ in benchmark_loops.benchmark_codes()


def test_compiled_variants_are_distinct_kernels(tmp_path, buffer):
    session = start(tmp_path)
    small, large = CompiledVariant(4, BLOCK=128), CompiledVariant(8, BLOCK=1024)
    for kernel, handle in ((small, 11), (large, 12), (small, 11)):
        run(kernel, session, buffer, "matmul", handle)
    run(None, session, buffer, "other", 13)  # one variant: its own name
    report = proton.finalize()
    assert report.per_kernel["matmul[BLOCK=128, num_warps=4, num_stages=3]"]["kept"] == 2
    assert report.per_kernel["matmul[BLOCK=1024, num_warps=8, num_stages=3]"]["kept"] == 1
    assert report.per_kernel["other"]["kept"] == 1
    tree = json.load(open(report.files["tree"]))[0]
    names = sorted(child["frame"]["name"] for child in tree["children"])
    assert names == [
        "matmul[BLOCK=1024, num_warps=8, num_stages=3]",
        "matmul[BLOCK=128, num_warps=4, num_stages=3]",
        "other",
    ]
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    processes = {e["pid"].rsplit(" Core", 1)[0] for e in trace}
    assert "matmul[BLOCK=1024, num_warps=8, num_stages=3] #0" in processes


def test_variants_that_describe_alike_are_numbered():
    names = launches.variant_names({"k": {"", "BLOCK=1"}, "j": {""}})
    assert names == {("k", ""): "k[variant 1]", ("k", "BLOCK=1"): "k[BLOCK=1]", ("j", ""): "j"}


def test_a_compiled_kernel_is_described_by_its_constexprs_and_warps():
    kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("cuda", 90, 32), BLOCK=512)
    assert launches.describe_variant(kernel) == "BLOCK=512, num_warps=4, num_stages=3"


def test_launches_without_records_are_listed_with_the_reason(tmp_path, buffer, capsys):
    proton.start(str(tmp_path / "run"), backend="instrumentation")
    runtime._session._torch = GraphTorch()
    compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, GPUTarget("cuda", 90, 32), BLOCK=256)  # markers: recorded
    runtime._session.hook.compiled_without_records.add("plain_kernel")
    for name in ("plain_kernel", "plain_kernel", "inductor_kernel"):
        run(None, runtime._session, None, name)  # no profile buffer: nothing recorded
    report = proton.finalize()
    assert report.unrecorded["plain_kernel"]["launches"] == 2
    assert "no Proton markers" in report.unrecorded["plain_kernel"]["reason"]
    assert "another process" in report.unrecorded["inductor_kernel"]["reason"]
    assert report.warnings == [
        "this session recorded no scope events: 2 kernels were launched without records (listed above)"
    ]
    # The tree lists them too, so that proton-view shows them.
    tree = json.load(open(report.files["tree"]))[0]
    listed = {c["frame"]["name"]: c["metrics"]["count"] for c in tree["children"]}
    assert listed == {
        "plain_kernel [no records: nothing to record]": 2,
        "inductor_kernel [no records: not compiled by the session]": 1,
    }
    from proton import viewer

    capsys.readouterr()
    assert viewer.main([report.files["tree"]]) == 0
    assert "plain_kernel [no records: nothing to record]" in capsys.readouterr().out
    assert "no records: inductor_kernel (1 launch): not compiled through this session" in report.summary()


# -- CUDA graphs --------------------------------------------------------------


class GraphTorch(FakeTorch):
    """FakeTorch with CUDA graph capture: a launch inside capture gets its
    buffer from the graph; replay "runs" the captured kernels by filling
    their buffers."""

    STREAM = 0x7777  # the current stream's handle

    class cuda(FakeTorch.cuda):
        capturing = False

        @staticmethod
        def current_stream():
            return type("Stream", (), {"cuda_stream": GraphTorch.STREAM})()

        @staticmethod
        def is_current_stream_capturing():
            return GraphTorch.cuda.capturing

        class CUDAGraph:
            def __init__(self):
                self.fill = []  # (buffer, data) the replay writes

            def capture_begin(self):
                GraphTorch.cuda.capturing = True

            def capture_end(self):
                GraphTorch.cuda.capturing = False

            def replay(self):
                for buffer, data in self.fill:
                    write(buffer, data)


def capture(session, graph, data, name):
    graph.capture_begin()
    scratch = _allocation._profile_allocator(data.size, 16, 0)  # nothing runs at capture
    graph.fill.append((scratch, data))
    triton.knobs.runtime.launch_enter_hook(Launch(name))
    graph.capture_end()


@pytest.fixture
def graph_torch(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", GraphTorch())  # the session patches its CUDAGraph at start
    yield GraphTorch
    GraphTorch.cuda.capturing = False


def test_every_graph_replay_is_recorded_as_a_launch_of_its_own(tmp_path, graph_torch, fake_gpu_memory):
    """Each replay's buffers are copied into arena slices on the replay's
    stream, right after it (before the next replay overwrites them), and
    each copy is decoded as a launch: three replays that wrote three
    different clocks give three launches with those clocks."""
    original_replay = graph_torch.cuda.CUDAGraph.replay
    session = start(tmp_path)
    replayed, unused = graph_torch.cuda.CUDAGraph(), graph_torch.cuda.CUDAGraph()
    first, meta = make(ctas=3, kernel_id=41)
    kernel_metadata.register(meta)
    capture(session, replayed, first, "decode_step")
    capture(session, unused, first, "prefill")
    run(None, session, first, "decode_step")  # an eager launch beside the graphs
    copies = fake_gpu_memory.copies()
    written = []
    for n in range(3):  # each replay writes its own clocks
        written.append(make(ctas=3, kernel_id=41, clk0=10**12 + (n + 1) * 10**9)[0])
        replayed.fill[0] = (replayed.fill[0][0], written[-1])
        replayed.replay()
        assert fake_gpu_memory.last_copy_stream() == GraphTorch.STREAM
    assert fake_gpu_memory.copies() == copies + 3
    kept = session.kept
    assert [k.index for k in kept] == [1, 2, 3, 4]  # the eager launch, then the three replays (0: the capture)
    assert len({k.buffer.data_ptr() for k in kept}) == 4
    assert [bytes(k.buffer.read()) for k in kept[1:]] == [bytes(w) for w in written]
    assert len(set(map(bytes, written))) == 3
    report = proton.finalize()
    assert report.per_kernel["decode_step"]["kept"] == 4 and report.events == 4 * EVENTS_PER_LAUNCH
    assert report.errors == []
    assert report.graphs == [
        "decode_step launch 0, captured in graph 0: 3 replays, each recorded as a launch of its own",
        "prefill launch 0, captured in graph 1: never replayed while the session was open, no records",
    ]
    # The graphs hold their buffers (replays after the session write there); the patch is gone.
    assert len(getattr(replayed, cuda_graphs.BUFFERS_ATTRIBUTE)) == 1
    assert graph_torch.cuda.CUDAGraph.replay is original_replay
    replayed.replay()
    assert fake_gpu_memory.copies() == copies + 3  # nothing copied once the session is over


def test_graph_replays_past_the_budget_are_counted_and_the_last_is_decoded(tmp_path, buffer, graph_torch):
    """With room for one copy, the first replay is kept, the others are
    counted as over max_buffer_bytes; with none, the captured buffer's last
    replay is decoded as before."""
    session = start(tmp_path, max_buffer_bytes=buffer.size)
    graph = graph_torch.cuda.CUDAGraph()
    capture(session, graph, buffer, "step")
    for _ in range(3):
        graph.replay()
    report = proton.finalize()
    assert report.per_kernel["step"]["kept"] == 1
    assert report.per_kernel["step"]["not_kept"] == {"budget": 2}
    assert report.graphs == [
        "step launch 0, captured in graph 0: 3 replays, 1 recorded as launches of their own (the others are "
        "counted as not kept)"
    ]

    (tmp_path / "none").mkdir()
    session = start(tmp_path / "none", max_buffer_bytes=0)
    graph = graph_torch.cuda.CUDAGraph()
    capture(session, graph, buffer, "step")
    graph.replay()
    graph.replay()
    report = proton.finalize()
    assert report.per_kernel["step"]["kept"] == 1 and report.per_kernel["step"]["not_kept"] == {"budget": 2}
    assert report.graphs == [
        "step launch 0, captured in graph 0: 2 replays; the last is recorded (each replay overwrites the one before)"
    ]


def test_graph_replays_while_deactivated_are_counted(tmp_path, buffer, graph_torch):
    session = start(tmp_path)
    graph = graph_torch.cuda.CUDAGraph()
    capture(session, graph, buffer, "step")
    graph.replay()
    proton.deactivate(session)
    graph.replay()
    proton.activate(session)
    graph.replay()
    report = proton.finalize()
    assert report.per_kernel["step"]["kept"] == 2
    assert report.per_kernel["step"]["not_kept"] == {"inactive": 1}


def test_a_failed_replay_copy_is_reported_and_the_replay_goes_on(tmp_path, buffer, graph_torch, fake_gpu_memory):
    session = start(tmp_path)
    graph = graph_torch.cuda.CUDAGraph()
    capture(session, graph, buffer, "step")
    fake_gpu_memory.fail_copies(1)
    graph.replay()  # no exception in the program
    graph.replay()
    report = proton.finalize()
    assert report.per_kernel["step"]["kept"] == 1
    assert len(report.errors) == 1
    assert report.errors[0].startswith("graph 0, replay 1: CUDA driver cuMemcpyDtoDAsync failed")


def test_graph_replays_per_phase(tmp_path, buffer, graph_torch):
    session = start(tmp_path, periodic_flushing=True, outputs="tree")
    graph = graph_torch.cuda.CUDAGraph()
    capture(session, graph, buffer, "step")
    graph.replay()
    proton.data.advance_phase(session)  # phase 0: the replay
    proton.data.advance_phase(session)  # phase 1: no replay, nothing kept
    graph.replay()
    graph.replay()
    report = proton.finalize()
    assert [part["launches_kept"] for part in report.parts] == [1, 2]  # the empty phase writes no part
    assert report.graphs[0] == "step launch 0, captured in graph 0: 1 replay, each recorded as a launch of its own"
    assert report.graphs[1] == "step launch 0, captured in graph 0: 2 replays, each recorded as a launch of its own"


def test_captured_launches_get_profiler_memory_that_outlives_the_session(
    tmp_path, buffer, graph_torch, fake_gpu_memory
):
    """A captured launch's buffer is the profiler's own memory (never the
    graph's pool, which Inductor's CUDA graph trees check and reuse), made
    in relaxed capture mode so the capture stays valid, and kept for as long
    as the process lives: replays after the session still write there."""
    session = start(tmp_path)
    graph = graph_torch.cuda.CUDAGraph()
    fake_gpu_memory.set_capture_mode(0)  # the capturing thread's mode: global
    relaxed = fake_gpu_memory.relaxed_calls()
    capture(session, graph, buffer, "triton_poi_fused_0")
    assert fake_gpu_memory.relaxed_calls() == relaxed + 1  # the allocation, in relaxed mode
    assert fake_gpu_memory.capture_mode() == 0  # and the thread's mode given back
    graph.replay()
    live = fake_gpu_memory.live_allocations()
    report = proton.finalize()
    assert report.per_kernel["triton_poi_fused_0"]["kept"] == 1 and report.errors == []
    assert fake_gpu_memory.live_allocations() >= 1 and live >= 1  # the graph's buffer is still there
    graph.replay()  # writes into it after the session


def test_kept_launches_take_slices_of_one_arena_and_give_them_back(tmp_path, buffer, fake_gpu_memory):
    """Launches take slices of the session's arena (one allocation for many
    launches, none per launch); a launch not kept gives its slice to the
    next launch on its stream; finalize frees the arena."""
    before = fake_gpu_memory.live_allocations()
    session = start(tmp_path, max_launches_per_kernel=1)
    pointers = []
    for _ in range(6):
        run(None, session, buffer, "a")
        pointers.append(session.kept[-1].buffer.data_ptr())
    assert fake_gpu_memory.live_allocations() == before + 1  # one chunk for all six
    assert len(set(pointers)) == 2  # the kept one, and the one given back and taken again
    assert session.kept_bytes == buffer.size
    report = proton.finalize()
    assert report.launches_kept == 1 and report.per_kernel["a"]["not_kept"] == {"max_launches_per_kernel": 5}
    assert fake_gpu_memory.live_allocations() == before


class NamedLaunch(Launch):
    """A launch of a kernel with a launch_metadata function (Triton's LazyDict)."""

    def __init__(self, name, metadata_name):
        super().__init__(name)
        self.extras = [(lambda grid, meta, args: {"name": metadata_name}, ((1,), None, {}))]

    def get(self):
        for fn, args in self.extras:
            self.data = {**self.data, **fn(*args)}
        self.extras = []
        return self.data


def test_hook_triton_names_launches_by_their_launch_metadata(tmp_path, buffer):
    session = start(tmp_path, hook="triton")
    for metadata_name in ("add_256", "add_1024", "add_256"):
        scratch = _allocation._profile_allocator(buffer.size, 16, 0)
        write(scratch, buffer)
        triton.knobs.runtime.launch_enter_hook(NamedLaunch("add_kernel", metadata_name))
    run(None, session, buffer, "add_kernel")  # no launch_metadata function: its own name
    report = proton.finalize()
    assert {k: v["kept"] for k, v in report.per_kernel.items()} == {"add_256": 2, "add_1024": 1, "add_kernel": 1}
    tree = json.load(open(report.files["tree"]))[0]
    assert sorted(child["frame"]["name"] for child in tree["children"]) == ["add_1024", "add_256", "add_kernel"]


def test_traces_carry_the_host_scopes_of_each_launch(tmp_path, buffer):
    session = start(tmp_path)
    with proton.scope("train"):
        with proton.scope("step 3"):
            run(None, session, buffer, "a")
    run(None, session, buffer, "b")
    report = proton.finalize()
    trace = json.load(open(report.files["chrome_trace"]))["traceEvents"]
    stacks = {(e["cat"], tuple(e["args"]["call_stack"])) for e in trace}
    assert stacks == {("a", ("ROOT", "train", "step 3", "a")), ("b", ("ROOT", "b"))}
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

    trace = Trace.FromString(open(report.files["pftrace"], "rb").read())
    described = {
        p.track_descriptor.name.split(" CTA")[0]: p.track_descriptor.description.split("; global timer ns = ")[0]
        for p in trace.packet
        if p.HasField("track_descriptor") and " CTA " in p.track_descriptor.name
    }
    assert described == {"a #0": "call stack: ROOT > train > step 3 > a", "b #0": "call stack: ROOT > b"}


def test_the_report_says_which_buffer_and_why():
    layout = BufferLayout.from_dict(synthetic.layout(num_warps=1, segment_bytes=4096, buffer_type="global"))
    assert session_outputs.buffer_description(layout, "auto") == (
        "global buffer, 4096 B (512 records) per warp: the kernel leaves no shared memory to spare"
    )
    assert session_outputs.buffer_description(layout, "global") == "global buffer, 4096 B (512 records) per warp"
    registers = BufferLayout.from_dict(synthetic.layout(num_warps=1, segment_bytes=64, buffer_type="registers"))
    assert session_outputs.buffer_description(registers, "auto").endswith("every record site is outside loops")
