"""`proton-view [options] PROFILE.hatchet`: prints a profile tree in the terminal.

A drop-in for Triton's `proton-viewer`: the same options (-l, -m, -i, -e, -t,
-d, -f, --print-sorted, --diff-profile/-diff) and metric names, with the same
meaning, plus a few of its own (-s/--sorted, --format short, --color).

Reads `.hatchet` files as Proton's host and instrumentation sessions and
Triton's Proton write them (docs/profile-tree-format.md): `[ROOT,
{"CUDA"|"HIP": {index: device}}]` with each node's own (exclusive) metrics,
summed here into inclusive values as Triton's viewer does (frames
`__proton_launch_metadata` and empty leaves dropped); `.hatchet_msgpack`
files (the same tree as MessagePack) are read by name. (Files of an older
layout are still accepted: see parse_tree.)

Each line shows the chosen metrics of one node, then the node's name, indented
as a tree:

    $ proton-view -m time/ms,time/% run.hatchet
    time/ms   time/%  name
    10.0000  100.00%  ROOT
     8.0000   80.00%  ├─ forward
     6.0000   60.00%  │  ├─ matmul_kernel
     2.0000   20.00%  │  └─ add_kernel

Metrics (`-m`, comma separated; `--list` prints those a file has):
  time/s, time/ms, time/us, time/ns     from `time (ns)` (cpu_time/... from `cpu_time (ns)`)
  avg_time/s ... avg_time/ns            time / count (avg_cpu_time/... likewise)
  flop/s, gflop/s, tflop/s              `flops` / time (without `flops`: all flopsN summed)
  flop8/s, gflop16/s, tflop32/s ...     one precision
  byte/s, gbyte/s, tbyte/s              bytes / time
  util                                  max(sum over N of flopsN / peak flopsN, bytes / peak bandwidth) / time,
                                        peaks as in Triton's specs (CUDA sm80/89/90/100, HIP gfx90a/942/950)
  any metric stored in the file         case-insensitive, with or without its unit (`time` = `time (ns)`):
                                        count, cycles, normalized_cycles, num_samples, user metrics
  METRIC/%                              percentage of the root's value (per root)

Filters follow Triton's viewer: -i/-e match a regular expression at the start
of a node's full name (Python's re.match), -t keeps nodes whose first metric
is >= the threshold (and their ancestors), -d N shows N levels. Values are not
recomputed after filtering. With `--diff-profile OTHER` each value is this
file's minus OTHER's for the node with the same path of names (METRIC/% is
the difference of the two shares); a node in one file only shows `-`.

Errors (unreadable file, bad structure, unknown metric, a metric the file has
no data for) print one line to stderr and return exit code 2.

The module also has the Python functions of Triton's viewer (get_raw_metrics,
read, parse, derive_metrics, format_frames, filter_frames, get_min_time_flops,
get_min_time_bytes, apply_diff_profile, print_tree, show_metrics, ...), working
on hatchet GraphFrames (they need llnl-hatchet and pandas; the command does not).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import re
import sys
from collections import namedtuple
from dataclasses import dataclass, field
from typing import Callable
from .writers.files import STDOUT, open_input, read_input
from .hooks.launch import COMPUTE_METADATA_SCOPE_NAME

from .specs import max_bps, max_flops

PROG = "proton-view"

TIME_UNITS = {"s": 1e-9, "ms": 1e-6, "us": 1e-3, "ns": 1.0}
RATE_PREFIXES = {"": 1.0, "g": 1e-9, "t": 1e-12}
TIME_METRIC = "time (ns)"
CPU_TIME_METRIC = "cpu_time (ns)"
LABELS = {"device_id", "device_type"}  # per-kernel labels stored with the metrics, not metrics
FLOP_WIDTHS = (8, 16, 32, 64)
METADATA_FRAME = COMPUTE_METADATA_SCOPE_NAME  # Triton's launch-metadata scope, never shown

_TIME = re.compile(r"(avg_)?(cpu_)?time/(s|ms|us|ns)")
_FLOP = re.compile(r"([gt]?)flop(8|16|32|64)?/s")
_BYTE = re.compile(r"([gt]?)byte/s")
_FLOPS_FIELD = re.compile(r"flops(\d+)")
_PY_FRAME = re.compile(r"[^@]*:\d+@[^@]*")  # file:line@function

RESET = "\x1b[0m"
BOLD, DIM, RED, GREEN, YELLOW, CYAN = "1", "2", "31", "32", "33", "36"


class ViewerError(Exception):
    """A problem with the input or the options: one line for the user."""


# -- reading ------------------------------------------------------------------


@dataclass
class Profile:
    path: str
    roots: list
    devices: dict  # device index (str) -> (type, info in Triton's keys)
    metric_names: set = field(default_factory=set)
    upstream: bool = False  # read from Triton's layout (exclusive metrics)
    _devices_under: dict = field(default_factory=dict)

    @property
    def is_host(self) -> bool:
        return bool(self.devices) or self.upstream or any(r["frame"].get("type") != "function" for r in self.roots)


def load(path: str) -> Profile:
    if path.endswith(".hatchet_msgpack"):
        return _load_msgpack(path)
    try:
        with open_input(path, binary=False) as f:
            text = f.read()
    except FileNotFoundError:
        raise ViewerError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ViewerError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        data = _json(text)
    except json.JSONDecodeError as e:
        raise ViewerError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    except ValueError as e:  # e.g. an integer literal longer than Python reads
        raise ViewerError(f"{path}: not a profile tree: {e}") from None
    return parse_tree(path, data)


def _load_msgpack(path: str) -> Profile:
    """A .hatchet_msgpack file (finalize(output_format="hatchet_msgpack"))."""
    from .writers.msgpack_codec import unpackb

    try:
        content = read_input(path)
    except FileNotFoundError:
        raise ViewerError(f"{path}: no such file") from None
    except OSError as e:
        raise ViewerError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        data = unpackb(content)
    except (ValueError, TypeError) as e:  # UnicodeDecodeError is a ValueError
        raise ViewerError(f"{path}: not MessagePack ({e})") from None
    return parse_tree(path, data)


def _json(text: str):
    """json.loads; for a tree nested deeper than the C decoder goes (its
    recursion limit is fixed), the pure-Python decoder, which follows the
    recursion limit (main raises it)."""
    try:
        return json.loads(text)
    except RecursionError:
        from json import scanner

        decoder = json.JSONDecoder()
        decoder.scan_once = scanner.py_make_scanner(decoder)
        return decoder.decode(text)


def parse_tree(path: str, data) -> Profile:
    """A Profile from a file's JSON; metrics made inclusive. Besides the
    layout every writer emits, it accepts that of Proton's first releases
    (inclusive metrics, a trailing {"devices": {...}} object), which no
    writer emits any more."""

    def bad(reason):
        return ViewerError(f"{path}: not a profile tree: {reason}")

    if not isinstance(data, list):
        raise bad(f"the top level is a JSON {type(data).__name__}, expected a list of root nodes")
    devices, upstream = {}, False
    if data and isinstance(data[-1], dict) and "frame" not in data[-1] and (len(data) > 1 or "devices" in data[-1]):
        if "devices" in data[-1]:
            devices = _parse_devices(data[-1].get("devices"), bad)
        else:
            devices, upstream = _parse_devices(data[-1], bad), True
        data = data[:-1]
    if not data:
        raise bad("no root nodes")
    names: set = set()
    for i, root in enumerate(data):
        _check_node(root, f"root {i}", bad, names)
    if upstream:
        data = [r for r in (_drop_frames(r) for r in data) if r is not None]
        if not data:
            raise bad("no nodes with metrics")
        for root in data:
            _make_inclusive(root)
    return Profile(path, data, devices, names - LABELS, upstream)


def _parse_devices(by_type, bad) -> dict:
    if not isinstance(by_type, dict):
        raise bad("the last element has no 'frame' and no 'devices' object")
    devices = {}
    for kind, by_index in by_type.items():
        if not isinstance(by_index, dict):
            raise bad(f"devices[{kind!r}] is not an object")
        for index, info in by_index.items():
            if not isinstance(info, dict):
                raise bad(f"devices[{kind!r}][{index!r}] is not an object")
            devices.setdefault(str(index), (kind, _device_keys(info)))
    return devices


def _device_keys(info: dict) -> dict:
    """Device info in Triton's keys (arch, num_sms, clock_rate, memory_clock_rate in kHz, bus_width in bits)."""
    out = dict(info)
    for ours, theirs in (
        ("clock_rate_khz", "clock_rate"),
        ("memory_clock_rate_khz", "memory_clock_rate"),
        ("bus_width_bits", "bus_width"),
    ):
        if ours in out:
            out.setdefault(theirs, out.pop(ours))
    return out


