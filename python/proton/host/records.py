"""numpy views of the packed rows `proton._host` returns (layouts fixed in
python/src/host_ext.cpp)."""

import numpy as np

AGGREGATE = np.dtype([("node", "<u4"), ("name", "<u4"), ("device", "<u4"), ("kind", "<u4"),
                      ("count", "<u8"), ("total_ns", "<u8"), ("min_ns", "<u8"), ("max_ns", "<u8"),
                      ("flops", "<f8", (4,)), ("bytes", "<f8")])
TRACE = np.dtype([("node", "<u4"), ("name", "<u4"), ("device", "<u4"), ("stream", "<u4"), ("kind", "<u4"),
                  ("correlation", "<u4"), ("start", "<u8"), ("end", "<u8")])
NODE = np.dtype([("parent", "<u4"), ("name", "<u4"), ("kind", "<u4")])

# Kinds of calling-context nodes and of activities, as numbered in C++.
NODE_KINDS = {0: "root", 1: "scope", 2: "frame", 3: "state", 4: "captured_at", 5: "nvtx"}
ACTIVITY_KINDS = {0: "kernel", 1: "memcpy", 2: "memset"}
FLOPS_METRICS = ("flops8", "flops16", "flops32", "flops64")


def aggregates(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=AGGREGATE)


def trace_rows(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=TRACE)


def nodes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=NODE)
