"""The per-launch path of an instrumentation session without Python: Triton's
profile allocator and launch hook are proton._host.InstrumentedLaunches,
which serves a launch from slices the session reserved ahead and logs it,
and hands every other launch to the session's Python allocator and hook
(launch_memory.py, launch_bookkeeping.py), which decide as before.

A launch takes the fast path when the session is active and keeps every
launch (no max_launches_per_kernel, no hook="triton" names), the kernel was
launched before in the session (its variant is known), a run of slices of
its buffer size is reserved on the current device, no CUDA graph is being
captured, no periodic flush is due, and it is made outside Triton's
benchmark loops; the host scopes open (proton.scope) are logged with it.
Runs are reserved by the slow
path, from the arena, each twice the last (up to RUN_LIMIT) within the
budget and the flush size; reserved slices not used go back to the arena
before a launch would be refused, and at each flush. Once a launch of a
size is refused (past the budget), the launches of that size after it
write into the same sink, logged and counted as the Python path counts
them.

Both paths number launches on the extension's counters, so the log is
drained (into kept launches, in launch order) only when the session reads
what it kept: at a flush and at finalize. The outputs are those of the
Python path (test_launch_fast_path.py compares them scenario by scenario).
Without the extension (an install built without the host profiler) or on
a runtime other than CUDA the Python path serves every launch.
"""

from __future__ import annotations

from .launches import KeptLaunch

#: The most slices reserved at once for one buffer size.
RUN_LIMIT = 1024
#: The first run's length.
FIRST_RUN = 8


