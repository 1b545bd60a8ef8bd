"""The launch fast path (launch_fast_path.py, proton._host.InstrumentedLaunches)
on the CPU with simulated launches: that a loop of launches takes it (Triton
gets an address, no Python runs), and that every scenario keeps, numbers,
counts and writes exactly what the Python path does: launches in order
among slow ones, host scopes, the budget, failed launches, deactivation,
periodic flushing, do_bench, CUDA graph captures."""

import json
import sys

import pytest
import triton
from triton.runtime import _allocation

import proton
from proton.contract import kernel_metadata
from proton.recording import benchmark_loops, instrumentation_session as runtime

from test_decode import make
from test_launch_retention import GraphTorch, Launch
from test_session import launch_hooks_empty
from fake_gpu_memory_support import write

pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")

HANDLES = {"a": 0xA1, "b": 0xB2, "c": 0xC3}


@pytest.fixture
def kernels():
    """Kernels a (3 CTAs), b (2 CTAs) and c (3 CTAs, another kernel id)
    loaded by Triton with their handles; `plain` has no records."""
    buffers = {}
    for name, ctas, kernel_id in (("a", 3, 51), ("b", 2, 52), ("c", 3, 53)):
        data, meta = make(ctas=ctas, kernel_id=kernel_id)
        kernel_metadata.register(meta)
        kernel_metadata.register_loaded(HANDLES[name], kernel_id)
        buffers[name] = data
    return buffers


class Program:
    """Launches as Triton's launcher makes them, counting those the fast
    path served (the allocator returned an address)."""

    def __init__(self, session, kernels):
        self.session, self.kernels, self.fast = session, kernels, 0
        session._torch = GraphTorch()

    def launch(self, name, hook=True):
        if name == "plain":  # no profile buffer
            triton.knobs.runtime.launch_enter_hook(Launch("plain", 0xF0))
            return None
        data = self.kernels[name]
        scratch = _allocation._profile_allocator(data.size, 16, 0)
        self.fast += isinstance(scratch, int)
        write(scratch, data)
        if hook:
            triton.knobs.runtime.launch_enter_hook(Launch(name, HANDLES[name]))
        return scratch


def outcome(tmp_path, kernels, scenario, fast: bool, monkeypatch, **options):
    """What a session of `scenario(program)` kept and wrote, and how many
    launches the fast path served."""
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(runtime.InstrumentationSession, "_make_fast_path", lambda self: None)
        folder = tmp_path / ("fast" if fast else "python")
        folder.mkdir(exist_ok=True)
        session = proton.start(str(folder / "run"), backend="instrumentation", quiet=True, **options)
        assert (session._fast is not None) == fast
        program = Program(session, kernels)
        scenario(program)
        kept = [(k.kernel, k.index, k.sequence, k.call_stack) for k in session.kept]
        kept_bytes = session.kept_bytes
        report = proton.finalize()
        assert launch_hooks_empty()  # neither path's hook is left in Triton's chain
    per_kernel = {k: {f: v[f] for f in ("kept", "skipped", "not_kept", "events")} for k, v in report.per_kernel.items()}
    tree = json.load(open(report.files["tree"])) if "tree" in report.files else None
    summary = {
        "kept": kept,
        "kept_bytes": kept_bytes,
        "launches_kept": report.launches_kept,
        "launches_skipped": report.launches_skipped,
        "events": report.events,
        "per_kernel": per_kernel,
        "unrecorded": {k: v["launches"] for k, v in report.unrecorded.items()},
        "unlaunched": report.unlaunched_buffers,
        "parts": [(p["phase"], p["events"], p["launches_kept"]) for p in report.parts],
        "errors": report.errors,
        "tree": tree,
    }
    return summary, program.fast


def both(tmp_path, kernels, monkeypatch, scenario, **options):
    python, _ = outcome(tmp_path, kernels, scenario, False, monkeypatch, **options)
    fast, served = outcome(tmp_path, kernels, scenario, True, monkeypatch, **options)
    assert fast == python
    return fast, served


