"""What api.py asks of an open session, whichever profiler holds it: host
sessions (proton.host.session, kernel launches through a tracer) and the
instrumentation session (proton.recording.instrumentation_session, records inside kernels)
both implement ProfilerSession and return a Report from finalize."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field


@dataclass
class Report:
    """What a session's finalize read and wrote; each profiler's report adds
    its own counts."""

    name: str
    files: dict = field(default_factory=dict)  # output kind -> path (the last part's)
    warnings: list = field(default_factory=list)
    parts: list = field(default_factory=list)  # periodic flushing: one {"phase", "files"} per part written

    def summary(self) -> str:
        return "\n".join([f"proton: session {self.name!r}", *self.files_summary()])

    def files_summary(self) -> list[str]:
        """The summary's last lines: the parts and the files written."""
        lines = []
        if len(self.parts) > 1:
            lines.append(
                f"  wrote {len(self.parts)} parts, phases {self.parts[0]['phase']} to "
                f"{self.parts[-1]['phase']}; the last:"
            )
        lines += [f"  wrote {path}" for path in self.files.values()]
        return lines


class ProfilerSession(abc.ABC):
    """An open profiling session, as proton.start/activate/deactivate/finalize
    drive it."""

    #: Finalized after the other sessions: its finalize copies profile
    #: buffers from the GPU, which an open host session would record.
    reads_gpu_buffers_at_finalize: bool = False

    id: int
    name: str

    @abc.abstractmethod
    def activate(self) -> None:
        """Records again."""

    @abc.abstractmethod
    def deactivate(self) -> None:
        """Stops recording; the data stays until finalize."""

    def flush(self) -> None:
        """proton.deactivate(flushing=True): takes what is recorded so far
        into the current phase (nothing to do where phases are complete
        when they end)."""

    @abc.abstractmethod
    def choose_output(self, kind: str) -> None:
        """finalize's output_format: "tree", "tree_msgpack" or
        "chrome_trace" instead of the session's own outputs; raises
        ProfilerError, before anything closes, for one it cannot write."""

    @abc.abstractmethod
    def finalize(self) -> Report:
        """Stops recording, writes the outputs and closes the session."""

    # -- phases (proton.data) ------------------------------------------------
    @abc.abstractmethod
    def advance_phase(self) -> int:
        """Ends the current phase; returns the next one's number."""

    @abc.abstractmethod
    def is_phase_complete(self, phase: int) -> bool:
        """Whether no more records can come to `phase`."""

    @abc.abstractmethod
    def phase_tree(self, phase: int) -> list:
        """The phase's .hatchet tree (proton.data.get)."""

    @abc.abstractmethod
    def clear(self, phase: int, up_to: bool = False) -> None:
        """Lets go of the phase's data (of every phase up to it)."""
