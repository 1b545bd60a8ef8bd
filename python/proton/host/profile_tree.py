"""The host profile as a tree in Hatchet's literal format
(docs/profile-tree-format.md): calling-context nodes from the runtime, one
leaf per kernel / copy / set name under each context, source-line children
of kernels in PC sampling mode, inclusive metrics."""

from __future__ import annotations

import json
import os

import numpy as np

from .records import ACTIVITY_KINDS, FLOPS_METRICS, NODE_KINDS

SUMMED = ("time (ns)", "count", *FLOPS_METRICS, "bytes")
# CUPTI's stall reason names, e.g. smsp__pcsamp_warps_issue_stalled_long_scoreboard
STALL_PREFIXES = ("smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_")
# A reason's "_not_issued" twin counts the subset of its samples in which no
# instruction issued: a metric of its own, not more samples.
NOT_ISSUED = "_not_issued"


def stall_metric(reason: str) -> str:
    """The metric name of a CUPTI stall reason: "stall_long_scoreboard"."""
    for prefix in STALL_PREFIXES:
        if reason.startswith(prefix):
            reason = reason[len(prefix):]
            break
    return "stall_" + reason


def build(nodes: np.ndarray, names: list[str], aggregates: np.ndarray, user_metrics: dict,
          devices: dict, pc_samples=()) -> list:
    """pc_samples: (context node, kernel name, line name, CUPTI stall reason,
    samples) rows (proton._host.take_pc_samples)."""
    tree = {0: _node("ROOT", "function")}

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

    kernels = {(node, names[name]): leaf for (node, kind, name), leaf in leaves.items() if kind == 0}
    lines: dict[tuple, dict] = {}
    for node_id, kernel, line, stall, count in pc_samples or ():
        key = (int(node_id), kernel)
        leaf = kernels.get(key)
        if leaf is None:  # samples of a launch whose activity this session did not see
            leaf = kernels[key] = _node(kernel, "kernel")
            context_node(key[0])["children"].append(leaf)
        child = lines.get(key + (line,))
        if child is None:
            child = lines[key + (line,)] = {"frame": {"name": line, "type": "line"},
                                            "metrics": {"num_samples": 0}, "children": []}
            leaf["children"].append(child)
        metrics = child["metrics"]
        if not stall.endswith(NOT_ISSUED):
            metrics["num_samples"] += int(count)
        metric = stall_metric(stall)
        metrics[metric] = metrics.get(metric, 0) + int(count)
    for leaf in kernels.values():  # hottest lines first
        leaf["children"].sort(key=lambda c: -c["metrics"].get("num_samples", 0))

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
