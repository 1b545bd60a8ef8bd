"""Decodes one launch's profile buffer into scope events, vectorized with numpy
(no Python loop per event or per warp).

Steps: read the buffer (proton.recording.buffer), put each warp's ring in the order the
records were written, rebuild 64-bit cycles (records keep the clock's low 48
bits, or 32 with clock32, unwrapped backwards from the warp's 64-bit exit
stamp), optionally subtract the measured cost of earlier records
(time_shift), pair start/end records, and convert cycles to global-timer
nanoseconds with the SM clock measured from the buffer itself.

Pairing works on distinct record sequences, not on every warp: warps of a
kernel usually write identical tag sequences, so each distinct sequence is
paired once and the pairs are gathered for all warps that wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..contract.events import AsyncEvents, LaunchEvents
from ..contract.kernel_metadata import BufferLayout, KernelMetadata
from . import buffer as raw_buffer
from . import decode_non_scope
from .buffer import BufferFormatError
from ..compiling.warp_specialize import warp_labels

# Clock bits a record keeps, by the layout's clock_bits.
STORED_CLOCK_BITS = {64: 48, 32: 32}


def scope_table(metadata: KernelMetadata) -> tuple[list[str], np.ndarray]:
    return metadata.names, np.array(metadata.parents, dtype=np.int64)


def decode(
    buffer,
    metadata: KernelMetadata,
    num_ctas: int,
    *,
    kernel: str | None = None,
    launch: int = 0,
    record_cost_cycles: float = 0.0,
) -> LaunchEvents:
    """Events of one launch. `buffer` holds num_ctas * bytes_per_cta bytes;
    `record_cost_cycles` > 0 applies time_shift with that cost per record."""
    layout = metadata.layout
    raw = raw_buffer.read(buffer, layout, num_ctas, metadata.target)
    kernel = kernel or metadata.kernel
    _check_kernel_id(raw, metadata.kernel_id, kernel)
    names, parents = scope_table(metadata)
    kinds = decode_non_scope.kind_codes(metadata)
    not_scope, value_ids = _id_lookups(kinds)
    segments = raw.counts.shape[1]
    counts, kept, words = _records_in_order(raw, layout, kernel, value_ids)
    dropped = counts - kept
    stamps = _WarpStamps.of(raw)

    halves = raw_buffer.tag_halves(words)
    at = _pair(halves, kept, not_scope)
    _check_scope_ids(at, len(names), kernel, segments)
    unmatched = int(kept.sum() - 2 * at.num_events)
    others = None
    if not_scope is not None:
        others = _NonScopeRecords.of(words, halves, kept, not_scope, stamps, layout.clock_bits, value_ids)
        if record_cost_cycles > 0:
            others.cycles -= _time_shift(dropped[others.rows], others.cols, record_cost_cycles)
        unmatched -= others.count
    base, s_cyc, e_cyc = _scope_cycles(words, at, stamps, dropped, layout.clock_bits, value_ids, kernel, segments)
    if record_cost_cycles > 0:
        for cyc, col in ((s_cyc, at.start_col), (e_cyc, at.end_col)):
            np.subtract(cyc, _time_shift(at.per_row(dropped), col, record_cost_cycles), out=cyc, casting="unsafe")
        np.maximum(e_cyc, s_cyc, out=e_cyc)  # the estimate may overshoot on empty scopes

    warnings = []
    clock_ghz, origin_ns, entry_ns, exit_ns, offset = _time_base(raw.ticks_per_us, stamps, kernel, warnings)
    asynchronous = AsyncEvents.empty()
    if others is not None:
        asynchronous = others.decode(offset, clock_ghz, kinds, segments, decode_non_scope.float_values(metadata))
    warnings += _non_scope_warnings(asynchronous, kernel)
    rows = raw.counts.size
    return LaunchEvents(
        kernel=kernel,
        launch=launch,
        scope_names=names,
        scope_parents=parents,
        clock_ghz=clock_ghz,
        num_segments=segments,
        origin_ns=origin_ns,
        row=at.event_rows(),
        scope=at.flat(at.ids.astype(np.int32)),
        start_cycles=at.flat(s_cyc),
        end_cycles=at.flat(e_cyc),
        warp_ids=raw.warp_ids.reshape(rows).astype(np.int32),
        warp_sm=raw.sm_ids.reshape(rows).astype(np.int32),
        warp_begin_ns=entry_ns,
        warp_end_ns=exit_ns,
        warp_cycles=stamps.clk_end - stamps.clk_start,
        warp_clk_end=stamps.clk_end - base,
        warp_clk_base=base,
        warp_offset_ns=offset,
        dropped=dropped,
        unmatched=unmatched,
        warnings=warnings,
        warp_labels=warp_labels(metadata.warp_specialize),
        scope_kinds=kinds,
        asynchronous=asynchronous,
    )


def _id_lookups(kinds: np.ndarray):
    """By record id: is it not a scope's (None: every id is), and is it a
    value's, whose second record holds a value, not a clock (None: none
    is)? Ids past the table stay scopes, so that the scope pairing reports
    them as corruption."""
    not_scope = value_ids = None
    is_other = decode_non_scope.of_kinds(kinds, decode_non_scope.NOT_SCOPE)
    is_value = decode_non_scope.of_kinds(kinds, decode_non_scope.VALUES)
    if is_other.any():
        not_scope = np.zeros(raw_buffer.MAX_RECORD_IDS, dtype=bool)
        not_scope[: kinds.size] = is_other
    if is_value.any():
        value_ids = np.zeros(raw_buffer.MAX_RECORD_IDS, dtype=bool)
        value_ids[: kinds.size] = is_value
    return not_scope, value_ids


@dataclass
class _WarpStamps:
    """Each warp's header stamps (rows: CTA * segments + segment), int64:
    SM clock and global timer at entry and return."""

    clk_start: np.ndarray
    clk_end: np.ndarray
    gt_start: np.ndarray
    gt_end: np.ndarray

    @staticmethod
    def of(raw) -> "_WarpStamps":
        rows = raw.counts.size

        def stamp(word):
            return raw.stamps(word).reshape(rows).astype(np.int64)

        return _WarpStamps(
            stamp(raw_buffer.W_CLOCK_START),
            stamp(raw_buffer.W_CLOCK_END),
            stamp(raw_buffer.W_TIMER_START),
            stamp(raw_buffer.W_TIMER_END),
        )


def _time_shift(lost_before: np.ndarray, cols: np.ndarray, record_cost_cycles: float) -> np.ndarray:
    """time_shift's correction, in cycles, of the records in columns `cols`
    of warps that lost `lost_before` records to a full ring: record n of a
    warp (counting overwritten ones) follows n records whose cost landed
    inside the measured time."""
    return np.rint((lost_before + cols) * record_cost_cycles).astype(np.int64)


def _check_scope_ids(at, num_scopes: int, kernel: str, segments: int) -> None:
    if at.ids.size and at.ids.max() >= num_scopes:
        row, col = at.where(np.argmax(at.ids >= num_scopes))
        raise BufferFormatError(
            f"profile buffer of {kernel} is corrupted: CTA {row // segments} segment "
            f"{row % segments} record {col} has scope id {at.ids.max()}, but the "
            f"kernel has {num_scopes} scopes"
        )


def _scope_cycles(words, at, stamps: _WarpStamps, dropped, clock_bits: int, value_ids, kernel: str, segments: int):
    """(base, start cycles, end cycles) of the paired records, checked
    against the warps' lifetimes. Cycles are rebuilt for the paired records
    only, counted from the CTA's first warp entry (`base`, per warp: its
    warps share one SM's counter): 4 bytes per record where they fit, which
    bounds finalize's memory."""
    clk_start, clk_end = stamps.clk_start, stamps.clk_end
    rows = clk_start.size
    base = np.repeat(clk_start.reshape(-1, segments).min(axis=1), segments) if rows else clk_start
    s_cyc = _cycles(words, clock_bits, at, at.start_col, clk_end, clk_start, base, value_ids)
    e_cyc = _cycles(words, clock_bits, at, at.end_col, clk_end, clk_start, base, value_ids)
    if s_cyc.dtype != e_cyc.dtype:
        s_cyc, e_cyc = s_cyc.astype(np.int64), e_cyc.astype(np.int64)
    _check_clocks(s_cyc, e_cyc, at, dropped > 0, clk_start, clk_end, base, segments, clock_bits, kernel)
    return base, s_cyc, e_cyc