def _check_node(node, where: str, bad, names: set) -> None:
    if not isinstance(node, dict):
        raise bad(f"{where} is not an object")
    frame = node.get("frame")
    if not isinstance(frame, dict) or not isinstance(frame.get("name"), str):
        raise bad(f"{where} has no frame name")
    where = f"node {frame['name']!r}"
    metrics = node.setdefault("metrics", {})
    if not isinstance(metrics, dict):
        raise bad(f"{where}: 'metrics' is not an object")
    for key, value in metrics.items():
        if key == "device_id":  # an index, written as a number or a string
            if isinstance(value, bool) or not str(value).isdigit():
                raise bad(f"{where}: metric 'device_id' is not a device index")
            continue
        if key == "device_type" and isinstance(value, str):
            continue
        problem = _metric_problem(value)
        if problem:
            raise bad(f"{where}: metric {key!r} {problem}")
    names.update(metrics)
    children = node.setdefault("children", [])
    if not isinstance(children, list):
        raise bad(f"{where}: 'children' is not a list")
    for child in children:
        _check_node(child, f"a child of {where}", bad, names)


def _metric_problem(value) -> str | None:
    """Why a stored metric value cannot be shown (None if it can): what
    Proton writes is a number (NaN and infinities included), text, or a
    list of them (vector metrics, properties)."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, bool) or not isinstance(item, (int, float, str)):
            return "is not a number, text or a list of them"
        if isinstance(item, int) and not -(2**1023) <= item <= 2**1023:
            return f"has {len(str(abs(item)))} digits, too large for a metric"
    return None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _summable(value) -> bool:
    """Numbers and lists of numbers add up over a subtree; text does not."""
    return _is_number(value) or (isinstance(value, list) and all(_is_number(v) for v in value))


def _add(total, value):
    """total + value: numbers, or lists element by element; where they do
    not match (lists of other lengths), the total as it is."""
    if total is None:
        return list(value) if isinstance(value, list) else value
    if _is_number(total) and _is_number(value):
        return total + value
    if isinstance(total, list) and isinstance(value, list) and len(total) == len(value):
        return [a + b for a, b in zip(total, value)]
    return total


def _drop_frames(node: dict):
    """node without Triton's metadata frames and empty leaves (None when nothing is left), as Triton's viewer."""
    if node["frame"]["name"] == METADATA_FRAME:
        return None
    if not node["metrics"] and not node["children"]:
        return None
    if not node["children"]:
        return node
    kept = [c for c in (_drop_frames(c) for c in node["children"]) if c is not None]
    if not kept:
        return None
    node["children"] = kept
    return node


def _make_inclusive(node: dict) -> dict:
    """Adds each child's (inclusive) metrics into node's own (numbers and
    vectors; text stays on its node); returns what adds up of node's."""
    own = node["metrics"]
    totals = {k: v for k, v in own.items() if k not in LABELS and _summable(v)}
    for child in node["children"]:
        for key, value in _make_inclusive(child).items():
            if key in totals or key not in own:
                totals[key] = _add(totals.get(key), value)
    node["metrics"] = {**own, **totals}
    return totals


