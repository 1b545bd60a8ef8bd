"""The framing of a Perfetto trace's bytes into its Trace.packet entries,
fast over Proton's slice region (proton-merge-traces and the readers of
Proton traces)."""

from __future__ import annotations

import numpy as np


class FrameError(ValueError):
    """Bytes that are not a Perfetto trace; the message names the file."""


def read_framed(path: str):
    """A trace file's bytes (inflated where its packets are compressed) and
    the tag position, start and length of each Trace.packet; ValueError
    naming the file where it cannot be read or is not a Perfetto trace."""
    from . import files, perfetto_deflate

    try:
        raw = files.read_input(path)
    except OSError as e:
        raise FrameError(f"{path}: cannot read: {e.strerror or e}") from None
    raw = perfetto_deflate.inflate(raw, path)
    return (raw, *frame(raw, path))


def frame(data: bytes, path: str):
    """Tag position, start and length of each Trace.packet."""
    heads, starts, lengths = [], [], []
    i, n = 0, len(data)
    tried = False
    while i < n:
        if not tried and i + 3 < n and data[i + 1] < 0x80 and data[i + 2] == 0x50 and data[i + 3] < 0x80:
            tried = True
            rest = frame_slices(data, i)
            if rest is not None:  # the rest is Proton's slice region
                tail = [np.array(a, dtype=np.int64) for a in (heads, starts, lengths)]
                return tuple(np.concatenate((a, b)) for a, b in zip(tail, rest))
        if data[i] != 0x0A:
            raise FrameError(f"{path}: not a Perfetto trace (byte {i} does not start a packet)")
        length, j, shift = 0, i + 1, 0
        while True:  # the length's varint
            if j >= n or shift > 63:
                raise FrameError(f"{path}: not a Perfetto trace (truncated at byte {i})")
            b = data[j]
            length |= (b & 0x7F) << shift
            j, shift = j + 1, shift + 7
            if b < 0x80:
                break
        if j + length > n:
            raise FrameError(f"{path}: not a Perfetto trace (truncated at byte {i})")
        heads.append(i)
        starts.append(j)
        lengths.append(length)
        i = j + length
    return (np.array(heads, dtype=np.int64), np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64))


def frame_slices(data: bytes, at: int):
    """Framing of data[at:] at once where it is a Proton slice region:
    every packet < 128 bytes with the sequence id first ("0a L 50 seq").
    Candidates are the places that look so; they are the packets if each
    one ends where the next begins. None otherwise."""
    b = np.frombuffer(data, dtype=np.uint8)[at:]
    if b.size < 4:
        return None
    c = np.flatnonzero((b[:-3] == 0x0A) & (b[1:-2] < 0x80) & (b[2:-1] == 0x50) & (b[3:] < 0x80))
    if not c.size or c[0] != 0:
        return None
    end = c + 2 + b[c + 1]
    if end[-1] != b.size or not (end[:-1] == c[1:]).all():
        return None
    return c + at, c + at + 2, b[c + 1].astype(np.int64)