@dataclass
class _NonScopeRecords:
    """The records of event, mark and value ids, by warp and column, with
    their cycles counted back from each warp's exit (so that ns follow from
    the warp's offset)."""

    rows: np.ndarray
    cols: np.ndarray
    cycles: np.ndarray  # int64
    halves: np.ndarray  # their tag half-words
    low_words: np.ndarray  # their low 32 bits (a value's bits)

    @property
    def count(self) -> int:
        return int(self.rows.size)

    @staticmethod
    def of(words, halves, kept, not_scope, stamps: _WarpStamps, clock_bits: int, value_ids) -> "_NonScopeRecords":
        rows, width = halves.shape
        in_use = np.arange(width)[None, :] < kept[:, None]
        a_rows, a_cols = np.nonzero(in_use & not_scope[halves & np.uint16(raw_buffer.RECORD_ID_MASK)])
        at = _EventIndex(a_cols, a_cols, None, rows=a_rows, num_rows=rows)
        clk_start, clk_end = stamps.clk_start, stamps.clk_end
        cycles = _cycles(words, clock_bits, at, a_cols, clk_end, clk_start, clk_end, value_ids).astype(np.int64)
        return _NonScopeRecords(
            a_rows, a_cols, cycles, halves[a_rows, a_cols], words[a_rows, a_cols] & np.uint64(0xFFFFFFFF)
        )

    def decode(self, offset, clock_ghz: float, kinds, segments: int, is_float) -> AsyncEvents:
        """Events paired, marks and values (decode_non_scope.split)."""
        return decode_non_scope.split(
            (self.halves & np.uint16(raw_buffer.RECORD_ID_MASK)).astype(np.int64),
            self.rows,
            (self.halves & np.uint16(raw_buffer.END_TAG_BIT)) != 0,
            offset[self.rows] + self.cycles / clock_ghz,
            kinds,
            segments,
            cols=self.cols,
            low_words=self.low_words,
            is_float=is_float,
        )