# -- devices and peaks (proton.specs: Triton's numbers) -----------------------------------


def peaks(kind: str, info: dict):
    """({width: peak flops/s}, peak bytes/s) of a device, or None when unknown."""
    try:
        flops = {
            w: max_flops(kind, info.get("arch"), w, info.get("num_sms"), info.get("clock_rate")) for w in FLOP_WIDTHS
        }
        return flops, max_bps(kind, info.get("arch"), info.get("bus_width"), info.get("memory_clock_rate"))
    except (ValueError, TypeError):
        return None


def _devices_under(profile: Profile, node: dict) -> frozenset:
    key = id(node)
    if key not in profile._devices_under:
        ids = set()
        if "device_id" in node["metrics"]:
            ids.add(str(int(node["metrics"]["device_id"])))
        for child in node["children"]:
            ids |= _devices_under(profile, child)
        profile._devices_under[key] = frozenset(ids)
    return profile._devices_under[key]


def _node_peaks(profile: Profile, node: dict):
    """The peaks of the device(s) of the kernels below node; None when unknown or when they differ."""
    ids = _devices_under(profile, node) or set(profile.devices)
    found = [peaks(*profile.devices[i]) if i in profile.devices else None for i in sorted(ids)]
    if not found or found[0] is None or any(f != found[0] for f in found):
        return None
    return found[0]


# -- metrics ----------------------------------------------------------------------


@dataclass
class Metric:
    name: str  # as given, e.g. "time/ms/%"
    base: str  # without "/%"
    percent: bool


def parse_metrics(text: str) -> list[Metric]:
    metrics = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        percent = name.endswith("/%")
        metrics.append(Metric(name, name[:-2] if percent else name, percent))
    if not metrics:
        raise ViewerError("no metrics given to -m/--metrics")
    return metrics


def _value(node: dict, key: str):
    """A metric's number on node, for arithmetic: 0 when absent, None when
    it is text or a list (a derived metric of it shows "-")."""
    value = node["metrics"].get(key, 0)
    return value if _is_number(value) else None


def _stored(node: dict, key: str):
    """A metric as stored (number, text or list), shown as it is."""
    return node["metrics"].get(key, 0)


def _flops_fields(profile: Profile) -> list[str]:
    return sorted((n for n in profile.metric_names if _FLOPS_FIELD.fullmatch(n)), key=lambda n: int(n[5:]))


def raw_metric(base: str, profile: Profile):
    """The stored metric a name means: exact, else case-insensitive with or without its unit ("time")."""
    if base in profile.metric_names:
        return base
    wanted = base.lower()
    for name in sorted(profile.metric_names):
        if wanted in (name.lower(), name.split("(")[0].strip().lower()):
            return name
    return None


