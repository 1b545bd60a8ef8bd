"""The per-scope cycle tree in Hatchet's literal JSON format (a list of root
nodes, each {"frame": {"name", "type"}, "metrics": {...}, "children": [...]}),
readable by llnl-hatchet's GraphFrame.from_literal and by the viewer.

One root per kernel; below it the scopes as they nest. Metrics per node:
  cycles             sum of the scope's durations over all warps, CTAs and launches
  normalized_cycles  cycles / (recording warps x launches): the average time
                     one warp spent in the scope during one launch
  count              completed scope instances
  time (ns)          the same sum as cycles, in global-timer nanoseconds
For the kernel node, cycles are the warps' whole lifetimes (entry to return).
"""

from __future__ import annotations

import json

import numpy as np

from .decode import LaunchEvents


def build(launches: list[LaunchEvents]) -> list[dict]:
    kernels: dict[str, dict] = {}
    for ev in launches:
        k = kernels.setdefault(ev.kernel, {"warps": 0, "cycles": 0, "ns": 0.0, "launches": 0, "scopes": {}})
        k["warps"] += ev.warp_ids.size
        k["launches"] += 1
        k["cycles"] += int(ev.warp_cycles.sum())
        k["ns"] += float((ev.warp_end_ns - ev.warp_begin_ns).sum())
        n = len(ev.scope_names)
        cycles = np.bincount(ev.scope, weights=ev.duration_cycles.astype(np.float64), minlength=n)
        ns = np.bincount(ev.scope, weights=ev.end_ns - ev.start_ns, minlength=n)
        count = np.bincount(ev.scope, minlength=n)
        # Scopes are keyed by their path of names, so that launches (and
        # compilations) agree on the same node.
        for sid in range(n):
            path = _path(ev, sid)
            node = k["scopes"].setdefault(path, {"cycles": 0.0, "ns": 0.0, "count": 0})
            node["cycles"] += cycles[sid]
            node["ns"] += ns[sid]
            node["count"] += int(count[sid])

    roots = []
    for name, k in kernels.items():
        warps = max(k["warps"], 1)
        root = _node(name, "function", k["cycles"], k["cycles"] / warps, k["launches"], k["ns"])
        by_path = {(): root}
        for path in sorted(k["scopes"], key=len):
            s = k["scopes"][path]
            parent = by_path.get(path[:-1], root)
            node = _node(path[-1], "region", s["cycles"], s["cycles"] / warps, s["count"], s["ns"])
            parent["children"].append(node)
            by_path[path] = node
        roots.append(root)
    return roots


def write(path: str, launches: list[LaunchEvents]) -> list[dict]:
    roots = build(launches)
    with open(path, "w") as out:
        json.dump(roots, out, indent=1)
    return roots


def _path(ev: LaunchEvents, sid: int) -> tuple[str, ...]:
    names = []
    while sid >= 0:
        names.append(ev.scope_names[sid])
        sid = int(ev.scope_parents[sid])
    return tuple(reversed(names))


def _node(name, kind, cycles, normalized, count, ns) -> dict:
    return {
        "frame": {"name": name, "type": kind},
        "metrics": {"cycles": int(round(cycles)), "normalized_cycles": float(normalized), "count": int(count),
                    "time (ns)": float(ns)},
        "children": [],
    }
