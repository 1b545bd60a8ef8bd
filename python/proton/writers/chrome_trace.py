"""Chrome trace JSON (chrome://tracing, ui.perfetto.dev), in the layout of
Triton's Proton: only events, no metadata records; one complete ("X")
event per scope instance with `cat` the kernel, `pid` naming the kernel,
launch, SM and CTA ("add #0 Core12 CTA3"; one process per launch and CTA),
`tid` naming the warp ("warp 2", "warp 6 (worker 0)" in a warp-specialized
kernel), and `args` holding the cycles and the launch's `call_stack` ("ROOT",
the host scopes open at the launch, then the kernel). Within a launch, events
go by warp and start. Asynchronous events (with flow events) and marks as
writers/async_events draws them, values as counters
(writers/chrome_counters). Times are microseconds (ns precision) from the
session's first warp entry, converted with each launch's measured SM
clock. Text is built with numpy (proton.writers.packed_text), a slice of
the events at a time, and streamed to the file: no Python object per
event, and memory bounded by the slice."""

from __future__ import annotations

import json
import os

import numpy as np

from . import async_events, chrome_counters, packed_text as T
from ..instrument.decode import LaunchEvents

EVENTS_PER_SLICE = 1 << 15  # 32k events: about 3 MB of text, small next to the events


class Tracks:
    """The Chrome process and thread names of a launch's CTAs and warps, as
    JSON strings (shared by the slices, the async events and the values)."""

    def __init__(self, ev: LaunchEvents):
        self.ev = ev
        self.kernel = json.dumps(ev.kernel)
        sm = ev.warp_sm.reshape(ev.num_ctas, max(ev.num_segments, 1))[:, 0] if ev.num_ctas else []
        self._cta_sm = [int(x) for x in sm]

    def process(self, cta: int) -> str:
        return json.dumps(f"{self.ev.kernel} #{self.ev.launch} Core{self._cta_sm[cta]} CTA{cta}")

    def thread(self, warp_id: int) -> str:
        return json.dumps(self.ev.row_name(int(warp_id)))


def write(path: str, launches: list[LaunchEvents], t0_ns: int) -> int:
    """Writes the trace; returns the number of scope events written."""
    written = 0
    with open(path, "wb") as out:
        out.write(b'{"displayTimeUnit":"ns","traceEvents":[\n')
        start = out.tell()
        for ev in launches:
            tracks = Tracks(ev)
            _slices(out, ev, tracks, t0_ns)
            out.write(async_events.chrome_rows(ev, tracks, t0_ns))
            out.write(chrome_counters.rows(ev, tracks, t0_ns))
            written += ev.num_events
        if out.tell() > start:
            out.seek(-2, os.SEEK_END)  # every row ends with ",\n": the last one closes the list
        out.write(b"\n]}\n")
        out.truncate()
    return written


def _slices(out, ev: LaunchEvents, tracks: Tracks, t0_ns: int) -> None:
    if ev.num_events == 0:
        return
    names = [
        b'{"ph":"X","name":' + json.dumps(name).encode() + b',"cat":' + tracks.kernel.encode()
        for name in ev.scope_names
    ]
    # What depends on the warp only, once per warp, built with numpy: the
    # process (launch, SM, CTA) and thread names of Tracks, as text.
    rows = np.arange(ev.warp_ids.size)
    launch = json.dumps(f"{ev.kernel} #{ev.launch} Core")[:-1].encode()  # without its closing quote
    warp_names = sorted(set(ev.warp_ids.tolist()))
    per_warp = T.record_strings(
        rows.size,
        [
            T.const(b',"pid":' + launch),
            *T.decimal(np.repeat(ev.warp_sm[:: max(ev.num_segments, 1)], max(ev.num_segments, 1))),  # the CTA's SM
            T.const(b" CTA"),
            *T.decimal(rows // max(ev.num_segments, 1)),
            T.const(b'","tid":'),
            T.table([tracks.thread(w).encode() for w in warp_names], np.searchsorted(warp_names, ev.warp_ids)),
            T.const(b',"ts":'),
        ],
    )
    closing = b',"call_stack":' + json.dumps(["ROOT", *ev.call_stack, ev.kernel]).encode() + b"}},\n"
    order = _warp_and_start_order(ev)
    shift = ev.origin_ns - t0_ns
    text = T.Text()
    for lo in range(0, ev.num_events, EVENTS_PER_SLICE):
        hi = min(lo + EVENTS_PER_SLICE, ev.num_events)
        pick = slice(lo, hi) if order is None else order[lo:hi]
        row, scope = ev.row[pick], ev.scope[pick]
        start_cycles, end_cycles = ev.start_cycles[pick], ev.end_cycles[pick]
        start, end = ev.ns_at(start_cycles, row), ev.ns_at(end_cycles, row)
        ts = np.rint(np.maximum(start + shift, 0)).astype(np.uint64)
        dur = np.rint(np.maximum(end - start, 0)).astype(np.uint64)
        cycles = np.maximum(end_cycles - start_cycles, 0)
        out.write(
            text.rows(
                hi - lo,
                [
                    T.table(names, scope),
                    (per_warp[0][row], per_warp[1][row]),
                    *T.microseconds(ts, b',"dur":'),
                    *T.microseconds(dur, b',"args":{"cycles":'),
                    *T.decimal(cycles),
                    T.const(closing),
                ],
            )
        )


def _warp_and_start_order(ev: LaunchEvents):
    """The events' order by warp, then start (outer scopes first); None when
    the decoder's order already is."""
    row, start = ev.row, ev.start_cycles
    same_row = row[1:] == row[:-1]
    if bool(np.all(row[1:] >= row[:-1])) and bool(np.all(start[1:][same_row] >= start[:-1][same_row])):
        return None
    return np.lexsort((start, row))


def session_origin(launches: list[LaunchEvents]) -> int:
    """The first warp entry over all launches, global-timer ns."""
    return min((ev.origin_ns for ev in launches), default=0)
