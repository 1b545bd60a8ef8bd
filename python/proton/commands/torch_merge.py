"""One Perfetto timeline from torch.profiler's Chrome trace and Proton's
instrumentation traces (proton-merge-traces --torch, proton.export_with_torch).

Matching. Each Proton launch ("add #3": kernel name and launch number,
with its span on the GPU's global timer: the CTAs' first entry and last
return, noted on the CTA tracks) is matched to one of torch's GPU kernels
("cat": "kernel") of the same name (torch names a Triton kernel after its
function). Launches are taken in the order they ran; where, for some
kernel name, both traces hold the same number of launches, they are paired
in order and the pairs give the offset between the global timer and
torch's axis (their median); otherwise the offset is the one that puts the
most launches inside a same-named torch kernel. Each launch then takes the
same-named torch kernel, not yet taken and after the previous one taken
for that name, whose midpoint is nearest to the launch's midpoint plus the
offset, if it is within the tolerance (the offset follows each match, so a
slow drift between the clocks is followed). A launch without one is listed
and drawn apart, never dropped or put under another kernel.

Alignment. Per matched launch an affine map from the global timer onto
torch's axis, t -> t0 + (t - a) * k, with a the launch's first entry:
"center" (default) keeps Proton's durations (k = 1) and centers Proton's
span [a, b] in torch's [ts, ts + dur] (torch's kernel also covers the
launch's start-up and drain, which no warp sees); where Proton's span is
longer than torch's kernel, k = dur / (b - a) fits it in. "stretch" maps
[a, b] onto [ts, ts + dur] exactly (k = dur / (b - a)). The residual per
launch is how far its offset (t0 - a) lies from the median offset over all
matched launches: one clock relation would put every launch there, so the
residual is the misalignment of that launch (plus the variation of the
start-up time), and a large one flags a doubtful match.

Output. torch's events as Perfetto track events on tracks per process
("python (pid 1234)", "GPU 0") and thread or stream, X events as slices
(a thread's events that do not nest go to numbered lanes), instants,
counters and torch's flow arrows (CPU launch -> kernel); under the stream
track of each matched kernel a track "<kernel> #<launch> (Proton)" with
one slice for the launch (args: the torch correlation id, the map, the
residual) and the launch's SM > CTA > warp tracks, warp slices re-timed
through the map, and its asynchronous events, marks and values.
"""

from __future__ import annotations

import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..contract.errors import ProfilerError
from ..writers import files, perfetto_deflate
from ..writers.perfetto_packets import (
    BOOTTIME,
    CLOCK_ID,
    SEQ_INCREMENTAL_STATE_CLEARED,
    SEQUENCE_ID,
    slice_packets,
    trace_packet,
    warp_headers,
)
from . import proton_pftrace, torch_trace

DEFAULT_TOLERANCE_US = 50.0
FITS = ("center", "stretch")
TORCH_SEQUENCE = 4  # 1: warp slices, 2: asynchronous events and values, 4: torch's events and the tracks
EVENTS_SEQUENCE = 2
EXPLICIT = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT, TYPE_COUNTER = 1, 2, 3, 4
LAUNCH_RANK_BASE = 1 << 20  # launch tracks after the lanes of a stream


@dataclass
class LaunchMatch:
    """One Proton launch and where it went."""

    file: str
    kernel: str
    launch: int
    torch_kernel: int | None = None  # index into the torch trace's events
    correlation: object = None
    torch_ts_ns: int | None = None
    torch_dur_ns: int | None = None
    begin_ns: int | None = None  # Proton span, global timer
    end_ns: int | None = None
    scale: float = 1.0
    offset_ns: int | None = None  # torch time of the launch's first entry minus its global-timer value
    residual_ns: int | None = None  # offset minus the median offset
    start_gap_ns: int | None = None  # mapped first entry - torch ts
    end_gap_ns: int | None = None  # torch end - mapped last return
    why: str = ""  # for an unmatched launch
    _mid: float = 0.0  # midpoint for matching, ns from the first launch

    @property
    def label(self) -> str:
        return f"{self.kernel} #{self.launch}"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if not k.startswith("_")}