def resolve(base: str, profile: Profile) -> Callable:
    """The function (profile, node) -> value for a metric name, or a ViewerError."""
    if (raw := raw_metric(base, profile)) is not None:
        return lambda p, n: _stored(n, raw)
    if m := _TIME.fullmatch(base):
        stored = CPU_TIME_METRIC if m.group(2) else TIME_METRIC
        return _time_metric(base, profile, stored, bool(m.group(1)), TIME_UNITS[m.group(3)])
    if m := _FLOP.fullmatch(base):
        if m.group(2):
            fields, needed = [f"flops{m.group(2)}"], f"'flops{m.group(2)}'"
        elif "flops" in profile.metric_names:
            fields, needed = ["flops"], "'flops'"
        else:
            fields = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
            needed = "'flops' or a 'flops<N>' metric (flops8, flops16, flops32, flops64)"
        _need(profile, base, fields, needed)
        return _rate_metric(base, profile, fields, RATE_PREFIXES[m.group(1)])
    if m := _BYTE.fullmatch(base):
        _need(profile, base, ["bytes"], "'bytes'")
        return _rate_metric(base, profile, ["bytes"], RATE_PREFIXES[m.group(1)])
    if base == "util":
        return _util_metric(profile)
    raise ViewerError(
        f"unknown metric {base!r} for {profile.path}; valid metrics: "
        f"{', '.join(available(profile))} (each also as METRIC/%)"
    )


def _need(profile: Profile, metric: str, fields: list, what: str) -> None:
    """Raises unless the file has every one of fields (and at least one); what names them."""
    if not fields or any(f not in profile.metric_names for f in fields):
        has = ", ".join(sorted(profile.metric_names)) or "no metrics"
        raise ViewerError(f"metric {metric!r} needs {what}, which {profile.path} does not have (it has: {has})")


def _time_metric(base: str, profile: Profile, stored: str, average: bool, scale: float) -> Callable:
    _need(profile, base, [stored], f"'{stored}'")
    if not average:
        return lambda p, n: None if _value(n, stored) is None else _value(n, stored) * scale
    _need(profile, base, ["count"], "'count'")

    def avg(p, n):
        count, value = _value(n, "count"), _value(n, stored)
        return value * scale / count if count and value is not None else None

    return avg


def _rate_metric(base: str, profile: Profile, fields: list, scale: float) -> Callable:
    _need(profile, base, [TIME_METRIC], f"'{TIME_METRIC}'")

    def rate(p, n):
        seconds, amounts = _value(n, TIME_METRIC), [_value(n, f) for f in fields]
        if seconds is None or None in amounts or not seconds > 0:
            return None
        return sum(amounts) / (seconds * 1e-9) * scale

    return rate


def _util_metric(profile: Profile) -> Callable:
    _need(profile, "util", [TIME_METRIC], f"'{TIME_METRIC}'")
    flops = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
    if not flops and "bytes" not in profile.metric_names:
        _need(profile, "util", [], "a 'flops<N>' or 'bytes' metric")
    if not profile.devices:
        raise ViewerError(
            f"metric 'util' is unavailable: {profile.path} has no device info "
            "(host profiles end with a device-info object)"
        )
    if all(peaks(*device) is None for device in profile.devices.values()):
        kind, info = next(iter(profile.devices.values()))
        raise ViewerError(
            f"metric 'util' is unavailable for {profile.path}: peak rates are known for CUDA sm80, "
            f"sm89, sm90, sm100 and HIP gfx90a, gfx942, gfx950; its {kind} device has arch "
            f"{str(info.get('arch'))!r}"
        )

    def util(p, n):
        node_peaks = _node_peaks(p, n)
        seconds, amounts = _value(n, TIME_METRIC), [_value(n, f) for f in [*flops, "bytes"]]
        if node_peaks is None or seconds is None or None in amounts or not seconds > 0:
            return None
        flop_peaks, bandwidth = node_peaks
        min_flops = sum(_value(n, f) / flop_peaks[int(f[5:])] for f in flops)
        min_bytes = _value(n, "bytes") / bandwidth
        return max(min_flops, min_bytes) / (seconds * 1e-9)

    return util


def available(profile: Profile) -> list[str]:
    return [name for name, _ in describe(profile)]


def describe(profile: Profile) -> list[tuple[str, str]]:
    """(metric name, description) for each metric the file supports."""
    names = profile.metric_names
    out = []
    for stored, prefix, what in ((TIME_METRIC, "", "device time"), (CPU_TIME_METRIC, "cpu_", "CPU time")):
        if stored in names:
            out += [(f"{prefix}time/{u}", f"{what} in {u}") for u in TIME_UNITS]
            if "count" in names:
                out += [(f"avg_{prefix}time/{u}", f"{what} / count, in {u}") for u in TIME_UNITS]
    if TIME_METRIC in names:
        flops = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
        if flops or "flops" in names:
            what = "flops" if "flops" in names else "flops of all precisions"
            out += [(f"{p}flop/s", f"{what} per second") for p in RATE_PREFIXES]
        for f in flops:
            out += [(f"{p}flop{f[5:]}/s", f"{f} per second") for p in RATE_PREFIXES]
        if "bytes" in names:
            out += [(f"{p}byte/s", "bytes per second") for p in RATE_PREFIXES]
        if (flops or "bytes" in names) and any(peaks(*d) is not None for d in profile.devices.values()):
            out.append(("util", "max(sum of flopsN / peak, bytes / peak bandwidth) / time"))
    out += [(name, "as stored in the file") for name in sorted(names)]
    return out


