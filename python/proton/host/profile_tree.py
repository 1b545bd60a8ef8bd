"""The host profile as a tree in Hatchet's literal format
(docs/profile-tree-format.md): calling-context nodes from the runtime, one
leaf per kernel / copy / set name under each context, inclusive metrics."""

from __future__ import annotations

import json
import os

import numpy as np

from .records import ACTIVITY_KINDS, FLOPS_METRICS, NODE_KINDS

SUMMED = ("time (ns)", "count", *FLOPS_METRICS, "bytes")


def build(nodes: np.ndarray, names: list[str], aggregates: np.ndarray, user_metrics: dict,
          devices: dict) -> list:
    tree = {0: _node("ROOT", "function")}
    parents = {}

    def context_node(node_id: int) -> dict:
        # Creates the context's ancestors on demand: only contexts with
        # activity or metrics below them appear.
        if node_id in tree:
            return tree[node_id]
        row = nodes[node_id]
        parent = context_node(int(row["parent"]))
        node = _node(names[row["name"]], NODE_KINDS.get(int(row["kind"]), "scope"))
        parent["children"].append(node)
        tree[node_id] = node
        parents[id(node)] = parent
        return node

    leaves: dict[tuple, dict] = {}
    for row in aggregates:
        context = context_node(int(row["node"]))
        key = (int(row["node"]), int(row["kind"]), int(row["name"]))
        leaf = leaves.get(key)
        if leaf is None:
            leaf = leaves[key] = _node(names[row["name"]], ACTIVITY_KINDS.get(int(row["kind"]), "kernel"))
            leaf["metrics"]["device_id"] = str(int(row["device"]))
            context["children"].append(leaf)
            parents[id(leaf)] = context
        metrics = leaf["metrics"]
        metrics["time (ns)"] += float(row["total_ns"])
        metrics["count"] += int(row["count"])
        for i, key_name in enumerate(FLOPS_METRICS):
            if row["flops"][i]:
                metrics[key_name] = metrics.get(key_name, 0.0) + float(row["flops"][i])
        if row["bytes"]:
            metrics["bytes"] = metrics.get("bytes", 0.0) + float(row["bytes"])
    for node_id, sums in user_metrics.items():
        context_node(int(node_id))["metrics"].update(sums)

    root = tree[0]
    _sum_inclusive(root)
    out = [root]
    if devices:
        out.append({"devices": devices})
    return out


def write(path: str, tree: list) -> str:
    with open(path, "w") as out:
        json.dump(tree, out, separators=(",", ":"))
    return os.path.abspath(path)


def _node(name: str, kind: str) -> dict:
    return {"frame": {"name": name, "type": kind}, "metrics": {"time (ns)": 0.0, "count": 0}, "children": []}


def _sum_inclusive(node: dict) -> None:
    """Adds every child's (inclusive) metrics into its parent; user metrics
    too, labels (device_id) not."""
    for child in node["children"]:
        _sum_inclusive(child)
        for key, value in child["metrics"].items():
            if isinstance(value, (int, float)) and key != "device_id":
                node["metrics"][key] = node["metrics"].get(key, 0) + value