@dataclass
class TorchMergeReport:
    output: str
    matched: list = field(default_factory=list)  # LaunchMatch
    unmatched: list = field(default_factory=list)
    torch_kernels_without_launch: dict = field(default_factory=dict)  # name -> count
    offset_ns: int | None = None  # median global timer -> torch offset
    how: str = ""
    skipped_torch_events: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    def residual_stats(self) -> tuple[int, int] | None:
        """(median |residual|, max |residual|) in ns over matched launches."""
        r = [abs(m.residual_ns) for m in self.matched if m.residual_ns is not None]
        return (int(np.median(r)), int(max(r))) if r else None

    def summary(self) -> str:
        lines = [
            f"proton-merge-traces: {len(self.matched)} Proton launches placed under torch's kernels, "
            f"{len(self.unmatched)} not matched ({self.how})"
        ]
        stats = self.residual_stats()
        if stats:
            lines.append(
                f"  residual misalignment per launch: median {stats[0] / 1000:.3f} us, max {stats[1] / 1000:.3f} us"
            )
            worst = sorted(self.matched, key=lambda m: -abs(m.residual_ns))[:5]
            for m in worst:
                if abs(m.residual_ns) > 0:
                    lines.append(
                        f"    {m.label} ({os.path.basename(m.file)}): residual {m.residual_ns / 1000:+.3f} us, "
                        f"torch correlation {m.correlation}"
                    )
        for m in self.unmatched[:50]:
            lines.append(f"  not matched: {m.label} ({m.file}): {m.why}")
        if len(self.unmatched) > 50:
            more = len(self.unmatched) - 50
            lines.append(f"  ... and {more} more not matched (all on the track 'Proton: not matched')")
        for name, count in sorted(self.torch_kernels_without_launch.items()):
            lines.append(f"  torch kernels {name!r} without a Proton launch: {count}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


class TorchMergeError(ProfilerError):
    pass


# -- matching -----------------------------------------------------------------


def _median(values: list[int]) -> int:
    """The median of integers, exactly (floats would round absolute ns)."""
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) // 2


def match(torch: torch_trace.TorchTrace, protons: list, tolerance_ns: float, device=None):
    """LaunchMatch per Proton launch (matched ones with torch_kernel set),
    the median offset and how it was found."""
    by_name: dict[str, list[int]] = defaultdict(list)  # torch kernels per name, in time order
    for k in torch.kernels:
        e = torch.events[k]
        if device is not None and e.args.get("device", e.pid) != device:
            continue
        by_name[e.name].append(k)
    launches = []  # (begin, end, LaunchMatch)
    for t in protons:
        for key in sorted(t.launches, key=lambda k: (k[1], k[0])):
            launch = t.launches[key]
            m = LaunchMatch(t.path, launch.kernel, launch.launch, begin_ns=launch.begin_ns, end_ns=launch.end_ns)
            if launch.begin_ns is None:
                m.why = "the launch recorded no event and has no span"
            elif launch.kernel not in by_name:
                m.why = f"torch's trace has no kernel named {launch.kernel!r}"
            launches.append(m)
    live = sorted((m for m in launches if not m.why), key=lambda m: (m.begin_ns, m.launch))
    if not live:
        return launches, None, "no launch to match"
    # Midpoints as floats relative to a base on each axis (absolute ns do not fit a float's 53 bits).
    tbase, pbase = min(torch.events[k].ns for k in torch.kernels), min(m.begin_ns for m in live)
    mids = {
        name: np.array([(torch.events[k].ns - tbase) + torch.events[k].dur_ns / 2.0 for k in ks])
        for name, ks in by_name.items()
    }
    for m in live:
        m._mid = (m.begin_ns - pbase) + (m.end_ns - m.begin_ns) / 2.0
    offset, how = _initial_offset(live, by_name, mids, tolerance_ns)
    taken_after: dict[str, int] = defaultdict(lambda: -1)
    current = offset
    next_of = {}  # the next live launch of the same name
    last = {}
    for m in live:
        if m.kernel in last:
            next_of[id(last[m.kernel])] = m
        last[m.kernel] = m
    for m in live:
        if current is None:
            m.why = "no consistent offset between the clocks"
            continue
        target = m._mid + current
        ks, mid = by_name[m.kernel], mids[m.kernel]
        lo = taken_after[m.kernel] + 1
        j = lo + int(np.searchsorted(mid[lo:], target))
        best = min((c for c in (j - 1, j) if lo <= c < len(ks)), key=lambda c: abs(mid[c] - target), default=None)
        if best is None or abs(mid[best] - target) > tolerance_ns:
            near = "" if best is None else f" (nearest {abs(mid[best] - target) / 1000:.1f} us away)"
            m.why = f"no {m.kernel!r} kernel of torch's trace within {tolerance_ns / 1000:g} us of where it ran{near}"
            continue
        following = next_of.get(id(m))
        if following is not None and abs(mid[best] - (following._mid + current)) < abs(mid[best] - target):
            m.why = (
                f"torch's nearest {m.kernel!r} kernel ({abs(mid[best] - target) / 1000:.1f} us away) is nearer "
                f"to the next launch, {following.label}: torch did not record this one"
            )
            continue
        taken_after[m.kernel] = best
        e = torch.events[ks[best]]
        m.torch_kernel, m.torch_ts_ns, m.torch_dur_ns = ks[best], e.ns, e.dur_ns
        m.correlation = e.args.get("correlation")
        current = mid[best] - m._mid
    return launches, offset, how


