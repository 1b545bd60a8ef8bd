"""device/graph_events.py: one wrapping of torch's CUDAGraph for every
listener, restored by the last one out, whatever the order; the graph a
thread captures is known from a successful capture_begin until capture_end
returns or raises."""

import types

import pytest

from proton.device import graph_events


class Listener:
    def __init__(self):
        self.events = []

    def capture_began(self, graph):
        self.events.append(("began", graph))

    def capture_ended(self, graph):
        self.events.append(("ended", graph))

    def replayed(self, graph):
        self.events.append(("replayed", graph))


def fake_torch(fail_end=False):
    class CUDAGraph:
        def capture_begin(self):
            pass

        def capture_end(self):
            if fail_end:
                raise RuntimeError("operation not permitted when stream is capturing")

        def replay(self):
            pass

    return types.SimpleNamespace(cuda=types.SimpleNamespace(CUDAGraph=CUDAGraph))


def test_listeners_share_one_wrapping_restored_by_the_last_one_out():
    torch = fake_torch()
    originals = {name: getattr(torch.cuda.CUDAGraph, name) for name in ("capture_begin", "capture_end", "replay")}
    first, second = Listener(), Listener()
    assert graph_events.subscribe(first, torch) and graph_events.subscribe(second, torch)
    graph = torch.cuda.CUDAGraph()
    graph.capture_begin()
    assert graph_events.capturing_graph() is graph
    graph.capture_end()
    assert graph_events.capturing_graph() is None
    graph_events.unsubscribe(first)  # the first out leaves the wrapping to the other
    graph.replay()
    assert first.events == [("began", graph), ("ended", graph)]
    assert second.events == [("began", graph), ("ended", graph), ("replayed", graph)]
    graph_events.unsubscribe(second)
    assert {name: getattr(torch.cuda.CUDAGraph, name) for name in originals} == originals


def test_a_capture_that_fails_at_its_end_is_over():
    torch = fake_torch(fail_end=True)
    listener = Listener()
    graph_events.subscribe(listener, torch)
    try:
        graph = torch.cuda.CUDAGraph()
        graph.capture_begin()
        with pytest.raises(RuntimeError, match="not permitted"):
            graph.capture_end()
        assert graph_events.capturing_graph() is None
        assert listener.events == [("began", graph), ("ended", graph)]
    finally:
        graph_events.unsubscribe(listener)


def test_no_cuda_graph_no_listener():
    listener = Listener()
    assert not graph_events.subscribe(listener, types.SimpleNamespace())
    assert listener not in graph_events._listeners