def _non_scope_warnings(asynchronous: AsyncEvents, kernel: str) -> list[str]:
    warnings = []
    if asynchronous.unpaired:
        warnings.append(
            f"{kernel}: {asynchronous.unpaired} asynchronous event records have no partner "
            "(an end with no open start, or a start never ended); they are not drawn"
        )
    if asynchronous.unpaired_values:
        warnings.append(
            f"{kernel}: {asynchronous.unpaired_values} value records lost their time or value half "
            "(a full ring overwrote it); they are not drawn"
        )
    return warnings


def _check_kernel_id(raw, expected_id, kernel: str) -> None:
    """Every warp's header names the kernel id of the metadata (if it has one)."""
    if expected_id is None:
        return
    found = raw.kernel_ids
    bad = np.argwhere(found != np.uint32(expected_id))
    if bad.size:
        cta, seg = bad[0]
        raise BufferFormatError(
            f"profile buffer of {kernel}: CTA {cta} segment {seg} was written by kernel id "
            f"{found[cta, seg]}, not {expected_id} (a buffer from another kernel, or corrupted)"
        )


def _records_in_order(raw, layout: BufferLayout, kernel: str, value_ids=None):
    """Per warp: records counted (int64), records kept, and the kept
    records as (rows, width) u64 in the order written, each with clock bits
    0-47 below its tag: a view of the buffer unless the tags must be taken
    from clock sums or a ring is full (then a copy)."""
    ctas, segments = raw.counts.shape
    cap = layout.capacity
    rows = ctas * segments
    counts = raw.counts.reshape(rows).astype(np.int64)
    if layout.buffer_type == "registers" and (counts > cap).any():
        # Registers hold exactly the kernel's record sites: more is corruption,
        # not records lost to a full ring.
        row = int(np.argmax(counts > cap))
        raise BufferFormatError(
            f"profile buffer of {kernel} is corrupted: CTA {row // segments} segment "
            f"{row % segments} counts {counts[row]} records, but its registers hold at most {cap}"
        )
    kept = np.minimum(counts, cap)
    width = int(kept.max()) if rows else 0  # columns that hold records
    whole = raw_buffer.record_words(raw.records).reshape(rows, cap)
    overhang = raw.overhang if raw.overhang is not None else np.empty((ctas, segments, 0, 2), np.uint32)
    over = raw_buffer.record_words(overhang).reshape(rows, overhang.shape[2])
    if raw.tags_added_to_clock:
        entry_hi = raw.headers[:, :, raw_buffer.W_CLOCK_START + 1].reshape(rows)
        exit_hi = raw.headers[:, :, raw_buffer.W_CLOCK_END + 1].reshape(rows)
        whole = _tags_from_sums(whole, entry_hi, exit_hi)
        over = _tags_from_sums(over, entry_hi, exit_hi)
    if over.shape[1] and (counts > cap).any():
        clk_end = raw.stamps(raw_buffer.W_CLOCK_END).reshape(rows)
        whole = _merge_overhang(whole, over, np.flatnonzero(counts > cap), clk_end, value_ids)
    words = whole[:, :width]
    if (counts > cap).any():
        # A full ring starts at slot count % cap.
        first = np.where(counts > cap, counts % cap, 0)
        slots = (first[:, None] + np.arange(width)[None, :]) % cap
        words = np.take_along_axis(whole, slots, axis=1)
    return counts, kept, words


