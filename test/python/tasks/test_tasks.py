"""proton.tasks on the CPU: what the device side compiles to for sm_90, and
the host side on buffers written word by word as docs/task-buffer-format.md
says a kernel writes them."""

import re
import sys

import numpy as np
import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

from proton.tasks import TaskBufferError, export_to_perfetto_trace, set_export_trace_off, set_export_trace_on
from proton.tasks import host
import suite_paths

sys.path.insert(0, str(suite_paths.EXAMPLES))
import task_profiler  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
COPY_SIGNATURE = {
    "src": "*fp32",
    "dst": "*fp32",
    "n": "i32",
    "profiler_buffer": "*i64",
    "BLOCK": "constexpr",
    "ENABLE_PROFILING": "constexpr",
}


@triton.jit
def tile_copy_without_profiler(src, dst, n, profiler_buffer, BLOCK: tl.constexpr, ENABLE_PROFILING: tl.constexpr):
    # tile_copy of examples/task_profiler.py with the profiler calls removed.
    for tile in range(tl.program_id(0), tl.cdiv(n, BLOCK), tl.num_programs(0)):
        offsets = tile * BLOCK + tl.arange(0, BLOCK)
        task = tl.where((tile + 1) * BLOCK <= n, 0, 1)  # noqa: F841
        mask = offsets < n
        tl.store(dst + offsets, tl.load(src + offsets, mask=mask), mask=mask)


def compile_copy(fn, enable):
    source = triton.compiler.ASTSource(
        fn=fn, signature=COPY_SIGNATURE, constexprs={"BLOCK": 1024, "ENABLE_PROFILING": enable}
    )
    return triton.compile(source, target=SM90).asm["ptx"]


def test_disabled_profiler_compiles_to_the_code_without_it():
    disabled = compile_copy(task_profiler.tile_copy, False)
    without = compile_copy(tile_copy_without_profiler, False).replace("tile_copy_without_profiler", "tile_copy")
    strip = lambda ptx: re.sub(r"\.loc.*|\.file.*|//.*", "", ptx.split(".section")[0])  # noqa: E731
    assert strip(disabled) == strip(without)


def test_enabled_profiler_reads_the_timer_and_sm_per_record():
    ptx = compile_copy(task_profiler.tile_copy, True)
    # Two record sites (start and end of the loop's task).
    assert ptx.count("mov.u64 %rd") and len(re.findall(r"%globaltimer", ptx)) == 2
    assert len(re.findall(r"%smid", ptx)) == 2


# ---------------------------------------------------------------- host side


def buffer_words(ctas, groups, slots, records):
    """A buffer as kernels write it. records: {(cta, group): [(time, is_start,
    task, sm), ...]} in the order written (more than fit: counted, dropped)."""
    words = np.zeros(host.HEADER_WORDS + host.ENTRY_WORDS * slots, dtype=np.uint64)
    words[0], words[1], words[2], words[3] = host.MAGIC, slots, ctas, groups
    per_region = slots // (ctas * groups)
    for cta in range(ctas):
        for group in range(groups):
            base = host.HEADER_WORDS + (cta * groups + group) * per_region * 2
            recs = records.get((cta, group), [])
            if len(recs) > per_region - 1:  # the count is written once records no longer fit
                words[base] = len(recs)
            if recs:
                words[base + 1] = (cta << 32) | group
            for i, (time, is_start, task, sm) in enumerate(recs[: per_region - 1]):
                words[base + 2 + 2 * i] = time
                words[base + 3 + 2 * i] = (sm << 32) | (int(is_start) << 31) | task
    return words.view(np.int64)


def nested(t0, sm):
    """Task 0 around tasks 1 and 2."""
    return [
        (t0, True, 0, sm),
        (t0 + 10, True, 1, sm),
        (t0 + 30, False, 1, sm),
        (t0 + 40, True, 2, sm),
        (t0 + 45, False, 2, sm),
        (t0 + 100, False, 0, sm),
    ]


NAMES = ["outer", "first", "second"]


