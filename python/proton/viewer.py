"""`proton-view [options] PROFILE.hatchet`: prints a profile tree in the terminal.

Reads the `.hatchet` files Proton writes (docs/profile-tree-format.md): host
profiles (one root `ROOT`, kernels below their calling context, a trailing
device-info object) and intra-kernel trees (one root per kernel, regions below).

Each line shows the chosen metrics of one node, then the node's name, indented
as a tree:

    $ proton-view -m time/ms,time/% run.hatchet
    time/ms   time/%  name
    10.0000  100.00%  ROOT
     8.0000   80.00%  ├─ forward
     6.0000   60.00%  │  ├─ matmul_kernel
     2.0000   20.00%  │  └─ add_kernel

Metrics (`-m`, comma separated; `--list` prints those a file has):
  time/s, time/ms, time/us, time/ns     from `time (ns)`
  avg_time/s ... avg_time/ns            time / count
  flop/s, gflop/s, tflop/s              all flopsN / time; flop16/s, tflop8/s ... one precision
  byte/s, gbyte/s, tbyte/s              bytes / time
  util                                  max over precisions of flop rate / peak, and of
                                        byte rate / peak bandwidth (peaks known for sm90)
  any metric stored in the file         count, cycles, normalized_cycles, num_samples, user metrics
  METRIC/%                              percentage of the root's value (per root)

Values are the file's (inclusive); filters hide nodes but do not recompute
their parents. With `--diff-profile OTHER` each value is this file's minus
OTHER's for the node with the same path of names (a node missing on one side
counts as zero there), and METRIC/% is that difference as a percentage of
OTHER's root.

Errors (unreadable file, bad structure, unknown metric, a metric the file has
no data for) print one line to stderr and return exit code 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Callable

PROG = "proton-view"

TIME_UNITS = {"s": 1e-9, "ms": 1e-6, "us": 1e-3, "ns": 1.0}
RATE_PREFIXES = {"": 1.0, "g": 1e-9, "t": 1e-12}
TIME_METRIC = "time (ns)"
LABELS = {"device_id"}  # per-kernel labels stored with the metrics, not metrics

# Dense tensor-core flops per clock per SM, by compute capability and precision bits.
FLOPS_PER_CLOCK_PER_SM = {90: {8: 8192, 16: 4096, 32: 2048, 64: 128}}

_TIME = re.compile(r"(avg_)?time/(s|ms|us|ns)")
_FLOP = re.compile(r"([gt]?)flop(\d*)/s")
_BYTE = re.compile(r"([gt]?)byte/s")
_FLOPS_FIELD = re.compile(r"flops(\d+)")
_ARCH = re.compile(r"(?:sm_?)?(\d+)[a-z]?")

RESET = "\x1b[0m"
BOLD, DIM, RED, GREEN, YELLOW, CYAN = "1", "2", "31", "32", "33", "36"


class ViewerError(Exception):
    """A problem with the input or the options: one line for the user."""


# -- reading ------------------------------------------------------------------


@dataclass
class Profile:
    path: str
    roots: list
    devices: dict                       # device index (str) -> (type, info dict)
    metric_names: set = field(default_factory=set)
    _devices_under: dict = field(default_factory=dict)

    @property
    def is_host(self) -> bool:
        return bool(self.devices) or any(r["frame"].get("type") != "function" for r in self.roots)


def load(path: str) -> Profile:
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        raise ViewerError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ViewerError(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ViewerError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    return parse(path, data)


def parse(path: str, data) -> Profile:
    def bad(reason):
        return ViewerError(f"{path}: not a profile tree: {reason}")

    if not isinstance(data, list):
        raise bad(f"the top level is a JSON {type(data).__name__}, expected a list of root nodes")
    devices = {}
    if data and isinstance(data[-1], dict) and "frame" not in data[-1] and (len(data) > 1 or "devices" in data[-1]):
        devices = _parse_devices(data[-1], bad)
        data = data[:-1]
    if not data:
        raise bad("no root nodes")
    names: set = set()
    for i, root in enumerate(data):
        _check_node(root, f"root {i}", bad, names)
    return Profile(path, data, devices, names - LABELS)


def _parse_devices(obj: dict, bad) -> dict:
    by_type = obj.get("devices")
    if not isinstance(by_type, dict):
        raise bad("the last element has no 'frame' and no 'devices' object")
    devices = {}
    for kind, by_index in by_type.items():
        if not isinstance(by_index, dict):
            raise bad(f"devices[{kind!r}] is not an object")
        for index, info in by_index.items():
            if not isinstance(info, dict):
                raise bad(f"devices[{kind!r}][{index!r}] is not an object")
            devices.setdefault(str(index), (kind, info))
    return devices


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
        if key in LABELS and str(value).isdigit():
            continue  # device_id: an index, written as a number or a string
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad(f"{where}: metric {key!r} is not a number")
    names.update(metrics)
    children = node.setdefault("children", [])
    if not isinstance(children, list):
        raise bad(f"{where}: 'children' is not a list")
    for child in children:
        _check_node(child, f"a child of {where}", bad, names)


# -- devices and peaks -----------------------------------------------------------


def peaks(info: dict):
    """(flops per second by precision bits, bytes per second), or None when unknown."""
    match = _ARCH.fullmatch(str(info.get("arch", "")))
    table = FLOPS_PER_CLOCK_PER_SM.get(int(match.group(1))) if match else None
    try:
        clock_hz = float(info["clock_rate_khz"]) * 1e3
        sms = int(info["num_sms"])
        bandwidth = 2 * float(info["memory_clock_rate_khz"]) * 1e3 * float(info["bus_width_bits"]) / 8
    except (KeyError, TypeError, ValueError):
        return None
    if table is None:
        return None
    return {bits: per_clock * sms * clock_hz for bits, per_clock in table.items()}, bandwidth


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
    found = [peaks(profile.devices[i][1]) if i in profile.devices else None for i in sorted(ids)]
    if not found or found[0] is None or any(f != found[0] for f in found):
        return None
    return found[0]


# -- metrics ----------------------------------------------------------------------


@dataclass
class Metric:
    name: str               # as given, e.g. "time/ms/%"
    base: str               # without "/%"
    percent: bool


def parse_metrics(text: str) -> list[Metric]:
    metrics = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        base = name[:-2] if name.endswith("/%") else name
        if base in ("time", "avg_time"):  # a percentage needs no unit
            base += "/s"
        metrics.append(Metric(name, base, name.endswith("/%")))
    if not metrics:
        raise ViewerError("no metrics given to -m/--metrics")
    return metrics


def _value(node: dict, key: str):
    return node["metrics"].get(key, 0)


def _flops_fields(profile: Profile) -> list[str]:
    return sorted((n for n in profile.metric_names if _FLOPS_FIELD.fullmatch(n)), key=lambda n: int(n[5:]))


def resolve(base: str, profile: Profile) -> Callable:
    """The function (profile, node) -> value for a metric name, or a ViewerError."""
    if base in profile.metric_names:
        return lambda p, n: _value(n, base)
    if m := _TIME.fullmatch(base):
        return _time_metric(base, profile, bool(m.group(1)), TIME_UNITS[m.group(2)])
    if m := _FLOP.fullmatch(base):
        fields = [f"flops{m.group(2)}"] if m.group(2) else _flops_fields(profile)
        needed = f"'{fields[0]}'" if m.group(2) else "a 'flops<N>' metric (flops8, flops16, flops32, flops64)"
        _need(profile, base, fields, needed)
        return _rate_metric(base, profile, fields, RATE_PREFIXES[m.group(1)])
    if m := _BYTE.fullmatch(base):
        _need(profile, base, ["bytes"], "'bytes'")
        return _rate_metric(base, profile, ["bytes"], RATE_PREFIXES[m.group(1)])
    if base == "util":
        return _util_metric(profile)
    raise ViewerError(f"unknown metric {base!r} for {profile.path}; valid metrics: "
                      f"{', '.join(available(profile))} (each also as METRIC/%)")


def _need(profile: Profile, metric: str, fields: list, what: str) -> None:
    """Raises unless the file has every one of fields (and at least one); what names them."""
    if not fields or any(f not in profile.metric_names for f in fields):
        has = ", ".join(sorted(profile.metric_names)) or "no metrics"
        raise ViewerError(f"metric {metric!r} needs {what}, which {profile.path} does not have (it has: {has})")


def _time_metric(base: str, profile: Profile, average: bool, scale: float) -> Callable:
    _need(profile, base, [TIME_METRIC], f"'{TIME_METRIC}'")
    if not average:
        return lambda p, n: _value(n, TIME_METRIC) * scale
    _need(profile, base, ["count"], "'count'")

    def avg(p, n):
        count = _value(n, "count")
        return _value(n, TIME_METRIC) * scale / count if count else None
    return avg


def _rate_metric(base: str, profile: Profile, fields: list, scale: float) -> Callable:
    _need(profile, base, [TIME_METRIC], f"'{TIME_METRIC}'")

    def rate(p, n):
        seconds = _value(n, TIME_METRIC) * 1e-9
        return sum(_value(n, f) for f in fields) / seconds * scale if seconds > 0 else None
    return rate


def _util_metric(profile: Profile) -> Callable:
    _need(profile, "util", [TIME_METRIC], f"'{TIME_METRIC}'")
    flops = _flops_fields(profile)
    if not flops and "bytes" not in profile.metric_names:
        _need(profile, "util", [], "a 'flops<N>' or 'bytes' metric")
    if not profile.devices:
        raise ViewerError(f"metric 'util' is unavailable: {profile.path} has no device info "
                          "(host profiles end with a {\"devices\": ...} object)")
    if all(peaks(info) is None for _, info in profile.devices.values()):
        kind, info = next(iter(profile.devices.values()))
        raise ViewerError(f"metric 'util' is unavailable for {profile.path}: peak rates are known only for "
                          f"sm90, and its {kind} device has arch {str(info.get('arch'))!r}")

    def util(p, n):
        node_peaks = _node_peaks(p, n)
        seconds = _value(n, TIME_METRIC) * 1e-9
        if node_peaks is None or seconds <= 0:
            return None
        flop_peaks, bandwidth = node_peaks
        ratios = [_value(n, f) / seconds / flop_peaks[int(f[5:])] for f in flops if int(f[5:]) in flop_peaks]
        if "bytes" in p.metric_names:
            ratios.append(_value(n, "bytes") / seconds / bandwidth)
        return max(ratios) if ratios else None
    return util


def available(profile: Profile) -> list[str]:
    return [name for name, _ in describe(profile)]


def describe(profile: Profile) -> list[tuple[str, str]]:
    """(metric name, description) for each metric the file supports."""
    names = profile.metric_names
    out = []
    if TIME_METRIC in names:
        out += [(f"time/{u}", f"device time in {u}") for u in TIME_UNITS]
        if "count" in names:
            out += [(f"avg_time/{u}", f"time / count, in {u}") for u in TIME_UNITS]
        flops = _flops_fields(profile)
        if flops:
            out += [(f"{p}flop/s", "flops of all precisions per second") for p in RATE_PREFIXES]
            for f in flops:
                out += [(f"{p}flop{f[5:]}/s", f"{f} per second") for p in RATE_PREFIXES]
        if "bytes" in names:
            out += [(f"{p}byte/s", "bytes per second") for p in RATE_PREFIXES]
        if (flops or "bytes" in names) and any(peaks(i) is not None for _, i in profile.devices.values()):
            out.append(("util", "max of flop rate / peak flops and byte rate / peak bandwidth"))
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


@dataclass
class Row:
    name: str
    kind: str
    values: list
    children: list
    base: list | None = None    # for a root: what METRIC/% divides by (None: its own values)


def build_rows(profile: Profile, funcs: list, short: bool) -> list[Row]:
    multi_device = len(profile.devices) > 1

    def row(node):
        values = [f(profile, node) for f in funcs]
        return Row(_label(node, short, multi_device), node["frame"].get("type", ""), values,
                   [row(c) for c in node["children"]])
    return [row(r) for r in profile.roots]


def build_diff_rows(this: Profile, other: Profile, funcs: list, other_funcs: list, short: bool) -> list[Row]:
    def row(a, b):
        va = [f(this, a) for f in funcs] if a is not None else [0] * len(funcs)
        vb = [f(other, b) for f in other_funcs] if b is not None else [0] * len(funcs)
        values = [None if x is None or y is None else x - y for x, y in zip(va, vb)]
        node = a if a is not None else b
        children = [row(x, y) for x, y in _pair(a["children"] if a else [], b["children"] if b else [])]
        return Row(_label(node, short, False), node["frame"].get("type", ""), values, children, vb)
    return [row(a, b) for a, b in _pair(this.roots, other.roots)]


def _pair(left: list, right: list) -> list[tuple]:
    """Nodes matched by name (the k-th of a name with the k-th), this side's order first."""
    def keyed(nodes):
        seen: dict = {}
        out = {}
        for n in nodes:
            name = n["frame"]["name"]
            out[(name, seen.get(name, 0))] = n
            seen[name] = seen.get(name, 0) + 1
        return out
    a, b = keyed(left), keyed(right)
    return [(a[k], b.get(k)) for k in a] + [(None, b[k]) for k in b if k not in a]


