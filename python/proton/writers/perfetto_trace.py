"""Perfetto protobuf traces (.pftrace, open in ui.perfetto.dev).

Tracks: GPU > SM > CTA (one per launch and CTA) > warp, each level ordered
numerically (explicit sibling ranks). Every scope instance is a slice on its
warp's track, with its start and end in ns since the trace's origin.
Asynchronous events and marks follow on a second sequence
(writers/async_events: event tracks per CTA, flows between warps), values
on a third (writers/perfetto_counters: counter tracks per warp).

Compact and fast (see perfetto_packets): one packet sequence, interned scope
names, and per warp a header that makes the warp the default track and
resets an incremental clock, so a slice costs two packets of 10-13 bytes
(compress=True deflates them: perfetto_deflate).
Warps are written in the order of their first timestamp (the clock's resets
must not go back in time), a chunk of warps at a time, so memory stays
around the size of one chunk's packets. Warps that wrote the same scope
sequence (the usual case) share one packet layout, padded to their widest
deltas: their bytes are a template plus the timestamp deltas, without
per-packet work.

One pass over the launches, a window at a time: the launches' facts
(launch_windows.LaunchFacts: each launch's track count and earliest warp)
plan the track uuids and the warps' order before the first window; a
window's tracks go to the file, its warps' packets (encoded on a thread of
their own meanwhile) to a spill file beside it, which is appended, copied
by the kernel, once the last track is written (tracks come first).

Each CTA track's description notes the launch's call stack and the CTA's
span on the global timer ("global timer ns = <first entry>..<last
return>"), which proton-merge-traces --torch aligns launches with. The
GPU track's description notes the global-timer value the timestamps
are relative to ("global timer origin ns = N") and, when measured, the
offset of the host's real-time clock ("host realtime offset ns = X +- U
(S samples)"), which proton-merge-traces reads to align several GPUs.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

import numpy as np

from . import async_events, launch_windows, perfetto_counters, perfetto_deflate, perfetto_tracks, perfetto_warps
from .perfetto_packets import BOOTTIME, CLOCK_ID, SEQ_INCREMENTAL_STATE_CLEARED, SEQUENCE_ID
from ..contract.events import LaunchEvents
from .perfetto_tracks import CTA_SPAN, cta_span_ns  # noqa: F401 - readers of the span notes import them here
from .files import BackgroundCalls
from .stacked_launches import StackedLaunches

from .perfetto_tracks import EXPLICIT_ORDER

HOST_CLOCK_KEYS = ("realtime_minus_globaltimer_ns", "uncertainty_ns", "samples")


def prepare() -> None:
    """Imports what writing a trace needs, at a session's start rather than at
    its finalize: a session finalized at the program's end must not import
    then, since code run by exec() while it does (protobuf's namedtuples)
    clears CPython's note that the program ended by Ctrl-C, and the process
    would end with status 1 instead of by SIGINT."""
    with contextlib.suppress(ImportError):
        import perfetto.trace_builder.proto_builder  # noqa: F401


def _builder():
    try:
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder
    except ImportError as error:  # pragma: no cover - the package is a dependency
        raise RuntimeError(
            "writing .pftrace files needs the `perfetto` Python package (pip install perfetto)"
        ) from error
    return TraceProtoBuilder()


def host_clock_note(host_clock: dict | None) -> str:
    """The description text that records the host clock offset."""
    if host_clock is None:
        return ""
    if (
        not isinstance(host_clock, dict)
        or set(host_clock) != set(HOST_CLOCK_KEYS)
        or not all(
            isinstance(host_clock[k], (int, np.integer)) and not isinstance(host_clock[k], bool)
            for k in HOST_CLOCK_KEYS
        )
        or host_clock["uncertainty_ns"] < 0
        or host_clock["samples"] < 1
    ):
        raise ValueError(
            f"host_clock must be None or a dict of integers {HOST_CLOCK_KEYS} (uncertainty >= 0, "
            f"samples >= 1), not {host_clock!r}"
        )
    return (
        f"; host realtime offset ns = {int(host_clock['realtime_minus_globaltimer_ns'])} "
        f"+- {int(host_clock['uncertainty_ns'])} ({int(host_clock['samples'])} samples)"
    )


def write(
    path: str,
    launches,
    gpu_name: str = "GPU 0",
    origin_ns: int | None = None,
    *,
    host_clock: dict | None = None,
    compress: bool = False,
) -> int:
    """Writes the trace of `launches` (LaunchEvents, or a session's source
    of windows: writers/launch_windows); returns the number of slices
    written. Timestamps are global-timer ns minus `origin_ns` (default: the
    first warp entry). `host_clock`: the measured
    {"realtime_minus_globaltimer_ns", "uncertainty_ns", "samples"} of this
    GPU, or None. compress=True deflates the packets (perfetto_deflate:
    about a third of the bytes, slower to write)."""
    note = host_clock_note(host_clock)
    source = launch_windows.source(launches)
    facts = source.facts
    if origin_ns is None:
        origin_ns = facts.origin_ns
    names = facts.scope_names
    builder = _builder()
    start = builder.add_packet()  # the sequence's interned names and clocks
    start.trusted_packet_sequence_id = SEQUENCE_ID
    start.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    for name, iid in names.items():
        entry = start.interned_data.event_names.add()
        entry.iid, entry.name = iid, name
    for clock_id in (BOOTTIME, CLOCK_ID):  # the incremental clock reads as trace time
        clock = start.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp = clock_id, 0
        clock.is_incremental = clock_id == CLOCK_ID
    start.clock_snapshot.primary_trace_clock = BOOTTIME

    def track(uuid, name, parent=None, rank=None):
        packet = builder.add_packet()
        desc = packet.track_descriptor
        desc.uuid, desc.name, desc.child_ordering = uuid, name, EXPLICIT_ORDER
        if parent is not None:
            desc.parent_uuid = parent
        if rank is not None:
            desc.sibling_order_rank = rank
        return desc

    gpu_uuid = 1
    track(gpu_uuid, gpu_name).description = f"global timer origin ns = {int(origin_ns)}{note}"
    sms = sorted(int(sm) for sm in facts.sms)
    sm_uuid = {sm: 2 + i for i, sm in enumerate(sms)}
    for sm in sms:
        track(sm_uuid[sm], f"SM {sm}", gpu_uuid, rank=sm)
    warps_of = _warps_maker(names)
    layout = perfetto_tracks.plan(facts.launch_tracks, 2 + len(sms))
    later = perfetto_warps.later_first(facts, origin_ns)
    with open(path, "wb") as file, _spill(path) as spill_file:
        # One pass over the launches: the tracks go to the file, the warps'
        # packets (which must follow every track) to the spill, appended after.
        with perfetto_deflate.sink(file, compress) as out, perfetto_deflate.sink(spill_file, compress) as spill:
            out.write(builder.serialize())
            warps = perfetto_warps.WarpWriter(spill, layout, warps_of, origin_ns, later)
            # The warps of a window are encoded on a thread of their own while the tracks are.
            with BackgroundCalls(warps.window) as encode:
                launch0 = 0
                for window in source.windows():
                    stacks = []
                    for group in launch_windows.groups(window):
                        base = np.array([layout.first_uuid[launch0 + i] for i in group], dtype=np.uint64)
                        stacks.append((group, StackedLaunches([window[i] for i in group], origin_ns), base))
                    encode(stacks, launch0, len(window))
                    perfetto_tracks.write_window(out, stacks, launch0, sm_uuid)
                    launch0 += len(window)
            warps.close()
        _append(file, spill_file)
        if facts.has_async or facts.has_values:
            with perfetto_deflate.sink(file, compress) as out:
                next_uuid = layout.next_uuid
                if facts.has_async:
                    next_uuid = _async_packets(out, source, layout, origin_ns, next_uuid)
                if facts.has_values:
                    _counter_packets(out, source, layout, origin_ns, next_uuid)
    return facts.num_events


@contextlib.contextmanager
def _spill(path: str):
    """A temporary file for the warps' packets: beside the output where it
    is a file to be (on the disk that takes the trace), else in the
    temporary directory; removed when closed."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        regular = not os.path.exists(path) or stat.S_ISREG(os.stat(path).st_mode)
        spill = tempfile.TemporaryFile(dir=folder if regular else None, prefix=".proton-pftrace-")
    except OSError:
        spill = tempfile.TemporaryFile(prefix=".proton-pftrace-")
    with spill:
        yield spill


def _append(file, spill) -> None:
    """Appends the spill's bytes to `file`: copied by the kernel where it
    can (copy_file_range, sendfile), else read and written."""
    file.flush()
    spill.flush()
    size, done = os.fstat(spill.fileno()).st_size, 0
    for copy in (_copy_file_range, _sendfile):
        try:
            while done < size:
                copied = copy(spill.fileno(), file.fileno(), done, size - done)
                if copied <= 0:
                    break
                done += copied
        except OSError:
            pass
        if done >= size:
            return
    spill.seek(done)
    while True:
        data = spill.read(CHUNK_COPY)
        if not data:
            return
        file.write(data)


CHUNK_COPY = 8 << 20


def _copy_file_range(source: int, target: int, offset: int, count: int) -> int:
    if not hasattr(os, "copy_file_range"):
        raise OSError("no copy_file_range")
    return os.copy_file_range(source, target, min(count, 1 << 30), offset_src=offset)


def _sendfile(source: int, target: int, offset: int, count: int) -> int:
    if not hasattr(os, "sendfile"):
        raise OSError("no sendfile")
    return os.sendfile(target, source, offset, min(count, 1 << 30))


def _warps_maker(names: dict):
    """warps_of(stack, uuid): a group's perfetto_warps.Warps, its scopes'
    interned name ids from `names`."""

    def warps_of(stack, warp_uuid):
        iid_of_scope = np.array([0] + [names[n] for n in stack.scope_names], dtype=np.uint64)[1:]
        return perfetto_warps.Warps(stack, iid_of_scope, warp_uuid)

    return warps_of


def _lanes(source, layout):
    """(launch, its CTA track uuids, its warp track uuids) of every launch
    that has asynchronous events, marks or values, in launch order."""
    order = 0
    for window in source.windows():
        for ev in window:
            a = ev.asynchronous
            if a.num_events or a.num_marks or a.num_values:
                yield (ev, *_uuids(layout.first_uuid[order], ev))
            order += 1


def _async_packets(out, source, layout, origin_ns: int, next_uuid: int) -> int:
    """Asynchronous events and marks (writers/async_events) on their own
    packet sequence, after the warps' packets; returns the next free uuid."""
    builder = _builder()
    first = builder.add_packet()
    first.trusted_packet_sequence_id = async_events.SEQUENCE_ID
    first.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    next_flow = 1
    for ev, cta_uuid, warp_uuid in _lanes(source, layout):
        next_uuid, next_flow = async_events.perfetto_packets(
            builder, ev, ev.origin_ns - origin_ns, cta_uuid, warp_uuid, next_uuid, next_flow
        )
        out.write(builder.serialize())
        builder = _builder()
    out.write(builder.serialize())
    return next_uuid


def _counter_packets(out, source, layout, origin_ns: int, next_uuid: int) -> None:
    """Values (writers/perfetto_counters) on their own packet sequence, last."""
    out.write(perfetto_counters.first_packet())
    for ev, _, warp_uuid in _lanes(source, layout):
        data, next_uuid = perfetto_counters.launch_packets(ev, ev.origin_ns - origin_ns, warp_uuid, next_uuid)
        out.write(data)


def _uuids(first: int, ev: LaunchEvents):
    ctas, segments = ev.num_ctas, ev.num_segments
    cta_uuid = first + np.arange(ctas, dtype=np.uint64)
    warp_uuid = first + ctas + np.arange(ctas * segments, dtype=np.uint64)
    return cta_uuid, warp_uuid
