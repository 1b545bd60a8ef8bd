"""Launches as the trace writers read them: windows of launches in launch
order, each small enough to hold decoded (WINDOW_EVENTS), and what a
writer must know of all of them before its first byte (LaunchFacts).

A session hands its kept launches as a source that decodes a window at a
time (recording/kept_decoding), so that a writer's memory is a window's,
whatever the session's length; a plain list of LaunchEvents is cut into
windows here. Within a window, `groups` finds the launches that share one
event layout (one kernel, its warps, its scopes in the same order), which
the writers encode together (writers/stacked_launches). SharedPasses
lets writers on threads of their own read one decoding of each window."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from ..contract.events import LaunchEvents

#: Events decoded and encoded at a time (about 35 MB of Chrome trace text).
WINDOW_EVENTS = 1 << 17


@dataclass
class LaunchFacts:
    """What writers need before writing: the first and last launch
    origins, scope names in order of first appearance, the SMs, counts,
    and whether any launch has asynchronous events, marks or values."""

    origin_ns: int = 0
    last_origin_ns: int = 0
    scope_names: dict = field(default_factory=dict)  # name -> interned id (from 1)
    sms: set = field(default_factory=set)
    num_events: int = 0
    num_launches: int = 0
    has_async: bool = False  # events or marks
    has_values: bool = False
    #: Per launch, in order: its CTA and warp tracks (CTAs x (1 + warps)), and
    #: its warps' earliest first slice start, ns since its origin (None: no
    #: events), which let the Perfetto writer plan its tracks and the order of
    #: its warps before the first window (perfetto_trace).
    launch_tracks: list = field(default_factory=list)
    launch_first: list = field(default_factory=list)
    launch_origins: list = field(default_factory=list)

    def add(self, ev: LaunchEvents) -> None:
        self.add_window([ev])

    def add_window(self, window: list[LaunchEvents]) -> None:
        """add() of each launch, the SMs and earliest warps found a group of launches at a time."""
        for ev in window:
            self._add(ev)
        if window:
            self.sms.update(np.unique(np.concatenate([ev.warp_sm for ev in window])).tolist())
        self.launch_first += earliest_warp_ns(window)

    def _add(self, ev: LaunchEvents) -> None:
        self.launch_tracks.append(ev.num_ctas * (1 + ev.num_segments))
        self.launch_origins.append(ev.origin_ns)
        first = self.num_launches == 0
        self.origin_ns = ev.origin_ns if first else min(self.origin_ns, ev.origin_ns)
        self.last_origin_ns = ev.origin_ns if first else max(self.last_origin_ns, ev.origin_ns)
        for name in ev.scope_names:
            self.scope_names.setdefault(name, len(self.scope_names) + 1)
        self.num_events += ev.num_events
        self.num_launches += 1
        self.has_async = self.has_async or bool(ev.asynchronous.num_events or ev.asynchronous.num_marks)
        self.has_values = self.has_values or bool(ev.asynchronous.num_values)

    @staticmethod
    def of(launches) -> "LaunchFacts":
        facts = LaunchFacts()
        for window in _cut(launches):
            facts.add_window(window)
        return facts


def _cut(launches):
    """Consecutive launches, at most WINDOW_EVENTS events a window (or one launch)."""
    window, events = [], 0
    for ev in launches:
        if window and events + ev.num_events > WINDOW_EVENTS:
            yield window
            window, events = [], 0
        window.append(ev)
        events += ev.num_events
    if window:
        yield window


def earliest_warp_ns(window: list[LaunchEvents]) -> list:
    """Per launch: the earliest first slice start of its warps, ns since
    its origin, as perfetto_warps.Warps finds each warp's (before the
    launch's shift: Warps.first is this plus the shift, rounded, and
    rounding keeps the order), None for a launch without events. Launches
    of one layout (groups) share their rows: their events' start cycles
    are taken as one matrix."""
    out: list = [None] * len(window)
    for group in groups(window):
        first = window[group[0]]
        row = first.row
        if not row.size:
            continue
        if not bool((row[1:] >= row[:-1]).all()):  # not in row order: one launch at a time
            for i in group:
                out[i] = _earliest_unordered(window[i])
            continue
        counts = np.bincount(row, minlength=first.warp_ids.size)
        present = np.flatnonzero(counts)
        launches = [window[i] for i in group]
        cycles = np.stack([ev.start_cycles for ev in launches])
        low = np.minimum.reduceat(cycles, (np.cumsum(counts) - counts)[present], axis=1)
        offset = np.stack([ev.warp_offset_ns[present] for ev in launches])
        clk_end = np.stack([ev.warp_clk_end[present] for ev in launches])
        clock = np.array([ev.clock_ghz for ev in launches])[:, None]
        # LaunchEvents.ns_at's operations, a launch per row.
        earliest = (offset + (low - clk_end) / clock).min(axis=1)
        for i, value in zip(group, earliest.tolist()):
            out[i] = value
    return out


def _earliest_unordered(ev: LaunchEvents):
    low = np.full(ev.warp_ids.size, np.iinfo(np.int64).max)
    np.minimum.at(low, ev.row, ev.start_cycles)
    present = np.flatnonzero(low != np.iinfo(np.int64).max)
    return float(ev.ns_at(low[present], present).min())


class LaunchList:
    """A list of LaunchEvents as a source of windows (as a session gives
    its launches): iterates the launches, `windows()` cuts them."""

    def __init__(self, launches: list[LaunchEvents]):
        self.launches = launches
        self.facts = LaunchFacts.of(launches)

    def __iter__(self):
        return iter(self.launches)

    def windows(self):
        yield from _cut(self.launches)


def source(launches):
    """`launches` as a source: re-iterable (launch by launch), with
    `windows()` and `facts`; a session's source as it is, a list (or any
    iterable) of LaunchEvents as a LaunchList."""
    if hasattr(launches, "windows"):
        return launches
    return LaunchList(list(launches))


def structure_key(ev: LaunchEvents) -> tuple:
    """Launches with equal keys have the same event layout: kernel, scope
    table, warps and their names, events per warp in the same order."""
    return (
        ev.kernel,
        tuple(ev.scope_names),
        ev.num_segments,
        ev.row_label,
        tuple(sorted(ev.warp_labels.items())),
        tuple(ev.call_stack),
        ev.warp_ids.tobytes(),
        ev.row.dtype.str,
        ev.row.tobytes(),
        ev.scope.tobytes(),
    )


def groups(window: list[LaunchEvents]) -> list[list[int]]:
    """Indices of the window's launches that share a structure_key, each
    group in launch order, groups by their first launch."""
    if len(window) == 1:
        return [[0]]  # a large launch's arrays are not copied into a key
    by_key: dict[tuple, list[int]] = {}
    for i, ev in enumerate(window):
        by_key.setdefault(structure_key(ev), []).append(i)
    return list(by_key.values())


class SharedPasses:
    """One source read by several writers at once, each on a thread of its
    own (session_outputs.write_outputs): `reader(k)` is writer k's source.
    The first pass of each reader shares one decoding of each window; a
    reader runs at most LAG windows ahead of the slowest reader still in
    that pass, so memory stays a few windows'. A reader's later passes
    (Perfetto's asynchronous events, a write retried elsewhere) read the
    source alone.
    A reader that stops (an error, its pass done, its thread ended) leaves
    the shared pass; the windows it has not read are dropped for it."""

    LAG = 2

    def __init__(self, source, readers: int):
        self.source = source
        self.facts = source.facts
        self._lock = threading.Condition()
        self._windows: dict[int, list] = {}  # index -> window, while a reader still needs it
        self._position = {k: 0 for k in range(readers)}  # reader in the pass -> next window it reads
        self._iterator = None  # the shared pass over source.windows()
        self._produced = 0  # windows taken from the iterator
        self._producing = False
        self._end: int | None = None  # windows in the source, once known
        self._error: BaseException | None = None

    def reader(self, k: int) -> "_SharedReader":
        return _SharedReader(self, k)

    def _window(self, k: int, index: int):
        """Reader k's window `index` (None past the last), waiting for the
        slowest reader or for another reader's decoding of it."""
        with self._lock:
            self._position[k] = index
            self._drop_read()
            self._lock.notify_all()  # a reader waiting for the slowest may go on
            while True:
                if self._error is not None and index >= self._produced:
                    raise self._error
                if index in self._windows:
                    return self._windows[index]
                if self._end is not None and index >= self._end:
                    return None
                slowest = min(self._position.values())
                if not self._producing and index == self._produced and index < slowest + self.LAG:
                    break
                self._lock.wait()
            self._producing = True
        try:  # decoded outside the lock: the other readers go on meanwhile
            if self._iterator is None:
                self._iterator = iter(self.source.windows())
            window = next(self._iterator, None)
            error = None
        except BaseException as caught:  # noqa: BLE001 - handed to every reader that reaches it
            window, error = None, caught
        with self._lock:
            self._producing = False
            if error is not None:
                self._error = error
            elif window is None:
                self._end = index
            else:
                self._windows[index] = window
                self._produced += 1
            self._lock.notify_all()
            if error is not None:
                raise error
            return window

    def _leave(self, k: int) -> None:
        with self._lock:
            if self._position.pop(k, None) is not None:
                self._drop_read()
                self._lock.notify_all()

    def _drop_read(self) -> None:
        """Forgets the windows every reader still in the pass has read."""
        slowest = min(self._position.values(), default=self._produced)
        for index in [i for i in self._windows if i < slowest]:
            del self._windows[index]


class _SharedReader:
    """One writer's source in SharedPasses: its first windows() is the
    shared pass, later ones read the source alone."""

    def __init__(self, shared: SharedPasses, k: int):
        self.shared, self.k = shared, k
        self.facts = shared.facts
        self._passes = 0

    def __iter__(self):
        for window in self.windows():
            yield from window

    def windows(self):
        self._passes += 1
        if self._passes > 1:
            self.close()  # a pass left unfinished no longer holds the others
            yield from self.shared.source.windows()
            return
        try:
            index = 0
            while True:
                window = self.shared._window(self.k, index)
                if window is None:
                    return
                yield window
                index += 1
        finally:
            self.close()

    def close(self) -> None:
        """Leaves the shared pass (also when the writer never read it)."""
        self.shared._leave(self.k)