def _tags_from_sums(words, entry_hi, exit_hi, rows_at_once=1 << 12):
    """Format 4 with 64-bit clocks: a record's second word is clock bits
    32-63 plus the tag << 16; subtracting the warp's entry clock bits 32-63
    leaves the tag above bits 32-47 relative to entry (exact while a warp
    lives less than 2**48 cycles), and the clock's own bits 32-47 stay below
    it. Returns `words` itself where nothing changes (clocks below 2**48)."""
    if not words.size or (not (entry_hi >> np.uint32(16)).any() and not (exit_hi >> np.uint32(16)).any()):
        return words
    out = np.empty_like(words)
    for lo in range(0, words.shape[0], rows_at_once):
        block = words[lo : lo + rows_at_once]
        second = (block >> np.uint64(32)).astype(np.uint32)
        tag = (second - entry_hi[lo : lo + rows_at_once, None]) & np.uint32(0xFFFF0000)
        second = (second & np.uint32(0xFFFF)) | tag
        out[lo : lo + rows_at_once] = (block & np.uint64(0xFFFFFFFF)) | (second.astype(np.uint64) << np.uint64(32))
    return out


def _merge_overhang(whole, over, rows, clk_end, value_ids):
    """Rings with an overhang: a run of records that started near the ring's
    end continued into the overhang, so slot p of a full ring holds its
    newest record either in the ring or in the overhang: the one written
    last, the smaller age (exit clock minus record clock, 48 bits). A value
    half has no clock: its age is that of the time record before it."""
    h = over.shape[1]
    cap = whole.shape[1]
    whole = np.array(whole)  # never write into the caller's buffer
    mask = np.uint64((1 << STORED_CLOCK_BITS[64]) - 1)
    exit_u = clk_end.view(np.uint64)[rows, None]
    ring = whole[rows, :h]
    extra = over[rows]
    last = whole[rows, cap - 1 : cap]
    ring_prev = np.concatenate([last, ring[:, :-1]], axis=1)
    extra_prev = np.concatenate([last, extra[:, :-1]], axis=1)

    def ages(records, before):
        age = (exit_u - records) & mask
        if value_ids is not None:
            halves = raw_buffer.tag_halves(np.ascontiguousarray(records))
            ids = halves & np.uint16(raw_buffer.RECORD_ID_MASK)
            is_value = ((halves & np.uint16(raw_buffer.END_TAG_BIT)) != 0) & value_ids[ids]
            age = np.where(is_value, (exit_u - before) & mask, age)
        return age

    newer = ages(extra, extra_prev) < ages(ring, ring_prev)
    whole[rows, :h] = np.where(newer, extra, ring)
    return whole


