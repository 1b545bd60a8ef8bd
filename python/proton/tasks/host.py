"""The host side of the explicit-buffer task profiler: allocate and reset the
buffer a kernel takes as an argument, and export what its leaders recorded
to a Perfetto trace (layout: docs/task-buffer-format.md)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

import numpy as np

from ..writers import perfetto_trace
from ..contract.events import LaunchEvents
from ..contract.errors import ProfilerError
from ..writers.files import write_or_fall_back
from .layout import ENTRY_WORDS, HEADER_WORDS, MAGIC, START_BIT, TASK_TYPE_MASK


class TaskBufferError(ProfilerError):
    """A task buffer that is not one, was not reset, or is corrupted."""


def alloc_profiler_buffer(max_num_profile_slots: int, device: str = "cuda"):
    """A reset buffer of `max_num_profile_slots` 16-byte slots (an int64
    torch tensor). Every (CTA, group) gets an equal share of the slots, one
    of which holds its count."""
    import torch

    if max_num_profile_slots < 1:
        raise TaskBufferError(f"max_num_profile_slots must be positive, got {max_num_profile_slots}")
    buffer = torch.empty(HEADER_WORDS + ENTRY_WORDS * max_num_profile_slots, dtype=torch.int64, device=device)
    return reset_profiler_buffer(buffer)


def reset_profiler_buffer(buffer):
    """Clears the records and writes the header; returns the buffer."""
    slots = (buffer.numel() - HEADER_WORDS) // ENTRY_WORDS
    if slots < 1:
        raise TaskBufferError(
            f"a task buffer needs at least {HEADER_WORDS + ENTRY_WORDS} int64 words, got {buffer.numel()}"
        )
    buffer.zero_()
    buffer[0] = np.int64(np.uint64(MAGIC).view(np.int64))
    buffer[1] = slots
    return buffer


@dataclass
class TaskReport:
    """What an export found, besides the slices."""

    file: str | None = None
    events: int = 0
    ctas: int = 0
    groups: int = 0
    dropped: int = 0  # records beyond a region's slots
    unknown_types: dict = field(default_factory=dict)  # task type -> records with no name
    unclosed: dict = field(default_factory=dict)  # task name -> starts without an end
    unopened: dict = field(default_factory=dict)  # task name -> ends without a start
    mismatched: int = 0  # ends closing a start of another task

    @property
    def problems(self) -> list[str]:
        out = []
        if self.dropped:
            out.append(
                f"{self.dropped} records did not fit their CTA's slots and were dropped (raise max_num_profile_slots)"
            )
        for kind, counts in (
            ("records of unknown task types", self.unknown_types),
            ("starts without an end", self.unclosed),
            ("ends without a start", self.unopened),
        ):
            if counts:
                out.append(f"{sum(counts.values())} {kind}: " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
        if self.mismatched:
            out.append(f"{self.mismatched} ends closed a start of another task type (dropped)")
        return out


def read(words: np.ndarray, task_names) -> tuple[LaunchEvents | None, TaskReport]:
    """Events of one buffer (int64 words as numpy) and the report."""
    words = np.ascontiguousarray(words).view(np.uint64).reshape(-1)
    report = TaskReport()
    slots, ctas, groups = _header(words)
    if ctas == 0 or groups == 0:
        return None, report  # no kernel recorded into it since the reset
    report.ctas, report.groups = ctas, groups
    body, counts, kept = _regions(words, slots, ctas, groups)
    report.dropped = int((counts - kept).sum())
    records = _records(body, kept)
    names = _task_names(task_names, records["task"], report)
    pairs = _pair(records, names, report)
    events = _launch_events(records, pairs, names, ctas, groups, counts - kept)
    report.events = events.num_events
    return events, report


def _header(words: np.ndarray) -> tuple[int, int, int]:
    """(slots, CTAs, groups) from a buffer's header, checked against its size."""
    if words.size < HEADER_WORDS + ENTRY_WORDS or int(words[0]) != MAGIC:
        raise TaskBufferError(
            "not a task profiler buffer (no header magic): allocate it with "
            "alloc_profiler_buffer or reset it with reset_profiler_buffer"
        )
    slots, ctas, groups = int(words[1]), int(words[2]), int(words[3])
    if slots != (words.size - HEADER_WORDS) // ENTRY_WORDS:
        raise TaskBufferError(
            f"task buffer header says {slots} slots but the buffer holds "
            f"{(words.size - HEADER_WORDS) // ENTRY_WORDS}: corrupted or truncated"
        )
    return slots, ctas, groups


