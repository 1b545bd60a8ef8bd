"""The profile tree (`.hatchet`), laid out as Triton's Proton writes it, so
that its viewer and ours read the same numbers: a list of a `ROOT` node and a
device-info object; each node {"frame": {"name", "type"}, "metrics": {...},
"children": [...]}. This module makes the nodes, declares the root's
metrics and writes the file for both profilers: host sessions build their
tree in host/activity_tree.py; instrumentation sessions' tree, built here,
has under ROOT one node per kernel, under it the scopes as they nest.

Metrics are each node's own (exclusive), as in Triton's Proton: viewers add
a node's descendants to get its inclusive value. So a scope's own cycles are
its duration less its child scopes' durations, and a kernel's are the warps'
lifetimes (entry to return) less its top-level scopes:
  cycles             cycles over all warps, CTAs and launches
  normalized_cycles  cycles / (recording warps x launches): one warp, one launch
  time (ns)          the same as cycles, in global-timer nanoseconds
  count              completed scope instances (launches, for a kernel)
  event time (ns)    an asynchronous event's node (proton.language
                     start_event/end_event): its pairs' durations; its
                     cycles and time (ns) hold the same (cycles on the
                     launch's measured SM clock), taken from its parent's
                     own values as a child scope's are
  device_id, device_type   labels ("0", "CUDA" or "HIP")
  <value name>       a value's node (proton.language.record_value): the sum
                     of the values recorded there ("value <name>" where the
                     name is one of the metrics above); count the records
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..contract.events import LaunchEvents

#: Strings stored with the metrics, never summed.
LABELS = ("device_id", "device_type")


def tree_node(name: str, kind: str, metrics: dict | None = None) -> dict:
    """A tree node: a frame of `kind` ("function", "region", "kernel", ...)."""
    return {"frame": {"name": name, "type": kind}, "metrics": {} if metrics is None else metrics, "children": []}


def declare_metrics_on_root(root: dict, not_summed: frozenset = frozenset()) -> None:
    """Hatchet (and so Triton's viewer) sums into inclusive values only the
    metrics the root holds: as Triton's Proton writes it, the root carries a
    zero of every numeric metric found below it, except exclusive metrics and
    properties (`not_summed`), which are not meant to add up."""
    found: dict[str, int | float] = {}

    def walk(node):
        for key, value in node["metrics"].items():
            if (
                key not in LABELS
                and key not in not_summed
                and isinstance(value, (int, float))
                and not isinstance(value, bool)
            ):
                found.setdefault(key, 0)
        for child in node["children"]:
            walk(child)

    for child in root["children"]:
        walk(child)
    root["metrics"] = {**found, **root["metrics"]}


def inclusive(node: dict) -> dict:
    """A copy of `node` whose numeric metrics are summed over its subtree
    (what the viewers show as "<metric> (inc)"); labels and strings not."""
    children = [inclusive(child) for child in node.get("children", [])]
    metrics = dict(node.get("metrics", {}))
    for child in children:
        for key, value in child["metrics"].items():
            if key not in LABELS and isinstance(value, (int, float)) and not isinstance(value, bool):
                if isinstance(metrics.get(key, 0), (int, float)):
                    metrics[key] = metrics.get(key, 0) + value
    return {**node, "metrics": metrics, "children": children}


def write_tree(path: str, tree: list, *, indent: int | None = None) -> str:
    """Writes [root, device info] as JSON (compact without `indent`); returns the absolute path."""
    with open(path, "w") as out:
        if indent is None:
            json.dump(tree, out, separators=(",", ":"))
        else:
            json.dump(tree, out, indent=indent)
    return os.path.abspath(path)


def _scope_sums(ev: LaunchEvents, n: int, at_once: int = 1 << 18):
    """Instances, cycles and ns per scope id, a slice of events at a time:
    np.add.at adds in event order like one bincount over whole columns
    (the same float sums), without event-sized temporaries (bincount
    copies its ids to int64; ev.start_ns would cache 16 bytes per event)."""
    count, cycles, ns = np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n)
    for lo in range(0, ev.num_events, at_once):
        hi = lo + at_once
        scope, row = ev.scope[lo:hi], ev.row[lo:hi]
        start, end = ev.start_cycles[lo:hi], ev.end_cycles[lo:hi]
        np.add.at(count, scope, 1)
        np.add.at(cycles, scope, (end - start).astype(np.float64))
        np.add.at(ns, scope, ev.ns_at(end, row) - ev.ns_at(start, row))
    return count, cycles, ns


def build(
    launches: list[LaunchEvents], devices: dict | None = None, device_type: str = "CUDA", unrecorded: dict | None = None
) -> list:
    """The tree; `unrecorded` (the session report's kernels launched without
    records) adds a node per such kernel, "<kernel> [no records: <why>]",
    counting its launches, after the recorded kernels."""
    kernels: dict[str, dict] = {}
    for ev in launches:
        k = kernels.setdefault(ev.kernel, {"warps": 0, "cycles": 0, "ns": 0.0, "launches": 0, "scopes": {}})
        k["warps"] += ev.warp_ids.size
        k["launches"] += 1
        k["cycles"] += int(ev.warp_cycles.sum())
        k["ns"] += float((ev.warp_end_ns - ev.warp_begin_ns).sum())
        n = len(ev.scope_names)
        count, cycles, ns = _scope_sums(ev, n)
        # Events and marks count their pairs and instants. An event's node
        # measures its pairs' durations (cycles through the launch's clock,
        # as the Chrome trace's): Triton's Proton puts cycles there. They
        # leave the parent's own values as a child's do, so that the
        # parent's inclusive total stays what it measured.
        a = ev.asynchronous
        count = count + np.bincount(a.event_id, minlength=n) + np.bincount(a.mark_id, minlength=n)
        count = count + np.bincount(a.value_id, minlength=n)
        event_span = np.maximum(a.end_ns - a.start_ns, 0)
        event_ns = np.bincount(a.event_id, weights=event_span, minlength=n)
        event_cycles = np.bincount(a.event_id, weights=np.rint(event_span * ev.clock_ghz), minlength=n)
        value_sum = np.bincount(a.value_id, weights=a.value, minlength=n)
        is_value = np.zeros(n, dtype=bool)
        is_value[a.value_id] = True
        # Scopes are keyed by their path of names, so that launches (and
        # compilations) agree on the same node.
        for sid in range(n):
            path = _path(ev, sid)
            node = k["scopes"].setdefault(path, {"cycles": 0.0, "ns": 0.0, "count": 0, "event_ns": 0.0})
            node["cycles"] += cycles[sid] + event_cycles[sid]
            node["ns"] += ns[sid] + event_ns[sid]
            node["count"] += int(count[sid])
            node["event_ns"] += float(event_ns[sid])
            if is_value[sid]:
                node["value"] = node.get("value", 0.0) + float(value_sum[sid])

    root = tree_node("ROOT", "function", {"cycles": 0, "normalized_cycles": 0.0})
    for name, k in kernels.items():
        warps = max(k["warps"], 1)
        kernel = _measured(name, "function", k["cycles"], k["ns"], k["launches"], device_type)
        by_path = {(): kernel}
        for path in sorted(k["scopes"], key=len):
            s = k["scopes"][path]
            parent = by_path.get(path[:-1], kernel)
            scope = _measured(path[-1], "region", s["cycles"], s["ns"], s["count"], device_type)
            if s["event_ns"]:
                scope["metrics"]["event time (ns)"] = s["event_ns"]
            if "value" in s:
                scope["metrics"][_value_metric(path[-1])] = s["value"]
            parent["children"].append(scope)
            by_path[path] = scope
        _make_exclusive(kernel, warps)
        root["children"].append(kernel)
    for name, info in (unrecorded or {}).items():
        label = f"{name} [no records: {info.get('short', 'none recorded')}]"
        root["children"].append(_measured(label, "function", 0, 0.0, int(info["launches"]), device_type))
    declare_metrics_on_root(root)
    return [root, devices or {}]


def write(
    path: str,
    launches: list[LaunchEvents],
    devices: dict | None = None,
    device_type: str = "CUDA",
    *,
    unrecorded: dict | None = None,
) -> list[dict]:
    """An instrumentation session's tree of `launches`, written to `path`; returns it."""
    tree = build(launches, devices, device_type, unrecorded)
    write_tree(path, tree, indent=1)
    return tree


#: Metric names a value's column must not take.
_RESERVED = {"cycles", "normalized_cycles", "time (ns)", "count", "device_id", "device_type", "event time (ns)"}


def _value_metric(name: str) -> str:
    """The column of a value's sum: its name, unless a built-in metric has it."""
    return f"value {name}" if name in _RESERVED else name


def _path(ev: LaunchEvents, sid: int) -> tuple[str, ...]:
    names = []
    while sid >= 0:
        names.append(ev.scope_names[sid])
        sid = int(ev.scope_parents[sid])
    return tuple(reversed(names))


def _measured(name, kind, cycles, ns, count, device_type) -> dict:
    # The measured (inclusive) values; _make_exclusive turns them into the node's own.
    metrics = {"cycles": float(cycles), "time (ns)": float(ns), "count": int(count)}
    return tree_node(name, kind, {**metrics, "device_id": "0", "device_type": device_type})


def _make_exclusive(node: dict, warps: int) -> dict:
    """Each node keeps its duration less its children's (never below 0:
    children measured in other warps can overlap), normalized per warp.
    Returns what the node measured."""
    metrics = node["metrics"]
    measured = {metric: metrics[metric] for metric in ("cycles", "time (ns)")}
    children = [_make_exclusive(child, warps) for child in node["children"]]
    for metric, value in measured.items():
        metrics[metric] = max(value - sum(child[metric] for child in children), 0.0)
    metrics["cycles"] = int(round(metrics["cycles"]))
    metrics["normalized_cycles"] = metrics["cycles"] / warps
    return measured
