"""Device-side markers for Triton and Gluon kernels.

    import proton.language as pl

    @triton.jit
    def kernel(...):
        pl.enter_scope("load")
        ...
        pl.exit_scope("load")
        with pl.scope("compute"):
            ...

Asynchronous events (Triton 3.9's API) measure work whose start and end do
not nest, e.g. a copy issued in one loop iteration or warp and waited for in
another:

        ev = pl.allocate_event("tma")
        for i in range(n):
            pl.start_event(ev)      # issue the copy of tile i
            ...
            pl.end_event(ev)        # wait for the copy of tile i - 1

The decoder pairs an event's starts and ends in time order
(docs/buffer-format.md, "Events and marks").

A value record keeps a scalar of the kernel with its time (int32 or
float32; narrower types widen exactly, wider ones are a compile error): a
counter track per warp in the traces, summed on its node in the tree.

        for i in range(n):
            pl.record_value("iteration", i)

Upstream Triton's spelling of this could not be found (its Proton after 3.9
was not at hand); `record_value` is this project's.

A marker becomes a side-effecting inline-assembly carrier whose text is
`// @proton <kind> <name>` (kind `start`, `end`, `event_start`,
`event_end`, `mark`, `value`); Proton's compiler lifts it from the LLVM
IR into `proton.record` and lowers it to a clock read and a store. When no
instrumentation session is active nothing at all is emitted, so plain builds
are untouched. The markers live in proton.compiling.markers.
"""

from .compiling.markers import (
    allocate_event,
    disable_semantic,
    enable_semantic,
    end_event,
    enter_scope,
    event,
    event_type,
    exit_scope,
    instrumentation_state,
    mark,
    record_value,
    scope,
    start_event,
)

__all__ = [
    "allocate_event",
    "disable_semantic",
    "enable_semantic",
    "end_event",
    "enter_scope",
    "event",
    "event_type",
    "exit_scope",
    "instrumentation_state",
    "mark",
    "record_value",
    "scope",
    "start_event",
]