def _regions(words: np.ndarray, slots: int, ctas: int, groups: int):
    """(entries per region, records attempted, records kept): one region per
    CTA and group, its slot 0 holding the count and the region's id."""
    per_region = slots // (ctas * groups)
    if per_region == 0:
        raise TaskBufferError(
            f"{slots} slots cannot hold {ctas} CTAs x {groups} groups (one slot each for "
            "the count): raise max_num_profile_slots"
        )
    regions = ctas * groups
    body = words[HEADER_WORDS : HEADER_WORDS + regions * per_region * ENTRY_WORDS].reshape(
        regions, per_region, ENTRY_WORDS
    )
    # Entries are written in order and a global-timer value is never 0 (the
    # buffer was zeroed): the written ones lead. Slot 0's word 0 holds the
    # records attempted only once some did not fit.
    written_entries = (body[:, 1:, 0] != 0).sum(axis=1).astype(np.int64)
    counts = np.maximum(body[:, 0, 0].astype(np.int64), written_entries)
    ids = body[:, 0, 1]
    expected = (np.repeat(np.arange(ctas, dtype=np.uint64), groups) << np.uint64(32)) | np.tile(
        np.arange(groups, dtype=np.uint64), ctas
    )
    written = (counts > 0) | (ids != 0)
    bad = np.flatnonzero(written & (ids != expected))
    if bad.size:
        raise TaskBufferError(
            f"task buffer region {bad[0]} (CTA {bad[0] // groups}, group {bad[0] % groups}) "
            f"has id 0x{int(ids[bad[0]]):x}: corrupted, or written by a kernel with another "
            "grid or group count"
        )
    return body, counts, np.minimum(counts, per_region - 1)


def _records(body: np.ndarray, kept: np.ndarray) -> dict:
    """The kept records in the order written, flattened, as columns."""
    position = np.arange(body.shape[1] - 1)[None, :]
    valid = position < kept[:, None]
    tag = body[:, 1:, 1][valid]
    region = np.broadcast_to(np.arange(body.shape[0])[:, None], valid.shape)[valid]
    return {
        "region": region,
        "time": body[:, 1:, 0][valid].astype(np.int64),
        "is_start": (tag & np.uint64(START_BIT)) != 0,
        "task": (tag & np.uint64(TASK_TYPE_MASK)).astype(np.int64),
        "sm": (tag >> np.uint64(32)).astype(np.int64),
        "order": np.arange(region.size),
    }


def _task_names(task_names, task: np.ndarray, report: TaskReport) -> list[str]:
    """The user's task names, plus `task N` for types it does not name (counted)."""
    names = list(task_names)
    for t in np.unique(task[task >= len(names)]):
        report.unknown_types[int(t)] = int((task == t).sum())
    return names + [f"task {t}" for t in range(len(names), int(task.max()) + 1 if task.size else 0)]


def _pair(records: dict, names: list[str], report: TaskReport) -> dict:
    """Starts paired with ends by nesting depth: within a region, a start at
    depth d and the end that brings the depth back to d alternate. Returns
    the kept records sorted so that each pair is adjacent, and the index of
    every pair's start; unopened, unclosed and mismatched records are counted."""
    region, is_start, task = records["region"], records["is_start"], records["task"]
    # An end that finds no open task (the running depth, floored at 0, is 0
    # before it) is dropped first: it is where the running minimum of the
    # depth falls below all earlier values and 0.
    step = np.where(is_start, 1, -1)
    depth = _cumsum_by(step, region)
    floor = np.minimum(_running_min_by(depth, region), 0)
    first_of_region = np.r_[True, region[1:] != region[:-1]] if region.size else np.zeros(0, bool)
    floor_before = np.where(first_of_region, 0, np.r_[0, floor[:-1]])
    unopened = ~is_start & (floor < floor_before)
    for t in np.unique(task[unopened]):
        report.unopened[names[t]] = int((unopened & (task == t)).sum())
    keep = ~unopened
    depth_after = _cumsum_by(step[keep], region[keep])
    level = np.zeros(region.size, dtype=np.int64)
    level[keep] = np.where(is_start[keep], depth_after - 1, depth_after)
    key = np.lexsort((records["order"][keep], level[keep], region[keep]))
    r, lv, s, t, tm = (a[keep][key] for a in (region, level, is_start, task, records["time"]))
    pair = s[:-1] & ~s[1:] & (r[:-1] == r[1:]) & (lv[:-1] == lv[1:])
    first = np.flatnonzero(pair)
    paired = np.zeros(r.size, dtype=bool)
    paired[first] = paired[first + 1] = True
    for ty in np.unique(t[s & ~paired]):
        report.unclosed[names[ty]] = int((s & ~paired & (t == ty)).sum())
    same = t[first] == t[first + 1]
    report.mismatched = int((~same).sum())
    return {"region": r, "task": t, "time": tm, "first": first[same]}


