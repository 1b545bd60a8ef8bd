"""Chrome trace JSON (chrome://tracing, ui.perfetto.dev), in the layout of
Triton's Proton, for both profilers: host sessions build their events in
host/activity_trace.py and write them with write_events; an
instrumentation session's trace is built and written here (write): only
events, no metadata records; one complete ("X")
event per scope instance with `cat` the kernel, `pid` naming the kernel,
launch, SM and CTA ("add #0 Core12 CTA3"; one process per launch and CTA),
`tid` naming the warp ("warp 2", "warp 6 (worker 0)" in a warp-specialized
kernel), and `args` holding the cycles, the CTA's timer stamps (TIMING_ARGS)
and the launch's `call_stack` ("ROOT", the host scopes open at the launch,
then the kernel). Within a launch, events go by warp and start.
Asynchronous events (X slices and flow-bound X endpoints) and marks as
writers/async_events writes them, values as counters
(writers/chrome_counters). Times are microseconds (ns precision) from the
session's first warp entry, converted with each launch's measured SM
clock. Text is built with numpy (proton.writers.packed_text), a window of
launches (writers/launch_windows) and a slice of its events at a time,
launches of one layout together (writers/stacked_launches), and streamed
to the file by a thread of its own (files.BackgroundWrites) while the next
rows are built: no Python object per event or per launch, and memory
bounded by the window."""

from __future__ import annotations

import json
import os

import numpy as np

from ..contract.events import LaunchEvents
from . import async_events, chrome_counters, launch_windows, packed_text as T
from .files import BackgroundWrites
from .stacked_launches import StackedLaunches

EVENTS_PER_SLICE = 1 << 15  # 32k events: about 3 MB of text, small next to the events

#: The per-CTA args Triton's Proton writes on every intra-kernel event, filled
#: from the segment headers' global-timer stamps (docs/buffer-format.md):
#: "Init Time (ns)": the CTA's first kernel-entry stamp; "Post Final Time
#: (ns)": its last return stamp, taken just before each warp writes its block
#: out (upstream stamps after that copy, which is not timed here);
#: "Finalization Time (ns)": the copy's duration, not measured: always 0.
#: Stamps are absolute global-timer ns, as upstream's.
TIMING_ARGS = ("Init Time (ns)", "Post Final Time (ns)", "Finalization Time (ns)")


class Tracks:
    """The Chrome process and thread names of a launch's CTAs and warps, as
    JSON strings, and the CTAs' TIMING_ARGS (shared by the slices and the
    async events)."""

    def __init__(self, ev: LaunchEvents):
        self.ev = ev
        self.kernel = json.dumps(ev.kernel)
        segments = max(ev.num_segments, 1)
        sm = ev.warp_sm.reshape(ev.num_ctas, segments)[:, 0] if ev.num_ctas else []
        self._cta_sm = [int(x) for x in sm]
        n = ev.num_ctas * segments
        begin = ev.warp_begin_ns[:n].reshape(ev.num_ctas, segments).min(axis=1) if ev.num_ctas else np.zeros(0)
        end = ev.warp_end_ns[:n].reshape(ev.num_ctas, segments).max(axis=1) if ev.num_ctas else np.zeros(0)
        self.init_ns = np.maximum(ev.origin_ns + np.rint(begin).astype(np.int64), 0)
        self.post_final_ns = np.maximum(ev.origin_ns + np.rint(end).astype(np.int64), 0)
        self.call_stack = json.dumps(["ROOT", *ev.call_stack, ev.kernel])

    def process(self, cta: int) -> str:
        return json.dumps(f"{self.ev.kernel} #{self.ev.launch} Core{self._cta_sm[cta]} CTA{cta}")

    def thread(self, warp_id: int) -> str:
        return json.dumps(self.ev.row_name(int(warp_id)))

    def timing(self, cta: int) -> str:
        """The CTA's TIMING_ARGS as JSON members (no braces)."""
        init, post = int(self.init_ns[cta]), int(self.post_final_ns[cta])
        return f'"{TIMING_ARGS[0]}":{init},"{TIMING_ARGS[1]}":{post},"{TIMING_ARGS[2]}":0'

    def timing_pieces(self, suffix: bytes = b""):
        """The CTAs' TIMING_ARGS, preceded by a comma and followed by
        `suffix`, as a packed_text (strings, lengths) piece indexed by CTA."""
        return T.record_strings(
            self.init_ns.size,
            [
                T.const(f',"{TIMING_ARGS[0]}":'.encode()),
                *T.decimal(self.init_ns),
                T.const(f',"{TIMING_ARGS[1]}":'.encode()),
                *T.decimal(self.post_final_ns),
                T.const(f',"{TIMING_ARGS[2]}":0'.encode() + suffix),
            ],
        )