def default_metric(profile: Profile) -> str:
    names = profile.metric_names
    if profile.is_host and TIME_METRIC in names:
        return "time/s"
    if "cycles" in names:
        return "cycles"
    if TIME_METRIC in names:
        return "time/s"
    if not names:
        raise ViewerError(f"{profile.path}: the tree has no metrics")
    return sorted(names)[0]


# -- the displayed tree ---------------------------------------------------------------

FORMATS = ("full", "file_function_line", "function_line", "file_function", "short")


@dataclass
class Row:
    name: str  # as displayed
    raw: str  # the file's name, what -i/-e match
    kind: str
    values: list
    children: list


def build_rows(profile: Profile, metrics: list, funcs: list, fmt: str) -> list[Row]:
    multi_device = len(profile.devices) > 1

    def row(node):
        values = [f(profile, node) for f in funcs]
        return Row(
            _label(node, fmt, multi_device),
            node["frame"]["name"],
            node["frame"].get("type", ""),
            values,
            [row(c) for c in node["children"]],
        )

    roots = [row(r) for r in profile.roots]
    for root in roots:
        apply_percent(root, [m.percent for m in metrics])
    return roots


def diff_rows(this: list, other: list, n: int) -> list[Row]:
    """this minus other, node by node (matched by path of names); a node on one side only gets None values."""

    def row(a, b):
        if a is not None and b is not None:
            values = [x - y if _is_number(x) and _is_number(y) else None for x, y in zip(a.values, b.values)]
            name = a.name
        else:
            values = [None] * n
            name = (a or b).name + (" (only in this profile)" if b is None else " (only in the other profile)")
        node = a or b
        children = [row(x, y) for x, y in _pair(a.children if a else [], b.children if b else [])]
        return Row(name, node.raw, node.kind, values, children)

    return [row(a, b) for a, b in _pair(this, other)]


def _pair(left: list, right: list) -> list[tuple]:
    """Rows matched by name (the k-th of a name with the k-th), this side's order first."""

    def keyed(rows):
        seen: dict = {}
        out = {}
        for r in rows:
            out[(r.raw, seen.get(r.raw, 0))] = r
            seen[r.raw] = seen.get(r.raw, 0) + 1
        return out

    a, b = keyed(left), keyed(right)
    return [(a[k], b.get(k)) for k in a] + [(None, b[k]) for k in b if k not in a]


def format_name(name: str, fmt: str) -> str:
    """A Python frame's name (file:line@function) in one of Triton's formats; other names unchanged."""
    if fmt in ("full", "short") or not _PY_FRAME.fullmatch(name):
        return name
    if fmt == "file_function_line":
        return name.rsplit("/", 1)[-1]
    if fmt == "function_line":
        return name.rsplit(":", 1)[-1]
    location, function = name.rsplit("@", 1)  # file_function
    return f"{location.rsplit('/', 1)[-1].split(':')[0]}@{function}"


def _printable(name: str) -> str:
    """`name` with control characters (terminal escapes, newlines) escaped."""
    if name.isprintable():
        return name
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in name)


def _label(node: dict, fmt: str, multi_device: bool) -> str:
    name = _printable(node["frame"]["name"])
    if fmt == "short":
        kind = node["frame"].get("type")
        if kind in ("frame", "line") or _PY_FRAME.fullmatch(name):
            name = name.rsplit("/", 1)[-1]
        elif kind in ("kernel", "function"):
            name = short_cxx_name(name)
    else:
        name = format_name(name, fmt)
    if multi_device and "device_id" in node["metrics"]:
        name += f" [device {int(node['metrics']['device_id'])}]"
    return name


def short_cxx_name(name: str) -> str:
    """A demangled C++ kernel name without return type, template arguments
    and parameters ("void ns::kernel<4, F>(int, F)" -> "ns::kernel");
    other names unchanged."""
    if "(" not in name and "<" not in name:
        return name
    name = name.replace("(anonymous namespace)", "anon")
    out, depth = [], 0
    for char in name:
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    words = "".join(out).split()
    return words[-1] if words else name


def apply_percent(root: Row, flags: list[bool]) -> None:
    """METRIC/% as a percentage of the root's value."""
    base = list(root.values)

    def walk(row):
        for i, flag in enumerate(flags):
            if flag:
                v = row.values[i]
                share = _is_number(v) and _is_number(base[i]) and base[i] != 0
                row.values[i] = v / base[i] * 100 if share else None
        for c in row.children:
            walk(c)

    walk(root)


def exclude(rows: list[Row], pattern) -> list[Row]:
    kept = []
    for row in rows:
        if not pattern.match(row.raw):
            row.children = exclude(row.children, pattern)
            kept.append(row)
    return kept


