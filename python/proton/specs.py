"""`proton.specs`, as `triton.profiler.specs`: peak arithmetic rate and memory
bandwidth of a device (proton.device.specs)."""

from .device.specs import max_bps, max_flops

__all__ = ["max_bps", "max_flops"]
