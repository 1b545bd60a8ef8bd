"""data="trace": the session's kernels, copies and sets as Chrome trace
events (writers/chrome_trace.py writes the file), opened by Perfetto or
chrome://tracing, in the layout of the installed Triton's Proton
(layout_39() decides which):

- Triton 3.6 to 3.8: complete events only, one process per GPU ("GPU 0"),
  one thread per stream ("stream 7"), each with its calling context in
  `args.call_stack` (["ROOT", scopes..., kernel]) and, added here,
  `call_path` and `correlation`.
- Triton 3.9 and newer: the same kernel events (`cat` "kernel"), plus, on
  the launching host thread (process "CPU"), a "scope" event per scope
  instance that launched work, from its first launch to the end of its last
  activity, or a "metric" event for a scope instance with metrics (also when
  it launched nothing: then from its enter to its exit); a "launch->kernel"
  flow from each launch to its first activity; CUDA-graph kernels on a
  thread "Graph: Stream N" with the captured scopes around them; and
  `baseTimeNanoseconds`, the epoch time of ts=0.
"""

from __future__ import annotations

import bisect
import ctypes
import os
import re
import threading
import time

import numpy as np

from ..writers.chrome_trace import complete_event, write_events
from .records import ACTIVITY_KINDS, NODE_KINDS


def layout_39() -> bool:
    """Whether traces take Triton 3.9's layout: the installed Triton is 3.9
    or newer (or there is none: the newest layout)."""
    try:
        import triton
    except ImportError:
        return True
    parts = [int(p) for p in re.findall(r"\d+", triton.__version__)[:2]]
    return tuple(parts) >= (3, 9)


def call_paths(nodes: np.ndarray, names: list[str]) -> list[tuple]:
    """Each node's names from the root down (the root's is empty)."""
    paths = [()] * len(nodes)
    for i in range(1, len(nodes)):  # parents come before children
        paths[i] = paths[int(nodes[i]["parent"])] + (names[nodes[i]["name"]],)
    return paths


def write_chrome(
    path: str, rows: np.ndarray, nodes: np.ndarray, names: list[str], scopes=(), clock_offset: int = 0
) -> str:
    """`scopes`: the phase's ScopeRecords; `clock_offset`: epoch ns minus the
    tracer's clock (clock_offset()). Both are used by the 3.9 layout only."""
    if layout_39():
        trace = _trace_39(rows, nodes, names, list(scopes), clock_offset)
    else:
        trace = _trace_36(rows, nodes, names)
    return write_events(path, trace)


def _trace_36(rows: np.ndarray, nodes: np.ndarray, names: list[str]) -> dict:
    paths = call_paths(nodes, names)
    origin = int(rows["start"].min()) if rows.size else 0
    events = []
    for row in rows[np.argsort(rows["start"], kind="stable")]:
        name, context = names[row["name"]], paths[row["node"]]
        events.append(
            complete_event(
                name,
                ACTIVITY_KINDS.get(int(row["kind"]), "kernel"),
                f"GPU {int(row['device'])}",
                f"stream {int(row['stream'])}",
                (int(row["start"]) - origin) / 1000.0,
                (int(row["end"]) - int(row["start"])) / 1000.0,
                {
                    "call_stack": ["ROOT", *context, name],
                    "call_path": "/".join(context) or "ROOT",
                    "correlation": int(row["correlation"]),
                },
            )
        )
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"origin_ns": origin}}


# -- host records of scope instances (3.9 layout) -----------------------------
# Kept only while a session with data="trace" is active (`recording`, set by
# the host session): scope.enter_scope / exit_scope call scope_entered /
# scope_exited, which add one ScopeRecord per instance to each such session.
# Their times are read on the tracer's clock (`clock`), the one of the
# launch times they are matched with, so that no offset error can move a
# launch into the wrong instance.
recording = False
_open = threading.local()  # .stack: this thread's open ScopeRecords


def _epoch_clock() -> int:
    return time.time_ns()


