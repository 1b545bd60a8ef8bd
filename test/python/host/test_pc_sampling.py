"""PC sampling mode without a GPU: stall-reason metric names, source-line
children in the profile tree, and the runtime's PC sampling (enable and
configure per context, drain after each launch, cubins kept for source
lines, disable at stop) over the fake libcupti (fake_cupti/fake_cupti.c),
whose sampled launches each leave four PCs:

    pc 0x10   line 10   long_scoreboard 3, selected 1
    pc 0x20   line 11   math_pipe_throttle 2
    pc 0x30   line 11   long_scoreboard 1
    pc 0x400  no line   selected 1
"""

import ctypes
import json
import os

import numpy as np
import pytest

import proton
from proton.host import activity_tree as profile_tree, records
from proton.writers.hatchet_tree import inclusive

h = pytest.importorskip("proton._host", reason="proton._host (the host profiler runtime) is not built")

FAKE_NAME = "libcupti_fake.so"
CBID_cuLaunchKernel = 307
DOMAIN_RESOURCE = 3
RESOURCE_CONTEXT_DESTROY_STARTING = 2
RESOURCE_MODULE_LOADED = 6
SERIALIZED = 2  # CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
LONG_SB = "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
MATH = "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"
SELECTED = "smsp__pcsamp_warps_issue_stalled_selected"
LINE10, LINE11 = "/src/fake/fake_kernels.py:10", "/src/fake/fake_kernels.py:11"
CUBIN = b"FAKECUBIN and some code"

# What one sampled launch of kernel k leaves, by (line, CUPTI stall reason).
ONE_LAUNCH = {(LINE10, LONG_SB): 3, (LINE10, SELECTED): 1, (LINE11, MATH): 2, (LINE11, LONG_SB): 1}


def no_line(kernel):
    return {(f"{kernel}+0x400", SELECTED): 1}


# ------------------------------------------------------------ the tree alone


def test_stall_metric_names():
    assert profile_tree.stall_metric(LONG_SB) == "stall_long_scoreboard"
    assert (
        profile_tree.stall_metric("smsp__pcsamp_warps_issue_stalled_barrier_not_issued") == "stall_barrier_not_issued"
    )
    assert profile_tree.stall_metric("smsp__pcsamp_sample_count") == "stall_sample_count"
    assert profile_tree.stall_metric("reason_7") == "stall_reason_7"


def _tree(pc_samples, pc_sampled=False):
    # ROOT(0) -> scope "outer"(1); names: 0 ROOT, 1 outer, 2 k, 3 other
    names = ["ROOT", "outer", "k", "other"]
    nodes = np.array([(0, 0, 0), (0, 1, 1)], dtype=records.NODE)
    aggregates = np.zeros(2, dtype=records.AGGREGATE)
    aggregates[0] = (1, 2, 0, 0, 2, 500, 200, 300, (0, 0, 0, 0), 0, 0)  # k under outer, 2 launches
    aggregates[1] = (0, 3, 0, 0, 1, 40, 40, 40, (0, 0, 0, 0), 0, 1)  # other at the root
    tree = profile_tree.build(nodes, names, aggregates, {}, {}, pc_samples=pc_samples, pc_sampled=pc_sampled)
    return inclusive(tree[0])


def test_build_adds_line_children_with_inclusive_totals():
    rows = [
        (1, "k", "a.py:3", LONG_SB, 5),
        (1, "k", "a.py:3", SELECTED, 2),
        (1, "k", "a.py:9", MATH, 11),
        (1, "k", "k+0x40", SELECTED, 1),
        (1, "k", "a.py:3", LONG_SB + "_not_issued", 4),
    ]
    root = _tree(rows)
    outer = next(c for c in root["children"] if c["frame"]["name"] == "outer")
    kernel = outer["children"][0]
    assert kernel["frame"] == {"name": "k", "type": "kernel"}
    lines = {c["frame"]["name"]: c for c in kernel["children"]}
    assert set(lines) == {"a.py:3", "a.py:9"}  # "k+0x40" has no line: on the kernel itself
    assert all(c["frame"]["type"] == "line" and c["children"] == [] for c in lines.values())
    # A "_not_issued" reason is a subset of its twin's samples: not counted again.
    assert lines["a.py:3"]["metrics"] == {
        "num_samples": 7,
        "stall_long_scoreboard": 5,
        "stall_selected": 2,
        "stall_long_scoreboard_not_issued": 4,
    }
    assert lines["a.py:9"]["metrics"] == {"num_samples": 11, "stall_math_pipe_throttle": 11}
    # Hottest line first.
    assert [c["frame"]["name"] for c in kernel["children"]] == ["a.py:9", "a.py:3"]
    # The kernel, its scope and the root sum their lines; times and counts stay.
    for node in (kernel, outer, root):
        m = node["metrics"]
        assert (
            m["num_samples"],
            m["stall_long_scoreboard"],
            m["stall_selected"],
            m["stall_math_pipe_throttle"],
            m["stall_long_scoreboard_not_issued"],
        ) == (19, 5, 3, 11, 4)
    assert kernel["metrics"]["count"] == 2 and kernel["metrics"]["time (ns)"] == 500
    assert root["metrics"]["count"] == 3 and root["metrics"]["time (ns)"] == 540
    other = next(c for c in root["children"] if c["frame"]["name"] == "other")
    assert other["children"] == [] and "num_samples" not in other["metrics"]


