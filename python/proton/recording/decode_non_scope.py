"""Asynchronous events, marks and values of one launch: the records whose
ids are not scopes' (proton.language.allocate_event, start_event, end_event,
mark, record_value; docs/buffer-format.md, "Events and marks"). How an id's
records decode is its IdKind's traits (compiler_exports.ID_KIND_TRAITS), not
its name: ids paired by name are events, points without a value instants
(marks), points with a value values.

Pairing rule, per CTA and event: if every warp of the CTA that recorded the
event recorded as many ends as starts, each warp's records pair among
themselves (the event stayed in its warp); otherwise all of the CTA's records
of the event pair together. Within such a group, records are taken in time
order and each end closes the earliest start still open (first in, first
out); an end with no open start and a start never closed are unpaired:
counted, never drawn.

A value is two records of one warp, one right after the other: the time
(end bit clear), then the value's 32 bits in the low word (end bit set), an
i32 or the bits of an f32 as the entry's `dtype` says. A half whose partner
a full ring overwrote is dropped and counted as unpaired.
"""

from __future__ import annotations

import numpy as np

from ..contract.events import AsyncEvents
from ..contract.kernel_metadata import KernelMetadata
from ..contract.compiler_exports import ID_KIND_TRAITS

#: Codes of the scope table's `kind` field, as the compiler numbers them.
KIND_CODES = {name: traits.code for name, traits in ID_KIND_TRAITS.items()}


def _codes(test) -> tuple[int, ...]:
    """The codes of the IdKinds whose traits pass `test`."""
    return tuple(traits.code for traits in ID_KIND_TRAITS.values() if test(traits))


#: Codes of the ids that are not scopes (decoded here, not by the scope pairing).
NOT_SCOPE = _codes(lambda t: t.pairing != "scope")
#: Codes of the ids whose records pair by name when decoded (events).
PAIRED_BY_NAME = _codes(lambda t: t.pairing == "event")
#: Codes of the one-site ids without a value (marks): one instant per record.
INSTANTS = _codes(lambda t: t.pairing == "point" and not t.has_value)
#: Codes of the one-site ids with a value: a time record, then the value's.
VALUES = _codes(lambda t: t.pairing == "point" and t.has_value)


def of_kinds(kind: np.ndarray, codes: tuple[int, ...]) -> np.ndarray:
    """Is each kind code one of `codes`? One comparison per code (a handful),
    several times faster than a lookup table indexed by the codes."""
    if len(codes) == 1:
        return kind == codes[0]
    found = np.zeros(kind.shape, dtype=bool)
    for code in codes:
        found |= kind == code
    return found


def kind_codes(metadata: KernelMetadata) -> np.ndarray:
    """The kind code of every id of the kernel's record table."""
    return np.array([KIND_CODES[row.kind] for row in metadata.rows], dtype=np.int8)


def float_values(metadata: KernelMetadata) -> np.ndarray:
    """Per id of the record table: does its value record hold an f32?"""
    return np.array([row.is_float for row in metadata.rows], dtype=bool)


def split(
    ids: np.ndarray,
    rows: np.ndarray,
    is_end: np.ndarray,
    ns: np.ndarray,
    kinds: np.ndarray,
    num_segments: int,
    cols: np.ndarray | None = None,
    low_words: np.ndarray | None = None,
    is_float: np.ndarray | None = None,
) -> AsyncEvents:
    """Events paired by the module's rule, marks and values, from the
    non-scope records of a launch (one entry each: id, warp row, end flag,
    time; for values also the column in the warp's records and the record's
    low 32 bits), in row-major order."""
    kind = kinds[ids]
    m = of_kinds(kind, INSTANTS)
    e = of_kinds(kind, PAIRED_BY_NAME)
    pairs = pair_events(ids[e], rows[e], is_end[e], ns[e], num_segments)
    values = {}
    unpaired_values = 0
    v = np.flatnonzero(of_kinds(kind, VALUES))
    if v.size:
        if cols is None or low_words is None:
            raise ValueError("value records need their columns and low words to be decoded")
        t, w = pair_values(ids[v], rows[v], cols[v], is_end[v])
        time_at, value_at = v[t], v[w]
        bits = np.asarray(low_words, dtype=np.uint64)[value_at].astype(np.uint32)
        floats = np.zeros(0, dtype=bool) if is_float is None else is_float
        as_float = floats[ids[value_at]] if floats.size else np.zeros(value_at.size, dtype=bool)
        value = np.where(as_float, bits.view(np.float32).astype(np.float64), bits.view(np.int32).astype(np.float64))
        values = dict(
            value_id=ids[time_at].astype(np.int64),
            value_row=rows[time_at].astype(np.int64),
            value_ns=ns[time_at].astype(np.float64),
            value=value,
        )
        unpaired_values = int(v.size - 2 * t.size)
    return AsyncEvents(
        *pairs[:6],
        mark_id=ids[m].astype(np.int64),
        mark_row=rows[m].astype(np.int64),
        mark_ns=ns[m].astype(np.float64),
        unpaired=pairs[6],
        unpaired_values=unpaired_values,
        **values,
    )