def include(rows: list[Row], pattern, matched: bool = False) -> list[Row]:
    kept = []
    for row in rows:
        hit = matched or bool(pattern.match(row.raw))
        row.children = include(row.children, pattern, hit)
        if hit or row.children:
            kept.append(row)
    return kept


def threshold(rows: list[Row], limit: float) -> list[Row]:
    """Nodes whose first value is >= limit, with their ancestors (Triton's -t)."""
    kept = []
    for row in rows:
        row.children = threshold(row.children, limit)
        if row.children or (_is_number(row.values[0]) and row.values[0] >= limit):
            kept.append(row)
    return kept


def _key(row: Row):
    """Sorting by the first value: text, lists and NaN last."""
    value = row.values[0]
    return value if _is_number(value) and not math.isnan(value) else -math.inf


def sort_rows(row: Row) -> None:
    row.children.sort(key=_key, reverse=True)
    for c in row.children:
        sort_rows(c)


def sorted_lines(roots: list[Row], metric: str) -> list[str]:
    """--print-sorted: every node below the roots, largest first metric first (as Triton's viewer)."""
    rows = []

    def walk(row):
        for c in row.children:
            rows.append(c)
            walk(c)

    for root in roots:
        walk(root)
    out = [f"Sorted kernels by metric {metric}"]
    for row in sorted(rows, key=_key, reverse=True):
        name = row.name[:100] + "..." if len(row.name) > 100 else row.name
        value = f"{float(row.values[0]):.4}" if _is_number(row.values[0]) else format_value(row.values[0], None, False)
        out.append(f"{name:105} {value}")
    return out


# -- rendering ---------------------------------------------------------------------------


def column_style(values: list, percent: bool):
    """How one column's numbers are written: ("%", 2), ("f", decimals) or ("e", 3).

    A column shares one style so that its decimal points line up; the
    smallest non-zero value keeps four significant digits."""
    if percent:
        return "%", 2
    floats = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v) and v != 0]
    if not floats:
        return "f", 3
    smallest, largest = min(floats), max(floats)
    if smallest < 1e-6 or largest >= 1e9:
        return "e", 3
    return "f", max(3, 3 - math.floor(math.log10(smallest)))


def format_value(value, style, signed: bool) -> str:
    """A value as its column shows it: numbers in the column's style, NaN
    and infinities as "nan", "inf", text escaped, lists in brackets."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return _printable(value)
    if isinstance(value, list):
        return "[" + ",".join(_item(v) for v in value) + "]"  # no spaces: one token per column
    sign = "+" if signed else ""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value:{sign}}"
    if value == 0:
        value = type(value)(0)  # no "-0.00"
    kind, digits = style
    if isinstance(value, int) and kind != "%":
        return f"{value:{sign}d}"
    if kind == "%":
        return f"{value:{sign}.{digits}f}%"
    return f"{value:{sign}.{digits}{kind}}"


def _item(value) -> str:
    """An element of a list metric."""
    if isinstance(value, str):
        return _printable(value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def render(roots: list[Row], metrics: list[Metric], depth, color: bool, signed: bool) -> list[str]:
    lines = []  # (row, tree prefix, heat, is_root)
    for root in roots:
        _collect(root, root, "", "", 0, depth, lines)
    columns = []
    for i, m in enumerate(metrics):
        style = column_style([row.values[i] for row, *_ in lines], m.percent)
        columns.append([format_value(row.values[i], style, signed) for row, *_ in lines])
    widths = [max([len(m.name)] + [len(text) for text in col]) for m, col in zip(metrics, columns)]
    out = ["  ".join(m.name.rjust(w) for m, w in zip(metrics, widths)) + "  name"]
    for n, (row, prefix, heat, is_root) in enumerate(lines):
        cells = [col[n].rjust(w) for col, w in zip(columns, widths)]
        cells[0] = _paint(cells[0], _heat_color(heat), color)
        name = _paint(row.name, BOLD if is_root else _kind_color(row.kind), color)
        out.append("  ".join(cells) + "  " + _paint(prefix, DIM, color) + name)
    return out


def _collect(row, root, prefix, child_prefix, level, depth, lines) -> None:
    lines.append((row, prefix, _fraction(row, root), row is root))
    if depth is not None and level >= depth:
        return
    for i, child in enumerate(row.children):
        last = i == len(row.children) - 1
        branch, indent = ("└─ ", "   ") if last else ("├─ ", "│  ")
        _collect(child, root, child_prefix + branch, child_prefix + indent, level + 1, depth, lines)


def _fraction(row: Row, root: Row):
    v, r = row.values[0], root.values[0]
    return v / r if _is_number(v) and _is_number(r) and r and math.isfinite(r) else None


def _heat_color(fraction):
    if fraction is None:
        return None
    if fraction >= 0.5:
        return RED
    if fraction >= 0.2:
        return YELLOW
    if fraction >= 0.05:
        return GREEN
    return None


def _kind_color(kind: str):
    return {"kernel": CYAN, "function": CYAN, "memcpy": CYAN, "memset": CYAN, "line": DIM}.get(kind)


def _paint(text: str, code, enabled: bool) -> str:
    return f"\x1b[{code}m{text}{RESET}" if enabled and code and text else text


# -- command line ----------------------------------------------------------------------------

METRICS_HELP = """comma-separated metrics (default: time/s for host profiles, cycles for
intra-kernel trees). Names are Triton's viewer's:
- time/s, time/ms, time/us, time/ns: time (cpu_time/... likewise)
- avg_time/s, avg_time/ms, avg_time/us, avg_time/ns: time / count
- flop[8|16|32|64]/s, gflop[...]/s, tflop[...]/s: flops / time
- byte/s, gbyte/s, tbyte/s: bytes / time
- util: max(sum(flops<width>) / peak flops<width>, bytes / peak bandwidth) / time
- any metric in the file, case-insensitive, with or without its unit
  (time = time (ns), count, cycles, normalized_cycles, ...)