class LaunchFastPath:
    """InstrumentedLaunches wired to an InstrumentationSession (its state is
    made in InstrumentationSession.__init__)."""

    def _make_fast_path(self):
        """The extension's fast path, or None where there is none, or where
        it would never serve a launch (a session that keeps the last N
        launches, or names launches by their launch_metadata): there it
        would only add its own call to the Python path's."""
        host = self._host
        if host is None or not hasattr(host, "InstrumentedLaunches"):
            return None
        if self.max_launches is not None or self.launch_metadata_names:
            return None
        fast = host.InstrumentedLaunches(self._allocate, self._slow_launch)
        host.InstrumentedLaunches.set_benchmark_depth(0)  # this thread's, as the new BenchmarkLoops counts
        self.benchmarks.listener = host.InstrumentedLaunches.set_benchmark_depth
        return fast

    def _arena_made(self) -> None:
        """The session's device memory is known: the fast path reads its
        current context as the arena does (CUDA; other runtimes: no fast path)."""
        address = self.arena.memory.runtime.context_function_address()
        if self._fast is not None and address is not None:
            self._fast.set_current_context(address)

    def _update_fast_path(self) -> None:
        """Turns the fast path on while the session is active and records."""
        fast = self._fast
        if fast is None:
            return
        fast.set_enabled(self.active and not self._closed and self.benchmarks.monitoring)
        seconds = self.flush_policy.seconds
        fast.set_deadline(self._phase_began + seconds if seconds is not None else float("inf"))

    # -- the slow path's part ------------------------------------------------
    def _slow_launch(self, metadata, fast_slice) -> None:
        """The launch hook for what the fast path did not log; `fast_slice`
        is (chunk, offset, size, stream) of a fast slice this launch got."""
        if fast_slice is not None:
            chunk, offset, size, stream = fast_slice
            where = "sink" if chunk in self._fast_sinks else "arena"
            self._local.pending = (self._fast_chunks[chunk].slice(offset, size), stream, where)
        self._on_launch(metadata)

    def _note_variant(self, handle, name: str, key: tuple, kernel_id) -> None:
        """A kernel the fast path may log from now on."""
        fast = self._fast
        if fast is None or handle is None or kernel_id is None or handle in self._fast_handles:
            return
        self._fast_handles.add(handle)
        self._fast_variants.append((name, key, kernel_id))
        fast.know_handle(handle, len(self._fast_variants) - 1, self._launch_counter(key))

    def _launch_counter(self, key: tuple) -> int:
        """The fast path's counter of (kernel, variant) `key`'s launches,
        made with the launches numbered so far."""
        counter = self._fast_counters.get(key)
        if counter is None:
            counter = self._fast_counters[key] = len(self._fast_counters)
            self._fast.set_count(counter, self.launch_counts.get(key, 0))
        return counter

    def _launch_numbers(self, key: tuple) -> tuple[int, int]:
        """(its number among `key`'s launches, among all launches) of a
        launch the Python path keeps: the fast path's counters where it
        numbers launches too, so that both number in launch order."""
        fast = self._fast
        counter = self._fast_counters.get(key) if fast is not None else None
        index = fast.count_launch(counter) if counter is not None else self.launch_counts.get(key, 0)
        self.launch_counts[key] = index + 1
        if fast is not None:
            return index, fast.next_sequence()
        self._launches += 1
        return index, self._launches - 1

    def _fast_may_serve(self) -> bool:
        return self._fast is not None and self.active

    def _chunk_index(self, allocation) -> int:
        """The fast path's index of an arena chunk (or sink block)."""
        chunk = self._fast_chunk_index.get(id(allocation))
        if chunk is None:
            chunk = self._fast_chunk_index[id(allocation)] = len(self._fast_chunks)
            self._fast_chunks.append(allocation)
        return chunk

    def _sink_ahead(self, size: int, piece) -> None:
        """After the slow path gave a launch of `size` the sink (past the
        budget): the launches after it write there too, and are counted."""
        if not self._fast_may_serve():
            return
        context = self.arena.memory.runtime.current_key()
        if context:
            chunk = self._chunk_index(piece.allocation)
            self._fast_sinks.add(chunk)
            self._fast.set_sink(context, size, chunk, piece.data_ptr())

    def _reserve_ahead(self, size: int) -> None:
        """After the slow path gave a launch an arena slice of `size`: a run
        of slices of that size for the launches after it."""
        fast = self._fast
        if not self._fast_may_serve():
            return
        context = self.arena.memory.runtime.current_key()
        if not context or fast.reserved(context, size):
            return
        runs = self._fast_runs
        count = runs.get(size, FIRST_RUN)
        if self.flush_policy.nbytes is not None:
            count = min(count, max(0, self.flush_policy.nbytes - self.kept_bytes) // max(1, size))
        run = self.arena.reserve(size, count) if count > 0 else None
        if run is None:
            return
        allocation, offset, stride, count = run
        chunk = self._chunk_index(allocation)
        fast.add_reservation(context, size, chunk, allocation.pointer + offset, offset, stride, count)
        runs[size] = min(2 * count, RUN_LIMIT)
        if self._torch is not None:
            fast.set_capture_check(getattr(self._torch.cuda, "is_current_stream_capturing", None))

    def _reclaim_reserved(self) -> bool:
        """Reserved slices the fast path did not hand out go back to the
        arena; whether there were any."""
        if self._fast is None or self.arena is None:
            return False
        runs = self._fast.take_reservations()
        for _context, size, chunk, offset, stride, count in runs:
            self.arena.unreserve(self._fast_chunks[chunk], offset, size, stride, count)
        return bool(runs)

    def _drain_fast(self) -> None:
        """The launches the fast path logged, numbered and kept in launch
        order; its slices whose launch never came, free again."""
        if self._fast is None:
            return
        logged, unlaunched = self._fast.drain()
        chunks, sinks = self._fast_chunks, self._fast_sinks
        for _variant, _index, _sequence, _stack, chunk, offset, size, stream in unlaunched:
            self._unlaunched += 1
            if chunk not in sinks:
                self.arena.give_back(chunks[chunk].slice(offset, size), stream)
        stacks = self._fast.scope_stacks() if any(row[3] for row in logged) else [()]
        for variant, index, sequence, stack, chunk, offset, size, stream in logged:
            name, key, kernel_id = self._fast_variants[variant]
            if chunk in sinks:
                self.retention.count(key, "budget")
                continue
            piece = chunks[chunk].slice(offset, size)
            launch = KeptLaunch(name, index, piece, sequence, key[1], stacks[stack], None, kernel_id, stream)
            self.retention.offer(key, launch, True, False)  # kept: the fast path serves keep-every-launch only

    def _forget_arena(self) -> None:
        """Before the arena's memory is reset or released: no run points into it."""
        if self._fast is not None:
            self._fast.take_reservations()
            self._fast.clear_sinks()
        self._fast_chunks.clear()
        self._fast_chunk_index.clear()
        self._fast_sinks.clear()

    @property
    def kept_bytes(self) -> int:
        """Bytes of the slices handed out and kept (reserved ones not used excluded)."""
        if self.arena is None:
            return 0
        return self.arena.kept_bytes - (self._fast.reserved_bytes() if self._fast is not None else 0)
