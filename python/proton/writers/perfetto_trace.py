"""Perfetto protobuf traces (.pftrace, open in ui.perfetto.dev).

Tracks: GPU > SM > CTA (one per launch and CTA) > warp, each level ordered
numerically (explicit sibling ranks). Every scope instance is a slice on its
warp's track. Descriptors and interned scope names are built with the
`perfetto` package's TraceProtoBuilder; the slice packets, millions of them,
are encoded with numpy in the same wire format (TracePacket fields
timestamp=8, trusted_packet_sequence_id=10, track_event=11, sequence_flags=13;
TrackEvent fields type=9, name_iid=10, track_uuid=11), which the tests check
by parsing the file back with the perfetto package's protos.
"""

from __future__ import annotations

import numpy as np

from . import byte_rows
from ..instrument.decode import LaunchEvents

SEQUENCE_ID = 1  # all packets come from one writer (a one-byte varint)
SLICE_BEGIN, SLICE_END = 1, 2
SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
EXPLICIT_ORDER = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT


def _protos():
    try:
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder
    except ImportError as error:  # pragma: no cover - the package is a dependency
        raise RuntimeError("writing .pftrace files needs the `perfetto` Python package "
                           "(pip install perfetto)") from error
    return TraceProtoBuilder


def write(path: str, launches: list[LaunchEvents], gpu_name: str = "GPU 0", origin_ns: int | None = None) -> int:
    """Writes the trace; returns the number of slices written. Timestamps
    are global-timer ns minus `origin_ns` (default: the first warp entry),
    which is noted in the GPU track's description so that traces of
    several GPUs can be aligned."""
    if origin_ns is None:
        origin_ns = min((ev.origin_ns for ev in launches), default=0)
    TraceProtoBuilder = _protos()
    builder = TraceProtoBuilder()

    def track(uuid, name, parent=None, rank=None):
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = SEQUENCE_ID
        desc = packet.track_descriptor
        desc.uuid, desc.name, desc.child_ordering = uuid, name, EXPLICIT_ORDER
        if parent is not None:
            desc.parent_uuid = parent
        if rank is not None:
            desc.sibling_order_rank = rank
        return desc

    # The few GPU and SM tracks and the interned names with the perfetto
    # package's builder; per-CTA and per-warp tracks and the slices with
    # numpy in the same wire format.
    gpu_uuid = 1
    track(gpu_uuid, gpu_name).description = f"global timer origin ns = {int(origin_ns)}"
    sms = sorted({int(sm) for ev in launches for sm in np.unique(ev.warp_sm)})
    sm_uuid = {sm: 2 + i for i, sm in enumerate(sms)}
    for sm in sms:
        track(sm_uuid[sm], f"SM {sm}", gpu_uuid, rank=sm)
    name_iids: dict[str, int] = {}
    next_uuid = 2 + len(sms)
    descriptors, slices = [], []
    for order, ev in enumerate(launches):
        iid_of_scope = np.array([name_iids.setdefault(n, len(name_iids) + 1) for n in ev.scope_names],
                                dtype=np.uint64)
        ctas, segments = ev.num_ctas, ev.num_segments
        cta_uuid = next_uuid + np.arange(ctas, dtype=np.uint64)
        warp_uuid = next_uuid + ctas + np.arange(ctas * segments, dtype=np.uint64)
        next_uuid += ctas * (1 + segments)
        cta_sm = ev.warp_sm.reshape(ctas, segments)[:, 0]
        parent = np.array([sm_uuid[int(sm)] for sm in np.unique(cta_sm)], dtype=np.uint64)[
            np.searchsorted(np.unique(cta_sm), cta_sm)]
        descriptors.append(_descriptors(cta_uuid, parent, order * (1 << 20) + np.arange(ctas),
                                        byte_rows.strings([f"{ev.kernel} #{ev.launch} CTA {c}" for c in range(ctas)])))
        warp_names = sorted(set(ev.warp_ids.tolist()))
        descriptors.append(_descriptors(warp_uuid, np.repeat(cta_uuid, segments), ev.warp_ids,
                                        byte_rows.table([f"{ev.row_label} {w}".encode() for w in warp_names],
                                                       np.searchsorted(warp_names, ev.warp_ids))))
        if ev.num_events:
            slices.append((ev, warp_uuid, iid_of_scope))

    interned = builder.add_packet()
    interned.trusted_packet_sequence_id = SEQUENCE_ID
    interned.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
    for name, iid in name_iids.items():
        entry = interned.interned_data.event_names.add()
        entry.iid = iid
        entry.name = name
    with open(path, "wb") as out:
        out.write(builder.serialize())
        for chunk in descriptors:
            out.write(chunk)
        if slices:
            out.write(_slice_packets(slices, origin_ns))
    return sum(ev.num_events for ev, _, _ in slices)


