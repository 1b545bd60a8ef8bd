"""CUDA graph captures and replays as the profiler's sessions need to see
them: torch.cuda.CUDAGraph's capture_begin, capture_end and replay are
wrapped once, for every listener (instrumentation sessions' graph trackers,
host sessions' graph metrics), and restored when the last listener leaves,
so that sessions opened and closed in any order never undo each other's
wrapping.

A listener has capture_began(graph), capture_ended(graph) and
replayed(graph); replayed is called right after the replay was queued, on
the replaying thread. `capturing_graph()` is the graph this thread is
capturing through torch.cuda.CUDAGraph (None otherwise, and for captures
made some other way).
"""

from __future__ import annotations

import threading

_listeners: list = []
_patched: list = []  # (class, method name, original)
_thread = threading.local()  # .graph: the graph this thread is capturing


def capturing_graph():
    """The torch.cuda.CUDAGraph this thread is capturing, or None."""
    return getattr(_thread, "graph", None)


def subscribe(listener, torch) -> bool:
    """Adds `listener` (once) and wraps `torch`'s CUDAGraph if it is not
    wrapped yet; False if this torch has no CUDAGraph (the listener is
    then not added)."""
    if not _patched and not _patch(torch):
        return False
    if listener not in _listeners:
        _listeners.append(listener)
    return True


def unsubscribe(listener) -> None:
    """Removes `listener`; the last one out restores CUDAGraph."""
    if listener in _listeners:
        _listeners.remove(listener)
    if not _listeners:
        for cls, name, original in reversed(_patched):
            setattr(cls, name, original)
        _patched.clear()
        _thread.graph = None


def _patch(torch) -> bool:
    cls = getattr(getattr(torch, "cuda", None), "CUDAGraph", None)
    if cls is None:
        return False

    def began(graph):
        _thread.graph = graph
        for listener in list(_listeners):
            listener.capture_began(graph)

    def ended(graph):
        _thread.graph = None
        for listener in list(_listeners):
            listener.capture_ended(graph)

    def replayed(graph):
        for listener in list(_listeners):
            listener.replayed(graph)

    # A capture is known once capture_begin has succeeded, and over once
    # capture_end has returned or raised (a capture that failed is over too).
    for name, after, always in (
        ("capture_begin", began, False),
        ("capture_end", ended, True),
        ("replay", replayed, False),
    ):
        if getattr(cls, name, None) is not None:
            setattr(cls, name, _wrapped(cls, name, after, always))
    return True


def _wrapped(cls, name: str, after, always: bool):
    """`cls.name` followed by `after(graph)`: on success, or `always`."""
    original = getattr(cls, name)
    _patched.append((cls, name, original))

    def wrapped(graph, *args, **kwargs):
        try:
            result = original(graph, *args, **kwargs)
        except BaseException:
            if always:
                after(graph)
            raise
        after(graph)
        return result

    wrapped.__wrapped__ = original
    return wrapped
