"""The CTA and warp tracks of a .pftrace (writers/perfetto_trace): per
launch, a track per CTA (a child of its SM's, named "<kernel> #<launch>
CTA <c>", its description the launch's call stack and the CTA's span on
the global timer, which proton-merge-traces --torch aligns launches on;
ranked by launch then CTA) and a track per warp (a child of its CTA's, named after the warp,
ranked by warp id). A launch's tracks take consecutive uuids: its CTAs',
then its warps'.

Launches of one layout are encoded together (stacked_launches), each
launch's bytes then written in launch order. The pass also returns what
the warp pass needs (TrackLayout): each launch's first uuid, planned from
the launches' facts before the first window."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import byte_rows, packed_text as T
from .stacked_launches import StackedLaunches

EXPLICIT_ORDER = 3  # TrackDescriptor.ChildTracksOrdering.EXPLICIT
#: How a CTA track's description names the CTA's span on the global timer:
#: "global timer ns = <first entry>..<last return>", absolute ns.
CTA_SPAN = "global timer ns"
#: A CTA track's rank: launch order * LAUNCH_RANK + CTA.
LAUNCH_RANK = 1 << 20


@dataclass
class TrackLayout:
    """Per launch (in order) its first track uuid; the next free uuid."""

    first_uuid: list = field(default_factory=list)
    next_uuid: int = 0


def plan(launch_tracks: list, next_uuid: int) -> TrackLayout:
    """Each launch's first uuid, from its number of tracks (LaunchFacts.launch_tracks)."""
    counts = np.asarray(launch_tracks, dtype=np.int64)
    ends = next_uuid + np.cumsum(counts)
    return TrackLayout((ends - counts).tolist(), int(ends[-1]) if counts.size else next_uuid)


def write_window(out, stacks: list, launch0: int, sm_uuid: dict) -> None:
    """Writes a window's CTA and warp tracks, launch after launch; `stacks`:
    (indices in the window, StackedLaunches, their first uuids) per group
    of launches of one layout, `launch0` the window's first launch."""
    held: list[bytes] = [b""] * sum(len(group) for group, _, _ in stacks)
    for group, stack, base in stacks:
        data, bounds = _group_tracks(stack, base, np.array(group) + launch0, sm_uuid)
        for k, i in enumerate(group):
            held[i] = data[bounds[k] : bounds[k + 1]]
    out.write(b"".join(held))


def warp_uuids(stack: StackedLaunches, base: np.ndarray) -> np.ndarray:
    """Each stacked warp's track uuid: its launch's first, past its CTAs'."""
    rows = stack.rows_per_launch
    return np.repeat(base + np.uint64(stack.ctas_per_launch), rows) + np.tile(
        np.arange(rows, dtype=np.uint64), stack.count
    )


def _group_tracks(stack: StackedLaunches, base, order, sm_uuid: dict) -> tuple[bytes, list]:
    """The tracks of stacked launches, launch after launch (its CTAs', then
    its warps'), and the byte bounds of each launch's. CTA and warp tracks
    are encoded apart (names of much different lengths would defeat
    packed_text's scatter), then each launch's two runs put side by side."""
    ctas, rows, segments, count = stack.ctas_per_launch, stack.rows_per_launch, stack.num_segments, stack.count
    if ctas + rows == 0 or ctas == 0:
        return b"", [0] * (count + 1)
    cta_sm = stack.warp_sm.reshape(count * ctas, segments)[:, 0]
    distinct = np.unique(cta_sm)
    ctas_at = np.tile(np.arange(ctas, dtype=np.uint64), count)
    cta_text, cta_bounds = _rows(
        ctas,
        _descriptors(
            np.repeat(base, ctas) + ctas_at,
            np.array([sm_uuid[int(sm)] for sm in distinct], dtype=np.uint64)[np.searchsorted(distinct, cta_sm)],
            np.repeat(order.astype(np.uint64) * np.uint64(LAUNCH_RANK), ctas) + ctas_at,
            _cta_names(stack),
            _cta_descriptions(stack),
        ),
        count,
    )
    warp_names = sorted(set(stack.warp_ids.tolist()))
    warp_text, warp_bounds = _rows(
        rows,
        _descriptors(
            np.repeat(base + np.uint64(ctas), rows) + np.tile(np.arange(rows, dtype=np.uint64), count),
            np.repeat(base, rows) + np.tile(np.arange(rows, dtype=np.uint64) // np.uint64(segments), count),
            stack.warp_ids.astype(np.uint64),
            byte_rows.table(
                [stack.row_name(w).encode() for w in warp_names], np.searchsorted(warp_names, stack.warp_ids)
            ),
            [],
        ),
        count,
    )
    parts, bounds = [], [0]
    for k in range(count):
        parts += [cta_text[cta_bounds[k] : cta_bounds[k + 1]], warp_text[warp_bounds[k] : warp_bounds[k + 1]]]
        bounds.append(cta_bounds[k + 1] + warp_bounds[k + 1])
    return b"".join(parts), bounds


def _rows(per_launch: int, pieces: list, count: int) -> tuple[memoryview, list]:
    """The bytes of `count` launches' rows of `pieces` (`per_launch` rows
    each), and the byte bounds of each launch's."""
    n = per_launch * count
    data = memoryview(T.Text().rows(n, pieces, binary=True)).cast("B")
    ends = np.cumsum(T.row_lengths(n, pieces))[np.arange(1, count + 1) * per_launch - 1]
    return data, [0] + ends.tolist()


def _cta_descriptions(stack: StackedLaunches) -> list:
    """Each CTA track's description field (14), as packed_text pieces:
    "call stack: ROOT > ... > <kernel>; global timer ns = <b>..<e>"."""
    spans = [cta_span_ns(ev) for ev in stack.launches]
    begin = np.concatenate([b for b, _ in spans])
    end = np.concatenate([e for _, e in spans])
    stack_text = " > ".join(["ROOT", *stack.call_stack, stack.kernel])
    text = T.record_strings(
        begin.size,
        [
            T.const(f"call stack: {stack_text}; {CTA_SPAN} = ".encode()),
            *T.decimal(np.maximum(begin, 0)),
            T.const(b".."),
            *T.decimal(np.maximum(end, 0)),
        ],
    )
    return [T.const(b"\x72"), _piece(byte_rows.varint(text[1])), text]


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


def _cta_names(stack: StackedLaunches):
    """CTA track names, "<kernel> #<launch> CTA <c>", as byte rows."""
    ctas = stack.ctas_per_launch
    strings, lengths = T.record_strings(
        stack.count * ctas,
        [
            T.const(f"{stack.kernel} #".encode()),
            *T.decimal(np.repeat(stack.launch_numbers, ctas)),
            T.const(b" CTA "),
            *T.decimal(np.tile(np.arange(ctas), stack.count)),
        ],
    )
    return strings.view(np.uint8).reshape(strings.size, -1), lengths


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
    (12), description (14): the pieces `description` lists, field and
    length included, or none)}} per row; lengths are added up, not measured on bytes."""
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
        *description,
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
