"""The CTA and warp tracks of a .pftrace (writers/perfetto_trace): per
launch, a track per CTA (a child of its SM's, named "<kernel> #<launch>
CTA <c>", its description the launch's call stack and the CTA's span on
the global timer, which proton-merge-traces --torch aligns launches on;
ranked by launch then CTA) and a track per warp (a child of its CTA's, named after the warp,
ranked by warp id). A launch's tracks take consecutive uuids: its CTAs',
then its warps'.

Launches of one layout are encoded together (stacked_launches), each
launch's bytes then written in launch order. The pass also returns what
the warp pass needs (TrackLayout): each launch's first uuid, and each
window's earliest warp timestamp."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import byte_rows, launch_windows, packed_text as T
from .stacked_launches import StackedLaunches

EXPLICIT_ORDER = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT
#: How a CTA track's description names the CTA's span on the global timer:
#: "global timer ns = <first entry>..<last return>", absolute ns.
CTA_SPAN = "global timer ns"
#: A CTA track's rank: launch order * LAUNCH_RANK + CTA.
LAUNCH_RANK = 1 << 20


@dataclass
class TrackLayout:
    """Per launch (in order) its first track uuid; per window its
    earliest warp timestamp (None: no events); the next free uuid."""

    first_uuid: list = field(default_factory=list)
    window_first_ns: list = field(default_factory=list)
    next_uuid: int = 0

    def later_first_ns(self) -> list:
        """Per window, the earliest warp timestamp of the source after it
        (None: none has events)."""
        out, low = [], None
        for first in reversed(self.window_first_ns):
            out.append(low)
            if first is not None:
                low = first if low is None else min(low, first)
        return out[::-1]


def write(out, source, sm_uuid: dict, next_uuid: int, origin_ns: int, warps_of) -> TrackLayout:
    """Writes every launch's CTA and warp tracks; `warps_of(stack, uuid)`
    gives a group's perfetto_warps.Warps, whose first timestamps make the
    layout's window_first_ns."""
    layout = TrackLayout(next_uuid=next_uuid)
    order = 0
    for window in source.windows():
        bases = []
        for ev in window:
            bases.append(layout.next_uuid)
            layout.next_uuid += ev.num_ctas * (1 + ev.num_segments)
        held: list[bytes] = [b""] * len(window)
        earliest = None
        for group in launch_windows.groups(window):
            stack = StackedLaunches([window[i] for i in group], origin_ns)
            base = np.array([bases[i] for i in group], dtype=np.uint64)
            data, bounds = _group_tracks(stack, base, np.array(group) + order, sm_uuid)
            for k, i in enumerate(group):
                held[i] = data[bounds[k] : bounds[k + 1]]
            first = warps_of(stack, warp_uuids(stack, base)).first
            if first.size:
                low = int(first.min())
                earliest = low if earliest is None else min(earliest, low)
        out.write(b"".join(held))
        layout.first_uuid += bases
        layout.window_first_ns.append(earliest)
        order += len(window)
    return layout


def warp_uuids(stack: StackedLaunches, base: np.ndarray) -> np.ndarray:
    """Each stacked warp's track uuid: its launch's first, past its CTAs'."""
    rows = stack.rows_per_launch
    return np.repeat(base + np.uint64(stack.ctas_per_launch), rows) + np.tile(
        np.arange(rows, dtype=np.uint64), stack.count
    )


