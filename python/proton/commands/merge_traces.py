"""`proton-merge-traces -o OUT.pftrace IN.pftrace...`: one Perfetto file from the
traces of several processes (one per GPU, e.g. torch.distributed ranks),
each input becoming a process ("rank i: <GPU>") and all aligned on the
global timer.

Every Proton trace (plugin sessions and proton.tasks exports) notes on its
GPU track the global-timer value its timestamps are relative to ("global
timer origin ns = ..."); merging shifts each input by its origin minus the
smallest one. Track uuids and packet sequence ids are renumbered per input so
that tracks and interned names never collide. How well the global timers of
different GPUs agree is measured by bench/globaltimer_sync.py (results in
bench/results/).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Sequence

from ..errors import ProfilerError

_ORIGIN = re.compile(r"global timer origin ns = (\d+)")
UUID_STRIDE = 1 << 48  # per input; Proton's uuids stay far below


class MergeError(ProfilerError):
    """An input that is not a Proton trace; names the file."""


def _trace_class():
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace
    return Trace


def _origin(trace, path) -> int:
    for packet in trace.packet:
        if packet.HasField("track_descriptor"):
            match = _ORIGIN.search(packet.track_descriptor.description)
            if match:
                return int(match.group(1))
    raise MergeError(f"{path}: not a Proton trace (no track notes its 'global timer origin ns')")


def merge(inputs: Sequence[str], output: str, labels: Sequence[str] | None = None) -> dict:
    """Writes the merged trace; returns {input: shift in ns}."""
    Trace = _trace_class()
    if not inputs:
        raise MergeError("no input traces")
    traces = []
    for path in inputs:
        try:
            traces.append(Trace.FromString(Path(path).read_bytes()))
        except OSError as e:
            raise MergeError(f"{path}: cannot read: {e}") from None
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise MergeError(f"{path}: not a Perfetto trace ({e})") from None
    origins = [_origin(t, p) for t, p in zip(traces, inputs)]
    base = min(origins)
    merged = Trace()
    shifts = {}
    for rank, (trace, origin, path) in enumerate(zip(traces, origins, inputs)):
        shift = origin - base
        shifts[path] = shift
        offset = (rank + 1) * UUID_STRIDE
        label = labels[rank] if labels else f"rank {rank}"
        for source in trace.packet:
            packet = merged.packet.add()
            packet.CopyFrom(source)
            if packet.HasField("timestamp"):
                packet.timestamp += shift
            if packet.HasField("trusted_packet_sequence_id"):
                packet.trusted_packet_sequence_id += rank * 64
            if packet.HasField("track_event") and packet.track_event.HasField("track_uuid"):
                packet.track_event.track_uuid += offset
            if packet.HasField("track_descriptor"):
                desc = packet.track_descriptor
                desc.uuid += offset
                if desc.HasField("parent_uuid"):
                    desc.parent_uuid += offset
                else:
                    # The input's root becomes the rank's process.
                    desc.process.pid = rank + 1
                    desc.process.process_name = f"{label}: {desc.name}"
                    desc.description += f"; merged from {path}, shifted by {shift} ns"
    Path(output).write_bytes(merged.SerializeToString())
    return shifts


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="proton-merge-traces", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", help="the merged .pftrace to write (must not exist, unless --force)")
    p.add_argument("files", nargs="+", metavar="IN.pftrace",
                   help="Proton .pftrace files, one per process/GPU, in rank order (without -o, a first name that "
                   "does not exist yet is taken as the output, as in earlier versions)")
    p.add_argument("--labels", default=None, help="comma-separated process labels (default: rank 0, rank 1, ...)")
    p.add_argument("--force", action="store_true", help="replace an existing output file (never an input)")
    args = p.parse_args(argv)
    output, inputs = args.output, list(args.files)
    if output is None:
        if len(inputs) < 2 or os.path.exists(inputs[0]):
            p.error(f"name the merged file with -o OUTPUT (without -o the first name is the output, and "
                    f"{inputs[0]} exists: it would be overwritten)" if os.path.exists(inputs[0]) else
                    "name the merged file with -o OUTPUT")
        output, inputs = inputs[0], inputs[1:]
    seen = {}
    for f in inputs:
        key = os.path.realpath(f)
        if key in seen:
            p.error(f"{f} is given twice (as {seen[key]} too): each rank's trace once")
        seen[key] = f
    if any(os.path.exists(f) and os.path.exists(output) and os.path.samefile(f, output) for f in inputs):
        p.error(f"the output {output} is also an input: choose another -o")
    if os.path.exists(output) and not args.force:
        p.error(f"{output} exists: pass --force to replace it, or choose another -o")
    labels = args.labels.split(",") if args.labels else None
    if labels and len(labels) != len(inputs):
        p.error(f"--labels has {len(labels)} names for {len(inputs)} inputs")
    try:
        shifts = merge(inputs, output, labels)
    except ProfilerError as e:
        print(f"proton-merge-traces: {e}", file=sys.stderr)
        return 1
    for path, shift in shifts.items():
        print(f"{path}: shifted by {shift} ns")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
