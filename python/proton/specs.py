"""Peak arithmetic rate and memory bandwidth of a device, as
`triton.profiler.specs` has them: `max_flops(device_type, arch, width,
num_sms, clock_rate)` and `max_bps(device_type, arch, bus_width,
memory_clock_rate)` (clocks in kHz, bus width in bits). The viewer's `util`
metric uses the same functions."""

from .viewer import max_bps, max_flops

__all__ = ["max_bps", "max_flops"]
