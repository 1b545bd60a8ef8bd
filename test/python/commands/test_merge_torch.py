"""proton-merge-traces --torch / proton.export_with_torch: torch.profiler's
Chrome trace (written here in its format: "traceEvents", "baseTimeNanoseconds",
kernels as "X" events with "cat": "kernel", flows "ac2g") and Proton traces
of simulated launches become one Perfetto timeline. The merged file is
parsed back the way Perfetto reads it; every Proton slice must sit under
the torch kernel its launch ran as, at the time the launch's map gives,
inside that kernel; launches without a kernel are listed; bad inputs give
one line naming the file."""

import gzip
import json
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

import proton
from proton.commands import torch_merge
from proton.commands.merge_traces import main
from proton.recording import decode
from proton.writers import perfetto_deflate, perfetto_trace, perfetto_tracks

from test_decode import make

BASE = 1_700_000_000_000_000_000  # torch's baseTimeNanoseconds
GT0 = 1_763_000_000 * 10**9  # the GPU's global timer at the first launch
TORCH_AT = 5_000_000  # torch's axis: the first launch at BASE + 5 ms ...
OFFSET = BASE + TORCH_AT - GT0  # ... so global timer + OFFSET = torch time
START_GAP, END_GAP = 1_000, 1_500  # torch's kernel starts before the first warp entry, ends after the last return
GPU_PID, STREAM, CPU_PID, CPU_TID = 0, 7, 4242, 4242


def command():
    script = os.path.join(os.path.dirname(sys.executable), "proton-merge-traces")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "proton.commands.merge_traces"]


def proton_launches(spec, ctas=3):
    """LaunchEvents per (kernel, global-timer start), numbered per kernel."""
    count, out = defaultdict(int), []
    for kernel, gt in spec:
        buf, meta = make(ctas=ctas, segments=2, reps=2, gt0=gt)
        out.append(decode.decode(buf, meta, ctas, kernel=kernel, launch=count[kernel]))
        count[kernel] += 1
    return out


def span(ev):
    begin, end = perfetto_trace.cta_span_ns(ev)
    return int(begin.min()), int(end.max())


def write_proton(path, launches, **kw):
    perfetto_trace.write(str(path), launches, "GPU 0 (test)", **kw)
    return str(path)


def torch_kernel(name, ts_ns, dur_ns, correlation):
    """A kernel, its CPU launch call and the flow between them, in torch's format."""
    us = lambda ns: round((ns - BASE) / 1000, 3)  # noqa: E731 - microseconds since the base, 3 decimals
    launch_at = ts_ns - 20_000
    return [
        {
            "ph": "X",
            "cat": "kernel",
            "name": name,
            "pid": GPU_PID,
            "tid": STREAM,
            "ts": us(ts_ns),
            "dur": dur_ns / 1000,
            "args": {
                "External id": correlation,
                "device": 0,
                "stream": STREAM,
                "correlation": correlation,
                "grid": [3, 1, 1],
                "block": [64, 1, 1],
            },
        },
        {
            "ph": "X",
            "cat": "cuda_runtime",
            "name": "cudaLaunchKernel",
            "pid": CPU_PID,
            "tid": CPU_TID,
            "ts": us(launch_at),
            "dur": 4.5,
            "args": {"correlation": correlation},
        },
        {
            "ph": "s",
            "id": correlation,
            "pid": CPU_PID,
            "tid": CPU_TID,
            "ts": us(launch_at),
            "cat": "ac2g",
            "name": "ac2g",
        },
        {
            "ph": "f",
            "id": correlation,
            "pid": GPU_PID,
            "tid": STREAM,
            "ts": us(ts_ns),
            "cat": "ac2g",
            "name": "ac2g",
            "bp": "e",
        },
    ]


