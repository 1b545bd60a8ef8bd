"""`proton.metric`, as `triton.profiler.metric`: how metric values that
launch hooks and scopes hand in are typed (proton.host.metrics)."""

from .host.metrics import FLOPS_WIDTHS, INT_RANGE, transform_tensor_metrics, unwritable

__all__ = ["FLOPS_WIDTHS", "INT_RANGE", "transform_tensor_metrics", "unwritable"]