def _label(node: dict, short: bool, multi_device: bool) -> str:
    name = node["frame"]["name"]
    if short and node["frame"].get("type") in ("frame", "line"):
        name = name.rsplit("/", 1)[-1]
    elif short and node["frame"].get("type") == "kernel":
        name = short_cxx_name(name)
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
    """METRIC/% as a percentage of the root's value (in a diff, of the other profile's root)."""
    base = list(root.values if root.base is None else root.base)

    def walk(row):
        for i, flag in enumerate(flags):
            if flag:
                v = row.values[i]
                row.values[i] = None if v is None or not base[i] else v / base[i] * 100
        for c in row.children:
            walk(c)
    walk(root)


def exclude(rows: list[Row], pattern) -> list[Row]:
    kept = []
    for row in rows:
        if not pattern.search(row.name):
            row.children = exclude(row.children, pattern)
            kept.append(row)
    return kept


def include(rows: list[Row], pattern, matched: bool = False) -> list[Row]:
    kept = []
    for row in rows:
        hit = matched or bool(pattern.search(row.name))
        row.children = include(row.children, pattern, hit)
        if hit or row.children:
            kept.append(row)
    return kept


def threshold(root: Row, fraction: float) -> None:
    """Drops nodes whose first value is below fraction x the root's (in magnitude, for diffs)."""
    if root.values[0] is None:
        return
    limit = fraction * abs(root.values[0])

    def walk(row):
        row.children = [c for c in row.children if c.values[0] is None or abs(c.values[0]) >= limit]
        for c in row.children:
            walk(c)
    walk(root)