def _group_tracks(stack: StackedLaunches, base, order, sm_uuid: dict) -> tuple[bytes, list]:
    """The tracks of stacked launches, launch after launch, and the byte
    bounds of each launch's."""
    ctas, rows, segments, count = stack.ctas_per_launch, stack.rows_per_launch, stack.num_segments, stack.count
    per = ctas + rows
    if per == 0 or ctas == 0:
        return b"", [0] * (count + 1)
    is_cta = np.tile(np.arange(per) < ctas, count)
    cta_sm = stack.warp_sm.reshape(count * ctas, segments)[:, 0]
    distinct = np.unique(cta_sm)
    parent = np.empty(count * per, dtype=np.uint64)
    parent[is_cta] = np.array([sm_uuid[int(sm)] for sm in distinct], dtype=np.uint64)[np.searchsorted(distinct, cta_sm)]
    parent[~is_cta] = np.repeat(base, rows) + np.tile(np.arange(rows, dtype=np.uint64) // np.uint64(segments), count)
    rank = np.empty(count * per, dtype=np.uint64)
    rank[is_cta] = np.repeat(order.astype(np.uint64) * np.uint64(LAUNCH_RANK), ctas) + np.tile(
        np.arange(ctas, dtype=np.uint64), count
    )
    rank[~is_cta] = stack.warp_ids.astype(np.uint64)
    uuid = np.repeat(base, per) + np.tile(np.arange(per, dtype=np.uint64), count)
    pieces = _descriptors(uuid, parent, rank, _names(stack, is_cta), _descriptions(stack, is_cta))
    data = bytes(T.Text().rows(uuid.size, pieces, binary=True))
    ends = np.cumsum(T.row_lengths(uuid.size, pieces))[np.arange(1, count + 1) * per - 1]
    return data, [0] + ends.tolist()


def _descriptions(stack: StackedLaunches, is_cta: np.ndarray):
    """Each track's description field (14), as a packed_text piece: a CTA's
    is "call stack: ROOT > ... > <kernel>; global timer ns = <b>..<e>", a
    warp's is empty."""
    spans = [cta_span_ns(ev) for ev in stack.launches]
    begin = np.concatenate([b for b, _ in spans])
    end = np.concatenate([e for _, e in spans])
    stack_text = " > ".join(["ROOT", *stack.call_stack, stack.kernel])
    prefix = f"call stack: {stack_text}; {CTA_SPAN} = ".encode()
    text = byte_rows.concat(
        [
            byte_rows.const(prefix, begin.size),
            byte_rows.strings([str(v) for v in begin.tolist()]),
            byte_rows.const(b"..", begin.size),
            byte_rows.strings([str(v) for v in end.tolist()]),
        ]
    )
    field = byte_rows.concat([byte_rows.const(b"\x72", begin.size), byte_rows.varint(text[1]), text])
    matrix = np.zeros((is_cta.size, field[0].shape[1]), dtype=np.uint8)
    lengths = np.zeros(is_cta.size, dtype=np.int64)
    matrix[is_cta], lengths[is_cta] = field[0], field[1]
    return _piece((matrix, lengths))


def cta_span_ns(ev) -> tuple[np.ndarray, np.ndarray]:
    """Per CTA of a launch (LaunchEvents), its warps' first kernel entry and
    last return, absolute global-timer ns (integers)."""
    segments = max(ev.num_segments, 1)
    n = ev.num_ctas * segments
    if not ev.num_ctas:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    begin = np.asarray(ev.warp_begin_ns[:n], dtype=np.float64).reshape(ev.num_ctas, segments).min(axis=1)
    end = np.asarray(ev.warp_end_ns[:n], dtype=np.float64).reshape(ev.num_ctas, segments).max(axis=1)
    return ev.origin_ns + np.rint(begin).astype(np.int64), ev.origin_ns + np.rint(end).astype(np.int64)


def _names(stack: StackedLaunches, is_cta: np.ndarray):
    """Track names, as byte rows: "<kernel> #<launch> CTA <c>" and the warps'."""
    ctas = stack.ctas_per_launch
    cta_names = T.record_strings(
        stack.count * ctas,
        [
            T.const(f"{stack.kernel} #".encode()),
            *T.decimal(np.repeat(stack.launch_numbers, ctas)),
            T.const(b" CTA "),
            *T.decimal(np.tile(np.arange(ctas), stack.count)),
        ],
    )
    warp_names = sorted(set(stack.warp_ids.tolist()))
    warp_rows = byte_rows.table(
        [stack.row_name(w).encode() for w in warp_names], np.searchsorted(warp_names, stack.warp_ids)
    )
    cta_matrix = cta_names[0].view(np.uint8).reshape(cta_names[0].size, -1)
    width = max(cta_matrix.shape[1], warp_rows[0].shape[1])
    matrix = np.zeros((is_cta.size, width), dtype=np.uint8)
    lengths = np.empty(is_cta.size, dtype=np.int64)
    matrix[is_cta, : cta_matrix.shape[1]] = cta_matrix
    matrix[~is_cta, : warp_rows[0].shape[1]] = warp_rows[0]
    lengths[is_cta], lengths[~is_cta] = cta_names[1], warp_rows[1]
    return matrix, lengths


def _varint(value: int) -> bytes:
    return byte_rows.join(byte_rows.varint([value]))


def _piece(rows):
    """byte_rows' (matrix, lengths) as a packed_text piece."""
    matrix, lengths = rows
    if matrix.shape[1] == 0:
        return None
    return np.ascontiguousarray(matrix).view(f"V{matrix.shape[1]}").reshape(-1), lengths


def _descriptors(uuid, parent, rank, names, description) -> list:
    """The packed_text pieces of TracePacket{track_descriptor{uuid (1),
    name (2), parent_uuid (5), child_ordering (11), sibling_order_rank
    (12), description (14), as `description` holds it (field and length,
    or nothing)}} per row; lengths are added up, not measured on bytes."""
    fields = [
        T.const(b"\x08"),
        _piece(byte_rows.varint(uuid)),
        T.const(b"\x12"),
        _piece(byte_rows.varint(names[1])),
        _piece(names),
        T.const(b"\x28"),
        _piece(byte_rows.varint(parent)),
        T.const(bytes([0x58, EXPLICIT_ORDER, 0x60])),
        _piece(byte_rows.varint(rank)),
        description,
    ]
    desc_length = T.row_lengths(uuid.size, fields)
    desc_varint = byte_rows.varint(desc_length)
    packet_length = 2 + desc_varint[1] + desc_length  # field 60: two bytes of tag
    return [
        T.const(b"\x0a"),
        _piece(byte_rows.varint(packet_length)),
        T.const(b"\xe2\x03"),
        _piece(desc_varint),
        *fields,
    ]