def _time_base(ticks_per_us, stamps: _WarpStamps, kernel: str, warnings: list):
    """Cycles to global-timer ns: the clock rate over all warps of the
    launch, each warp anchored at its own entry and exit stamps. Returns
    (clock GHz, origin ns, warps' entry and exit ns, warps' offsets)."""
    clk_start, clk_end, gt_start, gt_end = stamps.clk_start, stamps.clk_end, stamps.gt_start, stamps.gt_end
    ns_per_tick = 1000.0 / ticks_per_us
    d_clk = float((clk_end - clk_start).sum())
    d_ns = float((gt_end - gt_start).sum()) * ns_per_tick
    if d_ns > 0 and d_clk > 0:
        clock_ghz = d_clk / d_ns
    else:
        clock_ghz = 1.0
        warnings.append(
            f"{kernel}: kernel too short to measure the SM clock from the global timer; assuming 1 GHz for its times"
        )
    # Times relative to the launch's first warp entry: global-timer values
    # (~1e18 ns) would leave float64 a resolution of 256 ns.
    first = int(gt_start.min()) if gt_start.size else 0
    origin_ns = first * 1000 // ticks_per_us  # exact: through float64 it would be 256 ns steps
    entry_ns = (gt_start - first) * ns_per_tick
    exit_ns = (gt_end - first) * ns_per_tick
    # Each warp's time is offset + (cycles - exit cycle) / clock, the offset
    # fitted to both of its stamps (relative to the exit cycle so that
    # float64 keeps sub-ns precision for counters around 1e15).
    offset = exit_ns + 0.5 * ((entry_ns - exit_ns) - (clk_start - clk_end) / clock_ghz)
    return clock_ghz, origin_ns, entry_ns, exit_ns, offset


class _EventIndex:
    """Where each event's two records are. In general: per-event (row,
    start column, end column). When every warp wrote the same sequence: the
    same columns in every row, and per-event values are (rows, pairs) arrays
    computed by broadcasting, without per-event gathers."""

    def __init__(self, start_col, end_col, ids, rows=None, num_rows=0):
        self.start_col, self.end_col, self.ids = start_col, end_col, ids
        self.rows = rows  # None: uniform
        self.num_rows = num_rows

    @property
    def uniform(self) -> bool:
        return self.rows is None

    @property
    def num_events(self) -> int:
        return self.num_rows * self.start_col.size if self.uniform else self.rows.size

    def per_row(self, x):
        return x[:, None] if self.uniform else x[self.rows]

    def flat(self, a):
        if self.uniform:
            return np.broadcast_to(a, (self.num_rows, self.start_col.size)).reshape(-1)
        return a

    def event_rows(self):
        if self.uniform:
            return np.repeat(np.arange(self.num_rows, dtype=np.int32), self.start_col.size)
        return self.rows.astype(np.int32)

    def where(self, flat_index):
        """(row, start column) of the event at a flat index."""
        flat_index = int(flat_index)
        if self.uniform:
            n = self.start_col.size
            return flat_index // n, int(self.start_col[flat_index % n])
        return int(self.rows[flat_index]), int(self.start_col[flat_index])


def _cycles(words, clock_bits, at, cols, clk_end, clk_start, base, value_ids=None, rows_at_once=1 << 12):
    """Cycles of the records in `cols` of (rows, width) u64 records, counted
    from each row's `base` cycle: int32, or int64 where a value does not fit.
    A record keeps the clock's low 48 bits (32 with clock32); they are
    counted back from the warp's 64-bit exit stamp, and warps that lived a
    full wrap or longer are unwrapped record by record (skipping the value
    halves of the ids `value_ids` marks). Computed a block of rows (or
    events) at a time: no event-sized temporary."""
    mask = np.uint64((1 << STORED_CLOCK_BITS[clock_bits]) - 1)
    span = clk_end - base  # exit, counted from the base
    exit_u = clk_end.view(np.uint64)
    if at.uniform:
        out, step = np.empty((at.num_rows, cols.size), dtype=np.int32), rows_at_once
    else:
        out, step = np.empty(at.rows.size, dtype=np.int32), rows_at_once * 64
    for lo in range(0, out.shape[0], step):
        hi = min(lo + step, out.shape[0])
        if at.uniform:
            # np.take copies a non-contiguous input whole: a block of rows at a time.
            back = np.take(words[lo:hi], cols, axis=1)
            rows = slice(lo, hi)
            np.subtract(exit_u[rows, None], back, out=back)
            rel = span[rows, None] - (back & mask).view(np.int64)
        else:
            rows = at.rows[lo:hi]
            back = exit_u[rows] - words[rows, cols[lo:hi]]
            rel = span[rows] - (back & mask).view(np.int64)
        out = _store(out, slice(lo, hi), rel)
    long_rows = np.flatnonzero(clk_end - clk_start >= np.int64(mask) + 1)
    if long_rows.size:
        lo = words[long_rows].astype(np.int64) & np.int64(mask)
        if value_ids is not None:
            _clock_over_values(lo, raw_buffer.tag_halves(words[long_rows]), value_ids)
        unwrapped = _unwrap_rows(lo, clk_end[long_rows], int(mask) + 1)
        unwrapped -= base[long_rows, None]
        if at.uniform:
            out = _store(out, long_rows, unwrapped[:, cols])
        else:
            where = np.full(clk_end.size, -1)
            where[long_rows] = np.arange(long_rows.size)
            sel = np.flatnonzero(where[at.rows] >= 0)
            out = _store(out, sel, unwrapped[where[at.rows[sel]], cols[sel]])
    return out