def sort_rows(row: Row) -> None:
    row.children.sort(key=lambda c: -math.inf if c.values[0] is None else c.values[0], reverse=True)
    for c in row.children:
        sort_rows(c)


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
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    sign = "+" if signed else ""
    if value == 0:
        value = type(value)(0)  # no "-0.00"
    kind, digits = style
    if isinstance(value, int) and kind != "%":
        return f"{value:{sign}d}"
    if kind == "%":
        return f"{value:{sign}.{digits}f}%"
    return f"{value:{sign}.{digits}{kind}}"


def render(roots: list[Row], metrics: list[Metric], depth, color: bool, signed: bool) -> list[str]:
    lines = []   # (row, tree prefix, heat, is_root)
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
    return v / r if v is not None and r else None


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


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Print a Proton profile tree (.hatchet) in the terminal.",
                                epilog="Metrics: time/s|ms|us|ns, avg_time/s|ms|us|ns, count, [g|t]flop[N]/s, "
                                       "[g|t]byte/s, util, cycles, normalized_cycles, any metric in the file; "
                                       "METRIC/% for the percentage of the root. --list shows a file's metrics.")
    p.add_argument("profile", help="a .hatchet file written by Proton")
    p.add_argument("-m", "--metrics", help="comma-separated metrics (default: time/s for host profiles, "
                                           "cycles for intra-kernel trees)")
    p.add_argument("-d", "--depth", type=int, help="show nodes down to this depth (roots are depth 0)")
    p.add_argument("-i", "--include", metavar="REGEX", help="keep nodes whose name matches, with their "
                                                            "ancestors and descendants")
    p.add_argument("-e", "--exclude", metavar="REGEX", help="drop nodes whose name matches, with their subtrees")
    p.add_argument("-t", "--threshold", type=float, metavar="F",
                   help="drop nodes whose first metric is below F x the root's value")
    p.add_argument("-s", "--sorted", action="store_true", help="sort children by the first metric, largest first")
    p.add_argument("--diff-profile", metavar="OTHER", help="show this profile's values minus OTHER's")
    p.add_argument("-l", "--list", action="store_true", help="print the metrics available in the file and exit")
    p.add_argument("--format", choices=["full", "short"], default="short",
                   help="labels: short (the default: Python frames and lines without directories, C++ kernel "
                        "names without templates and parameters) or full names")
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