def _initial_offset(live, by_name, mids, tolerance_ns):
    """The global-timer -> torch offset (of midpoints): from names whose
    launch counts agree, paired in order, else the candidate that puts the
    most launches within the tolerance of a same-named kernel."""
    per_name = defaultdict(list)
    for m in live:
        per_name[m.kernel].append(m)
    pairs = []
    for name, ms in per_name.items():
        if len(ms) == len(by_name[name]):
            pairs += [mids[name][i] - m._mid for i, m in enumerate(ms)]
    if pairs:
        offset = float(np.median(pairs))
        if np.mean(np.abs(np.array(pairs) - offset) <= tolerance_ns) >= 0.5:
            return offset, "paired in order where the launch counts agree"
    # Candidates: each torch kernel of the rarest shared name against a few of its launches.
    name = min(per_name, key=lambda n: len(by_name[n]))
    candidates = [
        mids[name][i] - m._mid
        for m in per_name[name][:16]
        for i in np.linspace(0, len(by_name[name]) - 1, min(len(by_name[name]), 1024)).astype(int)
    ]
    sample = live if len(live) <= 2048 else [live[i] for i in np.linspace(0, len(live) - 1, 2048).astype(int)]
    mid_of = np.array([m._mid for m in sample])
    groups = defaultdict(list)
    for i, m in enumerate(sample):
        groups[m.kernel].append(i)
    best, best_score = None, -1
    for c in candidates:
        score = 0
        for n, idx in groups.items():
            target = mid_of[idx] + c
            j = np.clip(np.searchsorted(mids[n], target), 1, max(len(mids[n]) - 1, 1))
            right = mids[n][np.minimum(j, len(mids[n]) - 1)]
            near = np.minimum(np.abs(mids[n][j - 1] - target), np.abs(right - target))
            score += int((near <= tolerance_ns).sum())
        if score > best_score:
            best, best_score = c, score
    if best_score <= 0:
        return None, "no offset puts a launch within the tolerance of a torch kernel"
    return best, f"offset found by timing ({best_score} of {len(sample)} launches agree)"


def align(launches: list, fit: str) -> int | None:
    """Fills each matched launch's map and residual; returns the median offset."""
    matched = [m for m in launches if m.torch_kernel is not None]
    for m in matched:
        span = max(m.end_ns - m.begin_ns, 0)
        if fit == "stretch" or span > m.torch_dur_ns:
            m.scale = m.torch_dur_ns / span if span else 1.0
            start = m.torch_ts_ns
        else:
            m.scale = 1.0
            start = m.torch_ts_ns + (m.torch_dur_ns - span) // 2
        m.offset_ns = start - m.begin_ns
        m.start_gap_ns = start - m.torch_ts_ns
        m.end_gap_ns = m.torch_ts_ns + m.torch_dur_ns - (start + int(round(span * m.scale)))
    if not matched:
        return None
    median = _median([m.offset_ns for m in matched])
    for m in matched:
        m.residual_ns = m.offset_ns - median
    return median


# -- writing ------------------------------------------------------------------


class _Out:
    """Track uuids and packets of the merged trace."""

    def __init__(self):
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

        self.TracePacket = TracePacket
        self.next_uuid = 1
        self.packets: list[bytes] = []  # TORCH_SEQUENCE and descriptors, serialized

    def uuid(self) -> int:
        u = self.next_uuid
        self.next_uuid += 1
        return u

    def track(self, name: str, parent: int | None = None, rank: int | None = None, description: str = "") -> int:
        p = self.TracePacket()
        d = p.track_descriptor
        d.uuid = self.uuid()
        d.name = name
        d.child_ordering = EXPLICIT
        if parent is not None:
            d.parent_uuid = parent
        if rank is not None:
            d.sibling_order_rank = int(rank)
        if description:
            d.description = description
        self.packets.append(p.SerializeToString())
        return d.uuid

    def event(self, ts: int, track: int, kind: int, name: str | None = None, seq: int = TORCH_SEQUENCE):
        p = self.TracePacket()
        p.trusted_packet_sequence_id = seq
        p.timestamp = max(int(ts), 0)
        te = p.track_event
        te.type, te.track_uuid = kind, track
        if name is not None:
            te.name = name
        return p