def test_build_creates_a_missing_kernel_leaf():
    root = _tree([(1, "unseen", "b.py:1", LONG_SB, 4), (0, "k", "c.py:2", MATH, 1)])
    outer = next(c for c in root["children"] if c["frame"]["name"] == "outer")
    unseen = next(c for c in outer["children"] if c["frame"]["name"] == "unseen")
    assert unseen["frame"]["type"] == "kernel" and unseen["metrics"]["count"] == 0
    assert unseen["metrics"]["num_samples"] == 4 and unseen["children"][0]["frame"]["name"] == "b.py:1"
    # "k" at the root is another context than "k" under outer.
    at_root = [c for c in root["children"] if c["frame"]["name"] == "k"]
    assert len(at_root) == 1 and at_root[0]["metrics"]["stall_math_pipe_throttle"] == 1
    assert outer["children"][0]["frame"]["name"] == "k" and outer["children"][0]["children"] == []
    assert root["metrics"]["num_samples"] == 5


def test_build_without_samples_is_unchanged():
    assert _tree([]) == _tree(None)
    assert "num_samples" not in _tree(())["metrics"]


def test_a_sampled_kernel_without_samples_shows_zero():
    # A kernel of a microsecond often gets no sample at one per 2^10 cycles
    # (Triton's profiler no more often: docs/compatibility.md).
    root = _tree([(1, "k", "a.py:3", MATH, 3)], pc_sampled=True)
    other = next(c for c in root["children"] if c["frame"]["name"] == "other")
    assert other["metrics"]["num_samples"] == 0 and other["metrics"]["count"] == 1
    kernel = next(c for c in root["children"] if c["frame"]["name"] == "outer")["children"][0]
    assert kernel["metrics"]["num_samples"] == 3 and root["metrics"]["num_samples"] == 3


