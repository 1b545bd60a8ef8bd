"""A Proton .pftrace read back into launches, for proton-merge-traces
--torch, which re-times each launch onto torch.profiler's time axis.

What the writer (writers/perfetto_trace) puts there and this reads:
track descriptors GPU > SM > CTA ("<kernel> #<launch> CTA <c>", its
description holding "global timer ns = <first entry>..<last return>") >
warp; on packet sequence 1 a header per warp (its track as the default
track, the incremental clock reset to the warp's first timestamp) followed
by the warp's slice packets (10-13 bytes: delta, begin or end, name iid),
decoded here with numpy; on other sequences asynchronous events, marks and
counter values (TrackEvents with absolute timestamps), parsed with the
perfetto package's protos. Timestamps are ns since the GPU track's "global
timer origin ns".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..contract.errors import ProfilerError
from ..writers import perfetto_frames
from ..writers.perfetto_packets import CLOCK_ID, SLICE_BEGIN, SLICE_END

_ORIGIN = re.compile(r"global timer origin ns = (\d+)")
_CTA = re.compile(r"^(?P<kernel>.*) #(?P<launch>\d+) CTA (?P<cta>\d+)$")
_SPAN = re.compile(r"global timer ns = (\d+)\.\.(\d+)")
SLICE_SEQUENCE = 1


class ProtonTraceError(ProfilerError):
    """An input that is not a Proton trace; the message names the file."""


@dataclass
class Launch:
    """One launch of a Proton trace: its CTAs' tracks and its span on the
    global timer (absolute ns)."""

    path: str
    kernel: str
    launch: int
    cta_uuids: list = field(default_factory=list)
    begin_ns: int | None = None  # first kernel entry (CTA notes), absolute
    end_ns: int | None = None  # last return
    from_notes: bool = True  # False: span from the first and last slice (older traces)

    @property
    def label(self) -> str:
        return f"{self.kernel} #{self.launch}"


@dataclass
class ProtonTrace:
    path: str
    origin_ns: int
    gpu_name: str
    tracks: dict  # uuid -> TrackDescriptor
    launches: dict  # (kernel, launch) -> Launch
    launch_of_track: dict  # uuid -> (kernel, launch), for CTA tracks and below
    names: dict  # interned slice name iid -> name
    # warp slices, in file order: per warp (header) its track and packet range
    warp_uuid: np.ndarray
    warp_lo: np.ndarray
    warp_hi: np.ndarray
    kind: np.ndarray  # per slice packet: SLICE_BEGIN or SLICE_END
    iid: np.ndarray  # name iid (0 for ends)
    ts: np.ndarray  # ns since origin_ns
    others: list  # TracePackets with a track event on other sequences


def _protos():
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    return TracePacket


def read(path: str) -> ProtonTrace:
    TracePacket = _protos()
    try:
        raw, _, start, length = perfetto_frames.read_framed(path)
    except ValueError as e:
        raise ProtonTraceError(str(e)) from None
    data = np.frombuffer(raw, dtype=np.uint8)
    fast = (length > 3) & (data[np.minimum(start, data.size - 1)] == 0x50) if start.size else np.zeros(0, bool)
    fast[fast] = (data[start[fast] + 1] < 0x80) & (data[start[fast] + 2] == 0x40)
    seq = np.zeros(start.size, dtype=np.int64)
    seq[fast] = data[start[fast] + 1]
    slices = fast & (seq == SLICE_SEQUENCE)
    tracks, names, others = {}, {}, []
    header_at, header_uuid, header_first = [], [], []
    origin, gpu_name = None, ""
    for i in np.flatnonzero(~slices).tolist():
        s, n = int(start[i]), int(length[i])
        try:
            p = TracePacket.FromString(raw[s : s + n])
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise ProtonTraceError(f"{path}: corrupted packet at byte {s} ({type(e).__name__})") from None
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            tracks[d.uuid] = d
            m = _ORIGIN.search(d.description) if not d.HasField("parent_uuid") else None
            if m and origin is None:
                origin, gpu_name = int(m.group(1)), d.name
            continue
        if p.trusted_packet_sequence_id == SLICE_SEQUENCE:
            for entry in p.interned_data.event_names:
                names[entry.iid] = entry.name
            defaults = p.trace_packet_defaults if p.HasField("trace_packet_defaults") else None
            if defaults is not None and defaults.track_event_defaults.HasField("track_uuid"):
                clocks = [c for c in p.clock_snapshot.clocks if c.clock_id == CLOCK_ID]
                if not clocks or defaults.timestamp_clock_id != CLOCK_ID:
                    raise ProtonTraceError(f"{path}: not a Proton trace layout (warp header at byte {s})")
                header_at.append(i)
                header_uuid.append(defaults.track_event_defaults.track_uuid)
                header_first.append(clocks[0].timestamp)
            elif p.HasField("track_event"):
                raise ProtonTraceError(f"{path}: not a Proton trace layout (track event at byte {s})")
            continue
        if p.HasField("track_event"):
            others.append(p)
    if origin is None:
        raise ProtonTraceError(f"{path}: not a Proton trace (no track notes its 'global timer origin ns')")
    kind, iid, ts, warp_lo, warp_hi = _slices(data, start, np.flatnonzero(slices), header_at, header_first, path)
    launches, launch_of_track = _launches(path, tracks)
    for uuid in header_uuid:
        if uuid not in launch_of_track:
            raise ProtonTraceError(f"{path}: not a Proton trace layout (warp track {uuid} has no CTA)")
    trace = ProtonTrace(
        path,
        origin,
        gpu_name,
        tracks,
        launches,
        launch_of_track,
        names,
        np.array(header_uuid, dtype=np.uint64),
        warp_lo,
        warp_hi,
        kind,
        iid,
        ts,
        others,
    )
    _fallback_spans(trace)
    return trace


def _varints(data: np.ndarray, at: np.ndarray, path: str):
    """Values and widths of the varints starting at `at`."""
    value = np.zeros(at.size, dtype=np.uint64)
    width = np.zeros(at.size, dtype=np.int64)
    going = np.ones(at.size, dtype=bool)
    for k in range(10):
        if not going.any():
            break
        idx = np.flatnonzero(going)
        pos = at[idx] + k
        if (pos >= data.size).any():
            raise ProtonTraceError(f"{path}: not a Proton trace layout (truncated slice packet)")
        b = data[pos]
        value[idx] |= (b & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        width[idx] = k + 1
        going[idx] = b >= 0x80
    if going.any():
        raise ProtonTraceError(f"{path}: not a Proton trace layout (bad varint in a slice packet)")
    return value, width


def _slices(data, start, slice_idx, header_at, header_first, path):
    """The slice packets' kinds, name iids and timestamps (ns since origin),
    and per warp header its range in them."""
    at = start[slice_idx]
    delta, width = _varints(data, at + 3, path)
    p = at + 3 + width
    if slice_idx.size:
        ok = (data[p] == 0x5A) & (data[p + 2] == 0x48)
        kind = data[p + 3].astype(np.int8)
        ok &= (kind == SLICE_BEGIN) | (kind == SLICE_END)
        if not ok.all():
            raise ProtonTraceError(f"{path}: not a Proton trace layout (unexpected slice packet)")
    else:
        kind = np.zeros(0, dtype=np.int8)
    begins = np.flatnonzero(kind == SLICE_BEGIN)
    iid = np.zeros(slice_idx.size, dtype=np.uint64)
    if begins.size:
        if not (data[p[begins] + 4] == 0x50).all():
            raise ProtonTraceError(f"{path}: not a Proton trace layout (a slice begin without a name)")
        iid[begins], _ = _varints(data, p[begins] + 5, path)
    header_at = np.array(header_at, dtype=np.int64)
    owner = np.searchsorted(header_at, slice_idx) - 1  # the header before each slice packet
    if (owner < 0).any():
        raise ProtonTraceError(f"{path}: not a Proton trace layout (slices before any warp header)")
    # Incremental clock: each packet adds its delta; a header resets it.
    total = np.cumsum(delta.astype(np.int64))
    lo = np.searchsorted(owner, np.arange(header_at.size), "left")
    hi = np.searchsorted(owner, np.arange(header_at.size), "right")
    before = np.where(lo > 0, total[np.maximum(lo - 1, 0)] if total.size else 0, 0)
    first = np.array(header_first, dtype=np.int64)
    ts = (first - before)[owner] + total if total.size else np.zeros(0, dtype=np.int64)
    return kind, iid, ts, lo, hi


def _launches(path: str, tracks: dict):
    launches, launch_of_track = {}, {}
    for uuid, d in tracks.items():
        m = _CTA.match(d.name)
        if not m or not d.HasField("parent_uuid"):
            continue
        key = (m.group("kernel"), int(m.group("launch")))
        launch = launches.setdefault(key, Launch(path, key[0], key[1]))
        launch.cta_uuids.append(uuid)
        launch_of_track[uuid] = key
        span = _SPAN.search(d.description)
        if span is None:
            launch.from_notes = False
        elif launch.from_notes:
            b, e = int(span.group(1)), int(span.group(2))
            launch.begin_ns = b if launch.begin_ns is None else min(launch.begin_ns, b)
            launch.end_ns = e if launch.end_ns is None else max(launch.end_ns, e)
    # Tracks below a CTA (warps, event lanes, counters) belong to its launch.
    for uuid in tracks:
        chain, at = [], uuid
        while at in tracks and at not in launch_of_track and tracks[at].HasField("parent_uuid"):
            chain.append(at)
            at = tracks[at].parent_uuid
            if len(chain) > 64:
                raise ProtonTraceError(f"{path}: not a Proton trace layout (a cycle of track parents)")
        if at in launch_of_track:
            for c in chain:
                launch_of_track[c] = launch_of_track[at]
    return launches, launch_of_track


def _fallback_spans(trace: ProtonTrace) -> None:
    """Each launch's span covers its slices: launches without CTA span notes
    (traces of older Proton versions) take their first and last slice; a
    span from the notes (global timer, ticking every 32 to 64 ns) is widened
    where a slice timed by the SM clock starts before or ends after it."""
    lo, hi = {}, {}
    for w in range(trace.warp_uuid.size):
        a, b = int(trace.warp_lo[w]), int(trace.warp_hi[w])
        if a == b:
            continue
        key = trace.launch_of_track[int(trace.warp_uuid[w])]
        first, last = int(trace.ts[a:b].min()), int(trace.ts[a:b].max())
        lo[key] = min(lo.get(key, first), first)
        hi[key] = max(hi.get(key, last), last)
    for key, launch in trace.launches.items():
        if launch.from_notes and launch.begin_ns is not None:
            if key in lo:
                launch.begin_ns = min(launch.begin_ns, trace.origin_ns + lo[key])
                launch.end_ns = max(launch.end_ns, trace.origin_ns + hi[key])
            continue
        launch.from_notes = False
        if key in lo:
            launch.begin_ns, launch.end_ns = trace.origin_ns + lo[key], trace.origin_ns + hi[key]
        else:
            launch.begin_ns = launch.end_ns = None
