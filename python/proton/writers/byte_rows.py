"""Variable-length byte rows built with numpy, one row per event: the
encoders behind the trace writers (protobuf varints, decimal numbers, and
their concatenation), so that writing millions of events needs no Python
loop per event.

A "rows" value is (matrix, lengths): row i is bytes matrix[i, :lengths[i]].
"""

from __future__ import annotations

import numpy as np


def const(data: bytes, n: int):
    """The same bytes in each of n rows."""
    row = np.frombuffer(data, dtype=np.uint8)
    return np.broadcast_to(row, (n, row.size)), np.full(n, row.size, dtype=np.int64)


def table(entries: list[bytes], index: np.ndarray):
    """Row i is entries[index[i]]."""
    width = max((len(e) for e in entries), default=0)
    matrix = np.zeros((len(entries), width), dtype=np.uint8)
    for i, e in enumerate(entries):  # per distinct entry, not per event
        matrix[i, : len(e)] = np.frombuffer(e, dtype=np.uint8)
    lengths = np.array([len(e) for e in entries], dtype=np.int64)
    return matrix[index], lengths[index]


def strings(values: list[str]):
    """Rows of UTF-8 strings (one Python object per row: use for per-track
    names, not per event)."""
    encoded = [v.encode() for v in values]
    lengths = np.array([len(e) for e in encoded], dtype=np.int64)
    flat = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return unflatten(flat, lengths)


def varint(values):
    """Protobuf base-128 varints of unsigned values."""
    values = np.asarray(values, dtype=np.uint64)
    lengths = np.ones(values.shape, dtype=np.int64)
    rest = values >> np.uint64(7)
    while rest.any():
        lengths += rest > 0
        rest >>= np.uint64(7)
    width = int(lengths.max()) if values.size else 1
    out = np.zeros((values.size, width), dtype=np.uint8)
    for k in range(width):
        byte = ((values >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        out[:, k] = np.where(k < lengths - 1, byte | np.uint8(0x80), byte)
    return out, lengths


def decimal(values):
    """ASCII decimal digits of non-negative integers."""
    values = np.asarray(values, dtype=np.uint64)
    lengths = np.ones(values.shape, dtype=np.int64)
    rest = values // np.uint64(10)
    while rest.any():
        lengths += rest > 0
        rest //= np.uint64(10)
    width = int(lengths.max()) if values.size else 1
    out = np.zeros((values.size, width), dtype=np.uint8)
    for j in range(width):
        power = lengths - 1 - j
        digit = (values // (np.uint64(10) ** np.maximum(power, 0).astype(np.uint64))) % np.uint64(10)
        out[:, j] = np.where(power >= 0, digit.astype(np.uint8) + np.uint8(48), 0)
    return out, lengths


def fixed_decimal(values, width: int):
    """Exactly `width` digits, zero-padded (values < 10**width)."""
    values = np.asarray(values, dtype=np.uint64)
    out = np.zeros((values.size, width), dtype=np.uint8)
    for j in range(width):
        out[:, j] = ((values // np.uint64(10 ** (width - 1 - j))) % np.uint64(10)).astype(np.uint8) + np.uint8(48)
    return out, np.full(values.size, width, dtype=np.int64)


def concat(pieces):
    """Row-wise concatenation of rows."""
    mats, keep = [], []
    for matrix, lengths in pieces:
        mats.append(matrix)
        keep.append(np.arange(matrix.shape[1])[None, :] < lengths[:, None])
    data = np.hstack(mats)[np.hstack(keep)]
    return unflatten(data, sum(lengths for _, lengths in pieces))


def join(rows) -> bytes:
    """All rows, one after the other."""
    matrix, lengths = rows
    mask = np.arange(matrix.shape[1])[None, :] < lengths[:, None]
    return matrix[mask].tobytes()


def unflatten(flat: np.ndarray, lengths: np.ndarray):
    width = int(lengths.max()) if lengths.size else 0
    out = np.zeros((lengths.size, width), dtype=np.uint8)
    mask = np.arange(width)[None, :] < lengths[:, None]
    out[mask] = flat
    return out, lengths
