"""The host profile's tree (writers/hatchet_tree.py writes it): calling-context
nodes from the runtime, one leaf per kernel / copy / set name under each
context, source-line children of kernels in PC sampling mode, laid out as
Triton's Proton writes it (docs/profile-tree-format.md). Metrics are each
node's own (exclusive): the viewers add them up."""

from __future__ import annotations

import numpy as np

from ..writers.hatchet_tree import declare_metrics_on_root, tree_node
from .records import ACTIVITY_KINDS, FLOPS_METRICS, NODE_KINDS

# CUPTI's stall reason names, e.g. smsp__pcsamp_warps_issue_stalled_long_scoreboard
STALL_PREFIXES = ("smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_")
# A reason's "_not_issued" twin counts the subset of its samples in which no
# instruction issued: a metric of its own, not more samples.
NOT_ISSUED = "_not_issued"


def _without_line(line: str) -> bool:
    """The runtime names a sample with no source line "function+0xOFFSET"
    (with one: "file:line@function")."""
    return "@" not in line and "+0x" in line


def stall_metric(reason: str) -> str:
    """The metric name of a CUPTI stall reason: "stall_long_scoreboard"."""
    for prefix in STALL_PREFIXES:
        if reason.startswith(prefix):
            reason = reason[len(prefix) :]
            break
    return "stall_" + reason


def build(
    nodes: np.ndarray,
    names: list[str],
    aggregates: np.ndarray,
    user_metrics: dict,
    devices: dict,
    pc_samples=(),
    device_type: str = "CUDA",
    not_summed: frozenset = frozenset(),
    kernel_metrics: dict | None = None,
    pc_sampled: bool = False,
) -> list:
    """pc_samples: (context node, kernel name, line name, CUPTI stall reason,
    samples) rows (proton._host.take_pc_samples); pc_sampled: the session
    sampled PCs, so a kernel without samples shows num_samples 0; not_summed:
    user metrics declared "(exc)" or "(pty)", which the root does not declare."""
    tree = {0: tree_node("ROOT", "function")}

    def context_node(node_id: int) -> dict:
        # Creates the context's ancestors on demand: only contexts with
        # activity or metrics below them appear.
        if node_id in tree:
            return tree[node_id]
        row = nodes[node_id]
        parent = context_node(int(row["parent"]))
        context = tree_node(names[row["name"]], NODE_KINDS.get(int(row["kind"]), "scope"))
        parent["children"].append(context)
        tree[node_id] = context
        return context

    leaves: dict[tuple, dict] = {}
    # Contexts in the order this session first saw activity in them, as
    # Triton's Proton lays children out: the first scope used comes first
    # (node ids are process-wide: an earlier session may have made them).
    order = "first" if "first" in (aggregates.dtype.names or ()) else "node"
    for row in aggregates[np.argsort(aggregates[order], kind="stable")] if len(aggregates) else aggregates:
        context = context_node(int(row["node"]))
        key = (int(row["node"]), int(row["kind"]), int(row["name"]))
        leaf = leaves.get(key)
        if leaf is None:
            leaf = leaves[key] = _activity(names[row["name"]], ACTIVITY_KINDS.get(int(row["kind"]), "kernel"))
            leaf["metrics"]["device_id"] = str(int(row["device"]))
            leaf["metrics"]["device_type"] = device_type
            context["children"].append(leaf)
        metrics = leaf["metrics"]
        metrics["time (ns)"] += int(row["total_ns"])
        metrics["count"] += int(row["count"])
        for i, key_name in enumerate(FLOPS_METRICS):
            if row["flops"][i]:
                metrics[key_name] = metrics.get(key_name, 0.0) + float(row["flops"][i])
        if row["bytes"]:
            metrics["bytes"] = metrics.get("bytes", 0.0) + float(row["bytes"])
    for node_id, sums in user_metrics.items():
        context_node(int(node_id))["metrics"].update(sums)
    # launch_metadata's own metrics, on the kernel's leaf (name as shown).
    by_name = {(node, names[name]): leaf for (node, kind, name), leaf in leaves.items() if kind == 0}
    for (node_id, kernel), sums in (kernel_metrics or {}).items():
        leaf = by_name.get((int(node_id), kernel))
        if leaf is None:  # its launch's activity was not seen in this phase
            leaf = by_name[(int(node_id), kernel)] = _activity(kernel, "kernel")
            context_node(int(node_id))["children"].append(leaf)
        for name, value in sums.items():
            leaf["metrics"][name] = value if name not in leaf["metrics"] else _added(leaf["metrics"][name], value)

    kernels = {(node, names[name]): leaf for (node, kind, name), leaf in leaves.items() if kind == 0}
    lines: dict[tuple, dict] = {}
    for node_id, kernel, line, stall, count in pc_samples or ():
        key = (int(node_id), kernel)
        leaf = kernels.get(key)
        if leaf is None:  # samples of a launch whose activity this session did not see
            leaf = kernels[key] = _activity(kernel, "kernel")
            context_node(key[0])["children"].append(leaf)
        if _without_line(line):
            # No line table (a library's kernel): the samples are the
            # kernel's own, as Triton's Proton keeps them.
            metrics = leaf["metrics"]
            metrics.setdefault("num_samples", 0)
        else:
            child = lines.get(key + (line,))
            if child is None:
                child = lines[key + (line,)] = tree_node(line, "line", {"num_samples": 0})
                leaf["children"].append(child)
            metrics = child["metrics"]
        if not stall.endswith(NOT_ISSUED):
            metrics["num_samples"] += int(count)
        metric = stall_metric(stall)
        metrics[metric] = metrics.get(metric, 0) + int(count)
    for leaf in kernels.values():  # hottest lines first
        leaf["children"].sort(key=lambda c: -c["metrics"].get("num_samples", 0))
        if pc_sampled:  # sampled, found in none: a short kernel often is (docs/usage.md)
            leaf["metrics"].setdefault("num_samples", 0)

    root = tree[0]
    if leaves:  # as upstream: the root carries zeros of the activity metrics
        root["metrics"] = {"count": 0, "time (ns)": 0, **root["metrics"]}
    _integral_times(root)
    declare_metrics_on_root(root, not_summed)
    return [root, dict(devices or {})]


def _added(total, value):
    if isinstance(total, list) and isinstance(value, list) and len(total) == len(value):
        return [a + b for a, b in zip(total, value)]
    return total + value if not isinstance(total, list) else value


def _activity(name: str, kind: str) -> dict:
    """An activity leaf (kernel, memcpy, memset)."""
    return tree_node(name, kind, {"time (ns)": 0, "count": 0})


def _integral_times(node: dict) -> None:
    # Device times are whole nanoseconds, written as integers as upstream does.
    value = node["metrics"].get("time (ns)")
    if isinstance(value, float) and value.is_integer():
        node["metrics"]["time (ns)"] = int(value)
    for child in node["children"]:
        _integral_times(child)