def test_a_loop_of_launches_takes_the_fast_path(tmp_path, kernels, monkeypatch):
    def loop(program):
        for i in range(200):
            program.launch("a" if i % 3 else "b")

    result, served = both(tmp_path, kernels, monkeypatch, loop)
    assert result["launches_kept"] == 200 and result["errors"] == []
    assert [k[2] for k in result["kept"]] == list(range(200))  # in launch order
    # The first launch of each kernel and the first of each run of slices are the Python path's.
    assert served >= 190


def test_slow_launches_between_fast_ones_keep_their_order_and_scopes(tmp_path, kernels, monkeypatch):
    def mixed(program):
        for _ in range(5):
            program.launch("a")
        program.launch("plain")
        with proton.scope("step"):
            program.launch("a")  # a host scope: logged with the launch
        program.launch("c")  # first launch of c: Python
        for _ in range(5):
            program.launch("a")
            program.launch("c")

    result, served = both(tmp_path, kernels, monkeypatch, mixed)
    assert result["kept"][5][3] == ("step",) and result["unrecorded"] == {"plain": 1}
    assert [k[:2] for k in result["kept"]][4:7] == [("a", 4), ("a", 5), ("c", 0)]
    assert served >= 8


@pytest.mark.parametrize("budget_launches", [1, 5, 13])
def test_the_budget_keeps_the_same_launches(tmp_path, kernels, monkeypatch, budget_launches):
    """Runs reserved ahead never make a launch past the budget that the
    Python path keeps, nor the reverse (two buffer sizes compete)."""

    def loop(program):
        for i in range(40):
            program.launch("ab"[i % 2])

    budget = budget_launches * kernels["a"].size
    result, served = both(tmp_path, kernels, monkeypatch, loop, max_buffer_bytes=budget)
    assert result["launches_skipped"] > 0 and result["kept_bytes"] <= budget
    # Past the budget, launches write into the sink by the fast path too.
    assert served >= 40 - result["launches_kept"] - 4


def test_launches_inside_host_scopes_take_the_fast_path_with_their_call_stacks(tmp_path, kernels, monkeypatch):
    def training(program):
        for step in range(3):
            with proton.scope(f"step {step}"):
                with proton.scope("forward"):
                    for _ in range(4):
                        program.launch("a")
                with proton.scope("backward"):
                    program.launch("b")
                    program.launch("b")
        program.launch("a")  # no scope open

    result, served = both(tmp_path, kernels, monkeypatch, training)
    stacks = [k[3] for k in result["kept"]]
    assert stacks[:6] == [("step 0", "forward")] * 4 + [("step 0", "backward")] * 2
    assert stacks[-2:] == [("step 2", "backward"), ()]
    assert served >= 15


def test_a_failed_launch_gives_its_slice_back(tmp_path, kernels, monkeypatch):
    def failing(program):
        for _ in range(4):
            program.launch("a")
        program.launch("a", hook=False)  # the launcher failed after allocating
        for _ in range(4):
            program.launch("a")

    result, served = both(tmp_path, kernels, monkeypatch, failing)
    assert result["unlaunched"] == 1 and result["launches_kept"] == 8 and served >= 6


def test_deactivated_launches_are_counted_not_kept(tmp_path, kernels, monkeypatch):
    def toggled(program):
        for _ in range(4):
            program.launch("a")
        proton.deactivate()
        for _ in range(3):
            program.launch("a")
        proton.activate()
        for _ in range(4):
            program.launch("a")

    result, _ = both(tmp_path, kernels, monkeypatch, toggled)
    assert result["per_kernel"]["a"]["not_kept"] == {"inactive": 3} and result["launches_kept"] == 8


def test_periodic_flushing_by_size_writes_the_same_parts(tmp_path, kernels, monkeypatch):
    def loop(program):
        for _ in range(30):
            program.launch("a")

    size = kernels["a"].size
    flush_at = f"{-(-7 * size // 1000)}KB"  # after 7 or 8 launches
    result, served = both(tmp_path, kernels, monkeypatch, loop, periodic_flushing=flush_at)
    assert len(result["parts"]) >= 3 and sum(p[2] for p in result["parts"]) == 30 and served > 0


