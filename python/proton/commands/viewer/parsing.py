"""proton-view's reading of profile trees: a .hatchet (JSON) or
.hatchet_msgpack file, checked, into a Profile whose metrics are inclusive
(Triton's layout holds each node's own; Proton's first releases wrote
inclusive ones, still read). Errors are ViewerError, one line for the user."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...host.state import COMPUTE_METADATA_SCOPE_NAME
from ...writers.files import open_input, read_input

LABELS = {"device_id", "device_type"}  # per-kernel labels stored with the metrics, not metrics
METADATA_FRAME = COMPUTE_METADATA_SCOPE_NAME  # Triton's launch-metadata scope, never shown


class ViewerError(Exception):
    """A problem with the input or the options: one line for the user."""


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
    from ...writers.msgpack_codec import unpackb

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