def _store(out: np.ndarray, where, values: np.ndarray) -> np.ndarray:
    """out[where] = values, widening int32 `out` to int64 first if a value
    does not fit (warps that lived more than 2**31 cycles)."""
    if out.dtype == np.int32 and values.size:
        info = np.iinfo(np.int32)
        if values.min() < info.min or values.max() > info.max:
            out = out.astype(np.int64)
    out[where] = values
    return out


def _clock_over_values(lo, halves, value_ids):
    """Gives each value half (a value id's end record: 32 bits of value,
    no clock) the clock of the record before it, its time half, so that
    unwrapping steps over it; a value half in column 0 (its time half
    overwritten) takes the next record's."""
    rows, cols = np.nonzero(
        ((halves & np.uint16(raw_buffer.END_TAG_BIT)) != 0) & value_ids[halves & np.uint16(raw_buffer.RECORD_ID_MASK)]
    )
    if rows.size:
        lo[rows, cols] = lo[rows, np.where(cols > 0, cols - 1, min(1, lo.shape[1] - 1))]


def _unwrap_rows(lo, clk_end, wrap):
    """Walks back from the exit stamp, each step the distance to the next
    record modulo the wrap (needs less than a wrap between two records)."""
    rows, width = lo.shape
    gaps = np.zeros((rows, width), dtype=np.int64)
    if width > 1:
        gaps[:, :-1] = (lo[:, 1:] - lo[:, :-1]) & (wrap - 1)
    # Unused columns hold garbage; their distance is counted from the last
    # record, and they are never read.
    gaps[:, -1] = ((clk_end & (wrap - 1)) - lo[:, -1]) & (wrap - 1)
    behind = np.cumsum(gaps[:, ::-1], axis=1)[:, ::-1]
    return clk_end[:, None] - behind


def _check_clocks(s_cyc, e_cyc, at, lost_some, clk_start, clk_end, base, segments, bits, kernel):
    """Every scope lies within its warp's lifetime (cycles counted from `base`)."""
    start = at.per_row(clk_start - base)
    if (clk_end >= 0).all():
        # Cycles counted back from a non-negative exit stamp are never after
        # it: only the order and the entry stamp need checking.
        ok = np.less_equal(s_cyc, e_cyc)
        ok &= s_cyc >= start
        if ok.all():
            return
    ordered = (s_cyc <= e_cyc) & (e_cyc <= at.per_row(clk_end - base))
    ok = ordered & (s_cyc >= start)
    if bits == 32:
        # A clock32 ring that lost records may legitimately reach further back.
        ok |= ordered & at.per_row(lost_some)
    if ok.all():
        return
    i = int(np.argmin(np.asarray(ok).reshape(-1)))
    row, col = at.where(i)
    hint = " (or more than 2^32 cycles passed between two records: use 64-bit clocks)" if bits == 32 else ""
    first, last = int(at.flat(s_cyc)[i]) + int(base[row]), int(at.flat(e_cyc)[i]) + int(base[row])
    raise BufferFormatError(
        f"profile buffer of {kernel} is corrupted: CTA {row // segments} segment "
        f"{row % segments} record {col} spans cycles [{first}, {last}], "
        f"outside the warp's lifetime [{clk_start[row]}, {clk_end[row]}]{hint}"
    )


def _same_rows(halves, rows_at_once=1 << 16) -> bool:
    """Whether every row equals the first, without a full-size temporary."""
    return all((halves[r : r + rows_at_once] == halves[0]).all() for r in range(0, halves.shape[0], rows_at_once))


