"""numpy views of the packed rows `proton._host` returns. Their layouts and
the node and activity kinds are defined once, in C++
(include/proton/Host/PackedRows.h), and read here from the extension."""

import numpy as np

try:
    from .. import _host
except ImportError:  # built without the host profiler: no rows to read
    _host = None

FLOPS_METRICS = ("flops8", "flops16", "flops32", "flops64")


def _dtype(layout: dict) -> np.dtype:
    """The dtype of one of `_host.ROW_LAYOUTS`: (name, type, count, offset)
    fields and the C++ row's size, so any padding in C++ is honoured."""
    names, formats, offsets = [], [], []
    for name, scalar, count, offset in layout["fields"]:
        names.append(name)
        formats.append(scalar if count == 1 else (scalar, (count,)))
        offsets.append(offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": layout["itemsize"]})


if _host is not None:
    AGGREGATE = _dtype(_host.ROW_LAYOUTS["aggregate"])
    TRACE = _dtype(_host.ROW_LAYOUTS["trace"])
    NODE = _dtype(_host.ROW_LAYOUTS["node"])
    # Kinds of calling-context nodes and of activities, by number.
    NODE_KINDS = dict(_host.NODE_KINDS)
    ACTIVITY_KINDS = dict(_host.ACTIVITY_KINDS)
else:
    AGGREGATE = TRACE = NODE = None
    NODE_KINDS, ACTIVITY_KINDS = {}, {}


def aggregates(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=AGGREGATE)


def trace_rows(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=TRACE)


def nodes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=NODE)