def _annotate(te, args: dict) -> None:
    for key, value in args.items():
        a = te.debug_annotations.add()
        a.name = str(key)
        if isinstance(value, bool):
            a.bool_value = value
        elif isinstance(value, int) and -(1 << 63) <= value < 1 << 63:
            a.int_value = value
        elif isinstance(value, float):
            a.double_value = value
        elif isinstance(value, str):
            a.string_value = value
        else:
            a.string_value = json.dumps(value)


def _lanes(events: list) -> list[int]:
    """A lane per X event of one thread such that each lane's events nest."""
    order = sorted(range(len(events)), key=lambda i: (events[i].ns, -events[i].dur_ns, i))
    stacks: list[list[int]] = []  # per lane, the ends of the open events
    lane = [0] * len(events)
    for i in order:
        s, e = events[i].ns, events[i].ns + events[i].dur_ns
        for k, stack in enumerate(stacks):
            while stack and stack[-1] <= s and not (stack[-1] == s and e == s):
                stack.pop()
            if not stack or stack[-1] >= e:
                stack.append(e)
                lane[i] = k
                break
        else:
            stacks.append([e])
            lane[i] = len(stacks) - 1
    return lane


def _torch_tracks(out: _Out, torch: torch_trace.TorchTrace):
    """Tracks per process and thread; returns {(pid, tid): uuid}, {pid: uuid}
    and the kernel-stream pids (GPUs)."""
    gpu_pids = {torch.events[k].pid for k in torch.kernels}
    pids = sorted({e.pid for e in torch.events} | set(torch.process_names), key=lambda p: (str(type(p)), p))
    process = {}
    for pid in pids:
        name = torch.process_names.get(pid, "")
        label = torch.process_labels.get(pid, "")
        if pid in gpu_pids:
            title = label or f"GPU {pid}"
        else:
            title = f"{name or 'process'} (pid {pid})" + (f" {label}" if label and label != "CPU" else "")
        rank = torch.process_sort.get(pid, pid if isinstance(pid, int) else 0)
        process[pid] = out.track(f"torch: {title}", rank=rank)
    threads = {}
    keys = sorted({(e.pid, e.tid) for e in torch.events if e.ph != "C"}, key=lambda k: (str(k[0]), str(k[1])))
    for pid, tid in keys:
        name = torch.thread_names.get((pid, tid)) or (f"stream {tid}" if pid in gpu_pids else f"thread {tid}")
        rank = torch.thread_sort.get((pid, tid), tid if isinstance(tid, int) else 0)
        threads[(pid, tid)] = out.track(name, process[pid], rank=rank)
    return threads, process


