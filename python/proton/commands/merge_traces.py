"""`proton-merge-traces -o OUT.pftrace IN.pftrace...`: one Perfetto file from the
traces of several processes (one per GPU, e.g. torch.distributed ranks),
each input becoming a process ("rank i: <GPU>"), all on one timeline.

Every Proton trace notes on its GPU track the global-timer value its
timestamps are relative to ("global timer origin ns = N") and, when the
session measured it, the offset of the host's real-time clock from that
GPU's global timer ("host realtime offset ns = X +- U"). When every input
has the offset, inputs are aligned on host real time (origin + offset): as
good as the hosts' clocks agree (one host: exactly; several: NTP/PTP), plus
the offsets' uncertainties. Otherwise they are aligned on the global timers
(origin alone), which differ between GPUs (160 us measured between two GPUs
of one host), and the tool says so on stderr.

Packet sequence ids and track uuids are renumbered per input so that
nothing collides; only clocks that are not sequence-scoped are shifted (a
Proton trace's slices keep their incremental timestamps). Slice packets are
copied as bytes with their sequence id patched; the few other packets
(tracks, clocks, warp headers) are edited with the perfetto package's protos.
Compressed inputs (compress_pftrace=True) are inflated first; --compress
deflates the output.

With torch.profiler's exported Chrome trace (`--torch trace.json`, or
given among the inputs: a JSON file is recognized as one), the output is
one timeline on torch's time axis: torch's own events, and each Proton
launch's SM > CTA > warp tracks under the torch kernel it ran as
(commands/torch_merge: how launches are matched and re-timed, and the
residual misalignment reported per launch).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..writers import files
from ..contract.errors import ProfilerError, unicode_problem
from ..writers.progress import Progress
from ..writers import perfetto_deflate, perfetto_frames
from ..writers.perfetto_packets import trace_packet
from . import torch_trace
from .torch_merge import DEFAULT_TOLERANCE_US, FITS, merge_with_torch

_ORIGIN = re.compile(r"global timer origin ns = (\d+)")
_HOST = re.compile(r"host realtime offset ns = (-?\d+) \+- (\d+)")
UUID_STRIDE = 1 << 48  # per input; Proton's uuids stay far below
FIRST_SEQUENCE_CLOCK = 64


class MergeError(ProfilerError):
    """An input that is not a Proton trace; names the file."""


def _protos():
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    return TracePacket


@dataclass
class _Input:
    path: str
    data: np.ndarray  # the file's bytes (sequence ids patched in place)
    head: np.ndarray  # per packet: where its Trace.packet tag is
    start: np.ndarray  # where its TracePacket bytes start
    length: np.ndarray
    origin: int
    host_offset: int | None  # realtime - globaltimer, ns
    uncertainty: int


def _read(path: str) -> _Input:
    TracePacket = _protos()
    try:  # compressed inputs are merged as their packets
        raw, head, start, length = perfetto_frames.read_framed(path)
    except ValueError as e:
        raise MergeError(str(e)) from None
    data = np.frombuffer(raw, dtype=np.uint8).copy()
    for s, n in zip(start.tolist(), length.tolist()):  # the GPU track comes before the slices
        if data[s] == 0x50 and n > 2 and data[s + 2] == 0x40:
            continue  # a slice packet
        packet = _parse(TracePacket, raw[s : s + n], path, s)
        description = packet.track_descriptor.description if packet.HasField("track_descriptor") else ""
        match = _ORIGIN.search(description) if isinstance(description, str) else None
        if match:
            host = _HOST.search(description)
            return _Input(
                path,
                data,
                head,
                start,
                length,
                int(match.group(1)),
                int(host.group(1)) if host else None,
                int(host.group(2)) if host else 0,
            )
    raise MergeError(f"{path}: not a Proton trace (no track notes its 'global timer origin ns')")


def _parse(TracePacket, data: bytes, path: str, offset: int):
    """One TracePacket; MergeError naming the input and the byte offset."""
    try:
        return TracePacket.FromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise MergeError(f"{path}: corrupted packet at byte {offset} ({type(e).__name__}: {e})") from None


def alignment(traces: list[_Input]) -> tuple[list[int], str]:
    """Per input, the ns to add to its timestamps; and how they were aligned."""
    if all(t.host_offset is not None for t in traces):
        position = [t.origin + t.host_offset for t in traces]
        worst = sum(sorted((t.uncertainty for t in traces), reverse=True)[:2])
        how = f"aligned on host real time (+- {worst} ns between any two inputs, plus the hosts' clock sync)"
    else:
        position = [t.origin for t in traces]
        missing = ", ".join(t.path for t in traces if t.host_offset is None)
        how = (
            f"aligned on the GPUs' global timers, which may differ by 100s of us between GPUs "
            f"({missing} has no host clock offset)"
        )
    base = min(position)
    return [p - base for p in position], how


def merge(
    inputs: Sequence[str], output: str, labels: Sequence[str] | None = None, report=None, compress: bool = False
) -> dict:
    """Writes the merged trace; returns {input: shift in ns}. `report`
    (optional) receives the alignment message; compress=True deflates the
    output's packets (writers/perfetto_deflate)."""
    if not inputs:
        raise MergeError("no input traces")
    traces = [_read(p) for p in inputs]
    shifts, how = alignment(traces)
    if report is not None:
        report(how)
    sequences: dict[tuple[int, int], int] = {}
    # Inputs in time order: clock snapshots of the trace's clock must not go back.
    order = sorted(range(len(traces)), key=lambda r: shifts[r])
    # Complete or not at all (proton.writers.files): a failure leaves no partial output behind.
    progress = Progress("proton-merge-traces: merging", len(order), "inputs")
    with files.output(output, stdout=True) as target:
        with open(target, "wb") as file, perfetto_deflate.sink(file, compress) as out:
            for done, rank in enumerate(order):
                progress.update(done, f"{_written(file) / 1e6:,.1f} MB written")
                label = labels[rank] if labels else f"rank {rank}"
                _copy(out, traces[rank], rank, shifts[rank], label, how, sequences)
    progress.close()
    return {t.path: s for t, s in zip(traces, shifts)}