def write_torch(path, kernels, extra=(), gz=False):
    """kernels: (name, ts ns, dur ns, correlation); a CPU op around all the launches."""
    events = [
        {"name": "process_name", "ph": "M", "ts": 0, "pid": CPU_PID, "tid": 0, "args": {"name": "python"}},
        {"name": "process_name", "ph": "M", "ts": 0, "pid": GPU_PID, "tid": 0, "args": {"name": "python"}},
        {"name": "process_labels", "ph": "M", "ts": 0, "pid": GPU_PID, "tid": 0, "args": {"labels": "GPU 0"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": GPU_PID, "tid": STREAM, "args": {"name": "stream 7 "}},
        {"name": "thread_name", "ph": "M", "ts": 0, "pid": CPU_PID, "tid": CPU_TID, "args": {"name": "thread 4242"}},
    ]
    first = min(k[1] for k in kernels) - 100_000
    last = max(k[1] + k[2] for k in kernels) + 100_000
    events.append(
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "ProfilerStep#0",
            "pid": CPU_PID,
            "tid": CPU_TID,
            "ts": round((first - BASE) / 1000, 3),
            "dur": (last - first) / 1000,
            "args": {},
        }
    )
    events.append(
        {
            "ph": "i",
            "s": "t",
            "cat": "cpu_instant_event",
            "name": "[memory]",
            "pid": CPU_PID,
            "tid": CPU_TID,
            "ts": round((first + 10 - BASE) / 1000, 3),
            "args": {"Bytes": 512},
        }
    )
    for name, ts, dur, corr in kernels:
        events += torch_kernel(name, ts, dur, corr)
    events += list(extra)
    data = {
        "schemaVersion": 1,
        "deviceProperties": [],
        "baseTimeNanoseconds": BASE,
        "traceEvents": events,
        "displayTimeUnit": "ms",
    }
    text = json.dumps(data)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return str(path)


def kernels_for(launches, jitter=None, correlation0=100):
    """torch's kernel for each launch: it starts START_GAP (+ jitter) before
    the first entry and ends END_GAP after the last return."""
    out = []
    for i, ev in enumerate(launches):
        a, b = span(ev)
        j = 0 if jitter is None else jitter[i]
        ts = a + OFFSET - START_GAP - j
        out.append((ev.kernel, ts, b - a + START_GAP + j + END_GAP, correlation0 + i))
    return out


def read_merged(path):
    """(tracks {uuid: descriptor}, slices [(track, name, begin, end, args)],
    instants, flows {flow id: [track of each end]}) as Perfetto reads them."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket, TrackEvent

    trace = Trace.FromString(perfetto_deflate.inflate(open(path, "rb").read()))
    tracks, slices, instants, flows = {}, [], [], defaultdict(list)
    names, defaults, clock_value, incremental, open_slices = {}, {}, {}, {}, {}
    for p in trace.packet:
        seq = p.trusted_packet_sequence_id
        if p.sequence_flags & TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            names[seq], defaults[seq] = {}, None
        if p.HasField("trace_packet_defaults"):
            defaults[seq] = p.trace_packet_defaults
        for entry in p.interned_data.event_names:
            names[seq][entry.iid] = entry.name
        if p.HasField("clock_snapshot"):
            for c in p.clock_snapshot.clocks:
                if 64 <= c.clock_id < 128:
                    clock_value[(seq, c.clock_id)] = c.timestamp
                    incremental[(seq, c.clock_id)] = c.is_incremental
            continue
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        if not p.HasField("track_event"):
            continue
        clock = p.timestamp_clock_id or (defaults[seq].timestamp_clock_id if defaults.get(seq) else 0)
        if 64 <= clock < 128:
            assert incremental[(seq, clock)]
            clock_value[(seq, clock)] += p.timestamp
            ts = clock_value[(seq, clock)]
        else:
            ts = p.timestamp
        e = p.track_event
        track = e.track_uuid if e.HasField("track_uuid") else defaults[seq].track_event_defaults.track_uuid
        name = e.name if e.HasField("name") else names.get(seq, {}).get(e.name_iid)
        for f in list(e.flow_ids) + list(e.terminating_flow_ids):
            flows[f].append(track)
        args = {a.name: getattr(a, a.WhichOneof("value")) for a in e.debug_annotations}
        if e.type == TrackEvent.TYPE_SLICE_BEGIN:
            open_slices.setdefault(track, []).append((name, ts, args))
        elif e.type == TrackEvent.TYPE_SLICE_END:
            assert open_slices.get(track), "an end without a begin"
            name, begin, args = open_slices[track].pop()
            assert ts >= begin
            slices.append((track, name, begin, ts, args))
        elif e.type == TrackEvent.TYPE_INSTANT:
            instants.append((track, name, ts))
    assert not any(open_slices.values()), "slices left open"
    return tracks, slices, instants, flows


def ancestors(tracks, uuid):
    out = []
    while uuid in tracks:
        out.append(tracks[uuid])
        uuid = tracks[uuid].parent_uuid if tracks[uuid].HasField("parent_uuid") else None
    return out


def proton_slices(tracks, slices):
    """Warp slices: {(launch track name, CTA, warp): [(name, begin, end)]}, and the stream each hangs under."""
    out, under = defaultdict(list), {}
    for track, name, begin, end, _ in slices:
        chain = ancestors(tracks, track)
        if not chain[0].name.startswith("warp "):
            continue
        cta, sm, launch = chain[1], chain[2], chain[3]
        assert sm.name.startswith("SM ") and " CTA " in cta.name
        key = (launch.name, cta.name, chain[0].name)
        out[key].append((name, begin, end))
        under[launch.name] = chain[4].name if len(chain) > 4 else None
    return out, under


def expected_slices(launches, offsets):
    """The decoded events at global timer + each launch's offset."""
    out = defaultdict(list)
    for ev, offset in zip(launches, offsets):
        begin = np.rint(ev.start_ns).astype(np.int64) + ev.origin_ns + offset
        end = np.maximum(np.rint(ev.end_ns).astype(np.int64) + ev.origin_ns + offset, begin)
        for i in range(ev.num_events):
            key = (
                f"{ev.kernel} #{ev.launch} (Proton)",
                f"{ev.kernel} #{ev.launch} CTA {ev.cta[i]}",
                f"warp {ev.warp[i]}",
            )
            out[key].append((ev.scope_names[ev.scope[i]], int(begin[i]), int(end[i])))
    return out


def center_offset(ev, kernel):
    a, b = span(ev)
    _, ts, dur, _ = kernel
    return ts + (dur - (b - a)) // 2 - a


@pytest.fixture
def two_kernels(tmp_path):
    spec = [
        ("add_kernel", GT0),
        ("mul_kernel", GT0 + 40_000),
        ("add_kernel", GT0 + 80_000),
        ("add_kernel", GT0 + 120_000),
        ("mul_kernel", GT0 + 160_000),
    ]
    launches = proton_launches(spec)
    return launches, write_proton(tmp_path / "run.pftrace", launches)


def test_every_launch_hangs_under_its_kernel_on_torchs_axis(tmp_path, two_kernels):
    launches, proton_path = two_kernels
    jitter = [0, 120, -80, 40, 200]  # the start-up time varies a little per launch
    kernels = kernels_for(launches, jitter)
    torch_path = write_torch(tmp_path / "torch.json", kernels)
    out = str(tmp_path / "merged.pftrace")
    report = proton.export_with_torch(torch_path, proton_path, out, quiet=True)
    assert len(report.matched) == 5 and report.unmatched == []
    assert [(m.label, m.correlation) for m in report.matched] == [
        (f"{ev.kernel} #{ev.launch}", 100 + i) for i, ev in enumerate(launches)
    ]
    tracks, slices, instants, flows = read_merged(out)
    got, under = proton_slices(tracks, slices)
    offsets = [center_offset(ev, k) for ev, k in zip(launches, kernels)]
    want = expected_slices(launches, offsets)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
    assert sum(len(v) for v in got.values()) == sum(ev.num_events for ev in launches)
    assert set(under.values()) == {"stream 7"}  # every launch under torch's stream track
    # Every slice inside its torch kernel; the launch slice carries the match.
    kernel_of = {f"{ev.kernel} #{ev.launch} (Proton)": k for ev, k in zip(launches, kernels)}
    for (launch, _, _), rows in got.items():
        _, ts, dur, _ = kernel_of[launch]
        assert all(ts <= b <= e <= ts + dur for _, b, e in rows)
    launch_slices = {tracks[t].name: args for t, n, b, e, args in slices if tracks[t].name.endswith("(Proton)")}
    assert launch_slices["mul_kernel #1 (Proton)"]["torch correlation"] == 104
    # The residual: each launch's offset from the median offset (the jitter, halved by centering).
    median = sorted(offsets)[2]
    assert [m.residual_ns for m in report.matched] == [o - median for o in offsets]
    assert max(abs(m.residual_ns) for m in report.matched) <= max(jitter) - min(jitter)
    # torch's own events stay: kernels on the stream, CPU calls, the step, the instant, the flows.
    names = defaultdict(int)
    for t, n, b, e, args in slices:
        names[(tracks[t].name, n)] += 1
    assert names[("stream 7", "add_kernel")] == 3 and names[("stream 7", "mul_kernel")] == 2
    assert names[("thread 4242", "cudaLaunchKernel")] == 5
    assert names[("thread 4242", "ProfilerStep#0")] == 1
    assert [n for _, n, _ in instants] == ["[memory]"]
    stream = [d.uuid for d in tracks.values() if d.name == "stream 7"]
    cpu = [d.uuid for d in tracks.values() if d.name == "thread 4242"]
    assert len(flows) == 5 and all(sorted(v) == sorted(cpu + stream) for v in flows.values())
    kernel_rows = [(b, e, args) for t, n, b, e, args in slices if tracks[t].name == "stream 7"]
    assert sorted((b, e - b) for b, e, _ in kernel_rows) == sorted((k[1], k[2]) for k in kernels)
    assert {a["correlation"] for _, _, a in kernel_rows} == {100, 101, 102, 103, 104}
    top = {d.name for d in tracks.values() if not d.HasField("parent_uuid")}
    assert top == {"torch: GPU 0", "torch: python (pid 4242)"}


def test_stretch_maps_each_launch_onto_its_kernel(tmp_path, two_kernels):
    launches, proton_path = two_kernels
    kernels = kernels_for(launches)
    torch_path = write_torch(tmp_path / "torch.json", kernels)
    out = str(tmp_path / "merged.pftrace")
    report = torch_merge.merge_with_torch(torch_path, [proton_path], out, fit="stretch")
    assert all(m.start_gap_ns == 0 and abs(m.end_gap_ns) <= 1 for m in report.matched)
    tracks, slices, _, _ = read_merged(out)
    launch_slices = sorted((b, e) for t, n, b, e, _ in slices if tracks[t].name.endswith("(Proton)"))
    assert launch_slices == sorted((k[1], k[1] + k[2]) for k in kernels)


def test_a_launch_torch_did_not_record_is_listed_and_drawn_apart(tmp_path, two_kernels):
    launches, proton_path = two_kernels
    kernels = kernels_for(launches)
    del kernels[2]  # torch lost add_kernel #1 (e.g. a dropped record)
    torch_path = write_torch(tmp_path / "torch.json", kernels)
    out = str(tmp_path / "merged.pftrace")
    report = torch_merge.merge_with_torch(torch_path, [proton_path], out)
    assert [m.label for m in report.unmatched] == ["add_kernel #1"]
    assert "torch did not record this one" in report.unmatched[0].why
    assert [(m.label, m.correlation) for m in report.matched] == [
        ("add_kernel #0", 100),
        ("mul_kernel #0", 101),
        ("add_kernel #2", 103),
        ("mul_kernel #1", 104),
    ]
    assert "not matched: add_kernel #1" in report.summary()
    tracks, slices, _, _ = read_merged(out)
    got, under = proton_slices(tracks, slices)
    assert under["add_kernel #1 (Proton, not matched)"] == "Proton: not matched"
    assert sum(len(v) for v in got.values()) == sum(ev.num_events for ev in launches)  # nothing dropped
    # Placed with the median offset: where the other launches' clock relation puts it.
    rows = [r for k, v in got.items() if k[0].startswith("add_kernel #1") for r in v]
    ev = launches[2]
    a, _ = span(ev)
    assert min(b for _, b, _ in rows) >= a + report.offset_ns


def test_counts_that_differ_are_matched_by_timing(tmp_path, two_kernels):
    """torch recorded more: launches before and after the Proton session,
    and a kernel of a name Proton never saw; Proton has a kernel torch never saw."""
    launches, proton_path = two_kernels
    kernels = kernels_for(launches, correlation0=200)
    a0 = kernels[0][1]
    before = [
        ("add_kernel", a0 - 300_000, 14_000, 1),
        ("add_kernel", a0 - 150_000, 14_000, 2),
        ("mul_kernel", a0 - 90_000, 14_000, 3),
        ("triton_poi_fused_0", a0 - 60_000, 5_000, 4),
    ]
    after = [("add_kernel", kernels[-1][1] + 300_000, 14_000, 900)]
    torch_path = write_torch(tmp_path / "torch.json", before + kernels + after)
    extra = proton_launches([("only_in_proton", GT0 + 500_000)])
    other = write_proton(tmp_path / "other.pftrace", extra)
    out = tmp_path / "merged.pftrace"
    done = subprocess.run(
        command() + ["-o", str(out), "--torch", torch_path, proton_path, other], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "5 Proton launches placed under torch's kernels, 1 not matched" in done.stderr
    assert "not matched: only_in_proton #0" in done.stderr and "has no kernel named 'only_in_proton'" in done.stderr
    assert "torch kernels 'add_kernel' without a Proton launch: 3" in done.stderr
    assert "torch kernels 'mul_kernel' without a Proton launch: 1" in done.stderr
    report = torch_merge.merge_with_torch(torch_path, [proton_path, other], str(tmp_path / "again.pftrace"))
    assert [m.correlation for m in report.matched] == [200, 201, 202, 203, 204]


def test_a_json_input_is_taken_as_the_torch_trace_even_gzipped(tmp_path, two_kernels):
    launches, proton_path = two_kernels
    torch_path = write_torch(tmp_path / "trace.pt.trace.json.gz", kernels_for(launches), gz=True)
    out = tmp_path / "merged.pftrace"
    assert main(["-o", str(out), proton_path, torch_path]) == 0
    _, slices, _, _ = read_merged(out)
    assert len(slices) > sum(ev.num_events for ev in launches)


def test_times_are_read_exactly(tmp_path):
    """Microseconds with three decimals on a base in ns: exact ns, never through a float."""
    from proton.commands import torch_trace

    path = tmp_path / "t.json"
    path.write_text(
        '{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": ['
        '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1234567.891, "dur": 0.001},'
        '{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1718000000000000.123, "dur": 1}]}'
    )
    t = torch_trace.read(str(path))
    assert [(e.ns, e.dur_ns) for e in t.events] == [
        (1_700_000_001_234_567_891, 1),
        (1_700_000_000_000_000_000 + 1_718_000_000_000_000_123, 1000),
    ]


def test_older_proton_traces_fall_back_to_their_first_and_last_scope(tmp_path, two_kernels, monkeypatch):
    launches, _ = two_kernels
    monkeypatch.setattr(perfetto_tracks, "CTA_SPAN", "something else")  # no span notes, as before
    proton_path = write_proton(tmp_path / "old.pftrace", launches)
    monkeypatch.undo()
    torch_path = write_torch(tmp_path / "torch.json", kernels_for(launches))
    report = torch_merge.merge_with_torch(torch_path, [proton_path], str(tmp_path / "m.pftrace"))
    assert len(report.matched) == 5 and any("no CTA span notes" in n for n in report.notes)
    tracks, slices, _, _ = read_merged(tmp_path / "m.pftrace")
    got, _ = proton_slices(tracks, slices)
    kernel_of = {f"{ev.kernel} #{ev.launch} (Proton)": k for ev, k in zip(launches, kernels_for(launches))}
    for (launch, _, _), rows in got.items():
        _, ts, dur, _ = kernel_of[launch]
        assert all(ts <= b <= e <= ts + dur for _, b, e in rows)


def test_a_launch_slice_covers_scopes_timed_past_its_span_note(tmp_path, two_kernels, monkeypatch):
    """The span note comes from the global timer (32 to 64 ns ticks), scopes
    from the SM clock: where a scope starts before the note's begin or ends
    after its end, the launch's slice still holds every warp slice."""
    launches, _ = two_kernels
    real = perfetto_tracks.cta_span_ns

    def narrower(ev):  # a third of the span off each end: scopes start before and end after it
        begin, end = real(ev)
        return begin + (end - begin) // 3, end - (end - begin) // 3

    monkeypatch.setattr(perfetto_tracks, "cta_span_ns", narrower)
    proton_path = write_proton(tmp_path / "p.pftrace", launches)
    monkeypatch.undo()
    torch_path = write_torch(tmp_path / "torch.json", kernels_for(launches))
    report = torch_merge.merge_with_torch(torch_path, [proton_path], str(tmp_path / "m.pftrace"))
    assert len(report.matched) == 5
    tracks, slices, _, _ = read_merged(tmp_path / "m.pftrace")
    got, _ = proton_slices(tracks, slices)
    launch_spans = {tracks[t].name: (b, e) for t, _, b, e, _ in slices if tracks[t].name.endswith("(Proton)")}
    assert got
    for (launch, _, _), rows in got.items():
        lo, hi = launch_spans[launch]
        assert all(lo <= b <= e <= hi for _, b, e in rows), launch


def test_asynchronous_events_and_compressed_inputs_are_re_timed(tmp_path):
    """A compressed Proton trace; counters and async events (other
    sequences) move with their launch."""
    from proton.contract.events import AsyncEvents

    launches = proton_launches([("add_kernel", GT0), ("add_kernel", GT0 + 50_000)])
    i, f = (lambda *v: np.array(v, dtype=np.int64)), (lambda *v: np.array(v, dtype=np.float64))
    for ev in launches:  # an event from warp 0 to warp 1 of CTA 0, a mark, a value
        ev.asynchronous = AsyncEvents(
            i(1),
            i(0),
            i(0),
            i(1),
            f(300.0),
            f(900.0),
            i(2),
            i(0),
            f(500.0),
            value_id=i(1),
            value_row=i(1),
            value_ns=f(700.0),
            value=f(42.0),
        )
    path = write_proton(tmp_path / "c.pftrace", launches, compress=True)
    kernels = kernels_for(launches)
    torch_path = write_torch(tmp_path / "torch.json", kernels)
    report = torch_merge.merge_with_torch(torch_path, [path], str(tmp_path / "m.pftrace"))
    assert len(report.matched) == 2
    tracks, slices, instants, flows = read_merged(tmp_path / "m.pftrace")
    got, _ = proton_slices(tracks, slices)
    offsets = [center_offset(ev, k) for ev, k in zip(launches, kernels)]
    want = expected_slices(launches, offsets)
    assert {k: sorted(v) for k, v in got.items()} == {k: sorted(v) for k, v in want.items()}
    events = sorted(
        (ancestors(tracks, t)[3].name, n, b, e) for t, n, b, e, _ in slices if tracks[t].name.startswith("event ")
    )
    assert events == [
        (f"add_kernel #{k} (Proton)", "load", ev.origin_ns + 300 + offsets[k], ev.origin_ns + 900 + offsets[k])
        for k, ev in enumerate(launches)
    ]
    marks = sorted((n, ts) for t, n, ts in instants if n == "store")
    assert marks == sorted(("store", ev.origin_ns + 500 + o) for ev, o in zip(launches, offsets))
    assert len(flows) >= 2 + 2  # each launch's event arrow kept, none merged with another's
    assert sum(1 for d in tracks.values() if d.HasField("counter")) == 2


@pytest.mark.parametrize(
    "content, says",
    [
        (
            '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", '
            '"pid": 1, "tid": 1, "ts": 1, "dur": 2}]}',
            "has no GPU kernel",
        ),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur"',
            "invalid JSON",
        ),
        ('{"schemaVersion": 1}', 'no "traceEvents" list'),
        ('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}]}', "is not a number"),
    ],
)
def test_a_bad_torch_trace_is_one_line_naming_it(tmp_path, two_kernels, capsys, content, says):
    _, proton_path = two_kernels
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "m.pftrace"
    assert main(["-o", str(out), "--torch", str(bad), proton_path]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and says in err and "nothing written" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "content, says",
    [
        (b"this is not a trace at all\n", "not a Perfetto trace"),
        (b"", "not a Proton trace"),
        (None, "not a Proton trace"),
    ],
)
def test_a_proton_input_that_is_not_a_trace_is_one_line_naming_it(tmp_path, two_kernels, capsys, content, says):
    launches, _ = two_kernels
    torch_path = write_torch(tmp_path / "torch.json", kernels_for(launches))
    bad = tmp_path / "bad.pftrace"
    if content is None:  # a Perfetto trace, but not Proton's
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace

        t = Trace()
        t.packet.add().track_descriptor.name = "something"
        content = t.SerializeToString()
    bad.write_bytes(content)
    out = tmp_path / "m.pftrace"
    assert main(["-o", str(out), "--torch", torch_path, str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(bad) in err and says in err
    assert not out.exists()


def test_options_that_need_a_torch_trace(tmp_path, two_kernels, capsys):
    _, proton_path = two_kernels
    with pytest.raises(SystemExit):
        main(["-o", str(tmp_path / "m.pftrace"), "--fit", "stretch", proton_path])
    assert "go with --torch" in capsys.readouterr().err


def test_a_picture_of_the_merged_timeline(tmp_path, two_kernels):
    """--svg draws torch's rows and, under each of the first matched
    launches, its warps' scopes, every one inside the torch kernel the
    launch ran as (the dashed outline on its rows)."""
    import xml.etree.ElementTree as ET

    launches, proton_path = two_kernels
    torch_path = write_torch(tmp_path / "torch.json", kernels_for(launches))
    svg = tmp_path / "t.svg"
    done = subprocess.run(
        command() + ["-o", str(tmp_path / "m.pftrace"), "--torch", torch_path, proton_path, "--svg", str(svg)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    root = ET.parse(svg).getroot()
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any(t.startswith("torch CPU: thread 4242") for t in texts)
    assert any(t.startswith("torch GPU: stream 7") for t in texts)
    warp_rows = [t for t in texts if t.startswith(("add_kernel #", "mul_kernel #"))]
    assert len(warp_rows) == 3 * 6  # three launches drawn, 6 warps each (3 CTAs x 2)
    rects = list(root.iter("{http://www.w3.org/2000/svg}rect"))
    outlines = [r for r in rects if r.get("class") == "kernel"]
    bars = [r for r in rects if r.get("class") == "bar"]
    assert len(outlines) == len(warp_rows)
    for outline in outlines:
        y, left = outline.get("y"), float(outline.get("x"))
        right = left + float(outline.get("width"))
        on_row = [b for b in bars if float(b.get("y")) >= float(y) and float(b.get("y")) < float(y) + 16]
        assert on_row  # every drawn warp has scopes
        for bar in on_row:
            assert left - 0.01 <= float(bar.get("x")) and float(bar.get("x")) + float(bar.get("width")) <= right + 0.51


def test_svg_goes_with_a_torch_trace(tmp_path, two_kernels, capsys):
    _, proton_path = two_kernels
    done = subprocess.run(
        command() + ["-o", str(tmp_path / "m.pftrace"), proton_path, "--svg", str(tmp_path / "t.svg")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "--svg go with --torch" in done.stderr


def test_an_existing_svg_is_kept_without_force(tmp_path, two_kernels):
    launches, proton_path = two_kernels
    torch_path = write_torch(tmp_path / "torch.json", kernels_for(launches))
    svg = tmp_path / "t.svg"
    svg.write_text("mine")
    args = ["-o", str(tmp_path / "m.pftrace"), "--torch", torch_path, proton_path, "--svg", str(svg)]
    done = subprocess.run(command() + args, capture_output=True, text=True)
    assert done.returncode == 2 and "pass --force to replace it, or choose another --svg" in done.stderr
    assert svg.read_text() == "mine" and not (tmp_path / "m.pftrace").exists()
    done = subprocess.run(command() + args + ["--force"], capture_output=True, text=True)
    assert done.returncode == 0 and svg.read_text().startswith("<svg")
