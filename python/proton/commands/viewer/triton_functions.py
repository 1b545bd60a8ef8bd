"""Triton's viewer functions (triton.profiler.viewer, Triton 3.6), on
hatchet GraphFrames: the same names, arguments and results, so code written
against them runs unchanged (proton.viewer holds them for users). They read
both layouts: files in the inclusive layout of Proton's first releases (no
writer emits it now) are turned into Triton's (each node's own values,
device info keyed by type) first. They need llnl-hatchet and pandas,
imported on first use."""

from __future__ import annotations

import copy
import json
from collections import namedtuple

from ...device.specs import max_bps, max_flops
from .derived_metrics import _TIME, FLOP_WIDTHS, RATE_PREFIXES, TIME_UNITS
from .parsing import LABELS, _device_keys, _drop_frames
from .printing import format_name


def _hatchet():
    try:
        import hatchet
        import pandas  # noqa: F401
    except ImportError as e:
        raise ImportError(
            "proton.viewer's Triton-compatible functions need hatchet and pandas: `pip install llnl-hatchet`"
        ) from e
    return hatchet


FactorDict = namedtuple("FactorDict", ["name", "factor"])
time_factor_dict = FactorDict("time", {f"time/{u}": s * 1e9 for u, s in TIME_UNITS.items()})
avg_time_factor_dict = FactorDict("avg_time", {f"avg_{k}": v for k, v in time_factor_dict.factor.items()})
cpu_time_factor_dict = FactorDict("cpu_time", {f"cpu_{k}": v for k, v in time_factor_dict.factor.items()})
avg_cpu_time_factor_dict = FactorDict("avg_cpu_time", {f"avg_{k}": v for k, v in cpu_time_factor_dict.factor.items()})
bytes_factor_dict = FactorDict("bytes", {f"{p}byte/s": 1 / s for p, s in RATE_PREFIXES.items()})
derivable_metrics = {key: bytes_factor_dict for key in bytes_factor_dict.factor}
derivable_metrics.update(
    {f"{p}flop/s": FactorDict("flops", {f"{q}flop/s": 1 / s for q, s in RATE_PREFIXES.items()}) for p in RATE_PREFIXES}
)
for _w in FLOP_WIDTHS:
    _factors = FactorDict(f"flops{_w}", {f"{p}flop{_w}/s": 1 / s for p, s in RATE_PREFIXES.items()})
    derivable_metrics.update({key: _factors for key in _factors.factor})
del _w, _factors


def match_available_metrics(metrics, inclusive_metrics, exclusive_metrics):
    """The dataframe columns of metric names (case-insensitive, unit optional; inclusive ones get " (inc)")."""
    wanted = metrics if isinstance(metrics, list) else [metrics]
    found = []
    for metric in wanted:
        key = metric.lower()
        for raw in list(inclusive_metrics) + list(exclusive_metrics):
            if key in (raw, raw.split("(")[0].strip().lower()):
                found.append(raw + (" (inc)" if raw in inclusive_metrics else ""))
                break
    if not found:
        raise RuntimeError(
            f"Metric {wanted[-1] if wanted else None} is not found. Use the --list flag to list available metrics"
        )
    return found


def remove_frames(database):
    """The nodes of a loaded file without Triton's launch-metadata frames and empty leaves."""
    out = []
    for node in database:
        if not isinstance(node, dict) or "frame" not in node:
            out.append(node)
            continue
        node.setdefault("metrics", {})
        node.setdefault("children", [])
        kept = _drop_frames(node)
        if kept is not None:
            out.append(kept)
    return out


def _to_triton_layout(database: list) -> list:
    """The layout of Proton's first releases (inclusive metrics, {"devices": ...}) as
    Triton's, which Proton writes now: own values, device info by type."""
    if database and isinstance(database[-1], dict) and "frame" not in database[-1] and "devices" not in database[-1]:
        return database  # already Triton's
    info = {}
    if database and isinstance(database[-1], dict) and "devices" in database[-1]:
        info = {
            kind: {str(i): _device_keys(d) for i, d in by_index.items()}
            for kind, by_index in database.pop()["devices"].items()
        }
    for root in database:
        _own_bottom_up(root)
    for root in database:
        for name in {k for n in _walk(root) for k in n["metrics"] if k not in LABELS}:
            root["metrics"].setdefault(name, 0)  # hatchet takes the metric columns from the first node
    return database + [info]


def _walk(node):
    yield node
    for child in node.get("children", []):
        yield from _walk(child)