def pair_values(ids, rows, cols, is_end):
    """(time index, value index) of each complete value: a time record
    followed in the same warp, in the next column, by the value record of
    the same id. Inputs are the value records in row-major order."""
    ids, rows, cols = (np.asarray(a, dtype=np.int64) for a in (ids, rows, cols))
    is_end = np.asarray(is_end, dtype=bool)
    i = np.arange(ids.size - 1)
    ok = ~is_end[:-1] & is_end[1:] & (rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1] + 1) & (ids[1:] == ids[:-1])
    return i[ok], i[ok] + 1


def pair_events(ids, rows, is_end, ns, num_segments):
    """(id, cta, start row, end row, start ns, end ns, unpaired) by the
    module's rule, vectorized (no loop per CTA or event)."""
    ids, rows = np.asarray(ids, dtype=np.int64), np.asarray(rows, dtype=np.int64)
    is_end, ns = np.asarray(is_end, dtype=bool), np.asarray(ns, dtype=np.float64)
    cta = rows // max(num_segments, 1)
    if ids.size == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z, np.zeros(0), np.zeros(0), 0
    # Does the event stay in its warps in this CTA? Compare per-warp counts.
    _, group = np.unique(np.stack([cta, ids]), axis=1, return_inverse=True)
    group = group.reshape(-1)
    _, warp_group = np.unique(np.stack([group, rows]), axis=1, return_inverse=True)
    warp_group = warp_group.reshape(-1)
    balance = np.bincount(warp_group, weights=np.where(is_end, -1.0, 1.0))
    unbalanced_groups = np.unique(group[balance[warp_group] != 0])
    local = ~np.isin(group, unbalanced_groups)
    # Key: the warp for warp-local events, the CTA's group otherwise.
    key = np.where(local, warp_group + group.max() + 1, group)

    # Time order within a key; a start at the same time as an end comes first.
    order = np.lexsort((is_end, ns, key))
    key_o, end_o = key[order], is_end[order]
    starts_before = np.cumsum(~end_o)  # starts at or before each position
    first_of_key = np.r_[True, key_o[1:] != key_o[:-1]]
    key_begin = np.maximum.accumulate(np.where(first_of_key, np.arange(key_o.size), 0))
    starts_before_key = starts_before[key_begin] - (~end_o[key_begin])

    end_pos = np.flatnonzero(end_o)
    n = starts_before[end_pos] - starts_before_key[end_pos]  # starts of the key before each end
    ek = key_o[end_pos]
    first_end = np.r_[True, ek[1:] != ek[:-1]]
    end_begin = np.maximum.accumulate(np.where(first_end, np.arange(ek.size), 0))
    j = np.arange(ek.size) - end_begin + 1  # 1-based end index within its key
    # Matched ends after end j: M_j = min(M_{j-1} + 1, n_j) = j + min(0, min_{i<=j}(n_i - i)).
    # The running minimum restarts per key: each key's values are shifted
    # below all earlier keys'.
    key_rank = np.cumsum(first_end) - 1
    big = 2 * (ids.size + 1)
    v = (n - j) - key_rank * big
    running = np.minimum.accumulate(v) + key_rank * big
    matched = j + np.minimum(0, running)
    prev = np.where(first_end, 0, np.r_[0, matched[:-1]])
    paired = matched > prev
    # The partner is the key's start number matched - 1, in time order.
    start_positions = np.flatnonzero(~end_o)
    start_index = starts_before_key[end_pos] + matched - 1
    s = order[start_positions[start_index[paired]]]
    t = order[end_pos[paired]]
    unpaired = int(ids.size - 2 * t.size)
    return ids[s], cta[s], rows[s], rows[t], ns[s], ns[t], unpaired