- <metric>/%%: the node's share of the root's value"""


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=argparse.RawTextHelpFormatter,
        description="Print a Proton profile tree (.hatchet) in the terminal; accepts Triton's proton-viewer options.",
    )
    p.add_argument(
        "profile",
        help="a .hatchet file written by Proton or by Triton's Proton\n"
        "(with --timeline: an intra-kernel .chrome_trace)",
    )
    p.add_argument("-l", "--list", action="store_true", help="print the metrics available in the file and exit")
    p.add_argument("-m", "--metrics", help=METRICS_HELP)
    p.add_argument(
        "-i",
        "--include",
        metavar="REGEX",
        help="keep the paths through nodes whose name matches (re.match: from the start\n"
        "of the full name), with the nodes' ancestors and descendants",
    )
    p.add_argument(
        "-e", "--exclude", metavar="REGEX", help="drop nodes whose name matches (re.match), with their subtrees"
    )
    p.add_argument(
        "-t",
        "--threshold",
        type=float,
        metavar="T",
        help="keep nodes whose first metric is >= T (in its unit), and their ancestors",
    )
    p.add_argument("-d", "--depth", type=int, metavar="N", help="show N levels of the tree (1: the roots only)")
    p.add_argument(
        "-f",
        "--format",
        choices=FORMATS,
        default="full",
        help="names of Python frames (file:line@function):\n"
        "- full (default): as recorded, with the path\n"
        "- file_function_line: file name, line and function\n"
        "- function_line: line@function\n"
        "- file_function: file@function\n"
        "- short: frames without directories, C++ kernel names without\n"
        "  templates and parameters",
    )
    p.add_argument(
        "--print-sorted",
        action="store_true",
        help="after the tree, list the nodes sorted by the first metric, largest first",
    )
    p.add_argument(
        "-s", "--sorted", action="store_true", help="sort each node's children by the first metric, largest first"
    )
    p.add_argument(
        "--diff-profile", "-diff", metavar="OTHER", help="show this profile's values minus OTHER's, node by node"
    )
    timeline = p.add_argument_group("a picture of one launch, from an intra-kernel .chrome_trace")
    timeline.add_argument(
        "--timeline",
        metavar="OUT.svg",
        help="draw one launch as SVG: a row per warp, a bar per scope ('-': to standard output)",
    )
    timeline.add_argument("--launch", metavar="'KERNEL #N'", help="the launch to draw (default: the first)")
    timeline.add_argument("--ctas", metavar="0-3,7", help="the CTAs to draw (default: all, sampled past 96 warps)")
    timeline.add_argument("--warps", metavar="0,4", help="the warps of each CTA to draw (default: all)")
    colors = p.add_mutually_exclusive_group()
    colors.add_argument("--color", dest="color", action="store_true", default=None, help="always use ANSI colours")
    colors.add_argument("--no-color", dest="color", action="store_false", help="never use ANSI colours")
    return p


def _compile(pattern: str, option: str):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ViewerError(f"{option}: invalid regular expression {pattern!r}: {e}") from None


def _use_color(choice) -> bool:
    if choice is not None:
        return choice
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def print_list(profile: Profile) -> None:
    raw = sorted({name.split("(")[0].strip().lower() for name in profile.metric_names})
    print("Available inclusive metrics:")
    for name in raw:
        print(f"- {name}")
    entries = [(n, t) for n, t in describe(profile) if n not in profile.metric_names]
    print("Derived metrics (any metric also as METRIC/%, the share of the root):")
    width = max([len(name) for name, _ in entries], default=0)
    for name, text in entries:
        print(f"- {name.ljust(width)}  {text}")


def _rows_for(profile: Profile, metrics: list, fmt: str, limit) -> list[Row]:
    roots = build_rows(profile, metrics, [resolve(m.base, profile) for m in metrics], fmt)
    return roots if limit is None else threshold(roots, limit)


def run(args) -> int:
    if args.timeline:
        from .writers import timeline_svg

        try:
            path = timeline_svg.write(args.profile, args.timeline, launch=args.launch, ctas=args.ctas, warps=args.warps)
        except timeline_svg.TimelineError as e:
            raise ViewerError(f"{args.profile}: {e}") from None
        except OSError as e:
            where = "standard output" if args.timeline == STDOUT else args.timeline
            raise ViewerError(f"{where}: cannot write: {e.strerror or e}") from None
        if path != STDOUT:  # on standard output, the picture is all that goes there
            print(f"wrote {path}")
        return 0
    profile = load(args.profile)
    if args.list:
        print_list(profile)
        return 0
    metrics = parse_metrics(args.metrics or default_metric(profile))
    include_re = _compile(args.include, "--include") if args.include else None
    exclude_re = _compile(args.exclude, "--exclude") if args.exclude else None
    if args.depth is not None and args.depth < 1:
        raise ViewerError(f"--depth must be >= 1, got {args.depth}")
    roots = _rows_for(profile, metrics, args.format, args.threshold)
    if args.diff_profile:
        other = load(args.diff_profile)
        roots = diff_rows(roots, _rows_for(other, metrics, args.format, args.threshold), len(metrics))
    if exclude_re:
        roots = exclude(roots, exclude_re)
    if include_re:
        roots = include(roots, include_re)
    if args.sorted:
        for root in roots:
            sort_rows(root)
    if not roots:
        print(f"{PROG}: no nodes left after --include/--exclude/--threshold", file=sys.stderr)
        return 0
    if args.diff_profile:
        print(f"# {profile.path} minus {args.diff_profile}")
    depth = None if args.depth is None else args.depth - 1
    print("\n".join(render(roots, metrics, depth, _use_color(args.color), bool(args.diff_profile))))
    if args.print_sorted:
        print()
        print("\n".join(sorted_lines(roots, metrics[0].name)))
    return 0


#: The viewer walks trees recursively, in a thread with this much stack and
#: recursion limit: a tree's depth is then limited by memory (about 100,000
#: levels), not by Python's default limit of about 1,000.
DEEP_STACK_BYTES = 1 << 30
DEEP_RECURSION_LIMIT = 400_000


def main(argv=None) -> int:
    try:
        args = make_parser().parse_args(argv)
    except SystemExit as e:  # --help, or a usage error argparse has printed
        return e.code if isinstance(e.code, int) else 2
    if args.threshold is not None and not math.isfinite(args.threshold):
        print(f"{PROG}: --threshold must be a finite number, got {args.threshold}", file=sys.stderr)
        return 2
    return _with_deep_stack(lambda: _run_reporting(args))


def _with_deep_stack(work):
    """Runs `work` in a thread with a deep stack: the largest of 1 GiB, 256
    and 64 MiB that the process may reserve (a memory limit, `ulimit -v`,
    can refuse the first), with a recursion limit in proportion; in this
    thread, as Python's defaults allow, where none can be had."""
    import threading

    result = []
    previous_stack, previous_limit = threading.stack_size(), sys.getrecursionlimit()
    try:
        for stack in (DEEP_STACK_BYTES, DEEP_STACK_BYTES >> 2, DEEP_STACK_BYTES >> 4):
            threading.stack_size(stack)
            sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT * stack // DEEP_STACK_BYTES))
            thread = threading.Thread(target=lambda: result.append(_reporting_bugs(work)), name="proton-view")
            try:
                thread.start()
            except RuntimeError:  # "can't start new thread": no room for this stack
                continue
            thread.join()
            break
        else:
            sys.setrecursionlimit(previous_limit)
            result.append(_reporting_bugs(work))
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    return result[0] if result else 2