def _own_bottom_up(node: dict) -> None:
    """Rewrites a subtree's inclusive metrics as each node's own (inclusive minus the children's)."""
    inclusive = {k: v for k, v in node.get("metrics", {}).items() if k not in LABELS}
    below: dict = {}
    for child in node.get("children", []):
        for k, v in child.get("metrics", {}).items():
            if k not in LABELS:
                below[k] = below.get(k, 0) + v
    for child in node.get("children", []):
        _own_bottom_up(child)
    labels = {k: str(v) for k, v in node.get("metrics", {}).items() if k in LABELS}
    node["metrics"] = {**labels, **{k: v - below.get(k, 0) for k, v in inclusive.items()}}


def get_raw_metrics(database):
    """(GraphFrame, inclusive metric names, other columns, device info) from
    a profile tree in memory (proton.data.get's list, left unchanged) or an
    open .hatchet or .hatchet_msgpack file."""
    ht = _hatchet()
    if isinstance(database, list):
        database = copy.deepcopy(database)  # the steps below edit nodes in place
    else:
        database = _read_database(database.read())
    database = remove_frames(_to_triton_layout(database))
    device_info = {}
    if database and isinstance(database[-1], dict) and "frame" not in database[-1]:
        device_info = database.pop()
    gf = ht.GraphFrame.from_literal(database)
    inclusive_metrics = gf.show_metric_columns()
    exclusive_metrics = [c for c in gf.dataframe.columns if c not in inclusive_metrics]
    return gf, inclusive_metrics, exclusive_metrics, device_info


def _read_database(content):
    """A file's tree: JSON text, or bytes of JSON or MessagePack."""
    if isinstance(content, str):
        return json.loads(content)
    if content.lstrip()[:1] in (b"[", b"{"):
        return json.loads(content)
    from ...writers.msgpack_codec import unpackb

    return unpackb(content)


def _devices(device_info):
    for kind, by_index in device_info.items():
        for index, info in by_index.items():
            yield kind, str(index), _device_keys(info)


def get_min_time_flops(df, device_info):
    """Per row: the least time its flops<width> need at the device's peak (column "min_time")."""
    import pandas as pd

    out = pd.DataFrame(0.0, index=df.index, columns=["min_time"])
    for kind, index, info in _devices(device_info):
        rows = df["device_id"] == index
        for width in FLOP_WIDTHS:
            column = f"flops{width}"
            if column in df.columns:
                peak = max_flops(kind, info["arch"], width, info["num_sms"], info["clock_rate"])
                out.loc[rows, "min_time"] += df.loc[rows, column].fillna(0) / peak
    return out


def get_min_time_bytes(df, device_info):
    """Per row: the least time its bytes need at the device's peak bandwidth (column "min_time")."""
    import pandas as pd

    out = pd.DataFrame(0.0, index=df.index, columns=["min_time"])
    for kind, index, info in _devices(device_info):
        rows = df["device_id"] == index
        bandwidth = max_bps(kind, info["arch"], info["bus_width"], info["memory_clock_rate"])
        out.loc[rows, "min_time"] += df.loc[rows, "bytes"] / bandwidth
    return out


def derive_metrics(gf, metrics, inclusive_metrics, exclusive_metrics, device_info):
    """Adds the derived metrics' columns to gf.dataframe; returns the column names, in order."""
    import numpy as np

    df = gf.dataframe
    columns = []

    def column(name):
        return match_available_metrics(name, inclusive_metrics, exclusive_metrics)[0]

    def seconds(stored):  # "time" or "cpu_time"; the column names its unit: "time (ns) (inc)"
        name = column(stored)
        return df[name] * _seconds_per(name.split("(")[1].split(")")[0])

    for metric in metrics:
        if metric == "util":
            min_flops = get_min_time_flops(df, device_info)["min_time"]
            min_bytes = get_min_time_bytes(df, device_info)["min_time"]
            df["util"] = min_flops.combine(min_bytes, max) / seconds("time")
            df.loc[df["device_id"].isna(), "util"] = np.nan
            columns.append("util")
        elif metric in derivable_metrics:
            source = derivable_metrics[metric]
            df[f"{metric} (inc)"] = df[column(source.name)] / seconds("time") / source.factor[metric]
            columns.append(f"{metric} (inc)")
        elif (m := _TIME.fullmatch(metric)) is not None:
            value = seconds("cpu_time" if m.group(2) else "time") / _seconds_per(m.group(3))
            if m.group(1):
                value = value / df["count (inc)"]
            df[f"{metric} (inc)"] = value
            columns.append(f"{metric} (inc)")
        elif "/" in metric:
            name, unit = metric.split("/", 1)
            if unit != "%":
                raise ValueError(f"Unsupported unit {unit}")
            source = column(name)
            inclusive = source.endswith("(inc)")
            total = df[source].iloc[0] if inclusive else df[source].sum()
            df[metric + (" (inc)" if inclusive else "")] = df[source] / total * 100.0
            columns.append(metric + (" (inc)" if inclusive else ""))
        else:
            columns.append(column(metric))
    for name in columns:
        (gf.inc_metrics if name.endswith("(inc)") else gf.exc_metrics).append(name)
    return columns