clock = _epoch_clock  # the tracer's clock (ns) while a trace is recorded: tracer_clock()


class ScopeRecord:
    """One scope instance on the host: node, OS thread id, enter and exit
    (on `clock`; exit 0 while open) and its metrics, raw keys."""

    __slots__ = ("node", "thread", "enter", "exit", "metrics")

    def __init__(self, node: int, thread: int, enter: int, metrics: dict | None):
        self.node, self.thread, self.enter, self.exit = node, thread, enter, 0
        self.metrics = dict(metrics) if metrics else None


def scope_entered(node: int, metrics: dict | None) -> None:
    from .runtime import active_sessions

    record = ScopeRecord(node, threading.get_native_id(), clock(), metrics)
    for session in active_sessions():
        if session.data == "trace":
            session.scope_records().append(record)
    stack = getattr(_open, "stack", None)
    if stack is None:
        stack = _open.stack = []
    stack.append(record)


def scope_exited(node: int, metrics: dict | None) -> None:
    stack = getattr(_open, "stack", None) or []
    # The scope may have been entered while no trace was recorded (no
    # record); inner records whose exit was not seen are dropped with it.
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth].node == node:
            record = stack[depth]
            del stack[depth:]
            record.exit = clock()
            if metrics:
                record.metrics = _merged(record.metrics or {}, metrics)
            return


def _merged(old: dict, new: dict) -> dict:
    from .metrics import split_metric

    merged = dict(old)
    for key, value in new.items():
        previous = merged.get(key)
        summed = split_metric(key)[1] == "inc" and not isinstance(value, str) and not isinstance(previous, str)
        merged[key] = previous + value if summed and previous is not None else value
    return merged


# -- the tracer's clock -------------------------------------------------------
# (library path getter on proton._host, timestamp function) per tracer name.
_CLOCKS = {
    "CUPTI": ("cupti_path", "cuptiGetTimestamp"),
    "ROCTracer": ("roctracer_path", "roctracer_get_timestamp"),
    "rocprofiler-sdk": ("rocprofiler_path", "rocprofiler_get_timestamp"),
}


def tracer_clock(host, tracer_name: str):
    """A function reading the tracer's clock (ns, as in its activity
    records) through the loaded tracer library's timestamp function; or,
    where that cannot be read, time.time_ns: the tracer's timestamps are
    then taken as epoch ns. Call it while the tracer is loaded and started
    (reading CUPTI's clock after it is detached would attach it again)."""
    try:
        getter, symbol = _CLOCKS[tracer_name]
        library = getattr(host, getter)()
        read = getattr(ctypes.CDLL(library), symbol) if library else None  # loaded: the same library
    except (KeyError, AttributeError, OSError):
        read = None
    if read is None:
        return _epoch_clock
    read.restype, read.argtypes = ctypes.c_int, [ctypes.POINTER(ctypes.c_uint64)]

    def now() -> int:
        value = ctypes.c_uint64()
        return value.value if read(ctypes.byref(value)) == 0 else 0

    return now if now() else _epoch_clock


