"""The device side of the explicit-buffer task profiler: a Triton value that a
kernel threads through its code, one leader thread per group writing a record
at each task start and end into its own slots of a profile buffer that the
kernel receives as an ordinary argument (layout: docs/task-buffer-format.md).

    @triton.jit
    def kernel(..., profiler_buffer, ENABLE_PROFILING: tl.constexpr):
        profiler = Profiler.create(profiler_buffer, 0, 1, True, ENABLE_PROFILING)
        profiler = profiler.record(True, 0)    # task 0 starts
        ...
        profiler = profiler.record(False, 0)   # task 0 ends

Values are immutable in Triton, so `record` returns the profiler to use next.
With ENABLE_PROFILING=False nothing is emitted: the kernel compiles to the
code it has without the profiler calls.
"""

# No `from __future__ import annotations`: Triton checks the field annotations as types.

import triton
import triton.language as tl

try:  # Triton 3.4+: user-defined aggregate values
    from triton.language.core import _aggregate as aggregate
    from triton.runtime.jit import constexpr_function
except ImportError as error:  # pragma: no cover - depends on the installed Triton
    raise ImportError(
        f"proton.tasks needs Triton's aggregate values (triton.language.core._aggregate, "
        f"and triton.runtime.jit.constexpr_function, Triton 3.5 or newer); this is Triton {triton.__version__}"
    ) from error

from . import layout

# The layout as constexprs, which jit code may read as globals.
HEADER_WORDS = tl.constexpr(layout.HEADER_WORDS)
ENTRY_WORDS = tl.constexpr(layout.ENTRY_WORDS)
TASK_TYPE_MASK = tl.constexpr(layout.TASK_TYPE_MASK)
START_BIT = tl.constexpr(layout.START_BIT)


@triton.jit
def _global_timer():
    # A scalar operand gives one value per thread (as proton.language does).
    return tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l,r", [tl.full([], 0, tl.int32)], dtype=tl.int64, is_pure=False, pack=1
    )


@triton.jit
def _thread_index():
    return tl.inline_asm_elementwise(
        "mov.u32 $0, %tid.x;", "=r,r", [tl.full([], 0, tl.int32)], dtype=tl.int32, is_pure=True, pack=1
    )


@triton.jit
def _threads_per_cta():
    return tl.inline_asm_elementwise(
        "mov.u32 $0, %ntid.x;", "=r,r", [tl.full([], 0, tl.int32)], dtype=tl.int32, is_pure=True, pack=1
    )


@triton.jit
def _sm_id():
    return tl.inline_asm_elementwise(
        "mov.u32 $0, %smid;", "=r,r", [tl.full([], 0, tl.int32)], dtype=tl.int32, is_pure=False, pack=1
    )


@aggregate
class Profiler:
    region: tl.tensor  # int64 pointer: this CTA and group's entries (entry 0: count, id)
    index: tl.tensor  # int32: records this group has written or dropped so far
    capacity: tl.tensor  # int32: record entries in the region
    is_leader: tl.tensor  # int1: this thread writes
    ENABLE_PROFILING: tl.constexpr

    @constexpr_function
    def __init__(self, region, index, capacity, is_leader, ENABLE_PROFILING):
        self.region = region
        self.index = index
        self.capacity = capacity
        self.is_leader = is_leader
        self.ENABLE_PROFILING = tl.constexpr(ENABLE_PROFILING)

    @triton.jit
    def create(profiler_buffer, group_id, num_groups, is_leader, ENABLE_PROFILING: tl.constexpr = True):
        """The profiler of group `group_id` (of `num_groups`) in this CTA. The
        CTA's threads form `num_groups` equal, contiguous groups; a group's
        records are written by its first thread, where `is_leader` is true
        (pass False to silence a group)."""
        if ENABLE_PROFILING:
            nx = tl.num_programs(0)
            ny = tl.num_programs(1)
            ctas = nx * ny * tl.num_programs(2)
            cta = tl.program_id(0) + nx * (tl.program_id(1) + ny * tl.program_id(2))
            # Entries per region from the header the host wrote; entry 0 of a
            # region holds its count and id.
            entries = tl.load(profiler_buffer + 1).to(tl.int32)
            per_region = entries // (ctas * num_groups)
            region_index = cta * num_groups + group_id
            region = profiler_buffer + HEADER_WORDS + region_index.to(tl.int64) * per_region * ENTRY_WORDS
            # Triton runs scalar stores in every thread: only the group's
            # first thread (the CTA's threads split evenly into num_groups
            # contiguous groups) writes, and only if `is_leader` says so.
            first_thread = group_id * (_threads_per_cta() // num_groups)
            leader = is_leader & (_thread_index() == first_thread) & (per_region > 0)
            # The grid's shape goes into the header from CTA 0 only: stores
            # from every CTA to one line would contend at the L2.
            tl.store(profiler_buffer + 2, ctas.to(tl.int64), mask=leader & (cta == 0))
            tl.store(profiler_buffer + 3, tl.full([], num_groups, tl.int64), mask=leader & (cta == 0))
            tl.store(region + 1, (cta.to(tl.int64) << 32) | group_id, mask=leader)
            return Profiler(region, tl.full([], 0, tl.int32), per_region - 1, leader, ENABLE_PROFILING)
        else:
            zero = tl.full([], 0, tl.int32)
            return Profiler(profiler_buffer, zero, zero, zero != 0, ENABLE_PROFILING)

    @triton.jit
    def record(self, is_start, task_type):
        """Records the start (`is_start` true) or end of task `task_type` (a
        non-negative int below 2**31) with the global timer and the SM id."""
        if self.ENABLE_PROFILING:
            now = _global_timer()
            sm = _sm_id()
            fits = self.is_leader & (self.index < self.capacity)
            entry = self.region + (self.index.to(tl.int64) + 1) * ENTRY_WORDS
            start_bit = tl.where(is_start, START_BIT, 0).to(tl.int64)
            tag = (sm.to(tl.int64) << 32) | start_bit | (tl.cast(task_type, tl.int64) & TASK_TYPE_MASK)
            tl.store(entry, now, mask=fits)
            tl.store(entry + 1, tag, mask=fits)
            # The count is written only once records no longer fit: the host
            # counts the written entries otherwise.
            tl.store(self.region, (self.index + 1).to(tl.int64), mask=self.is_leader & (self.index >= self.capacity))
            return Profiler(self.region, self.index + 1, self.capacity, self.is_leader, self.ENABLE_PROFILING)
        else:
            return self
