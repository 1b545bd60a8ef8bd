"""What an instrumentation session notes of each launch (Triton's launch
hook, InstrumentationSession._on_launch): its kernel and compiled variant,
the host scopes open, the buffer it got and whether it is kept (launches.py
says the policy); and, at finalize, the names kernels are reported by and
the kernels launched without records, with the reason."""

from __future__ import annotations

from ..compiling import instrumentation_state, stage_hook
from ..contract import kernel_metadata
from . import launches as retention
from .launches import KeptLaunch


class LaunchBookkeeping:
    """InstrumentationSession's bookkeeping of launches (its state is made
    in InstrumentationSession.__init__)."""

    def _on_launch(self, launch_metadata) -> None:
        local = self._local
        pending = getattr(local, "pending", None)
        local.pending = None
        data = getattr(launch_metadata, "data", None) or {}
        name = data.get("name", "kernel")
        handle = data.get("function")
        kernel_id = kernel_metadata.LAUNCHED.get(handle) if handle is not None else None
        if pending is not None and handle is not None and kernel_id is None:
            # This kernel records nothing: the buffer was another launch's, which failed.
            self._unlaunched_buffer(pending)
            pending = None
        if pending is None:  # a kernel without profile_scratch: it records nothing
            if self.active and not instrumentation_state.running_own_kernels():
                self._unrecorded[name] = self._unrecorded.get(name, 0) + 1
            return
        piece, stream, where = pending
        if self.launch_metadata_names:
            name = _launch_metadata_name(launch_metadata, name)
        key = self._variants.get(handle)
        if key is None:
            kernel = retention.launching_kernel()
            key = (name, retention.describe_variant(kernel) if kernel is not None else "")
            if handle is not None:
                self._variants[handle] = key
        launch = self._numbered(name, key, piece, stream, self._host_scopes(), kernel_id)
        if where == "graph":
            # Replays write this memory for as long as the graph lives (cuda_graphs.py).
            launch.graph = self.graphs.adopt(piece)
            if launch.graph is not None:
                launch.graph.launches.append(launch)
            self.captured.append(launch)
        else:
            if where == "sink":
                self.retention.count(key, "budget")
            else:
                self._offer(key, launch, self.retention.max_launches is None and self.benchmarks.inside())
            self._note_variant(handle, name, key, kernel_id)  # its next launches may take the fast path

    def _numbered(self, name: str, key: tuple, piece, stream, call_stack: tuple, kernel_id) -> KeptLaunch:
        """A launch of kernel `name`, variant `key`, on `piece`, with its
        launch numbers (per variant, and among all launches of the session)."""
        index, sequence = self._launch_numbers(key)
        return KeptLaunch(
            name,
            index,
            piece,
            sequence,
            variant=key[1],
            call_stack=call_stack,
            kernel_id=kernel_id,
            stream=stream,
        )

    def _offer(self, key: tuple, launch: KeptLaunch, benchmark: bool) -> bool:
        """Offers `launch` to the retention policy; the slice of whichever
        launch it lets go goes back to the arena. Whether `launch` is kept."""
        released = self.retention.offer(key, launch, self.active, benchmark)
        if released is not None:
            self.arena.give_back(released.buffer, released.stream)
        return released is not launch

    def _host_scopes(self) -> tuple:
        """The host scopes (proton.scope) open on this thread, outermost first."""
        host = self._host
        if host is None or host.scope_depth() == 0:
            return ()
        return tuple(host.scope_stack())

    @property
    def kept(self) -> list[KeptLaunch]:
        """The kept launches of the current phase, in launch order (copies of
        graph replays included; a captured launch's own buffer where none of
        its graph's replays could be copied: it holds the last replay)."""
        self._drain_fast()
        replayed = [k for k in self.captured if k.graph and k.graph.replays > 0 and not k.graph.copied]
        return sorted(self.retention.kept() + replayed, key=lambda k: k.sequence)

    def _kernel_names(self) -> dict[tuple, str]:
        """(kernel, variant) -> the name the outputs use (launches.variant_names)."""
        variants: dict[str, set] = {}
        for kernel, variant in self.launch_counts:  # every variant seen has launched
            variants.setdefault(kernel, set()).add(variant)
        return retention.variant_names(variants)

    def _unrecorded_kernels(self) -> dict:
        """Kernels launched while the session was active without a profile
        buffer: launches, the reason, and the reason in a few words."""
        compiled_plain = self.hook.compiled_without_records | stage_hook.LOADED_WITHOUT_RECORDS
        out = {}
        for kernel, count in self._unrecorded.items():
            if kernel in self.hook.override_variant_missing:
                reason, short = (
                    "the override directory holds TTGIR files of other compiled variants of it only (other "
                    "num_warps, num_stages, ...): dump again with proton-dump-ttgir running the same program",
                    "no override file for this variant",
                )
            elif kernel in compiled_plain:
                reason, short = (
                    "compiled by this session with nothing to record (no Proton markers, nothing the mode instruments)",
                    "nothing to record",
                )
            else:
                reason, short = (
                    "not compiled through this session: compiled before it started (Triton's caches) or in "
                    "another process (such as Inductor's compile workers), or with nothing to record",
                    "not compiled by the session",
                )
            out[kernel] = {"launches": count, "reason": reason, "short": short}
        return out


def _launch_metadata_name(launch_metadata, name: str) -> str:
    """The "name" a kernel's launch_metadata function gives this launch
    (Triton's Proton's hook="triton"), else `name`."""
    if not getattr(launch_metadata, "extras", None):
        return name  # no launch_metadata function: nothing to evaluate
    named = launch_metadata.get().get("name")
    return named if isinstance(named, str) and named else name
