"""Where an instrumented launch's profile buffer comes from (Triton's
profile allocator, InstrumentationSession._allocate): a slice of the
session's arena of the profiler's own device memory (arena.py), memory that
lives as long as the program during a CUDA graph capture (graph_memory), a
sink nobody reads past the budget, and once the session is finalized
(late_launch_sink); never the program's allocator."""

from __future__ import annotations

from ..contract.errors import ProfilerError
from ..device import memory as device_memory
from . import arena as arenas, cuda_graphs


class LaunchMemory:
    """InstrumentationSession's allocation of profile buffers (its state is
    made in InstrumentationSession.__init__)."""

    def _load_torch(self):
        self._torch = _torch()
        return self._torch

    # -- per launch (hot path) -----------------------------------------------
    def _allocate(self, size, alignment, stream):
        """Triton's profile allocator: a slice of the arena, of memory for
        the life of a CUDA graph during capture, or (past the budget) of a
        sink nobody reads."""
        torch = self._torch or self._load_torch()
        self.graphs.install(torch)  # at once if torch was imported after the session started
        local = self._local
        if getattr(local, "pending", None) is not None:
            self._unlaunched_buffer(local.pending)
        if cuda_graphs.stream_capturing(torch):
            piece, where = graph_memory(size), "graph"
        else:
            if self.flush_policy.automatic and self.flush_policy.due(self._phase_began, self.kept_bytes):
                self.advance_phase()  # before this launch takes a slice: the part holds the launches before it
            piece, where = self._arena().take(size, stream), "arena"
            if piece is None:
                piece, where = self.arena.sink(size), "sink"
                self._sink_ahead(size, piece)  # the launches after it write there too
            else:
                self._reserve_ahead(size)  # the launches after it take the fast path
        local.pending = (piece, stream, where)
        return piece

    def _arena(self) -> arenas.Arena:
        """The session's arena, made at its first use."""
        if self.arena is None:
            self.arena = arenas.Arena(device_memory.memory(), self.max_buffer_bytes)
            self.arena.reclaim = self._reclaim_reserved
            self._arena_made()
        return self.arena

    def _unlaunched_buffer(self, pending) -> None:
        """A buffer handed out whose launch never reached the launch hook:
        nothing of it is kept (an arena slice is free again)."""
        piece, stream, where = pending
        self._unlaunched += 1
        if where == "arena":
            self.arena.give_back(piece, stream)


#: Memory of launches captured in CUDA graphs: a graph replays them whenever
#: the program wants, so it stays allocated until the process ends.
_GRAPH_MEMORY: list = []
#: Memory for instrumented kernels launched with no session open (never
#: released: such a launch may come at any time).
_LATE_SINKS: arenas.Sinks | None = None


def graph_memory(size: int):
    """A profile buffer for a launch being captured in a CUDA graph."""
    allocation = device_memory.memory().allocate(size + arenas.GUARD_BYTES)
    _GRAPH_MEMORY.append(allocation)
    return allocation.slice(0, size)


def late_launch_sink(size, alignment, stream):
    """The profile allocator once every session is finalized: kernels a
    session compiled, launched again later (libraries keep compiled
    kernels), write into memory of the profiler's that nobody reads, never
    into the program's; Triton's own allocator would refuse them."""
    global _LATE_SINKS
    memory = device_memory.memory()
    if _LATE_SINKS is None or _LATE_SINKS.memory is not memory:
        _LATE_SINKS = arenas.Sinks(memory)
    return _LATE_SINKS.slice(size)


def _torch():
    try:
        import torch
    except ImportError:
        raise ProfilerError(
            "the instrumentation runtime allocates profile buffers with PyTorch; install torch"
        ) from None
    if not torch.cuda.is_available():
        # torch.cuda is CUDA on NVIDIA and HIP on ROCm builds of PyTorch.
        runtime = (
            f"ROCm (HIP {torch.version.hip})"
            if getattr(torch.version, "hip", None)
            else f"CUDA {torch.version.cuda}"
            if getattr(torch.version, "cuda", None)
            else "no GPU runtime (CPU-only build)"
        )
        raise ProfilerError(
            f"an instrumented kernel was launched but PyTorch sees no GPU: this PyTorch is built "
            f"for {runtime} and torch.cuda.is_available() is False (no driver, no device, or "
            "CUDA_VISIBLE_DEVICES/HIP_VISIBLE_DEVICES hides them)"
        )
    return torch
