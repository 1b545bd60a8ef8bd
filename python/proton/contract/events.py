"""The decoded events of one launch, as the writers take them: the decoder
(recording.decode) makes them from a profile buffer, the task profiler
(proton.tasks) from its own buffer, and every writer reads them. Plain
tables of numpy arrays; nothing here decodes or writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass
class AsyncEvents:
    """Paired asynchronous events (one row per start/end pair of the ids
    paired by name), marks (one row per record of a point id without a
    value: INSTANTS) and values (one row per time and value pair). Times
    are ns since the launch's origin_ns."""

    event_id: np.ndarray  # scope-table id of the event
    event_cta: np.ndarray
    start_row: np.ndarray  # warp (CTA * segments + segment) that started it
    end_row: np.ndarray  # warp that ended it
    start_ns: np.ndarray
    end_ns: np.ndarray
    mark_id: np.ndarray
    mark_row: np.ndarray
    mark_ns: np.ndarray
    unpaired: int = 0  # event records without a partner
    unpaired_values: int = 0  # value halves without their other half
    value_id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    value_row: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    value_ns: np.ndarray = field(default_factory=lambda: np.zeros(0))
    value: np.ndarray = field(default_factory=lambda: np.zeros(0))  # i32 and f32 exactly, as float64

    @property
    def num_events(self) -> int:
        return int(self.event_id.size)

    @property
    def num_marks(self) -> int:
        return int(self.mark_id.size)

    @property
    def num_values(self) -> int:
        return int(self.value_id.size)

    @staticmethod
    def empty() -> "AsyncEvents":
        i, f = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return AsyncEvents(i, i, i, i, f, f, i, i, f)


@dataclass
class LaunchEvents:
    """The events of one kernel launch, as a table: per-event arrays (one
    row per completed scope instance) and per-warp arrays (one per CTA x
    segment, flattened; `row` indexes them). Per-event CTA, warp, SM and
    nanosecond columns are derived from those on first use."""

    kernel: str
    launch: int
    scope_names: list[str]
    scope_parents: np.ndarray  # scope id -> parent id (-1: top level)
    clock_ghz: float  # measured SM clock: cycles per ns
    num_segments: int  # recording warps per CTA
    origin_ns: int  # global timer at the first warp entry; all *_ns are ns since then
    # per event
    row: np.ndarray  # index of the warp (CTA * segments + segment)
    scope: np.ndarray
    # SM clock cycles (after time_shift) counted from the CTA's first warp
    # entry: int32, or int64 for a launch where a value does not fit
    start_cycles: np.ndarray
    end_cycles: np.ndarray
    # per warp, flattened (ctas * segments)
    warp_ids: np.ndarray
    warp_sm: np.ndarray
    warp_begin_ns: np.ndarray  # global timer at entry and return, ns
    warp_end_ns: np.ndarray
    warp_cycles: np.ndarray  # cycles from kernel entry to return
    warp_clk_end: np.ndarray  # cycles at return, counted like the events' (int64)
    warp_offset_ns: np.ndarray  # ns = offset + (cycles - clk_end) / clock
    dropped: np.ndarray  # records overwritten in a full ring
    unmatched: int = 0  # kept records without a partner
    warnings: list[str] = field(default_factory=list)
    row_label: str = "warp"  # what a row is, in trace track names ("group" for proton.tasks)
    warp_labels: dict = field(default_factory=dict)  # warp id -> role, e.g. "worker 0" (warp_specialize)
    #: The host scopes open when the kernel was launched, outermost first (proton.scope).
    call_stack: tuple = ()
    #: Asynchronous events and marks (decode_non_scope): ids the scope table
    #: names `event` or `mark` are not scopes and are not in the arrays above.
    scope_kinds: np.ndarray | None = None
    asynchronous: AsyncEvents = field(default_factory=AsyncEvents.empty)
    #: Per warp, the SM counter value its events' cycles count from (its
    #: CTA's first entry); None: they are the counter's values.
    warp_clk_base: np.ndarray | None = None

    def row_name(self, warp_id: int) -> str:
        """A warp's track name: "warp 6", or "warp 6 (worker 0)" in a
        warp-specialized kernel."""
        label = self.warp_labels.get(int(warp_id))
        return f"{self.row_label} {warp_id}" + (f" ({label})" if label else "")

    @property
    def num_events(self) -> int:
        return int(self.scope.size)

    @property
    def num_ctas(self) -> int:
        return int(self.warp_ids.size // max(self.num_segments, 1))

    @property
    def duration_cycles(self) -> np.ndarray:
        return self.end_cycles - self.start_cycles

    @cached_property
    def cta(self) -> np.ndarray:
        return self.row // self.num_segments

    @cached_property
    def warp(self) -> np.ndarray:
        return self.warp_ids[self.row]

    @cached_property
    def sm(self) -> np.ndarray:
        return self.warp_sm[self.row]

    def _ns(self, cycles: np.ndarray) -> np.ndarray:
        return self.ns_at(cycles, self.row)

    def ns_at(self, cycles: np.ndarray, row: np.ndarray) -> np.ndarray:
        """ns since origin_ns of `cycles` counted on the warps `row` (for
        writers that convert a slice of the events at a time)."""
        return self.warp_offset_ns[row] + (cycles - self.warp_clk_end[row]) / self.clock_ghz

    @cached_property
    def start_ns(self) -> np.ndarray:
        """Start in ns since origin_ns on the GPU's global timer (float64):
        comparable across SMs."""
        return self._ns(self.start_cycles)

    @cached_property
    def end_ns(self) -> np.ndarray:
        return self._ns(self.end_cycles)
