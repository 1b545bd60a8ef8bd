"""data="trace": the session's kernels, copies and sets as a Chrome trace
(one process per GPU, "GPU 0", one thread per stream, "stream 7"), opened by
Perfetto or chrome://tracing, in the layout of Triton's Proton: complete
events only, each with its calling context in `args.call_stack` (["ROOT",
scopes..., kernel]) and, added here, `call_path` and `correlation`."""

from __future__ import annotations

import json
import os

import numpy as np

from .records import ACTIVITY_KINDS


def call_paths(nodes: np.ndarray, names: list[str]) -> list[tuple]:
    """Each node's names from the root down (the root's is empty)."""
    paths = [()] * len(nodes)
    for i in range(1, len(nodes)):  # parents come before children
        paths[i] = paths[int(nodes[i]["parent"])] + (names[nodes[i]["name"]],)
    return paths


def write_chrome(path: str, rows: np.ndarray, nodes: np.ndarray, names: list[str]) -> str:
    paths = call_paths(nodes, names)
    origin = int(rows["start"].min()) if rows.size else 0
    events = []
    for row in rows[np.argsort(rows["start"], kind="stable")]:
        name, context = names[row["name"]], paths[row["node"]]
        events.append(
            {
                "ph": "X",
                "name": name,
                "cat": ACTIVITY_KINDS.get(int(row["kind"]), "kernel"),
                "pid": f"GPU {int(row['device'])}",
                "tid": f"stream {int(row['stream'])}",
                "ts": (int(row["start"]) - origin) / 1000.0,
                "dur": (int(row["end"]) - int(row["start"])) / 1000.0,
                "args": {
                    "call_stack": ["ROOT", *context, name],
                    "call_path": "/".join(context) or "ROOT",
                    "correlation": int(row["correlation"]),
                },
            }
        )
    with open(path, "w") as out:
        json.dump(
            {"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"origin_ns": origin}},
            out,
            separators=(",", ":"),
        )
    return os.path.abspath(path)
