"""Metric values as launch hooks and scopes hand them in, normalised to the
types the profile keeps (the rules of Triton's Proton; `proton.metric` for
users): flops counts are floats, byte counts ints, other metrics keep their
Python type; a tensor on the CPU is read as its value (one element) or list;
a tensor on a device is kept apart, to be read where it lives. And a host
session's metrics (SessionMetrics): checked when added, summed per node."""

from __future__ import annotations

import numbers

from ..contract.errors import ProfilerError, unicode_problem

#: The widths a "flopsN" metric may name (flops8, flops16, flops32, flops64).
FLOPS_WIDTHS = (8, 16, 32, 64)

_FLOPS_NAMES = frozenset(["flops"] + [f"flops{width}" for width in FLOPS_WIDTHS])


def _is_tensor(value) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "device")


def _on_device(tensor) -> bool:
    return getattr(tensor.device, "type", "cpu") != "cpu"


def is_device_tensor(value) -> bool:
    device = getattr(value, "device", None)
    return hasattr(value, "data_ptr") and getattr(device, "type", "cpu") != "cpu"


def _as_type(name: str, value):
    if name in _FLOPS_NAMES:
        return float(value)
    if name == "bytes" or isinstance(value, numbers.Integral):  # numpy's too: JSON writes Python's
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


#: The integers every tree format holds (MessagePack: int64 and uint64).
INT_RANGE = (-(1 << 63), (1 << 64) - 1)


def unwritable(value) -> str | None:
    """Why a metric value (a number, text, or a list of them) cannot be
    written by every output format; None if it can."""
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, int) and not INT_RANGE[0] <= item <= INT_RANGE[1]:
            size = f"{len(str(abs(item)))} digits" if item.bit_length() < 10_000 else f"{item.bit_length()} bits"
            return f"an integer of {size} is beyond 64 bits, which .hatchet_msgpack cannot hold (use a float)"
        if isinstance(item, str) and unicode_problem(item):
            return f"the string {unicode_problem(item)}"
    return None


def _normalised(name: str, value):
    if _is_tensor(value):
        value = value.item() if value.numel() == 1 else value.tolist()
    if isinstance(value, (list, tuple)):
        return [_as_type(name, item) for item in value]
    return _as_type(name, value)


def transform_tensor_metrics(metrics: dict) -> tuple[dict, dict]:
    """Splits `metrics` into (scalar metrics, device-tensor metrics), the
    scalars (numbers, lists of numbers, CPU tensors) converted as above."""
    scalars, tensors = {}, {}
    for name, value in metrics.items():
        if _is_tensor(value) and _on_device(value):
            tensors[name] = value
        else:
            scalars[name] = _normalised(name, value)
    return scalars, tensors


