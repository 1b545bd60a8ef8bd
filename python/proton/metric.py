"""Metric values as launch hooks and scopes hand them in, normalised to the
types the profile keeps (the rules of Triton's Proton): flops counts are
floats, byte counts ints, other metrics keep their Python type; a tensor on
the CPU is read as its value (one element) or list; a tensor on a device is
kept apart, to be read where it lives."""

from __future__ import annotations

import numbers

from .contract.errors import unicode_problem

#: The widths a "flopsN" metric may name (flops8, flops16, flops32, flops64).
FLOPS_WIDTHS = (8, 16, 32, 64)

_FLOPS_NAMES = frozenset(["flops"] + [f"flops{width}" for width in FLOPS_WIDTHS])


def _is_tensor(value) -> bool:
    return hasattr(value, "data_ptr") and hasattr(value, "device")


def _on_device(tensor) -> bool:
    return getattr(tensor.device, "type", "cpu") != "cpu"


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


__all__ = ["FLOPS_WIDTHS", "INT_RANGE", "transform_tensor_metrics", "unwritable"]
