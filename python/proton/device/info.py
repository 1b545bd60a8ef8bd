"""Device properties for the profile's device-info object (the viewer's
`util` metric needs SM count, clocks and memory bus width), read from the
CUDA driver with ctypes. Empty where no driver is loaded. Keys as Triton's
Proton writes them: arch (str), num_sms, clock_rate and memory_clock_rate
(kHz), bus_width (bits); plus our `name`."""

from __future__ import annotations

import ctypes

# CUdevice_attribute values (cuda.h).
_ATTRIBUTES = {"num_sms": 16, "clock_rate": 13, "memory_clock_rate": 36, "bus_width": 37, "major": 75, "minor": 76}


def describe(devices: list[int]) -> dict:
    if not devices:
        return {}
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return {}
    if cuda.cuInit(0) != 0:
        return {}
    out = {}
    for index in devices:
        handle = ctypes.c_int()
        if cuda.cuDeviceGet(ctypes.byref(handle), index) != 0:
            continue
        values = {}
        for key, attribute in _ATTRIBUTES.items():
            value = ctypes.c_int()
            if cuda.cuDeviceGetAttribute(ctypes.byref(value), attribute, handle) == 0:
                values[key] = value.value
        name = ctypes.create_string_buffer(256)
        if cuda.cuDeviceGetName(name, 256, handle) == 0:
            values["name"] = name.value.decode(errors="replace")
        if "major" in values:
            values["arch"] = f"{values.pop('major')}{values.pop('minor', 0)}"
        out[str(index)] = values
    return {"CUDA": out} if out else {}