class SessionMetrics:
    """HostSession's user and launch_metadata metrics: checks and sums on
    the session's current phase (its `user_metrics`, `metric_types`,
    `current_phase()`, `device_slots`, `graph_metrics`,
    `skipped_in_capture` and `name`)."""

    # As Triton's Proton: "name" and "name(exc)" are int or float, summed on
    # the scope's node; "name(pty)" is a property (int, float or str), the
    # last value kept. The suffix is not part of the name in the tree. A
    # metric keeps its type (and kind) for the whole session.
    def check_metrics(self, scope_name: str, metrics: dict, node: int | None = None) -> None:
        """A metric name keeps its kind (summed, "(exc)", "(pty)") in the
        session. Numbers are summed per node and keep their type (int or
        float), lists of numbers element-wise, device tensors on the device
        (read when the session collects); a property keeps its last value,
        of any type, per scope; strings are allowed for properties and
        "(exc)" metrics, where the last value is kept (as in Triton's Proton).
        Every value, and its sum on `node`, must be one the output formats
        can write (metric.unwritable)."""
        if not isinstance(metrics, dict):
            raise ProfilerError(f"metrics of scope {scope_name!r} must be a dict, got {type(metrics).__name__}")
        sums = self.user_metrics.get(node, {}) if node is not None else {}
        for key, value in metrics.items():
            name, kind = split_metric(key)
            if unicode_problem(key):
                raise ProfilerError(f"a metric of scope {scope_name!r} has a name that {unicode_problem(key)}")
            if is_device_tensor(value):
                if kind != "inc":
                    raise ProfilerError(
                        f"metric {key!r} of scope {scope_name!r}: a device tensor is summed, not {kind}"
                    )
                continue
            value = _host_value(value)
            allowed = (int, float) if kind == "inc" else (int, float, str)
            items = value if isinstance(value, list) else [value]
            if not items or any(isinstance(v, bool) or not isinstance(v, allowed) for v in items):
                raise ProfilerError(
                    f"metric {key!r} of scope {scope_name!r} is {type(value).__name__}; metrics "
                    "must be int or float, lists of them, or tensors"
                    + (" (str only for '(pty)' and '(exc)')" if isinstance(value, str) else "")
                )
            vtype = _value_type(value) if _summed(kind, value) else None
            previous = self.metric_types.get(name, (vtype, kind))
            if previous[1] != kind or None not in (vtype, previous[0]) and previous[0] != vtype:
                raise ProfilerError(
                    f"metric {name!r} of scope {scope_name!r} changed type from "
                    f"{_describe(*previous)} to {_describe(vtype, kind)} in session {self.name!r}"
                )
            try:
                total = _sum(sums.get(name), value) if vtype is not None and name in sums else value
            except ProfilerError as error:
                raise ProfilerError(f"metric {key!r} of scope {scope_name!r}: {error}") from None
            problem = unwritable(total)
            if problem:
                what = "its sum on this scope" if total is not value else "its value"
                raise ProfilerError(f"metric {key!r} of scope {scope_name!r}: {what} cannot be written: {problem}")

    def add_metrics(self, node: int, scope_name: str, metrics: dict) -> None:
        self.check_metrics(scope_name, metrics, node)  # all checked before any is added
        captured = self.captured_metrics()  # during a graph capture: the graph's, for its replays
        sums = self.user_metrics.setdefault(node, {}) if captured is None else None
        for key, value in metrics.items():
            name, kind = split_metric(key)
            if is_device_tensor(value):
                self._add_on_device("scope", node, name, value, captured=captured)
                continue
            value = _host_value(value)
            summed = _summed(kind, value)
            if summed:
                self.metric_types[name] = (_value_type(value), kind)
            else:
                self.metric_types.setdefault(name, (None, kind))
            if captured is not None:
                captured.add_host("scope", node, name, value, summed)
            else:
                add_value(sums, name, value, summed)

    def add_kernel_metrics(self, node: int, kernel: str, metrics: dict, stream=None) -> None:
        """launch_metadata's metrics for the launch about to be made at
        `node` (its kernel leaf: `kernel`), typed as metric.py says."""
        captured = self.captured_metrics()  # during a graph capture: the graph's, for its replays
        scalars = {}
        for name, value in metrics.items():
            if is_device_tensor(value):
                self._add_on_device("kernel", (node, kernel), name, value, stream, captured)
            else:
                scalars[name] = value
        scalars, _ = transform_tensor_metrics(scalars)
        sums = {} if captured is not None else self.current_phase().kernel_metrics.setdefault((node, kernel), {})
        totals = {}
        for name, value in scalars.items():  # all checked before any is added
            if unicode_problem(name):
                raise ProfilerError(
                    f"launch_metadata of kernel {kernel} gave a metric name that {unicode_problem(name)}"
                )
            items = value if isinstance(value, list) else [value]
            if not items or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in items):
                raise ProfilerError(
                    f"launch_metadata of kernel {kernel} gave metric {name!r} as {type(value).__name__}; "
                    "metrics are real numbers, lists of them, or tensors"
                )
            totals[name] = _sum(sums.get(name), value)
            problem = unwritable(totals[name])
            if problem:
                raise ProfilerError(f"launch_metadata of kernel {kernel}: metric {name!r} cannot be written: {problem}")
        if captured is not None:
            for name, value in totals.items():
                captured.add_host("kernel", (node, kernel), name, value, True)
        else:
            sums.update(totals)

    def captured_metrics(self):
        """What the CUDA graph this thread is capturing recorded for this
        session (graph_metrics.CapturedMetrics), or None outside a capture."""
        self.graph_metrics.listen()
        return self.graph_metrics.capturing()

    def _add_on_device(self, where: str, place, name: str, tensor, stream=None, captured=None) -> None:
        # The add is a kernel of the profiler's own, named "<metric>": below
        # the metadata scope (a launch's metric: the launch hook has set it,
        # with the kernel's frame where Triton shows one), not among the
        # user's kernels; on the launch's stream (a capture may span several
        # streams), else the current one.
        import contextlib

        import torch

        from .runtime import _host
        from .state import metadata_state

        key = (where, place, name) if captured is None else captured.device_key(where, place, name)
        host = _host()
        state = metadata_state() if where == "scope" else contextlib.nullcontext()
        with state, _on_stream(torch, stream):
            capturing = captured is not None or torch.cuda.is_current_stream_capturing()
            host.set_launch_metrics(0.0, 0.0, 0.0, 0.0, 0.0, METRIC_KERNEL_NAME)
            try:
                self.device_slots.add(key, name, tensor, capturing)
            except Exception as error:  # noqa: BLE001 - only inside a capture, below
                if not capturing:
                    raise
                # Never raised into the program's capture: the metric is
                # left out of the graph, and the report says so.
                self.note_skipped_in_capture(f"metric {name!r}: {error}")
            finally:
                host.clear_launch_metrics()

    def note_skipped_in_capture(self, what: str) -> None:
        """Counts a metric left out of a CUDA graph capture (its warning in
        the report, once per cause, with how many times it happened)."""
        self.skipped_in_capture[what] = self.skipped_in_capture.get(what, 0) + 1