def _written(file) -> int:
    """Bytes written so far (0 where the output cannot tell, a pipe)."""
    try:
        return file.tell()
    except OSError:
        return 0


def _copy(out, t: _Input, rank: int, shift: int, label: str, how: str, sequences: dict) -> None:
    """Writes one input: slice packets as bytes with the new sequence id,
    the other packets edited."""
    TracePacket = _protos()

    def sequence(seq: int) -> int:
        return sequences.setdefault((rank, seq), len(sequences) + 1)

    data, start, length = t.data, t.start, t.length
    fast = (data[start] == 0x50) & (length > 2)
    fast[fast] = (data[start[fast] + 1] < 0x80) & (data[start[fast] + 2] == 0x40)
    seq_at = start[fast] + 1
    if seq_at.size:
        old = np.unique(data[seq_at])
        new = np.array([sequence(int(s)) for s in old])
        if new.max() >= 0x80:
            raise MergeError(f"{t.path}: too many inputs to merge (more than 127 packet sequences)")
        lookup = np.zeros(256, dtype=np.uint8)
        lookup[old] = new
        data[seq_at] = lookup[data[seq_at]]
    clock_of: dict[int, int] = {}  # timestamp clock per sequence, from its packet defaults
    offset = (rank + 1) * UUID_STRIDE
    copied = 0  # bytes of data written so far
    for i in np.flatnonzero(~fast).tolist():
        s, n = int(start[i]), int(length[i])
        packet = _parse(TracePacket, data[s : s + n].tobytes(), t.path, s)
        _edit(packet, shift, offset, sequence, clock_of, rank, label, t.path, how)
        body = packet.SerializeToString()
        out.write(data[copied : int(t.head[i])].tobytes())
        out.write(trace_packet(body))
        copied = s + n
    out.write(data[copied:].tobytes())


