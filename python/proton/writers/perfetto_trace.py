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

Each CTA track's description notes the launch's call stack and the CTA's
span on the global timer ("global timer ns = <first entry>..<last
return>"), which proton-merge-traces --torch aligns launches with. The
GPU track's description notes the global-timer value the timestamps
are relative to ("global timer origin ns = N") and, when measured, the
offset of the host's real-time clock ("host realtime offset ns = X +- U
(S samples)"), which proton-merge-traces reads to align several GPUs.
"""

from __future__ import annotations

import numpy as np

from . import async_events, byte_rows, perfetto_counters, perfetto_deflate, perfetto_warps
from .perfetto_packets import BOOTTIME, CLOCK_ID, SEQ_INCREMENTAL_STATE_CLEARED, SEQUENCE_ID
from ..contract.events import LaunchEvents

EXPLICIT_ORDER = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT
HOST_CLOCK_KEYS = ("realtime_minus_globaltimer_ns", "uncertainty_ns", "samples")
#: How a CTA track's description names the CTA's span on the global timer:
#: "global timer ns = <first entry>..<last return>", absolute ns.
CTA_SPAN = "global timer ns"


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
    launches: list[LaunchEvents],
    gpu_name: str = "GPU 0",
    origin_ns: int | None = None,
    *,
    host_clock: dict | None = None,
    compress: bool = False,
) -> int:
    """Writes the trace; returns the number of slices written. Timestamps
    are global-timer ns minus `origin_ns` (default: the first warp entry).
    `host_clock`: the measured {"realtime_minus_globaltimer_ns",
    "uncertainty_ns", "samples"} of this GPU, or None. compress=True
    deflates the packets (perfetto_deflate: about a third of the bytes,
    slower to write)."""
    note = host_clock_note(host_clock)
    if origin_ns is None:
        origin_ns = min((ev.origin_ns for ev in launches), default=0)
    names: dict[str, int] = {}
    for ev in launches:
        for name in ev.scope_names:
            names.setdefault(name, len(names) + 1)
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
    sms = sorted({int(sm) for ev in launches for sm in np.unique(ev.warp_sm)})
    sm_uuid = {sm: 2 + i for i, sm in enumerate(sms)}
    for sm in sms:
        track(sm_uuid[sm], f"SM {sm}", gpu_uuid, rank=sm)
    next_uuid = 2 + len(sms)
    warps, lanes = [], []
    with open(path, "wb") as file, perfetto_deflate.sink(file, compress) as out:
        out.write(builder.serialize())
        for order, ev in enumerate(launches):
            cta_uuid, warp_uuid = _uuids(next_uuid, ev)
            next_uuid += ev.num_ctas * (1 + ev.num_segments)
            out.write(_launch_tracks(ev, order, cta_uuid, warp_uuid, sm_uuid))
            iid_of_scope = np.array([0] + [names[n] for n in ev.scope_names], dtype=np.uint64)[1:]
            warps.append(perfetto_warps.Warps(ev, ev.origin_ns - origin_ns, iid_of_scope, warp_uuid))
            lanes.append((ev, cta_uuid, warp_uuid))
        perfetto_warps.write(out, warps)
        data, next_uuid = _async_packets(lanes, origin_ns, next_uuid)
        out.write(data)
        out.write(perfetto_counters.packets(lanes, origin_ns, next_uuid)[0])
    return sum(ev.num_events for ev in launches)


def _async_packets(launches, origin_ns: int, next_uuid: int) -> tuple[bytes, int]:
    """Asynchronous events and marks (writers/async_events) on their own
    packet sequence, after the warps' packets; and the next free uuid."""
    if not any(ev.asynchronous.num_events or ev.asynchronous.num_marks for ev, _, _ in launches):
        return b"", next_uuid
    builder = _builder()
    first = builder.add_packet()
    first.trusted_packet_sequence_id = async_events.SEQUENCE_ID
    first.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    next_flow = 1
    for ev, cta_uuid, warp_uuid in launches:
        next_uuid, next_flow = async_events.perfetto_packets(
            builder, ev, ev.origin_ns - origin_ns, cta_uuid, warp_uuid, next_uuid, next_flow
        )
    return builder.serialize(), next_uuid


def _uuids(first: int, ev: LaunchEvents):
    ctas, segments = ev.num_ctas, ev.num_segments
    cta_uuid = first + np.arange(ctas, dtype=np.uint64)
    warp_uuid = first + ctas + np.arange(ctas * segments, dtype=np.uint64)
    return cta_uuid, warp_uuid


def _launch_tracks(ev: LaunchEvents, order: int, cta_uuid, warp_uuid, sm_uuid) -> bytes:
    ctas, segments = ev.num_ctas, ev.num_segments
    if ctas == 0:
        return b""
    cta_sm = ev.warp_sm.reshape(ctas, segments)[:, 0]
    distinct = np.unique(cta_sm)
    parent = np.array([sm_uuid[int(sm)] for sm in distinct], dtype=np.uint64)[np.searchsorted(distinct, cta_sm)]
    # Each CTA track's description: where in the program the launch came
    # from, and the CTA's first entry and last return on the global timer
    # (CTA_SPAN; proton-merge-traces --torch aligns launches on them).
    stack = " > ".join(["ROOT", *ev.call_stack, ev.kernel])
    begin, end = cta_span_ns(ev)
    ctas_bytes = _descriptors(
        cta_uuid,
        parent,
        order * (1 << 20) + np.arange(ctas),
        byte_rows.strings([f"{ev.kernel} #{ev.launch} CTA {c}" for c in range(ctas)]),
        byte_rows.strings(
            [f"call stack: {stack}; {CTA_SPAN} = {b}..{e}" for b, e in zip(begin.tolist(), end.tolist())]
        ),
    )
    warp_names = sorted(set(ev.warp_ids.tolist()))
    warps_bytes = _descriptors(
        warp_uuid,
        np.repeat(cta_uuid, segments),
        ev.warp_ids,
        byte_rows.table([ev.row_name(w).encode() for w in warp_names], np.searchsorted(warp_names, ev.warp_ids)),
    )
    return ctas_bytes + warps_bytes


def cta_span_ns(ev: LaunchEvents) -> tuple[np.ndarray, np.ndarray]:
    """Per CTA, its warps' first kernel entry and last return, absolute
    global-timer ns (integers)."""
    segments = max(ev.num_segments, 1)
    n = ev.num_ctas * segments
    if not ev.num_ctas:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    begin = np.asarray(ev.warp_begin_ns[:n], dtype=np.float64).reshape(ev.num_ctas, segments).min(axis=1)
    end = np.asarray(ev.warp_end_ns[:n], dtype=np.float64).reshape(ev.num_ctas, segments).max(axis=1)
    return ev.origin_ns + np.rint(begin).astype(np.int64), ev.origin_ns + np.rint(end).astype(np.int64)


def _descriptors(uuid, parent, rank, names, descriptions=None) -> bytes:
    """TracePacket{track_descriptor{uuid (1), name (2), parent_uuid (5),
    child_ordering (11), sibling_order_rank (12), description (14)}} per row,
    as Trace bytes."""
    n = uuid.size
    C = byte_rows.const
    described = [] if descriptions is None else [C(b"\x72", n), byte_rows.varint(descriptions[1]), descriptions]
    desc = byte_rows.concat(
        [
            C(b"\x08", n),
            byte_rows.varint(uuid),
            C(b"\x12", n),
            byte_rows.varint(names[1]),
            names,
            C(b"\x28", n),
            byte_rows.varint(parent),
            C(bytes([0x58, EXPLICIT_ORDER]), n),
            C(b"\x60", n),
            byte_rows.varint(np.asarray(rank, dtype=np.uint64)),
            *described,
        ]
    )
    packet = byte_rows.concat([C(b"\xe2\x03", n), byte_rows.varint(desc[1]), desc])  # field 60
    return byte_rows.join(byte_rows.concat([C(b"\x0a", n), byte_rows.varint(packet[1]), packet]))
