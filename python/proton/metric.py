"""Metric values as launch hooks and scopes hand them in, normalised to the
types the profile keeps (the rules of Triton's Proton): flops counts are
floats, byte counts ints, other metrics keep their Python type; a tensor on
the CPU is read as its value (one element) or list; a tensor on a device is
kept apart, to be read where it lives."""

from __future__ import annotations

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
    if name == "bytes":
        return int(value)
    return value


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


__all__ = ["FLOPS_WIDTHS", "transform_tensor_metrics"]
