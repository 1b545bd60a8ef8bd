"""Launches of one event layout (launch_windows.groups) as one table, so
that a writer encodes them with one pass of numpy instead of one per
launch: per-warp arrays stacked launch after launch (row = launch index *
warps per launch + warp), per-event arrays likewise, and each warp's
launch clock and time shift, so that a time computed here is the very
float the writer would compute for that launch alone."""

from __future__ import annotations

import numpy as np

from ..contract.events import LaunchEvents

_PER_WARP = ("warp_ids", "warp_sm", "warp_begin_ns", "warp_end_ns", "warp_offset_ns", "warp_clk_end")


class StackedLaunches:
    """`launches` (same structure_key) with times shifted to `t0_ns`."""

    def __init__(self, launches: list[LaunchEvents], t0_ns: int):
        first = launches[0]
        self.launches = launches
        self.first = first
        self.count = len(launches)
        self.rows_per_launch = first.warp_ids.size
        self.events_per_launch = first.num_events
        self.num_segments = max(first.num_segments, 1)
        self.kernel, self.scope_names, self.call_stack = first.kernel, first.scope_names, first.call_stack
        single = self.count == 1

        def stack(name):
            return getattr(first, name) if single else np.concatenate([getattr(ev, name) for ev in launches])

        for name in _PER_WARP + ("start_cycles", "end_cycles"):
            setattr(self, name, stack(name))
        if single:
            self.row, self.scope = first.row, first.scope
        else:
            offsets = np.arange(self.count, dtype=np.int64) * self.rows_per_launch
            self.row = np.repeat(offsets, self.events_per_launch) + np.tile(first.row.astype(np.int64), self.count)
            self.scope = np.tile(first.scope, self.count)
        clocks = [ev.clock_ghz for ev in launches]
        # The launch's clock, one number where all agree (no per-event gather).
        self.clock = clocks[0] if len(set(clocks)) == 1 else np.repeat(np.array(clocks), self.rows_per_launch)
        # A launch's shift, as the float its int would become in numpy's arithmetic.
        shifts = np.array([float(ev.origin_ns - t0_ns) for ev in launches])
        self.shift = np.repeat(shifts, self.rows_per_launch)
        self.launch_numbers = np.array([ev.launch for ev in launches], dtype=np.int64)
        self.origins = np.array([ev.origin_ns for ev in launches], dtype=np.int64)

    @property
    def num_events(self) -> int:
        return int(self.scope.size)

    @property
    def ctas_per_launch(self) -> int:
        return self.rows_per_launch // self.num_segments

    def row_name(self, warp_id: int) -> str:
        return self.first.row_name(warp_id)

    def ns_at(self, cycles: np.ndarray, row: np.ndarray) -> np.ndarray:
        """LaunchEvents.ns_at of each row's launch."""
        clock = self.clock if isinstance(self.clock, float) else self.clock[row]
        return self.warp_offset_ns[row] + (cycles - self.warp_clk_end[row]) / clock

    def cta_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per (launch, CTA): first entry and last return, global-timer ns
        (chrome_trace.TIMING_ARGS), as Tracks computes them per launch."""
        ctas, segments = self.ctas_per_launch, self.num_segments
        if ctas == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)

        def per_cta(ns):
            return ns.reshape(self.count, -1)[:, : ctas * segments].reshape(-1, segments)

        begin = per_cta(self.warp_begin_ns).min(axis=1)
        end = per_cta(self.warp_end_ns).max(axis=1)
        origin = np.repeat(self.origins, ctas)
        init = np.maximum(origin + np.rint(begin).astype(np.int64), 0)
        post = np.maximum(origin + np.rint(end).astype(np.int64), 0)
        return init, post