def clock_offset(tracer_now) -> int:
    """Epoch ns (time.time_ns()) minus the tracer's clock, from the closest
    of 8 paired readings."""
    best = None
    for _ in range(8):
        before = time.time_ns()
        value = tracer_now()
        after = time.time_ns()
        if best is None or after - before < best[0]:
            best = (after - before, (before + after) // 2 - value)
    return best[1]


# -- Triton 3.9's layout ------------------------------------------------------
CPU = "CPU"  # the host threads' process
_HOST_SCOPE_KINDS = frozenset(k for k, name in NODE_KINDS.items() if name in ("scope", "nvtx"))
_CAPTURED = next((k for k, name in NODE_KINDS.items() if name == "captured_at"), -1)


def _host_tid(thread: int) -> str:
    # Thread 0: not known (no launch clock); the main thread's id is the pid.
    return f"thread {thread or os.getpid()}"


def _metric_text(value) -> str:
    if isinstance(value, str):
        return value
    try:
        return f"{float(value):.6f}"
    except (TypeError, ValueError):
        return str(value)


class _Span:
    """A time range in the tracer's clock, widened to what it covers."""

    __slots__ = ("begin", "end")

    def __init__(self, begin: int, end: int):
        self.begin, self.end = begin, max(begin, end)

    def cover(self, begin: int, end: int) -> None:
        self.begin, self.end = min(self.begin, begin), max(self.end, end)


class _Instances:
    """The host records by (node, thread) and by node, in enter order: which
    instance of a scope node a launch at a given time was made in."""

    def __init__(self, records: list):
        self.by_key: dict = {}
        for record in sorted(records, key=lambda r: r.enter):
            for key in ((record.node, record.thread), record.node):
                entry = self.by_key.setdefault(key, ([], []))
                entry[0].append(record.enter)
                entry[1].append(record)

    def find(self, node: int, thread: int, when: int):
        """The last instance of `node` entered before `when` on
        `thread` (any thread where that one has none): launches from a thread
        without scopes go under the main thread's. None: no record."""
        entry = self.by_key.get((node, thread)) if thread else None
        entry = entry or self.by_key.get(node)
        if not entry:
            return None
        return entry[1][max(0, bisect.bisect_left(entry[0], when) - 1)]


def _trace_39(rows: np.ndarray, nodes: np.ndarray, names: list[str], scopes: list, offset: int) -> dict:
    paths = call_paths(nodes, names)
    parents = nodes["parent"].tolist() if nodes.size else []
    kinds = nodes["kind"].tolist() if nodes.size else []
    chains: dict[int, list] = {}

    def chain(node: int) -> list:
        """The nodes from below the root down to `node`."""
        found = chains.get(node)
        if found is None:
            path, up = [], node
            while up != 0 and up not in chains:  # Python call paths run deep: no recursion
                path.append(up)
                up = parents[up]
            found = chains[node] = chains.get(up, []) + path[::-1]
        return found

    instances = _Instances(scopes)
    host_spans: dict = {}  # (node, host tid, ScopeRecord or None) -> _Span
    graph_spans: dict = {}  # (node, device, graph tid, correlation) -> _Span
    first_of_launch: dict = {}  # correlation -> its first activity's (launch, thread, device, tid, start)
    kernel_events, graph_threads = [], set()
    for row in rows[np.argsort(rows["start"], kind="stable")] if rows.size else ():
        node, start, end = int(row["node"]), int(row["start"]), int(row["end"])
        launch, thread, correlation = int(row["launch"]), int(row["thread"]), int(row["correlation"])
        device, name = int(row["device"]), names[row["name"]]
        context = chain(node)
        captured = next((i for i, n in enumerate(context) if kinds[n] == _CAPTURED), len(context))
        tid = f"stream {int(row['stream'])}"
        if captured < len(context):
            tid = f"Graph: Stream {int(row['stream'])}"
            graph_threads.add((device, tid))
        # Host scopes open at the launch, from its launch call to the
        # activity's end. Without the launch's time (ROCm; a graph's kernel
        # where the runtime has none) the activity, which may run long after
        # later instances began, goes to one event of the scope's node from
        # its start.
        anchor = launch or start
        for scope_node in context[:captured]:
            if kinds[scope_node] in _HOST_SCOPE_KINDS:
                record = instances.find(scope_node, thread, launch) if launch else None
                key = (scope_node, _host_tid(record.thread if record else thread), record)
                span = host_spans.get(key)
                if span is None:
                    host_spans[key] = _Span(anchor, end)
                else:
                    span.cover(anchor, end)
        # A graph's scopes, per graph launch, on the graph's thread.
        for scope_node in context[captured:]:
            if kinds[scope_node] in _HOST_SCOPE_KINDS or kinds[scope_node] == _CAPTURED:
                key = (scope_node, device, tid, correlation)
                span = graph_spans.get(key)
                if span is None:
                    graph_spans[key] = _Span(start, end)
                else:
                    span.cover(start, end)
        if launch and correlation not in first_of_launch:
            first_of_launch[correlation] = (launch, thread, device, tid, start)
        kernel_events.append(
            complete_event(
                name,
                ACTIVITY_KINDS.get(int(row["kind"]), "kernel"),
                f"GPU {device}",
                tid,
                start,
                end - start,
                {
                    "call_stack": ["ROOT", *paths[node], name],
                    "call_path": "/".join(paths[node]) or "ROOT",
                    "correlation": correlation,
                },
            )
        )

    # Scope instances with metrics: "metric" events instead of "scope" ones;
    # one that launched nothing spans its enter to its exit on the host, and
    # the enclosing scopes' events grow to hold it (so that they nest).
    metric_events = []
    for record in scopes:
        if not record.metrics:
            continue
        tid = _host_tid(record.thread)
        span = host_spans.pop((record.node, tid, record), None)
        if span is None:
            span = _Span(record.enter, record.exit or record.enter)
            for scope_node in chain(parents[record.node])[::-1]:
                outer = instances.find(scope_node, record.thread, record.enter)
                enclosing = host_spans.get((scope_node, _host_tid(outer.thread if outer else record.thread), outer))
                if enclosing is not None:
                    enclosing.cover(span.begin, span.end)
        metric_events.append((record, tid, span))

    events = kernel_events
    for (node, tid, _), span in host_spans.items():
        events.append(_scope_event(node, CPU, tid, span, names, nodes, paths, "scope"))
    for (node, device, tid, _), span in graph_spans.items():
        events.append(_scope_event(node, f"GPU {device}", tid, span, names, nodes, paths, "scope"))
    from .metrics import split_metric

    for record, tid, span in metric_events:
        metrics = {split_metric(key)[0]: _metric_text(value) for key, value in record.metrics.items()}
        event = _scope_event(record.node, CPU, tid, span, names, nodes, paths, "metric")
        event["name"] += ": " + ", ".join(f"<{key}, {value}>" for key, value in metrics.items())
        event["args"].update(metrics=metrics, scope_id=int(record.node))
        events.append(event)
    for correlation, (launch, thread, device, tid, start) in first_of_launch.items():
        flow = {"cat": "flow", "name": "launch->kernel", "id": correlation, "bp": "e"}
        events.append({"ph": "s", **flow, "pid": CPU, "tid": _host_tid(thread), "ts": launch})
        events.append({"ph": "f", **flow, "pid": f"GPU {device}", "tid": tid, "ts": start})

    # Times so far in the tracer's clock (ns); written in µs from the first.
    origin = min((event["ts"] for event in events), default=None)
    for event in events:
        event["ts"] = (event["ts"] - origin) / 1000.0
        if "dur" in event:
            event["dur"] = event["dur"] / 1000.0
            if event.get("cat") in ("scope", "metric"):
                # A scope ends with its last kernel, to the ns; in µs floats
                # ts + dur can round below the kernel's end: 1 fs of margin
                # keeps every kernel inside its scope for viewers.
                event["dur"] += 1e-6
    events.sort(key=lambda event: (event["ts"], -event.get("dur", 0.0)))
    names_of_threads = [
        {"ph": "M", "name": "thread_name", "pid": f"GPU {device}", "tid": tid, "args": {"name": tid}}
        for device, tid in sorted(graph_threads)
    ]
    return {
        "traceEvents": names_of_threads + events,
        "displayTimeUnit": "ns",
        "baseTimeNanoseconds": origin + offset if origin is not None else time.time_ns(),
        "otherData": {"origin_ns": origin or 0},
    }


def _scope_event(node: int, pid: str, tid: str, span: _Span, names, nodes, paths, cat: str) -> dict:
    name = names[nodes[node]["name"]]
    return complete_event(
        name, cat, pid, tid, span.begin, span.end - span.begin, {"call_stack": ["ROOT", *paths[node]]}
    )
