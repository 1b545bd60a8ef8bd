"""proton-view's printing: the tree of rows a profile's nodes become
(names in Triton's formats, METRIC/% shares, -i/-e/-t filters, sorting) and
its rendering as aligned columns with a tree of names, coloured on a
terminal."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .derived_metrics import Metric
from .parsing import Profile, _is_number

_PY_FRAME = re.compile(r"[^@]*:\d+@[^@]*")  # file:line@function

RESET = "\x1b[0m"
BOLD, DIM, RED, GREEN, YELLOW, CYAN = "1", "2", "31", "32", "33", "36"

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
