"""data="trace": the session's kernels, copies and sets as a Chrome trace
(one process per GPU, one thread per stream), opened by Perfetto or
chrome://tracing. Each event carries its calling context."""

from __future__ import annotations

import json
import os

import numpy as np

from .records import ACTIVITY_KINDS


def call_paths(nodes: np.ndarray, names: list[str]) -> list[str]:
    paths = [""] * len(nodes)
    for i in range(1, len(nodes)):  # parents come before children
        parent = int(nodes[i]["parent"])
        prefix = paths[parent]
        paths[i] = (prefix + "/" if prefix else "") + names[nodes[i]["name"]]
    return paths


def write_chrome(path: str, rows: np.ndarray, nodes: np.ndarray, names: list[str]) -> str:
    paths = call_paths(nodes, names)
    origin = int(rows["start"].min()) if rows.size else 0
    events = []
    for device in sorted({int(d) for d in rows["device"]}):
        events.append({"ph": "M", "name": "process_name", "pid": device, "args": {"name": f"GPU {device}"}})
    for row in rows[np.argsort(rows["start"], kind="stable")]:
        events.append(
            {
                "ph": "X",
                "name": names[row["name"]],
                "cat": ACTIVITY_KINDS.get(int(row["kind"]), "kernel"),
                "pid": int(row["device"]),
                "tid": f"stream {int(row['stream'])}",
                "ts": (int(row["start"]) - origin) / 1000.0,
                "dur": (int(row["end"]) - int(row["start"])) / 1000.0,
                "args": {"call_path": paths[row["node"]] or "ROOT", "correlation": int(row["correlation"])},
            }
        )
    with open(path, "w") as out:
        json.dump(
            {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"origin_ns": origin}},
            out,
            separators=(",", ":"),
        )
    return os.path.abspath(path)