def _edit(packet, shift, offset, sequence, clock_of, rank, label, path, how) -> None:
    seq = packet.trusted_packet_sequence_id
    if packet.HasField("trusted_packet_sequence_id"):
        packet.trusted_packet_sequence_id = sequence(seq)
    if packet.sequence_flags & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
        clock_of[seq] = 0
    if packet.HasField("trace_packet_defaults"):
        defaults = packet.trace_packet_defaults
        clock_of[seq] = defaults.timestamp_clock_id
        if defaults.track_event_defaults.HasField("track_uuid"):
            defaults.track_event_defaults.track_uuid += offset
    if packet.HasField("timestamp"):
        clock = packet.timestamp_clock_id or clock_of.get(seq, 0)
        if clock < FIRST_SEQUENCE_CLOCK:
            packet.timestamp += shift
    if packet.HasField("clock_snapshot"):
        for clock in packet.clock_snapshot.clocks:
            if clock.clock_id < FIRST_SEQUENCE_CLOCK:
                clock.timestamp += shift
    if packet.HasField("track_event") and packet.track_event.HasField("track_uuid"):
        packet.track_event.track_uuid += offset
    if packet.HasField("track_descriptor"):
        desc = packet.track_descriptor
        desc.uuid += offset
        if desc.HasField("parent_uuid"):
            desc.parent_uuid += offset
        else:  # the input's root becomes the rank's process
            desc.process.pid = rank + 1
            desc.process.process_name = f"{label}: {desc.name}"
            desc.description += f"; merged from {path}, shifted by {shift} ns, {how}"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="proton-merge-traces", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        help="the merged .pftrace to write (a file must not exist, unless --force; '-': standard output)",
    )
    p.add_argument(
        "files", nargs="+", metavar="IN.pftrace", help="Proton .pftrace files, one per process/GPU, in rank order"
    )
    p.add_argument("--labels", default=None, help="comma-separated process labels (default: rank 0, rank 1, ...)")
    p.add_argument("--force", action="store_true", help="replace an existing output file (never an input)")
    p.add_argument("--compress", action="store_true", help="deflate the output's packets (about a third of the bytes)")
    p.add_argument(
        "--torch",
        default=None,
        metavar="TRACE.json",
        help="torch.profiler's exported Chrome trace (prof.export_chrome_trace): one timeline on torch's axis, "
        "each Proton launch under the torch kernel it ran as (a .json input is taken as this too)",
    )
    p.add_argument(
        "--tolerance-us",
        type=float,
        default=None,
        help=f"with --torch: how far (us) a launch may lie from a same-named torch kernel to match it "
        f"(default {DEFAULT_TOLERANCE_US:g})",
    )
    p.add_argument(
        "--fit",
        choices=FITS,
        default=None,
        help="with --torch: center (default) keeps Proton's durations and centers each launch in its torch "
        "kernel; stretch maps each launch's span onto the kernel's exactly",
    )
    p.add_argument("--device", type=int, default=None, help="with --torch: match only torch kernels of this GPU")
    p.add_argument(
        "--svg",
        default=None,
        metavar="OUT.svg",
        help="with --torch: also a picture of the first matched launches, their warps' scopes under torch's kernels",
    )
    args = p.parse_args(argv)
    output, inputs = args.output, list(args.files)
    torch_inputs = [f for f in inputs if torch_trace.looks_like_json(f)]
    if args.torch is not None or torch_inputs:
        return _main_torch(p, args, output, inputs, torch_inputs)
    if args.tolerance_us is not None or args.fit is not None or args.device is not None or args.svg is not None:
        p.error("--tolerance-us, --fit, --device and --svg go with --torch (a torch.profiler trace)")
    problem = _check_output(output, inputs, args.force)
    if problem:
        p.error(problem)
    _given_once(p, inputs, ": each rank's trace once")
    labels = args.labels.split(",") if args.labels is not None else None
    if labels is not None and len(labels) != len(inputs):
        p.error(f"--labels has {len(labels)} names for {len(inputs)} inputs")
    if labels is not None and not all(label.strip() for label in labels):
        p.error(f"--labels {args.labels!r}: every label must be non-empty")
    for i, label in enumerate(labels or []):
        if unicode_problem(label):
            p.error(f"--labels: label {i + 1} {unicode_problem(label)}")
    info, written_to = _messages_and_name(output)
    shifts = _merging(
        written_to,
        lambda: merge(
            inputs,
            output,
            labels,
            report=lambda how: print(f"proton-merge-traces: {how}", file=sys.stderr),
            compress=args.compress,
        ),
    )
    if shifts is None:
        return 2
    for path, shift in shifts.items():
        print(f"{path}: shifted by {shift} ns", file=info)
    print(f"wrote {written_to}", file=info)
    return 0


