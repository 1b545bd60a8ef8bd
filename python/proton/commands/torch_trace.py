"""torch.profiler's exported Chrome trace (`prof.export_chrome_trace(path)`,
or the tensorboard handler's `.pt.trace.json[.gz]`), read for
proton-merge-traces --torch.

The file is a JSON object with "traceEvents" (a bare list of events is
accepted too) and, from torch 2.x on, "baseTimeNanoseconds": event times
("ts", "dur") are microseconds, with up to three decimals, counted from it
(absolute microseconds where it is absent). Times are read exactly (as
decimals, never through a float: microseconds since 1970 need 16 digits)
and kept as integer ns on torch's axis: base + ts * 1000.

Kept: complete events ("X": CPU ops, Python functions, runtime calls, GPU
kernels, copies and sets, annotations), instants ("i"/"I"), counters
("C"), flow endpoints ("s"/"t"/"f": torch's CPU launch -> GPU kernel
arrows, "ac2g") and the process and thread names and sort indices ("M").
A GPU kernel is an "X" event with "cat" "kernel" (any case); its "pid" is
the device, its "tid" the stream, its "args" carry "correlation",
"device", "stream", "grid", "block", ...
"""

from __future__ import annotations

import gzip
import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..contract.errors import ProfilerError

KEPT_PHASES = ("X", "i", "I", "C", "s", "t", "f")


class TorchTraceError(ProfilerError):
    """A torch trace that cannot be read; the message names the file."""


@dataclass
class TorchEvent:
    ph: str
    name: str
    cat: str
    pid: object
    tid: object
    ns: int  # on torch's axis (base + ts)
    dur_ns: int
    args: dict
    raw: dict  # the event as read (flow ids, instant scope, ...)


@dataclass
class TorchTrace:
    path: str
    base_ns: int
    events: list[TorchEvent]
    kernels: list[int]  # indices into events, in time order
    process_names: dict = field(default_factory=dict)  # pid -> name
    process_labels: dict = field(default_factory=dict)  # pid -> labels ("GPU 0", "CPU")
    process_sort: dict = field(default_factory=dict)
    thread_names: dict = field(default_factory=dict)  # (pid, tid) -> name
    thread_sort: dict = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)  # phase -> events not carried


def _ns(value, path: str, what: str) -> int:
    """Integer ns of a microsecond value (int, or a Decimal from the parser)."""
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise TorchTraceError(f"{path}: not a torch.profiler trace ({what} {value!r} is not a number)")
    try:
        return int((Decimal(value) * 1000).to_integral_value())
    except (InvalidOperation, ValueError, OverflowError):
        raise TorchTraceError(f"{path}: not a torch.profiler trace ({what} {value!r} is not finite)") from None


def _plain(value):
    """Args as written back (Decimal -> float)."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def looks_like_json(path: str) -> bool:
    """Whether a file starts like a JSON object or list, plain or gzipped
    (a Perfetto trace starts with a packet tag, 0x0a)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # never open a FIFO or a device to peek
            return False
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    if head[:2] == b"\x1f\x8b":
        return True
    head = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    return head[:1] in (b"{", b"[")


def read(path: str) -> TorchTrace:
    """The torch trace at `path`; TorchTraceError (one line, naming the
    file) for a file that is not one or holds no GPU kernel."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise TorchTraceError(f"{path}: cannot read: {e.strerror or e}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise TorchTraceError(f"{path}: not a torch.profiler trace (bad gzip data: {e})") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"), parse_float=Decimal)
    except UnicodeDecodeError:
        raise TorchTraceError(f"{path}: not a torch.profiler trace (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        truncated = "; the file looks truncated" if e.pos >= len(raw.rstrip()) - 1 else ""
        raise TorchTraceError(
            f"{path}: not a torch.profiler trace (invalid JSON: {e.msg}, line {e.lineno} column {e.colno}{truncated})"
        ) from None
    except RecursionError:
        raise TorchTraceError(f"{path}: not a torch.profiler trace (JSON nested too deeply)") from None
    if isinstance(data, list):
        data = {"traceEvents": data}
    if not isinstance(data, dict) or not isinstance(data.get("traceEvents"), list):
        raise TorchTraceError(f'{path}: not a torch.profiler trace (no "traceEvents" list)')
    base = data.get("baseTimeNanoseconds", 0)
    if isinstance(base, bool) or not isinstance(base, int) or base < 0:
        raise TorchTraceError(f"{path}: not a torch.profiler trace (baseTimeNanoseconds {base!r} is not an integer)")
    trace = TorchTrace(path, base, [], [])
    for i, e in enumerate(data["traceEvents"]):
        if not isinstance(e, dict):
            raise TorchTraceError(f"{path}: not a torch.profiler trace (traceEvents[{i}] is not an object)")
        ph = e.get("ph")
        if ph == "M":
            _metadata(trace, e)
            continue
        if ph not in KEPT_PHASES or "ts" not in e:
            trace.skipped[str(ph)] += 1
            continue
        name = e.get("name", "")
        args = e.get("args")
        event = TorchEvent(
            ph,
            name if isinstance(name, str) else str(name),
            e.get("cat", "") if isinstance(e.get("cat", ""), str) else str(e.get("cat")),
            _key(e.get("pid", 0)),
            _key(e.get("tid", 0)),
            base + _ns(e["ts"], path, f"traceEvents[{i}].ts"),
            max(_ns(e.get("dur", 0), path, f"traceEvents[{i}].dur"), 0) if ph == "X" else 0,
            _plain(args) if isinstance(args, dict) else {},
            e,
        )
        if ph == "X" and event.cat.lower() == "kernel":
            trace.kernels.append(len(trace.events))
        trace.events.append(event)
    if not trace.kernels and any("call_stack" in e.args and "cycles" in e.args for e in trace.events[:100]):
        raise TorchTraceError(
            f"{path}: this is a Proton Chrome trace, not torch.profiler's: merge Proton's .pftrace instead"
        )
    if not trace.kernels:
        raise TorchTraceError(
            f'{path}: the torch trace has no GPU kernel (no "X" event with "cat": "kernel"): '
            "profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        )
    trace.kernels.sort(key=lambda k: trace.events[k].ns)
    return trace


def _key(value):
    """pid/tid as a hashable key (ints stay ints; anything else its text)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return str(value)


def _metadata(trace: TorchTrace, e: dict) -> None:
    args = e.get("args") if isinstance(e.get("args"), dict) else {}
    pid, tid, what = _key(e.get("pid", 0)), _key(e.get("tid", 0)), e.get("name")
    if what == "process_name" and "name" in args:
        trace.process_names[pid] = str(args["name"])
    elif what == "process_labels" and "labels" in args:
        trace.process_labels[pid] = str(args["labels"])
    elif what == "process_sort_index" and isinstance(args.get("sort_index"), int):
        trace.process_sort[pid] = args["sort_index"]
    elif what == "thread_name" and "name" in args:
        trace.thread_names[(pid, tid)] = str(args["name"]).strip()
    elif what == "thread_sort_index" and isinstance(args.get("sort_index"), int):
        trace.thread_sort[(pid, tid)] = args["sort_index"]
    else:
        trace.skipped["M"] += 1