def run(args) -> int:
    profile = load(args.profile)
    if args.list:
        entries = describe(profile)
        width = max(len(name) for name, _ in entries)
        print(f"metrics in {profile.path} (any of them as METRIC/% for the percentage of the root):")
        for name, text in entries:
            print(f"  {name.ljust(width)}  {text}")
        return 0
    metrics = parse_metrics(args.metrics or default_metric(profile))
    funcs = [resolve(m.base, profile) for m in metrics]
    include_re = _compile(args.include, "--include") if args.include else None
    exclude_re = _compile(args.exclude, "--exclude") if args.exclude else None
    if args.depth is not None and args.depth < 0:
        raise ViewerError(f"--depth must be >= 0, got {args.depth}")
    short = args.format == "short"
    if args.diff_profile:
        other = load(args.diff_profile)
        other_funcs = [resolve(m.base, other) for m in metrics]
        roots = build_diff_rows(profile, other, funcs, other_funcs, short)
    else:
        roots = build_rows(profile, funcs, short)
    for root in roots:
        apply_percent(root, [m.percent for m in metrics])
    if exclude_re:
        roots = exclude(roots, exclude_re)
    if include_re:
        roots = include(roots, include_re)
    for root in roots:
        if args.threshold is not None:
            threshold(root, args.threshold)
        if args.sorted:
            sort_rows(root)
    if not roots:
        print(f"{PROG}: no nodes left after --include/--exclude", file=sys.stderr)
        return 0
    if args.diff_profile:
        print(f"# {profile.path} minus {args.diff_profile}")
    print("\n".join(render(roots, metrics, args.depth, _use_color(args.color), bool(args.diff_profile))))
    return 0


def main(argv=None) -> int:
    try:
        args = make_parser().parse_args(argv)
    except SystemExit as e:  # --help, or a usage error argparse has printed
        return e.code if isinstance(e.code, int) else 2
    try:
        return run(args)
    except ViewerError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{PROG}: {args.profile}: the tree is too deep to show", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