def _main_torch(p, args, output: str, inputs: list, torch_inputs: list) -> int:
    """proton-merge-traces with a torch.profiler trace."""
    if args.torch is not None:
        if torch_inputs:
            p.error(f"{torch_inputs[0]} looks like a torch trace too: give one torch trace (--torch or an input)")
        torch_path = args.torch
    elif len(torch_inputs) > 1:
        p.error(f"{len(torch_inputs)} JSON inputs ({', '.join(torch_inputs)}): give one torch.profiler trace")
    else:
        torch_path = torch_inputs[0]
        inputs = [f for f in inputs if f != torch_path]
    if not inputs:
        p.error("no Proton .pftrace to merge with the torch trace")
    if args.labels is not None:
        p.error("--labels names ranks; with a torch trace, tracks are named after torch's processes")
    if args.tolerance_us is not None and not args.tolerance_us > 0:
        p.error(f"--tolerance-us {args.tolerance_us:g}: must be positive")
    problem = _check_output(output, inputs + [torch_path], args.force)
    if problem is None and args.svg is not None:
        problem = _check_output(args.svg, inputs + [torch_path, output], args.force, "--svg")
    if problem:
        p.error(problem)
    _given_once(p, inputs + [torch_path])
    info, written_to = _messages_and_name(output)
    report = _merging(
        written_to,
        lambda: merge_with_torch(
            torch_path,
            inputs,
            output,
            tolerance_us=args.tolerance_us if args.tolerance_us is not None else DEFAULT_TOLERANCE_US,
            fit=args.fit or "center",
            device=args.device,
            compress=args.compress,
            svg=args.svg,
        ),
    )
    if report is None:
        return 2
    print(report.summary(), file=sys.stderr)
    print(f"wrote {written_to}", file=info)
    return 0


def _merging(written_to: str, work):
    """work()'s result (never None), or None once the reason it failed is
    printed as one line (the command then exits with status 2)."""
    try:
        return work()
    except ProfilerError as e:
        print(f"proton-merge-traces: error: {e}; nothing written", file=sys.stderr)
    except OSError as e:
        why = e.strerror or e
        print(f"proton-merge-traces: error: cannot write {written_to}: {why}; nothing written", file=sys.stderr)
    except MemoryError:
        print("proton-merge-traces: error: not enough memory to merge these inputs; nothing written", file=sys.stderr)
    return None


def _given_once(p, paths: list, hint: str = "") -> None:
    """Refuses a file given twice (the same file by two names included)."""
    seen = {}
    for f in paths:
        key = os.path.realpath(f)
        if key in seen:
            p.error(f"{f} is given twice (as {seen[key]} too){hint}")
        seen[key] = f


def _messages_and_name(output: str):
    """Where the command's messages go and what they call the output: on
    standard output the trace is all that goes there, so they go to stderr."""
    if output == files.STDOUT:
        return sys.stderr, "standard output"
    return sys.stdout, output


def _check_output(output: str, inputs: list, force: bool, option: str = "-o") -> str | None:
    """Why `option`'s file (-o, --svg) cannot be written (None if it can):
    an existing regular file (or a link to one) is replaced only with
    --force, never an input; devices, FIFOs, sockets and "-" are written
    to, so they need no --force."""
    if output == files.STDOUT:
        return None
    try:
        how, target = files.destination(output)
    except OSError as e:
        return f"{option} {output}: {e.strerror or e}"
    if how != "replace":
        return None
    if not os.path.isdir(os.path.dirname(target)):
        return f"{option} {output}: the directory {os.path.dirname(target)} does not exist"
    if any(os.path.realpath(f) == target for f in inputs):
        return f"the output {output} is also an input: choose another {option}"
    if os.path.exists(target) and not force:
        return f"{output} exists: pass --force to replace it, or choose another {option}"
    return None


if __name__ == "__main__":
    sys.exit(main())