def _write_torch(out: _Out, torch: torch_trace.TorchTrace, threads, process, report) -> dict:
    """torch's events as packets (sorted); returns {event index: (track, begin packet)}."""
    rows = []  # (ts, rank, tie, packet)
    by_thread = defaultdict(list)
    for i, e in enumerate(torch.events):
        if e.ph == "X":
            by_thread[(e.pid, e.tid)].append(i)
    slice_track, begin_packet = {}, {}
    lane_tracks = {}
    intervals = defaultdict(list)  # (pid, tid) -> [(start, end, event index)] for flows
    for key, idx in by_thread.items():
        lanes = _lanes([torch.events[i] for i in idx])
        for i, k in zip(idx, lanes):
            if k == 0:
                track = threads[key]
            else:
                if (key, k) not in lane_tracks:
                    name = torch.thread_names.get(key) or f"{key[1]}"
                    lane_tracks[(key, k)] = out.track(f"{name} (lane {k + 1})", process[key[0]], rank=None)
                track = lane_tracks[(key, k)]
            slice_track[i] = track
            intervals[key].append((torch.events[i].ns, torch.events[i].ns + torch.events[i].dur_ns, i))
    for key in intervals:
        intervals[key].sort()
    flows = _flows(torch, intervals, report)
    counter_tracks = {}
    order = 0
    for i, e in enumerate(torch.events):
        if e.ph == "X":
            b = out.event(e.ns, slice_track[i], TYPE_SLICE_BEGIN, e.name)
            if e.cat:
                b.track_event.categories.append(e.cat)
            _annotate(b.track_event, e.args)
            for fid, terminating in flows.get(i, ()):
                (b.track_event.terminating_flow_ids if terminating else b.track_event.flow_ids).append(fid)
            begin_packet[i] = (slice_track[i], b)
            rows.append((e.ns, 1, (-e.dur_ns, order), b))
            end = out.event(e.ns + e.dur_ns, slice_track[i], TYPE_SLICE_END)
            rows.append((e.ns + e.dur_ns, 2 if e.dur_ns == 0 else 0, (-order,), end))
            order += 1
        elif e.ph in ("i", "I"):
            scope = e.raw.get("s", "t")
            track = process[e.pid] if scope in ("p", "g") else threads[(e.pid, e.tid)]
            p = out.event(e.ns, track, TYPE_INSTANT, e.name)
            if e.cat:
                p.track_event.categories.append(e.cat)
            _annotate(p.track_event, e.args)
            rows.append((e.ns, 1, (0, order), p))
            order += 1
        elif e.ph == "C":
            for key, value in e.args.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                ck = (e.pid, e.name, key)
                if ck not in counter_tracks:
                    counter_tracks[ck] = _counter_track(
                        out, f"{e.name} {key}" if len(e.args) > 1 else e.name, process[e.pid]
                    )
                p = out.event(e.ns, counter_tracks[ck], TYPE_COUNTER)
                p.track_event.double_counter_value = float(value)
                rows.append((e.ns, 1, (0, order), p))
                order += 1
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    out.torch_rows = rows
    return begin_packet


def _counter_track(out: _Out, name: str, parent: int) -> int:
    p = out.TracePacket()
    d = p.track_descriptor
    d.uuid, d.name, d.parent_uuid = out.uuid(), name, parent
    d.counter.SetInParent()
    out.packets.append(p.SerializeToString())
    return d.uuid


def _flows(torch, intervals, report) -> dict:
    """{X event index: [(flow id, terminating)]} from torch's s/t/f events,
    each bound to the innermost slice of its thread enclosing it (else the
    next one to start there)."""
    ids: dict = {}
    out = defaultdict(list)
    unbound = 0
    for e in torch.events:
        if e.ph not in ("s", "t", "f"):
            continue
        spans = intervals.get((e.pid, e.tid), [])
        starts = [s for s, _, _ in spans]
        j = int(np.searchsorted(starts, e.ns, "right"))
        target = None
        for c in range(j - 1, max(j - 64, -1), -1):  # the innermost enclosing: latest start that covers ts
            s, end, i = spans[c]
            if s <= e.ns <= end:
                target = i
                break
        if target is None and j < len(spans):
            target = spans[j][2]
        if target is None:
            unbound += 1
            continue
        key = (e.cat, str(e.raw.get("id", e.raw.get("bind_id"))))
        fid = ids.setdefault(key, (1 << 40) + len(ids))
        out[target].append((fid, e.ph == "f"))
    if unbound:
        report.notes.append(f"{unbound} torch flow endpoints had no slice on their thread and were left out")
    return out


