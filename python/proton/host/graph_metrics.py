"""Metrics recorded while a CUDA graph is captured, attributed to each of
its replays, as Triton's Proton does from its 3.9 line.

A scope's metrics or a launch_metadata metric recorded during a capture
belong to the graph, not to the moment of capture. Each replay made while
the session is active adds them once more under the replay's context, at
<replay context>/<captured_at>/<capture context>, beside the replay's
kernels; a replay while the session is inactive adds nothing.
- Host values (numbers, lists) are kept with the graph and added on the host
  at each replay.
- Device tensors: the add captured in the graph (device_metrics.py) sums into
  slots of the graph's own. Right after each replay, on the replay's stream,
  those sums are added into the slots of the replay's context and the
  graph's slots are set back to zero (after an inactive replay, only set to
  zero). These kernels are the profiler's own work: no session sees them.

Only captures made through torch.cuda.CUDAGraph are known
(device/graph_events.py). A metric recorded in any other capture keeps the
plain meaning: its value is added where it was captured, at every replay.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..device import graph_events
from .metrics import _sum


@dataclass(eq=False)
class CapturedMetrics:
    """What one capture of a graph recorded for one session. Places are a
    scope node ("scope") or a (launch node, kernel name) pair ("kernel")."""

    graph: object = field(repr=False)
    host: dict = field(default_factory=dict)  # (where, place, name) -> (value, summed)
    device: dict = field(default_factory=dict)  # device slot key -> (where, place, name)

    def add_host(self, where: str, place, name: str, value, summed: bool) -> None:
        """Keeps a host value for the replays."""
        key = (where, place, name)
        previous = self.host.get(key, (None, summed))[0]
        self.host[key] = (_sum(previous, value) if summed else value, summed)

    def device_key(self, where: str, place, name: str) -> tuple:
        """The slot key of a device metric captured in this graph."""
        key = ("captured", id(self.graph), where, place, name)
        self.device[key] = (where, place, name)
        return key


class GraphMetrics:
    """One host session's metrics captured in CUDA graphs, and the replays
    that attribute them; a listener of device/graph_events."""

    def __init__(self, on_replay):
        self.graphs: dict[int, CapturedMetrics] = {}  # id(CUDAGraph) -> what its capture recorded
        self.listening = False
        self._on_replay = on_replay  # called with a replayed graph's CapturedMetrics

    def listen(self) -> None:
        """Listens to torch's graphs, once torch is imported (called at the
        session's start and before each metric is added, until it does)."""
        if not self.listening:
            torch = sys.modules.get("torch")
            if torch is not None:
                self.listening = graph_events.subscribe(self, torch)

    def close(self) -> None:
        graph_events.unsubscribe(self)
        self.listening = False
        self.graphs.clear()

    def capturing(self) -> CapturedMetrics | None:
        """What the graph this thread is capturing has recorded so far, or
        None when no known capture is under way."""
        graph = graph_events.capturing_graph() if self.listening else None
        if graph is None:
            return None
        record = self.graphs.get(id(graph))
        if record is None or record.graph is not graph:
            record = self.graphs[id(graph)] = CapturedMetrics(graph)
        return record

    # -- graph_events listener -------------------------------------------------
    def capture_began(self, graph) -> None:
        self.graphs.pop(id(graph), None)  # captured anew: the earlier capture's metrics are gone with it

    def capture_ended(self, graph) -> None:
        pass

    def replayed(self, graph) -> None:
        record = self.graphs.get(id(graph))
        if record is not None and record.graph is graph and (record.host or record.device):
            self._on_replay(record)


def grafted(host, replay_node: int, where: str, place):
    """`place` (a capture's node, or its (node, kernel) pair) below the
    replay's context."""
    if where == "kernel":
        node, kernel = place
        return host.graft_captured(replay_node, node), kernel
    return host.graft_captured(replay_node, place)
