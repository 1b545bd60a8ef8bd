"""Instrumented launches captured in CUDA graphs.

A captured launch gets its profile buffer once, at capture, from the
profiler's own memory; every replay of the graph runs the kernel on that
same buffer. So that each replay is recorded, the session copies a
replayed graph's buffers into arena slices right after the replay, on the
replay's stream (graph_replays.py): no host allocation and no wait, and
each copy is decoded as a launch of its own (docs/options.md, "CUDA
graphs"). What a replay cannot keep (the arena is full, the session is
deactivated) is counted as for any launch. Where no replay was copied
(every one past the budget), the captured buffer holds the last replay,
and that is decoded; a graph never replayed during the session has no
records and the report says so. The buffer stays referenced by the graph
object, so that replays after the session ended keep writing into memory
that nothing else was given.

While a session is open, it listens to torch.cuda.CUDAGraph's captures and
replays (device/graph_events.py) to know which graph a launch is captured
into and when each graph is replayed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..device import graph_events

#: The attribute of a CUDAGraph object that holds its captured profile buffers.
BUFFERS_ATTRIBUTE = "_proton_profile_buffers"

#: Buffers captured in a graph the tracker did not see begin (a capture made
#: outside torch.cuda.CUDAGraph): kept for the life of the process, since the
#: graph may be replayed at any time.
_ORPHAN_BUFFERS: list = []


@dataclass
class CapturedGraph:
    number: int  # the graph's number among the session's graphs, from 0
    replays: int = 0  # replays since the session last wrote its records
    total_replays: int = 0  # replays while the session was open
    graph: object = field(default=None, repr=False)
    launches: list = field(default_factory=list, repr=False)  # its captured KeptLaunches, in capture order
    copied: int = 0  # replays since the last write whose buffers were copied (each recorded)


def stream_capturing(torch) -> bool:
    """Whether the current stream is being captured into a CUDA graph."""
    capturing = getattr(torch.cuda, "is_current_stream_capturing", None)
    return capturing is not None and bool(capturing())


class GraphTracker:
    def __init__(self):
        self.capturing: CapturedGraph | None = None
        self.graphs: dict[int, CapturedGraph] = {}  # id(CUDAGraph) -> its record
        self._installed = False
        self.on_replay = None  # called with a replayed graph's record, right after the replay

    def install(self, torch) -> None:
        """Listens to torch's CUDAGraph captures and replays (once; called
        per launch until it is)."""
        if not self._installed:
            self._installed = graph_events.subscribe(self, torch)

    def uninstall(self) -> None:
        """Stops listening and lets the graphs go (the records keep their
        counts; each graph keeps its buffers)."""
        graph_events.unsubscribe(self)
        self._installed = False
        self.capturing = None
        for record in self.graphs.values():
            record.graph = None
        self.graphs.clear()

    def _record(self, graph) -> CapturedGraph:
        record = self.graphs.get(id(graph))
        if record is None or record.graph is not graph:
            record = self.graphs[id(graph)] = CapturedGraph(len(self.graphs), graph=graph)
        return record

    def capture_began(self, graph) -> None:
        self.capturing = self._record(graph)
        self.capturing.replays = self.capturing.total_replays = self.capturing.copied = 0  # captured anew
        self.capturing.launches = []

    def capture_ended(self, graph) -> None:
        self.capturing = None

    def replayed(self, graph) -> None:
        record = self.graphs.get(id(graph))
        if record is not None and record.graph is graph:
            record.replays += 1
            record.total_replays += 1
            if self.on_replay is not None:
                self.on_replay(record)

    def adopt(self, buffer) -> CapturedGraph | None:
        """Ties a buffer allocated during capture to the graph being
        captured (None: a capture this tracker did not see begin)."""
        record = self.capturing
        graph = record.graph if record is not None else None
        try:
            held = getattr(graph, BUFFERS_ATTRIBUTE, None) if graph is not None else None
            if graph is not None and held is None:
                held = []
                setattr(graph, BUFFERS_ATTRIBUTE, held)
            (held if held is not None else _ORPHAN_BUFFERS).append(buffer)
        except (AttributeError, TypeError):
            _ORPHAN_BUFFERS.append(buffer)
        return record