def test_events_nest_per_cta_and_group():
    records = {(c, g): nested(1_000_000 + 1000 * c + 7 * g, 5 + c) for c in range(3) for g in range(2)}
    events, report = host.read(buffer_words(3, 2, 3 * 2 * 8, records), NAMES)
    assert report.problems == [] and events.num_events == 3 * 2 * 3
    assert (report.ctas, report.groups) == (3, 2)
    dur = events.end_ns - events.start_ns
    by_task = {NAMES[t]: sorted(set(dur[events.scope == t].tolist())) for t in range(3)}
    assert by_task == {"outer": [100.0], "first": [20.0], "second": [5.0]}
    assert events.warp_sm.tolist() == [5, 5, 6, 6, 7, 7]
    assert events.warp_ids.tolist() == [0, 1] * 3 and events.row_label == "group"
    assert events.start_ns.min() == 0.0  # relative to the first start


def test_problems_are_counted_and_named():
    records = {
        (0, 0): [(100, True, 0, 1), (200, False, 0, 1), (300, True, 1, 1)],  # a start without an end
        (1, 0): [(100, False, 2, 2), (150, True, 0, 2), (160, False, 0, 2)],  # an end without a start
        (2, 0): [(100, True, 7, 3), (110, False, 7, 3)],  # an unknown task type
        (3, 0): [(100, True, 0, 4), (110, False, 1, 4)],  # mismatched
        (4, 0): [(100 + i, i % 2 == 0, 0, 5) for i in range(10)],  # 10 records, room for 3
    }
    events, report = host.read(buffer_words(5, 1, 5 * 4, records), NAMES)
    # CTA 0's "first"; CTA 4 kept S E S of its 10 records: the last start's end was dropped.
    assert report.unclosed == {"outer": 1, "first": 1}
    assert report.unopened == {"second": 1}
    assert report.unknown_types == {7: 2}
    assert report.mismatched == 1
    assert report.dropped == 7
    assert len(report.problems) == 5
    # Paired: CTA 0's outer, CTA 1's outer (after its stray end), the unknown
    # task, and CTA 4's first pair.
    assert sorted(events.scope_names[s] for s in events.scope) == ["outer", "outer", "outer", "task 7"]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda w: w.__setitem__(0, 0), "no header magic"),
        (lambda w: w.__setitem__(1, 999), "header says 999 slots but the buffer holds 24: corrupted or truncated"),
        (
            lambda w: w.__setitem__(host.HEADER_WORDS + 1, (7 << 32) | 1),
            r"region 0 \(CTA 0, group 0\) has id 0x700000001",
        ),
        (lambda w: w.__setitem__(2, 100), "24 slots cannot hold 100 CTAs x 1 groups"),
    ],
)
def test_bad_buffers_are_rejected(mutate, message):
    words = buffer_words(2, 1, 24, {(0, 0): nested(10, 1), (1, 0): nested(50, 2)}).view(np.uint64).copy()
    mutate(words)
    with pytest.raises(TaskBufferError, match=message):
        host.read(words.view(np.int64), NAMES)


def test_untouched_buffer_has_no_events():
    words = buffer_words(1, 1, 4, {})
    words[2] = words[3] = 0
    events, report = host.read(words, NAMES)
    assert events is None and report.events == 0


def test_export_writes_group_tracks_and_task_slices(tmp_path):
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    records = {(c, 0): nested(10_000 * (c + 1), 9) for c in range(2)}
    path = tmp_path / "tasks.pftrace"
    report = export_to_perfetto_trace(buffer_words(2, 1, 16, records), NAMES, str(path), gpu_name="H200")
    assert report.events == 6 and report.file == str(path)
    trace = Trace.FromString(path.read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet if p.HasField("track_descriptor")}
    assert "H200" in tracks.values() and "SM 9" in tracks.values() and "group 0" in tracks.values()
    begins = [
        p for p in trace.packet if p.HasField("track_event") and p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN
    ]
    assert len(begins) == 6
    names = {e.iid: e.name for p in trace.packet for e in p.interned_data.event_names}
    assert sorted(names[p.track_event.name_iid] for p in begins) == sorted(NAMES * 2)


def test_numbered_trace_files_and_the_export_switch():
    assert [host.numbered("/t/run.pftrace") for _ in range(3)] == [
        "/t/run_0.pftrace",
        "/t/run_1.pftrace",
        "/t/run_2.pftrace",
    ]
    set_export_trace_off()
    assert host._export_enabled is False
    set_export_trace_on()
    assert host._export_enabled is True
