"""Text rows built with numpy, one row per event, for the Chrome trace
writer, without a Python object per row.

A row is a sequence of pieces. A piece is (values, lengths): per row a
fixed-width byte string whose first `length` bytes are the text, the rest
NUL padding (or one such string for every row, and one length). Rows are
laid out by scattering each piece, left-aligned, at its offset: a piece's
padding lands where the next pieces of its row are written afterwards. When
a piece's padding could reach past the rest of its row (very different
name lengths), the rows are packed as fixed-width records instead and the
NUL bytes dropped; JSON text never holds a raw NUL (json.dumps escapes it).
Numbers are written four digits at a time from a table.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

PAD = b"\0"


def _strings(entries: list[bytes]):
    """(values, lengths) of a table of byte strings, left-aligned in a common width."""
    width = max(max((len(e) for e in entries), default=0), 1)
    values = np.frombuffer(b"".join(e.ljust(width, PAD) for e in entries), dtype=f"V{width}")
    return values, np.array([len(e) for e in entries], dtype=np.int64)


@functools.lru_cache(maxsize=None)
def _groups(suffix: bytes, lowest: bool):
    """4-digit groups followed by `suffix`, indexed by lo + 10000 * (higher
    digits exist): with higher digits all four digits, without them no
    leading zeros (and 0 is empty, or "0" in the lowest group)."""
    bare = [f"{i:d}".encode() if i or lowest else b"" for i in range(10000)]
    full = [f"{i:04d}".encode() for i in range(10000)]
    return _strings([d + suffix for d in bare + full])


@functools.lru_cache(maxsize=None)
def _fraction(suffix: bytes):
    """ "." and three digits, then `suffix`: ns as us with ns precision."""
    return _strings([f".{i:03d}".encode() + suffix for i in range(1000)])


def const(data: bytes):
    """A piece that is the same in every row."""
    return (np.frombuffer(data, dtype=f"V{len(data)}")[0], len(data)) if data else None


class Gather(NamedTuple):
    """A piece whose row i is the table's string index[i] (values,
    lengths: a (strings, lengths) piece of the table's entries), gathered
    as the rows are laid out, into memory Text keeps (no copy per call)."""

    values: np.ndarray
    lengths: np.ndarray
    index: np.ndarray

    def row_lengths(self) -> np.ndarray:
        return self.lengths[self.index]


def _plain(piece):
    """A piece as (values, lengths) per row."""
    if isinstance(piece, Gather):
        return piece.values[piece.index], piece.row_lengths()
    return piece


def table(entries: list[bytes], index: np.ndarray):
    """Row i holds entries[index[i]] (Python work per distinct entry, not per row)."""
    values, lengths = _strings(entries)
    return values[index], lengths[index]


def strings(entries: list[bytes]):
    """A table of byte strings as the (values, lengths) of a Gather."""
    return _strings(entries)


def decimal(values: np.ndarray, suffix: bytes = b"") -> list:
    """ASCII decimal of non-negative integers, then `suffix`: a piece per 4-digit group."""
    values = np.asarray(values)
    top = int(values.max()) if values.size else 0
    groups = max(1, -(-len(str(top)) // 4))
    values = values.astype(np.uint32 if top < 2**32 else np.uint64)
    pieces = []
    for g in range(groups - 1, -1, -1):
        rest = values // 10000
        index = (values - rest * 10000).astype(np.intp)
        if g > 0:  # higher digits can follow (the top group has none)
            index += (rest > 0) * 10000
        strings, lengths = _groups(suffix if g == groups - 1 else b"", g == groups - 1)
        pieces.append((strings[index], lengths[index]))
        values = rest
    return pieces[::-1]


def microseconds(ns: np.ndarray, suffix: bytes = b"") -> list:
    """Whole ns as microseconds with three decimals, then `suffix`."""
    us = ns // np.uint64(1000)
    strings, lengths = _fraction(suffix)
    return decimal(us) + [(strings[(ns - us * np.uint64(1000)).astype(np.intp)], int(lengths[0]))]


class Text:
    """Builds rows into memory kept between calls (a writer's slices of
    events): the text returned is valid until the next call; with `writes`
    (files.BackgroundWrites, handed the text), until those writes are done:
    two memories take turns, each reused once the writes of its text are
    done."""

    def __init__(self, writes=None):
        self._memories = [np.empty(0, dtype=np.uint8)] * (1 if writes is None else 2)
        self._writes, self._turn = writes, 0
        self._written_by = [0] * len(self._memories)  # writes handed over up to the memory's reuse
        self._scratch = np.empty(0, dtype=np.uint8)

    def rows(self, n: int, pieces: list, binary: bool = False):
        """The text of n rows of `pieces`, one after the other (a bytes-like
        object); `binary`: the pieces may hold NUL bytes (protobuf rows)."""
        pieces = [p for p in pieces if p is not None]
        if n == 0 or not pieces:
            return b""
        widths = [p[0].dtype.itemsize for p in pieces]
        lengths = [p.row_lengths() if isinstance(p, Gather) else p[1] for p in pieces]
        shortest = [int(np.min(x)) for x in lengths]
        after = np.cumsum(shortest[::-1])[::-1].tolist()[1:] + [0]  # shortest rest of a row after each piece
        if any(w - s > a for w, s, a in zip(widths, shortest, after)):
            return _drop_padding(n, [_plain(p) for p in pieces], binary)
        length = np.zeros(n, dtype=np.int64)
        for x in lengths:
            length += x
        at = np.cumsum(length)
        total = int(at[-1])
        at -= length
        memory = self._take(total + max(widths))
        for piece, piece_lengths, width in zip(pieces, lengths, widths):
            values = self._gathered(piece, n) if isinstance(piece, Gather) else piece[0]
            # Fixed-width strings at any byte offset: a view with a stride of one byte.
            slots = np.ndarray((memory.size - width + 1,), dtype=values.dtype, buffer=memory, strides=(1,))
            slots[at] = values
            at += piece_lengths
        return memory[:total]

    def _gathered(self, piece: "Gather", n: int) -> np.ndarray:
        """A Gather piece's strings, row by row, in scratch memory kept
        between calls (fresh memory for each would cost page faults)."""
        nbytes = n * piece.values.dtype.itemsize
        if self._scratch.size < nbytes:
            self._scratch = np.empty(nbytes, dtype=np.uint8)
        out = np.ndarray((n,), dtype=piece.values.dtype, buffer=self._scratch)
        return np.take(piece.values, piece.index, out=out, mode="clip")

    def _take(self, nbytes: int) -> np.ndarray:
        """The next memory, at least `nbytes`, once the writes of its last text are done."""
        if self._writes is not None:
            self._written_by[self._turn] = self._writes.submitted  # the text before this call: handed over
            self._turn = (self._turn + 1) % len(self._memories)
            self._writes.wait(self._written_by[self._turn])
        if self._memories[self._turn].size < nbytes:
            self._memories[self._turn] = np.empty(nbytes, dtype=np.uint8)
        return self._memories[self._turn]


def _drop_padding(n: int, pieces: list, binary: bool = False) -> bytes:
    """Rows packed as fixed-width records, then their NUL padding dropped
    (`binary`: the bytes past each piece's length, where NUL is data)."""
    offsets, off = [], 0
    for values, _ in pieces:
        offsets.append(off)
        off += values.dtype.itemsize
    dtype = np.dtype(
        {
            "names": [f"f{k}" for k in range(len(pieces))],
            "formats": [v.dtype for v, _ in pieces],
            "offsets": offsets,
            "itemsize": off,
        }
    )
    memory = bytearray(n * off)
    rows = np.frombuffer(memory, dtype=dtype, count=n)
    for k, (values, _) in enumerate(pieces):
        rows[f"f{k}"] = values
    if binary:
        used = np.zeros((n, off), dtype=bool)
        for at, (values, lengths) in zip(offsets, pieces):
            width = values.dtype.itemsize
            used[:, at : at + width] = np.arange(width)[None, :] < np.reshape(lengths, (-1, 1))
        return np.frombuffer(memory, dtype=np.uint8)[used.reshape(-1)].tobytes()
    return memory.translate(None, PAD)  # in place of a copy of the records


def row_lengths(n: int, pieces: list) -> np.ndarray:
    """The length of each of n rows of `pieces` (as Text.rows lays them out)."""
    length = np.zeros(n, dtype=np.int64)
    for piece in pieces:
        if piece is not None:
            length += piece.row_lengths() if isinstance(piece, Gather) else piece[1]
    return length


def record_strings(n: int, pieces: list) -> np.ndarray:
    """Rows as fixed-width strings (with padding), for a table of per-row
    text that later rows gather from; returns the (strings, lengths) piece.
    Each row is laid out in a slot as wide as all its pieces' widths
    together, so that no piece's padding reaches the next row."""
    pieces = [_plain(p) for p in pieces if p is not None]
    length = row_lengths(n, pieces)
    width = max(int(length.max()) if n else 0, 1)
    stride = sum(p[0].dtype.itemsize for p in pieces) or 1
    memory = np.zeros(n * stride + stride, dtype=np.uint8)
    at = np.arange(n, dtype=np.int64) * stride
    for values, lengths in pieces:
        slots = np.ndarray((memory.size - values.dtype.itemsize + 1,), dtype=values.dtype, buffer=memory, strides=(1,))
        slots[at] = values
        at += lengths
    table = np.ascontiguousarray(memory[: n * stride].reshape(n, stride)[:, :width])
    return table.view(f"V{width}").reshape(-1), length
