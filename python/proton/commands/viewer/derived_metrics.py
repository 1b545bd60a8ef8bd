"""proton-view's metrics: the stored ones by name (case-insensitive, unit
optional), and those derived from them as Triton's viewer derives them
(time in units, averages, flop and byte rates, utilisation of the device's
peaks: proton.device.specs); `METRIC/%` shares are the printing's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ...device.specs import max_bps, max_flops
from .parsing import Profile, ViewerError, _is_number

TIME_UNITS = {"s": 1e-9, "ms": 1e-6, "us": 1e-3, "ns": 1.0}
RATE_PREFIXES = {"": 1.0, "g": 1e-9, "t": 1e-12}
TIME_METRIC = "time (ns)"
CPU_TIME_METRIC = "cpu_time (ns)"
FLOP_WIDTHS = (8, 16, 32, 64)

_TIME = re.compile(r"(avg_)?(cpu_)?time/(s|ms|us|ns)")
_FLOP = re.compile(r"([gt]?)flop(8|16|32|64)?/s")
_BYTE = re.compile(r"([gt]?)byte/s")
_FLOPS_FIELD = re.compile(r"flops(\d+)")


# -- devices and peaks (proton.specs: Triton's numbers) -----------------------------------


def peaks(kind: str, info: dict):
    """({width: peak flops/s}, peak bytes/s) of a device, or None when unknown."""
    try:
        flops = {
            w: max_flops(kind, info.get("arch"), w, info.get("num_sms"), info.get("clock_rate")) for w in FLOP_WIDTHS
        }
        return flops, max_bps(kind, info.get("arch"), info.get("bus_width"), info.get("memory_clock_rate"))
    except (ValueError, TypeError):
        return None


def _devices_under(profile: Profile, node: dict) -> frozenset:
    key = id(node)
    if key not in profile._devices_under:
        ids = set()
        if "device_id" in node["metrics"]:
            ids.add(str(int(node["metrics"]["device_id"])))
        for child in node["children"]:
            ids |= _devices_under(profile, child)
        profile._devices_under[key] = frozenset(ids)
    return profile._devices_under[key]


def _node_peaks(profile: Profile, node: dict):
    """The peaks of the device(s) of the kernels below node; None when unknown or when they differ."""
    ids = _devices_under(profile, node) or set(profile.devices)
    found = [peaks(*profile.devices[i]) if i in profile.devices else None for i in sorted(ids)]
    if not found or found[0] is None or any(f != found[0] for f in found):
        return None
    return found[0]


# -- metrics ----------------------------------------------------------------------


@dataclass
class Metric:
    name: str  # as given, e.g. "time/ms/%"
    base: str  # without "/%"
    percent: bool


def parse_metrics(text: str) -> list[Metric]:
    metrics = []
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        percent = name.endswith("/%")
        metrics.append(Metric(name, name[:-2] if percent else name, percent))
    if not metrics:
        raise ViewerError("no metrics given to -m/--metrics")
    return metrics


def _value(node: dict, key: str):
    """A metric's number on node, for arithmetic: 0 when absent, None when
    it is text or a list (a derived metric of it shows "-")."""
    value = node["metrics"].get(key, 0)
    return value if _is_number(value) else None


def _stored(node: dict, key: str):
    """A metric as stored (number, text or list), shown as it is."""
    return node["metrics"].get(key, 0)


def _flops_fields(profile: Profile) -> list[str]:
    return sorted((n for n in profile.metric_names if _FLOPS_FIELD.fullmatch(n)), key=lambda n: int(n[5:]))


def raw_metric(base: str, profile: Profile):
    """The stored metric a name means: exact, else case-insensitive with or without its unit ("time")."""
    if base in profile.metric_names:
        return base
    wanted = base.lower()
    for name in sorted(profile.metric_names):
        if wanted in (name.lower(), name.split("(")[0].strip().lower()):
            return name
    return None


def resolve(base: str, profile: Profile) -> Callable:
    """The function (profile, node) -> value for a metric name, or a ViewerError."""
    if (raw := raw_metric(base, profile)) is not None:
        return lambda p, n: _stored(n, raw)
    if m := _TIME.fullmatch(base):
        stored = CPU_TIME_METRIC if m.group(2) else TIME_METRIC
        return _time_metric(base, profile, stored, bool(m.group(1)), TIME_UNITS[m.group(3)])
    if m := _FLOP.fullmatch(base):
        if m.group(2):
            fields, needed = [f"flops{m.group(2)}"], f"'flops{m.group(2)}'"
        elif "flops" in profile.metric_names:
            fields, needed = ["flops"], "'flops'"
        else:
            fields = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
            needed = "'flops' or a 'flops<N>' metric (flops8, flops16, flops32, flops64)"
        _need(profile, base, fields, needed)
        return _rate_metric(base, profile, fields, RATE_PREFIXES[m.group(1)])
    if m := _BYTE.fullmatch(base):
        _need(profile, base, ["bytes"], "'bytes'")
        return _rate_metric(base, profile, ["bytes"], RATE_PREFIXES[m.group(1)])
    if base == "util":
        return _util_metric(profile)
    raise ViewerError(
        f"unknown metric {base!r} for {profile.path}; valid metrics: "
        f"{', '.join(available(profile))} (each also as METRIC/%)"
    )


def _need(profile: Profile, metric: str, fields: list, what: str) -> None:
    """Raises unless the file has every one of fields (and at least one); what names them."""
    if not fields or any(f not in profile.metric_names for f in fields):
        has = ", ".join(sorted(profile.metric_names)) or "no metrics"
        raise ViewerError(f"metric {metric!r} needs {what}, which {profile.path} does not have (it has: {has})")


def _time_metric(base: str, profile: Profile, stored: str, average: bool, scale: float) -> Callable:
    _need(profile, base, [stored], f"'{stored}'")
    if not average:
        return lambda p, n: None if _value(n, stored) is None else _value(n, stored) * scale
    _need(profile, base, ["count"], "'count'")

    def avg(p, n):
        count, value = _value(n, "count"), _value(n, stored)
        return value * scale / count if count and value is not None else None

    return avg


def _rate_metric(base: str, profile: Profile, fields: list, scale: float) -> Callable:
    _need(profile, base, [TIME_METRIC], f"'{TIME_METRIC}'")

    def rate(p, n):
        seconds, amounts = _value(n, TIME_METRIC), [_value(n, f) for f in fields]
        if seconds is None or None in amounts or not seconds > 0:
            return None
        return sum(amounts) / (seconds * 1e-9) * scale

    return rate


def _util_metric(profile: Profile) -> Callable:
    _need(profile, "util", [TIME_METRIC], f"'{TIME_METRIC}'")
    flops = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
    if not flops and "bytes" not in profile.metric_names:
        _need(profile, "util", [], "a 'flops<N>' or 'bytes' metric")
    if not profile.devices:
        raise ViewerError(
            f"metric 'util' is unavailable: {profile.path} has no device info "
            "(host profiles end with a device-info object)"
        )
    if all(peaks(*device) is None for device in profile.devices.values()):
        kind, info = next(iter(profile.devices.values()))
        raise ViewerError(
            f"metric 'util' is unavailable for {profile.path}: peak rates are known for CUDA sm80, "
            f"sm89, sm90, sm100 and HIP gfx90a, gfx942, gfx950; its {kind} device has arch "
            f"{str(info.get('arch'))!r}"
        )

    def util(p, n):
        node_peaks = _node_peaks(p, n)
        seconds, amounts = _value(n, TIME_METRIC), [_value(n, f) for f in [*flops, "bytes"]]
        if node_peaks is None or seconds is None or None in amounts or not seconds > 0:
            return None
        flop_peaks, bandwidth = node_peaks
        min_flops = sum(_value(n, f) / flop_peaks[int(f[5:])] for f in flops)
        min_bytes = _value(n, "bytes") / bandwidth
        return max(min_flops, min_bytes) / (seconds * 1e-9)

    return util


def available(profile: Profile) -> list[str]:
    return [name for name, _ in describe(profile)]


def describe(profile: Profile) -> list[tuple[str, str]]:
    """(metric name, description) for each metric the file supports."""
    names = profile.metric_names
    out = []
    for stored, prefix, what in ((TIME_METRIC, "", "device time"), (CPU_TIME_METRIC, "cpu_", "CPU time")):
        if stored in names:
            out += [(f"{prefix}time/{u}", f"{what} in {u}") for u in TIME_UNITS]
            if "count" in names:
                out += [(f"avg_{prefix}time/{u}", f"{what} / count, in {u}") for u in TIME_UNITS]
    if TIME_METRIC in names:
        flops = [f for f in _flops_fields(profile) if int(f[5:]) in FLOP_WIDTHS]
        if flops or "flops" in names:
            what = "flops" if "flops" in names else "flops of all precisions"
            out += [(f"{p}flop/s", f"{what} per second") for p in RATE_PREFIXES]
        for f in flops:
            out += [(f"{p}flop{f[5:]}/s", f"{f} per second") for p in RATE_PREFIXES]
        if "bytes" in names:
            out += [(f"{p}byte/s", "bytes per second") for p in RATE_PREFIXES]
        if (flops or "bytes" in names) and any(peaks(*d) is not None for d in profile.devices.values()):
            out.append(("util", "max(sum of flopsN / peak, bytes / peak bandwidth) / time"))
    out += [(name, "as stored in the file") for name in sorted(names)]
    return out


def default_metric(profile: Profile) -> str:
    names = profile.metric_names
    if profile.is_host and TIME_METRIC in names:
        return "time/s"
    if "cycles" in names:
        return "cycles"
    if TIME_METRIC in names:
        return "time/s"
    if not names:
        raise ViewerError(f"{profile.path}: the tree has no metrics")
    return sorted(names)[0]
