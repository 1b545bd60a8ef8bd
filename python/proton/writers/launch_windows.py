"""Launches as the trace writers read them: windows of launches in launch
order, each small enough to hold decoded (WINDOW_EVENTS), and what a
writer must know of all of them before its first byte (LaunchFacts).

A session hands its kept launches as a source that decodes a window at a
time (recording/kept_decoding), so that a writer's memory is a window's,
whatever the session's length; a plain list of LaunchEvents is cut into
windows here. Within a window, `groups` finds the launches that share one
event layout (one kernel, its warps, its scopes in the same order), which
the writers encode together (writers/stacked_launches)."""

from __future__ import annotations

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

    def add(self, ev: LaunchEvents) -> None:
        first = self.num_launches == 0
        self.origin_ns = ev.origin_ns if first else min(self.origin_ns, ev.origin_ns)
        self.last_origin_ns = ev.origin_ns if first else max(self.last_origin_ns, ev.origin_ns)
        for name in ev.scope_names:
            self.scope_names.setdefault(name, len(self.scope_names) + 1)
        self.sms.update(np.unique(ev.warp_sm).tolist())
        self.num_events += ev.num_events
        self.num_launches += 1
        self.has_async = self.has_async or bool(ev.asynchronous.num_events or ev.asynchronous.num_marks)
        self.has_values = self.has_values or bool(ev.asynchronous.num_values)

    @staticmethod
    def of(launches) -> "LaunchFacts":
        facts = LaunchFacts()
        for ev in launches:
            facts.add(ev)
        return facts


class LaunchList:
    """A list of LaunchEvents as a source of windows (as a session gives
    its launches): iterates the launches, `windows()` cuts them."""

    def __init__(self, launches: list[LaunchEvents]):
        self.launches = launches
        self.facts = LaunchFacts.of(launches)

    def __iter__(self):
        return iter(self.launches)

    def windows(self):
        window, events = [], 0
        for ev in self.launches:
            if window and events + ev.num_events > WINDOW_EVENTS:
                yield window
                window, events = [], 0
            window.append(ev)
            events += ev.num_events
        if window:
            yield window


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