def complete_event(name: str, cat: str, pid: str, tid: str, ts, dur, args: dict) -> dict:
    """A complete ("X") event, its members in the order every trace here
    writes them (the streamed rows of `write` spell the same order)."""
    return {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid, "ts": ts, "dur": dur, "args": args}


def write_events(path: str, trace: dict) -> str:
    """Writes a trace held as a dict ({"traceEvents": [...], ...}); returns the absolute path."""
    with open(path, "w") as out:
        json.dump(trace, out, separators=(",", ":"))
    return os.path.abspath(path)


def write(path: str, launches, t0_ns: int) -> int:
    """Writes the trace of `launches` (LaunchEvents, or a session's source
    of windows: writers/launch_windows); returns the number of scope events
    written. The file is written front to back only (it may be a pipe or a
    device), a window of launches at a time."""
    source = launch_windows.source(launches)
    with open(path, "wb") as file:
        writes = BackgroundWrites(file)  # the file's writes overlap the next text's building
        try:
            writes.write(b'{"displayTimeUnit":"ns","traceEvents":[\n')
            out = _LastRowOpen(writes)
            next_flow = 1  # flow bind_ids, unique in the file
            text = T.Text(writes)
            for window in source.windows():
                next_flow = _write_window(out, window, t0_ns, next_flow, text)
            out.close_list()
        except BaseException:
            writes.abandon()
            raise
        writes.close()
    return source.facts.num_events


def _write_window(out, window: list[LaunchEvents], t0_ns: int, next_flow: int, text) -> int:
    """The window's rows, launch after launch: its scope slices (encoded a
    group of launches at a time), then its asynchronous events and values.
    Returns the next free flow id."""
    groups = launch_windows.groups(window)
    extras = [_has_extras(ev) for ev in window]
    if len(groups) == 1 and not any(extras):  # one run of launches: straight to the file
        for _, data, _ in _slices(StackedLaunches(window, t0_ns), text, split=False):
            out.write(data)
        return next_flow
    held: list[list[bytes]] = [[] for _ in window]  # each launch's slice text, until its turn
    for group in groups:
        for first, data, bounds in _slices(StackedLaunches([window[i] for i in group], t0_ns), text, split=True):
            for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
                held[group[first + k]].append(bytes(data[lo:hi]))
    for ev, pieces, extra in zip(window, held, extras):
        for piece in pieces:
            out.write(piece)
        if extra:
            tracks = Tracks(ev)
            rows, next_flow = async_events.chrome_rows(ev, tracks, t0_ns, next_flow)
            out.write(rows)
            out.write(chrome_counters.rows(ev, tracks, t0_ns))
    return next_flow


class _LastRowOpen:
    """Passes rows on to `file` but for their last two bytes, held back:
    every row ends with ",\n", and the last one's must become the list's
    end ("\n]}"), which the file cannot be seeked back to change."""

    def __init__(self, file):
        self.file, self.tail = file, b""

    def write(self, data) -> None:
        data = memoryview(data).cast("B")
        if data.nbytes >= 2:
            self.file.write(self.tail)
            self.file.write(data[:-2])
            self.tail = bytes(data[-2:])
        elif data.nbytes:
            joined = self.tail + bytes(data)
            self.file.write(joined[:-2])
            self.tail = joined[-2:]

    def close_list(self) -> None:
        self.file.write((b"" if self.tail == b",\n" else self.tail) + b"\n]}\n")


def _has_extras(ev: LaunchEvents) -> bool:
    """Whether the launch has asynchronous events, marks or values."""
    a = ev.asynchronous
    return bool(a.num_events or a.num_marks or a.num_values)