def _pair(halves, kept, not_scope=None):
    """Start/end pairs of every warp, as an _EventIndex. `halves`: the
    (rows, width) tag half-words of the records, `kept`: how many of each
    row are records, `not_scope`: None, or by id whether an id is an event's
    or a mark's (such records are skipped here)."""
    rows, width = halves.shape
    empty = np.zeros(0, dtype=np.int64)
    if rows == 0 or width == 0:
        return _EventIndex(empty, empty, empty, rows=empty, num_rows=rows)
    if (kept == width).all() and _same_rows(halves):
        # The common case: every warp wrote the same sequence.
        tags = raw_buffer.tags_of_halves(halves[:1])
        valid = np.ones((1, width), dtype=bool)
        if not_scope is not None:
            valid &= ~not_scope[tags & np.uint32(raw_buffer.RECORD_ID_MASK)]
        rep, pattern_of_row = np.zeros(1, dtype=np.int64), np.zeros(rows, dtype=np.int64)
    else:
        # Distinct sequences: hash each row, then confirm exact equality.
        tags = raw_buffer.tags_of_halves(halves)
        valid = np.arange(width)[None, :] < kept[:, None]
        if not_scope is not None:
            valid &= ~not_scope[tags & np.uint32(raw_buffer.RECORD_ID_MASK)]
        masked = np.where(valid, tags, np.uint32(0xFFFFFFFF)).astype(np.uint64)
        weights = np.random.default_rng(7).integers(1, 1 << 62, size=width, dtype=np.uint64) | np.uint64(1)
        with np.errstate(over="ignore"):
            h = (masked * weights[None, :]).sum(axis=1, dtype=np.uint64) ^ kept.astype(np.uint64)
        _, rep, pattern_of_row = np.unique(h, return_index=True, return_inverse=True)
        pattern_of_row = pattern_of_row.reshape(-1)
        if not ((masked == masked[rep[pattern_of_row]]).all() and (kept == kept[rep[pattern_of_row]]).all()):
            rep, pattern_of_row = np.arange(rows), np.arange(rows)  # a hash collision
    p_start, p_end, p_pat = _pair_patterns(tags[rep], valid[rep])
    p_ids = (tags[rep][p_pat, p_start] & np.uint32(0x7FFFFFFF)).astype(np.int64)
    if rep.size == 1:
        return _EventIndex(p_start, p_end, p_ids, num_rows=rows)

    # Gather each pattern's pairs for every row that wrote it.
    order = np.argsort(p_pat, kind="stable")
    p_start, p_end, p_pat, p_ids = p_start[order], p_end[order], p_pat[order], p_ids[order]
    pairs_per_pattern = np.bincount(p_pat, minlength=rep.size)
    first_pair = np.concatenate(([0], np.cumsum(pairs_per_pattern)[:-1]))
    n_per_row = pairs_per_pattern[pattern_of_row]
    total = int(n_per_row.sum())
    row_of_event = np.repeat(np.arange(rows), n_per_row)
    within = np.arange(total) - np.repeat(np.cumsum(n_per_row) - n_per_row, n_per_row)
    pair_index = first_pair[pattern_of_row][row_of_event] + within
    return _EventIndex(p_start[pair_index], p_end[pair_index], p_ids[pair_index], rows=row_of_event, num_rows=rows)


def _pair_patterns(tags, valid):
    """Pairs in each of a few rows. A start at nesting level L closes at the
    next record of its row that returns to level L; sorting by (row, level,
    position) makes each pair adjacent."""
    is_end = (tags >> np.uint32(31)).astype(bool) & valid
    is_start = ~is_end & valid
    step = is_start.astype(np.int64) - is_end.astype(np.int64)
    after = np.cumsum(step, axis=1)
    level = np.where(is_start, after - 1, after)
    r, c = np.nonzero(valid)
    lv = level[r, c]
    order = np.lexsort((c, lv, r))
    r, c, lv = r[order], c[order], lv[order]
    s = is_start[r, c]
    ids = tags[r, c] & np.uint32(0x7FFFFFFF)
    ok = s[:-1] & ~s[1:] & (r[:-1] == r[1:]) & (lv[:-1] == lv[1:]) & (ids[:-1] == ids[1:])
    k = np.flatnonzero(ok)
    return c[k], c[k + 1], r[k]