def _reporting_bugs(work) -> int:
    """An unexpected exception is a bug: its traceback, and a line asking to
    report it (exit status 1); expected failures never come here."""
    from .commands import standard_output

    try:
        return work()
    except Exception:  # noqa: BLE001 - see above
        if standard_output.failed() is not None:  # proton-view's own standard output: no bug
            return standard_output.report(PROG)
        import traceback

        traceback.print_exc()
        print(f"{PROG}: this is a bug in Proton; please report it with the command line and the file", file=sys.stderr)
        return 1


def _run_reporting(args) -> int:
    which = args.profile + (f" or {args.diff_profile}" if args.diff_profile else "")
    try:
        return run(args)
    except ViewerError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{PROG}: {which}: the tree is too deep to show", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG}: {which}: not enough memory to show the tree", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


# -- Triton's viewer functions, on hatchet GraphFrames ------------------------------------------
#
# Same names, arguments and results as triton.profiler.viewer (Triton 3.6), so code
# written against it runs unchanged. They read both layouts: files in the inclusive
# layout of Proton's first releases (no writer emits it now) are turned into Triton's
# (each node's own values, device info keyed by type) first. They need llnl-hatchet and pandas, imported on first use.


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
    from .writers.msgpack_codec import unpackb

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


if __name__ == "__main__":
    sys.exit(main())