def _descriptors(uuid, parent, rank, names) -> bytes:
    """TracePacket{trusted_packet_sequence_id, track_descriptor{uuid (1),
    name (2), parent_uuid (5), child_ordering (11), sibling_order_rank
    (12)}} per row, as Trace bytes."""
    n = uuid.size
    desc = byte_rows.concat([
        byte_rows.const(b"\x08", n), byte_rows.varint(uuid),
        byte_rows.const(b"\x12", n), byte_rows.varint(names[1]), names,
        byte_rows.const(b"\x28", n), byte_rows.varint(parent),
        byte_rows.const(bytes([0x58, EXPLICIT_ORDER]), n),
        byte_rows.const(b"\x60", n), byte_rows.varint(np.asarray(rank, dtype=np.uint64)),
    ])
    packet = byte_rows.concat([
        byte_rows.const(bytes([0x50, SEQUENCE_ID, 0xE2, 0x03]), n),  # field 60, length-delimited
        byte_rows.varint(desc[1]), desc,
    ])
    return _trace(packet)


def _trace(packets) -> bytes:
    """Trace{repeated TracePacket packet = 1}."""
    n = packets[1].size
    return byte_rows.join(byte_rows.concat([byte_rows.const(b"\x0a", n), byte_rows.varint(packets[1]), packets]))


def _slice_packets(slices, origin_ns: int) -> bytes:
    """Begin and end packets of every event of every launch, in time order,
    as Trace bytes."""
    ts, uuid, kind, iid, cyc = [], [], [], [], []
    for ev, warp_uuid, iid_of_scope in slices:
        n = ev.num_events
        shift = ev.origin_ns - origin_ns
        start = np.rint(np.maximum(ev.start_ns + shift, 0)).astype(np.uint64)
        end = np.maximum(np.rint(np.maximum(ev.end_ns + shift, 0)).astype(np.uint64), start)
        ts += [start, end]
        uuid += [warp_uuid[ev.row]] * 2
        kind += [np.full(n, SLICE_BEGIN, np.uint64), np.full(n, SLICE_END, np.uint64)]
        iid += [iid_of_scope[ev.scope], np.zeros(n, np.uint64)]
        cyc += [ev.start_cycles, ev.end_cycles]
    ts, uuid, kind, iid, cyc = (np.concatenate(a) for a in (ts, uuid, kind, iid, cyc))
    n = ts.size
    # Time order; at equal times a warp's records keep the order they were
    # written in (begins of outer scopes first, ends of inner scopes first).
    within = np.lexsort((kind == SLICE_BEGIN, cyc, uuid))  # per warp, in record order
    order = within[np.argsort(ts[within], kind="stable")]
    ts, uuid, kind, iid = ts[order], uuid[order], kind[order], iid[order]
    begin = kind == SLICE_BEGIN
    # TrackEvent: type (9), name_iid (10, begins only), track_uuid (11).
    event = [byte_rows.const(b"\x48", n), byte_rows.varint(kind), byte_rows.const(b"\x50", n), byte_rows.varint(iid),
             byte_rows.const(b"\x58", n), byte_rows.varint(uuid)]
    event_masks = [None, None, begin, begin, None, None]
    event_len = byte_rows.varint(byte_rows.total_length(event, event_masks))
    # TracePacket: timestamp (8), trusted_packet_sequence_id (10),
    # track_event (11), sequence_flags (13) on begins, which use interned names.
    packet = [byte_rows.const(b"\x40", n), byte_rows.varint(ts),
              byte_rows.const(bytes([0x50, SEQUENCE_ID, 0x5A]), n), event_len] + event + [
              byte_rows.const(bytes([0x68, SEQ_NEEDS_INCREMENTAL_STATE]), n)]
    packet_masks = [None] * 4 + event_masks + [begin]
    packet_len = byte_rows.varint(byte_rows.total_length(packet, packet_masks))
    # Trace: repeated TracePacket packet = 1; all in one pass.
    return byte_rows.concat([byte_rows.const(b"\x0a", n), packet_len] + packet, [None, None] + packet_masks, flat=True)
