"""Peak arithmetic rate and memory bandwidth of a device, as
`triton.profiler.specs` has them: `max_flops(device_type, arch, width,
num_sms, clock_rate)` and `max_bps(device_type, arch, bus_width,
memory_clock_rate)` (clocks in kHz, bus width in bits). The viewer's `util`
metric uses them."""

from __future__ import annotations

import re

# Dense peak of 8-bit flops per second; halved for each doubling of the width.
_CUDA_FP8_PEAK = {
    "80": lambda sms, khz: 624e12,
    "89": lambda sms, khz: 330.3e12,
    "90": lambda sms, khz: 1513e12 * (sms / 114) * (khz / 1755e3),
    "100": lambda sms, khz: 16384 * sms * khz * 1e3,
}
_HIP_FP8_PER_CLOCK_PER_CU = {"gfx90a": 1024, "gfx942": 4096, "gfx950": 8192}
_HIP_BANDWIDTH = {"gfx90a": 3.2e12, "gfx942": 5.3e12, "gfx950": 8.0e12}


def _arch(kind: str, arch) -> str:
    arch = str(arch).split(":")[0]
    if kind != "HIP":
        arch = re.sub(r"^sm_?", "", arch).rstrip("af")
    return arch


def max_flops(device_type: str, arch, width: int, num_sms, clock_rate) -> float:
    """Peak flops/s of width-bit operations (clock_rate in kHz); ValueError when unknown."""
    arch = _arch(device_type, arch)
    if device_type == "HIP":
        if arch not in _HIP_FP8_PER_CLOCK_PER_CU:
            raise ValueError(f"Unsupported architecture: {arch}")
        fp8 = _HIP_FP8_PER_CLOCK_PER_CU[arch] * float(num_sms) * float(clock_rate) * 1e3
    elif device_type == "CUDA":
        if arch not in _CUDA_FP8_PEAK:
            raise ValueError(f"Unsupported architecture: {arch}")
        fp8 = _CUDA_FP8_PEAK[arch](float(num_sms), float(clock_rate))
    else:
        raise ValueError(f"Unsupported device type: {device_type}")
    return fp8 * 8 / width


def max_bps(device_type: str, arch, bus_width, memory_clock_rate) -> float:
    """Peak memory bytes/s (memory_clock_rate in kHz, bus_width in bits); ValueError when unknown."""
    if device_type == "CUDA":
        return 2 * float(bus_width) * float(memory_clock_rate) * 1e3 / 8
    arch = _arch(device_type, arch)
    if device_type == "HIP" and arch in _HIP_BANDWIDTH:
        return _HIP_BANDWIDTH[arch]
    raise ValueError(f"Unsupported architecture: {arch}")