# ------------------------------------------------- through the fake libcupti


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """The fake libcupti: the one already in this process (test_host_runtime
    loads it), else built here. A process loads one CUPTI for good."""
    loaded = h.cupti_path()
    if loaded and os.path.basename(loaded) != FAKE_NAME:
        pytest.skip(f"a real CUPTI ({loaded}) is already loaded in this process")
    if not loaded:
        from fake_cupti_support import _compile_fake

        loaded = str(_compile_fake(tmp_path_factory.mktemp("fake_cupti_pc")))
        h.load_cupti(loaded)
    assert not h.cupti_tracing() and not proton.sessions()
    lib = ctypes.CDLL(loaded)
    u32, u64, cstr, i32 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_int
    signatures = {
        "fake_launch": (u32, [u32, cstr, u64, u64, i32]),
        "fake_load_module": (u64, [cstr, ctypes.c_size_t]),
        "fake_destroy_context": (None, []),
        "fake_queue_pcs": (None, [cstr, u32]),
        "fake_capture_launch": (u64, [cstr]),
        "fake_is_enabled": (i32, [u32, u32]),
        "fake_pc_enabled": (i32, []),
        "fake_pc_enable_calls": (i32, []),
        "fake_pc_collection_mode": (u32, []),
        "fake_pc_period": (u32, []),
        "fake_pc_stall_count": (u64, []),
        "fake_pc_has_buffer": (i32, []),
        "fake_pc_get_data_calls": (u64, []),
        "fake_pc_pending": (u64, []),
        "fake_pc_set_chunk": (None, [u64]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    lib.path = loaded
    yield lib
    h.set_active_sessions(0)
    h.stop_cupti()
    h.set_pc_sampling(False, 0)


@pytest.fixture
def sampling(fake):
    """Tracing with PC sampling (interval 7) and the fake's module loaded."""
    h.set_pc_sampling(True, 7)
    h.start_cupti()
    fake.fake_load_module(CUBIN, len(CUBIN))
    yield fake
    h.set_active_sessions(0)
    fake.fake_pc_set_chunk(0)
    h.stop_cupti()
    h.set_pc_sampling(False, 0)


def launch(fake, kernel):
    return fake.fake_launch(CBID_cuLaunchKernel, kernel.encode(), 0, 10, 1)


def samples(slot) -> dict:
    """{(node, kernel, line, stall reason): samples} of a slot, taken."""
    out = {}
    for node, kernel, line, stall, count in h.take_pc_samples(slot):
        key = (node, kernel, line, stall)
        assert key not in out
        out[key] = count
    return out


def expected(node, kernel, launches, line_info=True):
    # Sampled lines are named "file:line@function".
    per_launch = {(f"{line}@{kernel}", stall): n for (line, stall), n in ONE_LAUNCH.items()} if line_info else {}
    if not line_info:  # every PC falls back to function+offset
        for pc, stalls in ((0x10, {LONG_SB: 3, SELECTED: 1}), (0x20, {MATH: 2}), (0x30, {LONG_SB: 1})):
            for stall, count in stalls.items():
                per_launch[(f"{kernel}+{pc:#x}", stall)] = count
    per_launch.update(no_line(kernel))
    return {(node, kernel) + key: count * launches for key, count in per_launch.items()}


def test_configured_per_context_and_drained_after_each_launch(sampling):
    fake = sampling
    assert fake.fake_is_enabled(DOMAIN_RESOURCE, RESOURCE_MODULE_LOADED) == 1
    assert fake.fake_is_enabled(DOMAIN_RESOURCE, RESOURCE_CONTEXT_DESTROY_STARTING) == 1
    assert fake.fake_pc_enabled() == 0  # on the first launch, not before
    slot = 60
    h.open_session(slot, False, 0)
    h.set_active_sessions(1 << slot)
    node = h.enter_scope("pc_outer")
    enables = fake.fake_pc_enable_calls()
    launch(fake, "pc_k")
    launch(fake, "pc_k")
    h.exit_scope("pc_outer")
    launch(fake, "pc_k2")
    assert fake.fake_pc_enable_calls() == enables + 1
    assert (
        fake.fake_pc_enabled(),
        fake.fake_pc_collection_mode(),
        fake.fake_pc_period(),
        fake.fake_pc_stall_count(),
        fake.fake_pc_has_buffer(),
    ) == (1, SERIALIZED, 7, 3, 1)
    assert fake.fake_pc_pending() == 0  # each launch drained at its exit
    # An inactive launch is drained too, its samples dropped.
    h.set_active_sessions(0)
    launch(fake, "pc_k")
    assert fake.fake_pc_pending() == 0
    assert samples(slot) == {**expected(node, "pc_k", 2), **expected(0, "pc_k2", 1)}
    assert samples(slot) == {}  # taken
    assert h.pc_sampling_error() == ""


def test_drains_in_chunks_and_late_samples_find_their_launch(sampling):
    fake = sampling
    slot = 61
    h.open_session(slot, False, 0)
    h.set_active_sessions(1 << slot)
    node = h.enter_scope("pc_chunks")
    first = launch(fake, "pc_early")  # enables the context
    fake.fake_pc_set_chunk(1)
    calls = fake.fake_pc_get_data_calls()
    # Samples of the earlier launch still pending when a later one drains
    # go to the earlier launch's context, by correlation id.
    h.exit_scope("pc_chunks")
    fake.fake_queue_pcs(b"pc_early", first)
    launch(fake, "pc_late")
    assert fake.fake_pc_get_data_calls() - calls >= 8  # one PC per call
    assert fake.fake_pc_pending() == 0
    assert samples(slot) == {**expected(node, "pc_early", 2), **expected(0, "pc_late", 1)}


def test_two_sessions_and_no_cubin(sampling):
    fake = sampling
    a, b = 62, 63
    h.open_session(a, False, 0)
    h.open_session(b, False, 0)
    h.set_active_sessions(1 << a | 1 << b)
    launch(fake, "pc_both")
    h.set_active_sessions(1 << b)
    fake.fake_load_module(b"not a cubin", 11)  # its PCs have no source lines
    launch(fake, "pc_b_only")
    assert samples(a) == expected(0, "pc_both", 1)
    assert samples(b) == {**expected(0, "pc_both", 1), **expected(0, "pc_b_only", 1, line_info=False)}


def test_captured_launches_are_not_drained(sampling):
    # A launch captured into a graph runs no kernel, and synchronizing
    # inside it would break the capture.
    fake = sampling
    slot = 58
    h.open_session(slot, False, 0)
    h.set_active_sessions(1 << slot)
    launch(fake, "pc_before_capture")
    calls = fake.fake_pc_get_data_calls()
    assert fake.fake_capture_launch(b"pc_captured")
    assert fake.fake_pc_get_data_calls() == calls
    launch(fake, "pc_after_capture")
    assert fake.fake_pc_get_data_calls() > calls
    assert samples(slot) == {**expected(0, "pc_before_capture", 1), **expected(0, "pc_after_capture", 1)}


def test_context_destroy_and_stop_disable(sampling):
    fake = sampling
    launch(fake, "pc_ctx")
    assert fake.fake_pc_enabled() == 1
    enables = fake.fake_pc_enable_calls()
    fake.fake_destroy_context()
    assert fake.fake_pc_enabled() == 0
    launch(fake, "pc_ctx")  # a context at that address again: enabled anew
    assert fake.fake_pc_enabled() == 1 and fake.fake_pc_enable_calls() == enables + 1
    h.stop_cupti()
    assert fake.fake_pc_enabled() == 0


def test_no_module_callbacks_without_pc_sampling(fake):
    h.start_cupti()
    try:
        assert fake.fake_is_enabled(DOMAIN_RESOURCE, RESOURCE_MODULE_LOADED) == 0
        assert fake.fake_is_enabled(DOMAIN_RESOURCE, RESOURCE_CONTEXT_DESTROY_STARTING) == 0
        slot = 59
        h.open_session(slot, False, 0)
        h.set_active_sessions(1 << slot)
        launch(fake, "pc_off")
        h.set_active_sessions(0)
        assert fake.fake_pc_enabled() == 0 and samples(slot) == {}
        h.take_session(slot)
    finally:
        h.stop_cupti()


def _find(node, *names):
    for name in names:
        node = next(c for c in node["children"] if c["frame"]["name"] == name)
    return node


def test_session_end_to_end(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", fake.path)
    session = proton.start(str(tmp_path / "pc"), mode="pcsampling:interval=9", quiet=True)
    assert session.pc_sampling == proton.mode.PCSampling(interval=9)
    fake.fake_load_module(CUBIN, len(CUBIN))
    with proton.scope("pc_scope"):
        launch(fake, "pc_session_k")
        launch(fake, "pc_session_k")
    report = proton.finalize()
    assert fake.fake_pc_period() == 0 and fake.fake_pc_enabled() == 0  # switched off with the session
    assert not h.cupti_tracing()
    assert report.pc_samples == 16 and not [w for w in report.warnings if "PC" in w]
    with open(report.files["tree"]) as f:
        root = inclusive(json.load(f)[0])
    kernel = _find(root, "pc_scope", "pc_session_k")
    assert kernel["metrics"]["count"] == 2
    assert (
        kernel["metrics"]["num_samples"],
        kernel["metrics"]["stall_long_scoreboard"],
        kernel["metrics"]["stall_math_pipe_throttle"],
        kernel["metrics"]["stall_selected"],
    ) == (16, 8, 4, 4)
    line10, line11 = LINE10 + "@pc_session_k", LINE11 + "@pc_session_k"
    assert [c["frame"]["name"] for c in kernel["children"]] == [line10, line11]  # 0x400: no line, the kernel's own
    assert _find(kernel, line10)["metrics"] == {"num_samples": 8, "stall_long_scoreboard": 6, "stall_selected": 2}
    assert root["metrics"]["num_samples"] == 16


def test_pc_sampling_must_be_the_first_session(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("PROTON_CUPTI_LIB", fake.path)
    plain = proton.start(str(tmp_path / "plain"), backend="cupti", quiet=True)
    try:
        with pytest.raises(proton.ProfilerError, match="PC sampling .* must be the first host session"):
            proton.start(str(tmp_path / "pc"), mode="pcsampling", quiet=True)
    finally:
        proton.finalize(plain)
    first = proton.start(str(tmp_path / "pc1"), mode="pcsampling", quiet=True)
    try:
        with pytest.raises(proton.ProfilerError, match="interval=1000; sessions open at the same time share it"):
            proton.start(str(tmp_path / "pc2"), mode="pcsampling:interval=8", quiet=True)
        second = proton.start(str(tmp_path / "plain2"), backend="cupti", quiet=True)
        proton.finalize(second)
    finally:
        proton.finalize(first)
    assert not h.cupti_tracing() and proton.sessions() == []