#: What the kernel that adds a device metric is called in profiles.
METRIC_KERNEL_NAME = "<metric>"


def read_value(name: str, value):
    """A device metric's sum as read from its slots, typed by its name
    (flops counts are floats, byte counts ints)."""
    if isinstance(value, list):
        return [_as_type(name, item) for item in value]
    return _as_type(name, value)


def _host_value(value):
    """A CPU tensor as its number or list; anything else as it is."""
    if hasattr(value, "data_ptr") and hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, tuple):
        value = list(value)
    return value


def add_value(sums: dict, name: str, value, summed: bool) -> None:
    """Adds `value` to `sums[name]`, or keeps it there when it is not
    summed (a property, a string)."""
    sums[name] = _sum(sums.get(name), value) if summed else value


def _value_type(value) -> type:
    """int or float (list: of its items; a float anywhere makes it float)."""
    items = value if isinstance(value, list) else [value]
    return float if any(isinstance(v, float) for v in items) else int


def _sum(total, value):
    """total + value, element-wise for lists (of equal lengths)."""
    if total is None:
        return list(value) if isinstance(value, list) else value
    if isinstance(value, list) or isinstance(total, list):
        if not (isinstance(value, list) and isinstance(total, list)) or len(value) != len(total):
            raise ProfilerError(
                f"a vector metric of {len(total) if isinstance(total, list) else 1} values got {value!r}"
            )
        return [a + b for a, b in zip(total, value)]
    return total + value


def _on_stream(torch, stream):
    """torch's stream context for a raw CUDA stream handle (a launch's), or
    a context that changes nothing."""
    import contextlib

    if isinstance(stream, int) and stream:
        return torch.cuda.stream(torch.cuda.ExternalStream(stream))
    return contextlib.nullcontext()


def _summed(kind: str, value) -> bool:
    """Whether a metric value adds up on its node (else the last one is kept)."""
    return kind != "pty" and not isinstance(value, str)


def split_metric(key: str) -> tuple[str, str]:
    """("cpu_time (ns)", "exc") for "cpu_time (ns)(exc)"; kind "inc" without a suffix."""
    if not isinstance(key, str) or not key:
        raise ProfilerError(f"a metric name must be a non-empty string, got {key!r}")
    stripped = key.rstrip()
    for kind in ("exc", "pty"):
        if stripped.endswith(f"({kind})"):
            return stripped[: -len(kind) - 2].strip(), kind
    return key, "inc"


def _describe(vtype: type | None, kind: str) -> str:
    return (vtype.__name__ if vtype else "a kept value") + (f" ({kind})" if kind != "inc" else "")