def _slices(stack: StackedLaunches, text, split: bool):
    """The scope slices' rows of stacked launches, a slice of events at a
    time (whole launches where they fit): yields (index of the first
    launch in the slice, its text, valid until the next one, and with
    `split` the byte bounds of each launch's rows in it)."""
    per_launch = stack.events_per_launch
    if per_launch == 0:
        return
    pieces = _RowPieces(stack)
    order = _warp_and_start_order(stack)
    fit = max(1, EVENTS_PER_SLICE // per_launch)
    lo = 0
    while lo < stack.num_events:
        launch = lo // per_launch
        if per_launch <= EVENTS_PER_SLICE:
            hi = min((launch + fit) * per_launch, stack.num_events)
        else:
            hi = min(lo + EVENTS_PER_SLICE, (launch + 1) * per_launch)
        rows = pieces.rows(slice(lo, hi) if order is None else order[lo:hi])
        data = text.rows(hi - lo, rows)
        bounds = None
        if split:
            ends = np.minimum(np.arange(launch + 1, (hi - 1) // per_launch + 2) * per_launch, hi) - lo
            bounds = np.concatenate(([0], np.cumsum(T.row_lengths(hi - lo, rows))[ends - 1])).tolist()
        yield launch, data, bounds
        lo = hi


class _RowPieces:
    """The pieces of a scope slice's row (packed_text) for stacked
    launches: what depends on the scope, the warp (process and thread
    names) and the CTA (TIMING_ARGS, call stack) built once per group."""

    def __init__(self, stack: StackedLaunches):
        self.stack = stack
        kernel = json.dumps(stack.kernel).encode()
        launch = json.dumps(f"{stack.kernel} #")[:-1].encode()  # without its closing quote
        # What is the same for every event of a scope, up to the launch number in the pid.
        self.names = T.strings(
            [
                b'{"ph":"X","name":' + json.dumps(name).encode() + b',"cat":' + kernel + b',"pid":' + launch
                for name in stack.scope_names
            ]
        )
        segments, per_launch = stack.num_segments, stack.rows_per_launch
        ctas = stack.ctas_per_launch
        # Per (launch, CTA): the launch number and the CTA's SM; per warp of a
        # launch (the same in every launch of the group): the rest of pid, tid.
        self.launch_core = T.record_strings(
            stack.count * ctas,
            [
                *T.decimal(np.repeat(stack.launch_numbers, ctas)),
                T.const(b" Core"),
                *T.decimal(stack.warp_sm[::segments]),  # the CTA's SM
            ],
        )
        warp_ids = stack.first.warp_ids
        warp_names = sorted(set(warp_ids.tolist()))
        self.per_warp = T.record_strings(
            per_launch,
            [
                T.const(b" CTA"),
                *T.decimal(np.arange(per_launch) // segments),
                T.const(b'","tid":'),
                T.table(
                    [json.dumps(stack.row_name(w)).encode() for w in warp_names],
                    np.searchsorted(warp_names, warp_ids),
                ),
                T.const(b',"ts":'),
            ],
        )
        init, post = stack.cta_extremes()
        call_stack = json.dumps(["ROOT", *stack.call_stack, stack.kernel]).encode()
        self.closing = T.record_strings(
            init.size,
            [
                T.const(f',"{TIMING_ARGS[0]}":'.encode()),
                *T.decimal(init),
                T.const(f',"{TIMING_ARGS[1]}":'.encode()),
                *T.decimal(post),
            ],
        )
        # The same for every event of the group: written once per row, not gathered.
        self.tail = T.const(f',"{TIMING_ARGS[2]}":0,"call_stack":'.encode() + call_stack + b"}},\n")

    def rows(self, pick) -> list:
        """The pieces of the events at `pick`."""
        stack = self.stack
        row = stack.row[pick]
        cta = row // stack.num_segments
        start_cycles, end_cycles = stack.start_cycles[pick], stack.end_cycles[pick]
        start, end = stack.ns_at(start_cycles, row), stack.ns_at(end_cycles, row)
        ts = np.rint(np.maximum(start + stack.shift[row], 0)).astype(np.uint64)
        dur = np.rint(np.maximum(end - start, 0)).astype(np.uint64)
        cycles = np.maximum(end_cycles - start_cycles, 0)
        return [
            T.Gather(*self.names, stack.scope[pick]),
            T.Gather(*self.launch_core, cta),
            T.Gather(*self.per_warp, row % stack.rows_per_launch),
            *T.microseconds(ts, b',"dur":'),
            *T.microseconds(dur, b',"args":{"cycles":'),
            *T.decimal(cycles),
            T.Gather(*self.closing, cta),
            self.tail,
        ]


def _warp_and_start_order(ev: LaunchEvents):
    """The events' order by warp, then start (outer scopes first); None when
    the decoder's order already is."""
    row, start = ev.row, ev.start_cycles
    same_row = row[1:] == row[:-1]
    if bool(np.all(row[1:] >= row[:-1])) and bool(np.all(start[1:][same_row] >= start[:-1][same_row])):
        return None
    return np.lexsort((start, row))


def session_origin(launches) -> int:
    """The first warp entry over all launches, global-timer ns."""
    return launch_windows.source(launches).facts.origin_ns
