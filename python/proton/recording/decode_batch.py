"""Decodes several launches of one kernel at once: their buffers (same
layout, same number of CTAs) side by side are one buffer of all their CTAs,
decoded by one pass of recording.decode's steps, then split into one
LaunchEvents per launch. A loop's thousands of small launches then cost
what their events cost, not a decoder's fixed cost each.

The result equals decode.decode on each launch (the same arrays, dtypes
and numbers): only the steps that work per warp or per CTA run over the
batch; the time base (SM clock, origin, offsets) is computed per launch
with decode's own operations. Batches this module does not handle exactly
(records of events, marks or values; warps past a clock wrap; cycles
beyond int32; a warning or an error) raise NotBatchable or the decoder's
error, and the caller decodes those launches one by one."""

from __future__ import annotations

import numpy as np

from ..contract.events import AsyncEvents, LaunchEvents
from ..contract.kernel_metadata import KernelMetadata
from ..compiling.warp_specialize import warp_labels
from . import buffer as raw_buffer
from . import decode, decode_non_scope


class NotBatchable(Exception):
    """Launches that decode one by one (see the module's notes)."""


def decode_launches(
    buffers,
    metadata: KernelMetadata,
    *,
    kernel: str,
    launches: list[int],
    record_cost_cycles: float = 0.0,
) -> list[LaunchEvents]:
    """One LaunchEvents per buffer (launch numbers `launches`), each equal
    to decode.decode's. `buffers`: a list of uint8 arrays, or one (launches,
    bytes) array (read side by side: not copied). Raises NotBatchable, or
    the decoder's errors."""
    layout = metadata.layout
    sizes = {b.nbytes for b in buffers}
    ctas = buffers[0].nbytes // layout.bytes_per_cta if len(buffers) else 0
    if len(sizes) != 1 or ctas == 0:
        raise NotBatchable("buffers of different sizes, or empty")
    kinds = decode_non_scope.kind_codes(metadata)
    not_scope, value_ids = decode._id_lookups(kinds)
    if not_scope is not None or value_ids is not None:
        raise NotBatchable("records of events, marks or values")
    whole = ctas * layout.bytes_per_cta
    if isinstance(buffers, np.ndarray) and buffers.ndim == 2:
        data = np.ascontiguousarray(buffers[:, :whole]).reshape(-1)
    else:
        data = np.concatenate([np.asarray(b).reshape(-1)[:whole] for b in buffers])
    raw = raw_buffer.read(data, layout, ctas * len(buffers), metadata.target)
    decode._check_kernel_id(raw, metadata.kernel_id, kernel)
    stamps = decode._WarpStamps.of(raw)
    wrap = 1 << decode.STORED_CLOCK_BITS[layout.clock_bits]
    if (stamps.clk_end - stamps.clk_start >= wrap).any():
        raise NotBatchable("a warp lived past a clock wrap")
    names, parents = decode.scope_table(metadata)
    segments = raw.counts.shape[1]
    counts, kept, words = decode._records_in_order(raw, layout, kernel)
    dropped = counts - kept
    at = decode._pair(raw_buffer.tag_halves(words), kept)
    decode._check_scope_ids(at, len(names), kernel, segments)
    base, s_cyc, e_cyc = decode._scope_cycles(words, at, stamps, dropped, layout.clock_bits, None, kernel, segments)
    if s_cyc.dtype != np.int32:
        raise NotBatchable("cycles beyond int32")
    if record_cost_cycles > 0:
        for cyc, col in ((s_cyc, at.start_col), (e_cyc, at.end_col)):
            shift = decode._time_shift(at.per_row(dropped), col, record_cost_cycles)
            np.subtract(cyc, shift, out=cyc, casting="unsafe")
        np.maximum(e_cyc, s_cyc, out=e_cyc)
    time = _TimeBase(raw.ticks_per_us, stamps, len(buffers))
    split = _Split(at, len(buffers), raw.counts.size // len(buffers))
    shared = {
        "scope_names": names,
        "scope_parents": parents,
        "num_segments": segments,
        "warp_labels": warp_labels(metadata.warp_specialize),
        "scope_kinds": kinds,
    }
    per_warp = {
        "warp_ids": raw.warp_ids.reshape(-1).astype(np.int32),
        "warp_sm": raw.sm_ids.reshape(-1).astype(np.int32),
        "warp_begin_ns": time.entry_ns,
        "warp_end_ns": time.exit_ns,
        "warp_cycles": stamps.clk_end - stamps.clk_start,
        "warp_clk_end": stamps.clk_end - base,
        "warp_clk_base": base,
        "warp_offset_ns": time.offset,
        "dropped": dropped,
    }
    out = []
    for i, launch in enumerate(launches):
        warps = split.warps(i)
        row, scope, events = split.events(i)
        out.append(
            LaunchEvents(
                kernel=kernel,
                launch=launch,
                clock_ghz=float(time.clock_ghz[i]),
                origin_ns=time.origin_ns[i],
                row=row,
                scope=scope,
                start_cycles=split.flat(s_cyc)[events],
                end_cycles=split.flat(e_cyc)[events],
                unmatched=int(kept[warps].sum() - 2 * (events.stop - events.start)),
                warnings=[],
                asynchronous=AsyncEvents.empty(),
                **{key: value[warps] for key, value in per_warp.items()},
                **{key: (dict(value) if isinstance(value, dict) else value) for key, value in shared.items()},
            )
        )
    return out


class _TimeBase:
    """decode._time_base for each launch of a batch, with its operations
    (per launch: the clock over its warps, its first entry as origin)."""

    def __init__(self, ticks_per_us: int, stamps, launches: int):
        ns_per_tick = 1000.0 / ticks_per_us
        by_launch = lambda a: a.reshape(launches, -1)  # noqa: E731
        d_clk = by_launch(stamps.clk_end - stamps.clk_start).sum(axis=1).astype(np.float64)
        d_ns = by_launch(stamps.gt_end - stamps.gt_start).sum(axis=1).astype(np.float64) * ns_per_tick
        if not ((d_ns > 0) & (d_clk > 0)).all():
            raise NotBatchable("a launch too short to measure its clock (a warning)")
        self.clock_ghz = d_clk / d_ns
        first = by_launch(stamps.gt_start).min(axis=1)
        # Python integers: the timer times 1000 overflows int64.
        self.origin_ns = [f * 1000 // ticks_per_us for f in first.tolist()]
        first = np.repeat(first, stamps.gt_start.size // launches)
        self.entry_ns = (stamps.gt_start - first) * ns_per_tick
        self.exit_ns = (stamps.gt_end - first) * ns_per_tick
        clock = np.repeat(self.clock_ghz, stamps.gt_start.size // launches)
        self.offset = self.exit_ns + 0.5 * (
            (self.entry_ns - self.exit_ns) - (stamps.clk_start - stamps.clk_end) / clock
        )


class _Split:
    """Where each launch's warps and events are in the batch's arrays: its
    warps are rows [i * rows, (i + 1) * rows), its events those of these
    rows (the pairing keeps them in row order)."""

    def __init__(self, at, launches: int, rows: int):
        self.at, self.rows = at, rows
        if at.uniform:
            pairs = at.start_col.size
            self.bounds = np.arange(launches + 1) * rows * pairs
            local = np.repeat(np.arange(rows, dtype=np.int32), pairs)
            scope = np.tile(at.ids.astype(np.int32), rows)
            self._shared = (local, scope)
        else:
            self.bounds = np.searchsorted(at.rows, np.arange(launches + 1) * rows)
            self._scope = at.ids.astype(np.int32)

    def warps(self, i: int) -> slice:
        return slice(i * self.rows, (i + 1) * self.rows)

    def flat(self, cycles: np.ndarray) -> np.ndarray:
        return cycles.reshape(-1)

    def events(self, i: int):
        """(rows counted within the launch, scope ids, the events' slice)."""
        events = slice(int(self.bounds[i]), int(self.bounds[i + 1]))
        if self.at.uniform:
            return self._shared[0], self._shared[1], events
        row = (self.at.rows[events] - i * self.rows).astype(np.int32)
        return row, self._scope[events], events