def _write_proton(out: _Out, sink, protons, launches_by_key, stream_track, unmatched_root, report):
    """Every Proton launch's tracks and events, re-timed."""
    TracePacket = out.TracePacket
    names: dict[str, int] = {}
    for t in protons:
        for name in t.names.values():
            names.setdefault(name, len(names) + 1)
    first = TracePacket()
    first.trusted_packet_sequence_id = SEQUENCE_ID
    first.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    for name, iid in names.items():
        entry = first.interned_data.event_names.add()
        entry.iid, entry.name = iid, name
    for clock_id in (BOOTTIME, CLOCK_ID):
        clock = first.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp = clock_id, 0
        clock.is_incremental = clock_id == CLOCK_ID
    first.clock_snapshot.primary_trace_clock = BOOTTIME
    sink.write(trace_packet(first.SerializeToString()))
    events_first = TracePacket()
    events_first.trusted_packet_sequence_id = EVENTS_SEQUENCE
    events_first.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    sink.write(trace_packet(events_first.SerializeToString()))
    warp_chunks = []  # (first ts, header bytes, slice bytes)
    for n, t in enumerate(protons):
        new_uuid = {}
        launch_track, sm_track = {}, {}
        for key, launch in sorted(t.launches.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            m = launches_by_key[(t.path, key)]
            if m.torch_kernel is not None:
                parent, rank = stream_track[m.torch_kernel], LAUNCH_RANK_BASE + m.launch
                title = f"{launch.label} (Proton)"
            else:
                parent, rank, title = unmatched_root, m.launch, f"{launch.label} (Proton, not matched)"
            desc = (
                f"Proton launch from {t.path} ({t.gpu_name}); "
                + (
                    f"torch kernel correlation {m.correlation}; map t -> t + {m.offset_ns} ns"
                    + (f" scaled {m.scale:.6f} from the first entry" if m.scale != 1.0 else "")
                    + f"; residual {m.residual_ns} ns"
                    if m.torch_kernel is not None
                    else f"not matched: {m.why}"
                )
                + ("" if launch.from_notes else "; span taken from the first and last scope (no CTA span notes)")
            )
            launch_track[key] = out.track(title, parent, rank=rank, description=desc)
            if m.begin_ns is not None and m.offset_ns is not None:
                b = out.event(_map(m, m.begin_ns), launch_track[key], TYPE_SLICE_BEGIN, launch.kernel)
                _annotate(
                    b.track_event,
                    {
                        "proton launch": launch.launch,
                        "proton file": t.path,
                        "torch correlation": m.correlation if m.correlation is not None else "",
                        "map offset ns": m.offset_ns,
                        "map scale": m.scale,
                        "residual ns": m.residual_ns if m.residual_ns is not None else 0,
                        "start gap ns": m.start_gap_ns if m.start_gap_ns is not None else 0,
                        "end gap ns": m.end_gap_ns if m.end_gap_ns is not None else 0,
                    },
                )
                e = out.event(_map(m, m.end_ns), launch_track[key], TYPE_SLICE_END)
                out.torch_rows.append((b.timestamp, 1, (-(e.timestamp - b.timestamp), 0), b))
                out.torch_rows.append((e.timestamp, 0, (0,), e))
            for cta in sorted(launch.cta_uuids, key=lambda u: t.tracks[u].sibling_order_rank):
                d = t.tracks[cta]
                sm = t.tracks.get(d.parent_uuid)
                sk = (key, d.parent_uuid)
                if sk not in sm_track:
                    sm_track[sk] = out.track(
                        sm.name if sm else "SM ?", launch_track[key], rank=sm.sibling_order_rank if sm else 0
                    )
                new_uuid[cta] = sm_track[sk]  # placeholder parent for the CTA's copy below
        # Copy CTA tracks and everything below them, parents first.
        copied = {}

        def copy(uuid):
            if uuid in copied:
                return copied[uuid]
            d = t.tracks[uuid]
            p = TracePacket()
            p.track_descriptor.CopyFrom(d)
            nd = p.track_descriptor
            nd.uuid = out.uuid()
            if uuid in t.launch_of_track and proton_pftrace._CTA.match(d.name) and uuid in new_uuid:
                nd.parent_uuid = new_uuid[uuid]
            else:
                nd.parent_uuid = copy(d.parent_uuid)
            copied[uuid] = nd.uuid
            out.packets.append(p.SerializeToString())
            return nd.uuid

        for uuid in sorted(t.launch_of_track, key=lambda u: u):
            copy(uuid)
        # Warp slices.
        if t.kind.size:
            iid_map = np.zeros(int(max(t.names, default=0)) + 1, dtype=np.uint64)
            for iid, name in t.names.items():
                iid_map[iid] = names[name]
            iid = np.where(t.kind == 1, iid_map[np.minimum(t.iid, iid_map.size - 1).astype(np.int64)], 0)
            ts_new = np.zeros(t.ts.size, dtype=np.int64)
            for w in range(t.warp_uuid.size):
                a, b = int(t.warp_lo[w]), int(t.warp_hi[w])
                m = launches_by_key[(t.path, t.launch_of_track[int(t.warp_uuid[w])])]
                ts_new[a:b] = _map_array(m, t.origin_ns + t.ts[a:b])
            delta = np.zeros(t.ts.size, dtype=np.int64)
            delta[1:] = np.diff(ts_new)
            delta[t.warp_lo[t.warp_lo < t.ts.size]] = 0  # each warp starts at its header's clock
            flat, lengths = slice_packets(t.kind.astype(np.uint8), iid, np.maximum(delta, 0).astype(np.uint64))
            ends = np.cumsum(lengths)
            starts = ends - lengths
            with_slices = np.flatnonzero(t.warp_hi > t.warp_lo)
            if with_slices.size:
                heads = warp_headers(
                    np.array([copied[int(u)] for u in t.warp_uuid[with_slices]], dtype=np.uint64),
                    ts_new[t.warp_lo[with_slices]].astype(np.uint64),
                )
                matrix, widths = heads
                for j, w in enumerate(with_slices.tolist()):
                    a, b = int(t.warp_lo[w]), int(t.warp_hi[w])
                    head = matrix[j, : widths[j]]
                    warp_chunks.append((int(ts_new[a]), n, w, head, flat[starts[a] : ends[b - 1]]))
        # Asynchronous events, marks and values.
        for p in t.others:
            te = p.track_event
            track = te.track_uuid
            key = t.launch_of_track.get(track)
            if key is None:
                continue
            m = launches_by_key[(t.path, key)]
            q = TracePacket()
            q.CopyFrom(p)
            q.trusted_packet_sequence_id = EVENTS_SEQUENCE
            q.ClearField("sequence_flags")
            q.timestamp = max(int(_map(m, t.origin_ns + p.timestamp)), 0)
            q.track_event.track_uuid = copied.get(track, track)
            for field_name in ("flow_ids", "terminating_flow_ids"):
                ids = list(getattr(q.track_event, field_name))
                if ids:
                    q.track_event.ClearField(field_name)
                    getattr(q.track_event, field_name).extend(((n + 1) << 32) + i for i in ids)
            out.proton_event_packets.append(q.SerializeToString())
    warp_chunks.sort(key=lambda c: (c[0], c[1], c[2]))
    return warp_chunks


def _map(m: LaunchMatch, t: int) -> int:
    if m.offset_ns is None:
        return int(t)
    if m.scale == 1.0:
        return int(t) + m.offset_ns
    return m.begin_ns + m.offset_ns + int(round((int(t) - m.begin_ns) * m.scale))


def _map_array(m: LaunchMatch, t: np.ndarray) -> np.ndarray:
    t = t.astype(np.int64)
    if m.offset_ns is None:
        return t
    if m.scale == 1.0:
        return t + m.offset_ns
    return m.begin_ns + m.offset_ns + np.rint((t - m.begin_ns) * m.scale).astype(np.int64)


def merge_with_torch(
    torch_path: str,
    proton_paths: Sequence[str],
    output: str,
    *,
    tolerance_us: float = DEFAULT_TOLERANCE_US,
    fit: str = "center",
    device=None,
    compress: bool = False,
    svg: str | None = None,
) -> TorchMergeReport:
    """Writes the merged trace (and, with `svg`, a picture of its first
    matched launches: torch_timeline_svg); returns the report (matched and
    unmatched launches)."""
    if fit not in FITS:
        raise TorchMergeError(f"fit={fit!r}: valid: {', '.join(FITS)}")
    if not (tolerance_us > 0):
        raise TorchMergeError(f"tolerance {tolerance_us!r} us: must be positive")
    if not proton_paths:
        raise TorchMergeError("no Proton trace to merge with the torch trace")
    protons = [proton_pftrace.read(p) for p in proton_paths]
    torch = torch_trace.read(torch_path)
    report = TorchMergeReport(output)
    launches, _, how = match(torch, protons, tolerance_us * 1000.0, device)
    report.offset_ns = align(launches, fit)
    report.how = how
    launches.sort(key=lambda m: (m.begin_ns is None, m.begin_ns or 0, m.file, m.kernel, m.launch))  # as they ran
    report.matched = [m for m in launches if m.torch_kernel is not None]
    report.unmatched = [m for m in launches if m.torch_kernel is None]
    for m in report.unmatched:  # placed with the median offset, apart from torch's kernels
        if m.begin_ns is not None:
            m.offset_ns = (
                report.offset_ns
                if report.offset_ns is not None
                else (torch.events[torch.kernels[0]].ns - min(x.begin_ns for x in launches if x.begin_ns is not None))
            )
        if not m.why:
            m.why = "not matched"
    names = {m.kernel for m in launches}
    taken = defaultdict(int)
    for m in report.matched:
        taken[m.kernel] += 1
    counts = defaultdict(int)
    for k in torch.kernels:
        if torch.events[k].name in names:
            counts[torch.events[k].name] += 1
    report.torch_kernels_without_launch = {n: c - taken[n] for n, c in counts.items() if c > taken[n]}
    report.skipped_torch_events = dict(torch.skipped)
    if any(not t.launches[k].from_notes for t in protons for k in t.launches):
        report.notes.append(
            "some launches carry no CTA span notes (a trace of an older Proton): their span is their first "
            "and last scope, so their placement within torch's kernel is approximate"
        )
    _write(output, torch, protons, launches, report, compress)
    if svg is not None:
        from . import torch_timeline_svg

        picture = torch_timeline_svg.render(torch, protons, report.matched, _map_array)
        with files.output(svg, stdout=True) as target:
            with open(target, "w", encoding="utf-8") as f:
                f.write(picture)
    return report


def _write(output, torch, protons, launches, report, compress) -> None:
    out = _Out()
    out.proton_event_packets = []
    threads, process = _torch_tracks(out, torch)
    _write_torch(out, torch, threads, process, report)
    stream_track = {k: threads[(torch.events[k].pid, torch.events[k].tid)] for k in torch.kernels}
    unmatched_root = None
    if report.unmatched:
        unmatched_root = out.track(
            "Proton: not matched",
            rank=1 << 30,
            description="Proton launches that match no kernel of torch's trace; placed with the median "
            "offset of the matched launches (or at torch's first kernel when none matched)",
        )
    by_key = {(m.file, (m.kernel, m.launch)): m for m in launches}
    with files.output(output, stdout=True) as target:
        with open(target, "wb") as file, perfetto_deflate.sink(file, compress) as sink:
            # Tracks first would need every uuid known; the Proton part is built
            # before writing, then torch's packets, then the warps (in time order).
            body = _BufferSink()
            warp_chunks = _write_proton(out, body, protons, by_key, stream_track, unmatched_root, report)
            first = TracePacketFirst(out)
            sink.write(first)
            for packet in out.packets:
                sink.write(trace_packet(packet))
            sink.write(body.data())
            out.torch_rows.sort(key=lambda r: (r[0], r[1], r[2]))
            sink.write(b"".join(trace_packet(r[3].SerializeToString()) for r in out.torch_rows))
            sink.write(b"".join(trace_packet(p) for p in out.proton_event_packets))
            for _, _, _, head, slices in warp_chunks:
                sink.write(np.ascontiguousarray(head).tobytes())
                sink.write(np.ascontiguousarray(slices).tobytes())


class _BufferSink:
    def __init__(self):
        self.parts = []

    def write(self, data) -> None:
        self.parts.append(bytes(data))

    def data(self) -> bytes:
        return b"".join(self.parts)


def TracePacketFirst(out: _Out) -> bytes:
    """torch's sequence's first packet: its incremental state cleared."""
    p = out.TracePacket()
    p.trusted_packet_sequence_id = TORCH_SEQUENCE
    p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    return trace_packet(p.SerializeToString())


def export_with_torch(
    torch_trace_path,
    proton_trace_paths,
    output: str,
    *,
    tolerance_us: float = DEFAULT_TOLERANCE_US,
    fit: str = "center",
    device=None,
    compress: bool = False,
    quiet: bool = False,
    svg: str | None = None,
) -> TorchMergeReport:
    """One Perfetto trace from torch.profiler's Chrome trace (a path, or a
    finished torch.profiler.profile, which is exported to a temporary file)
    and Proton's .pftrace files (a path or a list): each Proton launch's
    SM > CTA > warp tracks under the kernel of torch's timeline it ran as,
    on torch's time axis. Returns the report (matched launches with their
    map and residual, unmatched ones with the reason) and prints its
    summary unless quiet. `svg` also writes a picture of the first
    matched launches under their torch kernels."""
    if isinstance(proton_trace_paths, (str, os.PathLike)):
        proton_trace_paths = [proton_trace_paths]
    paths = [os.fspath(p) for p in proton_trace_paths]
    temporary = None
    if hasattr(torch_trace_path, "export_chrome_trace"):
        import tempfile

        fd, temporary = tempfile.mkstemp(prefix="proton-torch-", suffix=".json")
        os.close(fd)
        torch_trace_path.export_chrome_trace(temporary)
        torch_trace_path = temporary
    try:
        report = merge_with_torch(
            os.fspath(torch_trace_path),
            paths,
            output,
            tolerance_us=tolerance_us,
            fit=fit,
            device=device,
            compress=compress,
            svg=svg,
        )
    finally:
        if temporary:
            os.unlink(temporary)
    if not quiet:
        print(report.summary(), file=sys.stderr)
    return report