def _seconds_per(unit: str) -> float:
    if unit not in TIME_UNITS:
        raise ValueError(f"Unsupported time unit {unit}")
    return 1e-9 / TIME_UNITS[unit]


def format_frames(gf, format):
    """Renames gf's Python frames (file:line@function) in one of Triton's formats; returns gf."""
    if format and format != "full":
        gf.dataframe["name"] = gf.dataframe["name"].apply(lambda name: format_name(name, format))
    return gf


def filter_frames(gf, include=None, exclude=None, threshold=None, metric=None):
    """gf filtered as Triton's -i, -e and -t do (names matched with re.match)."""
    _hatchet()
    from hatchet.query import NegationQuery, ObjectQuery

    if include:
        gf = gf.filter(ObjectQuery(["*", {"name": f"(?:{include}).*"}, "*"]), squash=True)
    if exclude:
        gf = gf.filter(NegationQuery(ObjectQuery([{"name": f"(?:{exclude}).*"}, "*"])), squash=True)
    if threshold:
        gf = gf.filter(ObjectQuery(["*", {metric: f">= {threshold}"}]), squash=True)
    return gf


def emit_warnings(gf, metrics):
    import numpy as np

    if "bytes (inc)" in metrics and np.nanmin(gf.dataframe["bytes (inc)"].values) < 0:
        print("Warning: Negative byte values detected, this is usually the result of a datatype overflow\n")


def print_tree(gf, metrics, depth=100, format=None, print_sorted=False):
    gf = format_frames(gf, format)
    print(gf.tree(metric_column=metrics, expand_name=True, depth=depth, render_header=False))
    if print_sorted:
        print("Sorted kernels by metric " + metrics[0])
        ranked = gf.dataframe.sort_values(by=[metrics[0]], ascending=False)
        for i in range(1, len(ranked)):
            name = ranked.iloc[i]["name"]
            name = name[:100] + "..." if len(name) > 100 else name
            print(f"{name:105} {ranked.iloc[i][metrics[0]]:.4}")
    emit_warnings(gf, metrics)


def read(filename):
    """(GraphFrame with inclusive columns, inclusive metric names, other columns, device info)."""
    with open(filename, "rb") as f:
        gf, inclusive_metrics, exclusive_metrics, device_info = get_raw_metrics(f)
    if not inclusive_metrics + exclusive_metrics:
        raise AssertionError("No metrics found in the input file")
    gf.update_inclusive_columns()
    return gf, inclusive_metrics, exclusive_metrics, device_info


def parse(metrics, filename, include=None, exclude=None, threshold=None):
    """(filtered GraphFrame, metric columns) for a file and a list of metric names."""
    gf, inclusive_metrics, exclusive_metrics, device_info = read(filename)
    columns = derive_metrics(gf, metrics, inclusive_metrics, exclusive_metrics, device_info)
    return filter_frames(gf, include, exclude, threshold, columns[0]), columns


def apply_diff_profile(gf, derived_metrics, diff_file, metrics, include, exclude, threshold):
    """gf minus the same metrics of diff_file (hatchet's GraphFrame.sub)."""
    other, _ = parse(metrics, diff_file, include, exclude, threshold)
    inc = [m for m in derived_metrics if m.endswith("(inc)")]
    exc = [m for m in derived_metrics if not m.endswith("(inc)")]
    for frame in (gf, other):
        frame.inc_metrics, frame.exc_metrics = list(inc), list(exc)
    return gf.sub(other)


def show_metrics(file_name):
    with open(file_name, "rb") as f:
        _, inclusive_metrics, exclusive_metrics, _ = get_raw_metrics(f)
    for title, names in (("inclusive", inclusive_metrics), ("exclusive", exclusive_metrics)):
        print(f"Available {title} metrics:")
        for name in names:
            print(f"- {name.split('(')[0].strip().lower()}")
