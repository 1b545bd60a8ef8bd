"""Every replay of a CUDA graph recorded (InstrumentationSession's handling
of GraphTracker.on_replay; cuda_graphs.py says what is tracked).

Right after torch.cuda.CUDAGraph.replay returns, each launch captured in the
graph has its profile buffer copied into a fresh arena slice, on the stream
the graph was replayed on: the copy runs after the replay's kernels and
before the next replay overwrites the buffer, the host neither allocates nor
waits, and the copy is kept like any launch (retention policy, budget).
The copy is decoded as a launch of its own ("kernel #n"), with the host
scopes that were open at capture."""

from __future__ import annotations

from ..device import memory as device_memory
from . import cuda_graphs
from .launches import KeptLaunch


class GraphReplays:
    """InstrumentationSession's recording of graph replays (its state is
    made in InstrumentationSession.__init__ and cuda_graphs.GraphTracker)."""

    def _on_graph_replay(self, record) -> None:
        """Copies the buffers of the graph `record` just replayed. Never
        raises into the program's replay: a failed copy is reported."""
        if not record.launches:
            return
        torch = self._torch
        if torch is None or cuda_graphs.stream_capturing(torch):
            return  # a replay inside another capture: the captured buffer keeps it
        try:
            stream = _current_stream(torch)
            copied = [self._copy_replay(launch, stream) for launch in record.launches]
        except Exception as error:  # noqa: BLE001 - the program's replay must go on
            self.replay_errors.append(f"graph {record.number}, replay {record.total_replays}: {error}")
            return
        if any(copied):
            record.copied += 1

    def _copy_replay(self, captured: KeptLaunch, stream) -> bool:
        """One captured launch's buffer into a kept launch of its own;
        False if the policy does not keep it (counted as for any launch)."""
        key = (captured.kernel, captured.variant)
        if not self.active:
            self.retention.count(key, "inactive")
            return False
        piece = self._arena().take(captured.buffer.nbytes, stream)
        if piece is None:
            self.retention.count(key, "budget")
            return False
        device_memory.memory().copy_async(piece, captured.buffer, stream)
        launch = self._numbered(captured.kernel, key, piece, stream, captured.call_stack, captured.kernel_id)
        return self._offer(key, launch, False)

    def _graph_notes(self, names: dict) -> list[str]:
        """What the report says of captured launches whose replays were copied."""
        notes = []
        for kept in self.captured:
            graph = kept.graph
            if graph is None or not graph.copied:
                continue
            kernel = names[(kept.kernel, kept.variant)]
            plural = "s" if graph.replays != 1 else ""
            note = f"{kernel} launch {kept.index}, captured in graph {graph.number}: {graph.replays} replay{plural}"
            if graph.copied == graph.replays:
                note += ", each recorded as a launch of its own"
            else:
                note += f", {graph.copied} recorded as launches of their own (the others are counted as not kept)"
            notes.append(note)
        return notes


def _current_stream(torch):
    """The handle of the current stream (where CUDAGraph.replay launched)."""
    current = getattr(torch.cuda, "current_stream", None)
    return current().cuda_stream if current is not None else 0