def test_do_bench_repetitions_take_the_python_path(tmp_path, kernels, monkeypatch):
    if not hasattr(sys, "monitoring"):
        pytest.skip("sys.monitoring is Python 3.12+")

    def bench(fn, reps):  # stands in for triton.testing.do_bench
        for _ in range(reps):
            fn()

    monkeypatch.setattr(benchmark_loops, "benchmark_codes", lambda: frozenset({bench.__code__}))

    def benchmarked(program):
        for _ in range(4):
            program.launch("a")
        bench(lambda: program.launch("a"), 10)
        for _ in range(4):
            program.launch("a")

    result, _ = both(tmp_path, kernels, monkeypatch, benchmarked)
    assert result["per_kernel"]["a"]["not_kept"] == {"do_bench": 9} and result["launches_kept"] == 9


def test_launches_captured_in_a_graph_take_the_python_path(tmp_path, kernels, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", GraphTorch())

    def captured(program):
        for _ in range(4):
            program.launch("a")
        graph = GraphTorch.cuda.CUDAGraph()
        graph.capture_begin()
        program.launch("a")
        graph.capture_end()
        for _ in range(4):
            program.launch("a")
        program.session.captured_graph = graph

    try:
        for fast in (False, True):
            result, _ = outcome(tmp_path, kernels, captured, fast, monkeypatch)
            assert result["launches_kept"] == 8 and result["errors"] == []
    finally:
        GraphTorch.cuda.capturing = False


@pytest.mark.parametrize("options", [{"max_launches_per_kernel": 3}, {"hook": "triton"}])
def test_sessions_it_would_never_serve_have_no_fast_path(tmp_path, kernels, options):
    """Keeping the last N launches, or naming launches by launch_metadata, is
    the Python path's for every launch: no fast path is installed there."""
    session = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True, **options)
    program = Program(session, kernels)
    for _ in range(6):
        program.launch("a")
    assert session._fast is None and program.fast == 0
    assert proton.finalize().launches_kept == (3 if "max_launches_per_kernel" in options else 6)


def test_without_the_extension_the_python_path_serves_every_launch(tmp_path, kernels, monkeypatch):
    monkeypatch.setattr(runtime, "_host_runtime", lambda: None)
    session = proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    program = Program(session, kernels)
    for _ in range(10):
        program.launch("a")
    assert session._fast is None and program.fast == 0
    assert proton.finalize().launches_kept == 10


def test_launches_on_two_devices_keep_their_own_slices(tmp_path, kernels, monkeypatch, fake_gpu_memory):
    """Runs are reserved per context: launches alternating between two
    devices each take slices on their own device, as the Python path's."""
    import ctypes

    contexts = [(0, ctypes.c_void_p(0x1000)), (1, ctypes.c_void_p(0x2000))]

    def alternating(program):
        for i in range(24):
            fake_gpu_memory.set_device(*contexts[i % 2])
            program.launch("a")
        fake_gpu_memory.set_device(*contexts[0])

    try:
        result, served = both(tmp_path, kernels, monkeypatch, alternating)
    finally:
        fake_gpu_memory.set_device(*contexts[0])
    assert result["launches_kept"] == 24 and served >= 16


def test_launches_from_several_threads(tmp_path, kernels, monkeypatch):
    """Each thread's allocation is matched with its own launch hook (the
    pending slice is per thread): every launch is kept once, none lost."""
    import threading

    def threaded(program):
        def worker(name):
            for _ in range(30):
                program.launch(name)

        threads = [threading.Thread(target=worker, args=(name,)) for name in ("a", "b", "c")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    for fast in (False, True):
        result, _ = outcome(tmp_path, kernels, threaded, fast, monkeypatch)
        assert result["launches_kept"] == 90 and result["errors"] == [] and result["unlaunched"] == 0
        assert {k: v["kept"] for k, v in result["per_kernel"].items()} == {"a": 30, "b": 30, "c": 30}
        assert sorted(k[2] for k in result["kept"]) == list(range(90))