def _launch_events(
    records: dict, pairs: dict, names: list[str], ctas: int, groups: int, dropped: np.ndarray
) -> LaunchEvents:
    """The pairs as a launch's events: one row per CTA and group, times in ns."""
    regions = ctas * groups
    first, region, time, sm = pairs["first"], records["region"], records["time"], records["sm"]
    start, end = pairs["time"][first], pairs["time"][first + 1]
    origin = int(start.min()) if start.size else 0
    region_sm = np.zeros(regions, dtype=np.int64)
    recorded, first_record = np.unique(region, return_index=True)
    region_sm[recorded] = sm[first_record]  # the SM of each region's first record
    begin_ns = np.zeros(regions)
    end_ns = np.zeros(regions)
    if time.size:
        begin_ns = np.full(regions, np.inf)
        np.minimum.at(begin_ns, region, (time - origin).astype(np.float64))
        end_ns = np.full(regions, -np.inf)
        np.maximum.at(end_ns, region, (time - origin).astype(np.float64))
        begin_ns[~np.isfinite(begin_ns)] = 0
        end_ns[~np.isfinite(end_ns)] = 0
    zeros = np.zeros(regions, dtype=np.int64)
    return LaunchEvents(
        kernel="tasks",
        launch=0,
        scope_names=names,
        scope_parents=np.full(len(names), -1),
        clock_ghz=1.0,
        num_segments=groups,
        origin_ns=origin,
        row=pairs["region"][first].astype(np.int64),
        scope=pairs["task"][first].astype(np.int32),
        start_cycles=(start - origin).astype(np.int64),
        end_cycles=(end - origin).astype(np.int64),
        warp_ids=np.tile(np.arange(groups, dtype=np.int32), ctas),
        warp_sm=region_sm.astype(np.int32),
        warp_begin_ns=begin_ns,
        warp_end_ns=end_ns,
        warp_cycles=zeros,
        warp_clk_end=zeros,
        warp_offset_ns=np.zeros(regions),
        dropped=dropped,
        unmatched=int(pairs["region"].size - 2 * first.size),
        row_label="group",
    )


def _running_min_by(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Running minimum of `values` restarting at each new value of the sorted
    `groups` (shifting later groups below earlier ones keeps them apart)."""
    if not values.size:
        return values
    span = int(np.abs(values).max()) * 2 + 1
    rank = np.cumsum(np.r_[0, groups[1:] != groups[:-1]])
    return np.minimum.accumulate(values - rank * span) + rank * span


def _cumsum_by(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Running sum of `values` restarting at each new value of the sorted
    `groups`."""
    total = np.cumsum(values)
    if not values.size:
        return total
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    offsets = np.repeat(np.r_[0, total[starts[1:] - 1]], np.diff(np.r_[starts, values.size]))
    return total - offsets


def export_to_perfetto_trace(profiler_buffer, task_names, file_name: str, gpu_name: str | None = None) -> TaskReport:
    """Writes the buffer's tasks to `file_name` (Perfetto protobuf): tracks
    GPU > SM > CTA > group, one slice per task; problems found (dropped
    records, unknown task types, unpaired records) are printed and
    returned in the report. Written as every Proton output is
    (proton.writers.files): whole or not at all, into the temporary directory
    when file_name cannot be written (report.file says where)."""
    words = (
        profiler_buffer.detach().cpu().numpy() if hasattr(profiler_buffer, "detach") else np.asarray(profiler_buffer)
    )
    if gpu_name is None and hasattr(profiler_buffer, "device"):
        import torch

        gpu_name = torch.cuda.get_device_name(profiler_buffer.device) if profiler_buffer.is_cuda else "CPU"
    events, report = read(words, task_names)
    written: list[str] = []  # where the trace went instead, if not to file_name
    report.file = write_or_fall_back(
        file_name,
        lambda path: perfetto_trace.write(path, [events] if events is not None else [], gpu_name or "GPU 0"),
        written,
    )
    for problem in written + report.problems:
        print(f"proton.tasks: {file_name}: {problem}", file=sys.stderr)
    return report


_export_enabled = True
_export_counts: dict[str, int] = {}


def set_export_trace_on() -> None:
    global _export_enabled
    _export_enabled = True


def set_export_trace_off() -> None:
    global _export_enabled
    _export_enabled = False


def numbered(trace_file: str) -> str:
    """`trace.pftrace` -> `trace_0.pftrace`, `trace_1.pftrace`, ... per call."""
    n = _export_counts.get(trace_file, 0)
    _export_counts[trace_file] = n + 1
    stem, ext = os.path.splitext(trace_file)
    return f"{stem}_{n}{ext or '.pftrace'}"


class ProfilerBuffer:
    """`with ProfilerBuffer(slots, "trace.pftrace", names) as buffer:` allocates
    and resets a buffer; on exit (if exporting is on) synchronizes and writes
    the next numbered trace (trace_0.pftrace, trace_1.pftrace, ...)."""

    def __init__(self, max_num_profile_slots: int, trace_file: str, task_names, device: str = "cuda"):
        self.slots, self.trace_file, self.task_names, self.device = (
            max_num_profile_slots,
            trace_file,
            task_names,
            device,
        )
        self.buffer = None
        self.report: TaskReport | None = None

    def __enter__(self):
        self.buffer = alloc_profiler_buffer(self.slots, self.device)
        return self.buffer

    def __exit__(self, exc_type, *exc):
        if exc_type is None and _export_enabled:
            import torch

            torch.cuda.synchronize()
            self.report = export_to_perfetto_trace(self.buffer, self.task_names, numbered(self.trace_file))
        return False
