"""The profile buffer's layout, the compiler's enums and the markers' text,
as the compiler defines them (include/proton/Format, the ODS enums): read
from the compiler extension, never retyped in Python. Importing this module
loads the extension, so modules that host-only profiling imports read it
inside functions."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .. import _C

#: Layout constants as module attributes (MAGIC, HEADER_WORDS, W_COUNT, ...):
#: docs/buffer-format.md; test_format_exports.py checks the two agree.
LAYOUT = _C.buffer_format

#: Where records are kept while the kernel runs ("auto" is an option value only).
BufferType = IntEnum("BufferType", _C.ENUMS["BufferType"])
#: Which threads' view of time a segment records.
Granularity = IntEnum("Granularity", _C.ENUMS["Granularity"])
#: Which warps record: all, or those the sampling options name.
SamplingStrategy = IntEnum("SamplingStrategy", _C.ENUMS["SamplingStrategy"])
#: A record's kind.
RecordKind = IntEnum("RecordKind", _C.ENUMS["RecordKind"])
#: What an id of a kernel's scope table stands for (scope, event, mark, value, ...: ID_KIND_TRAITS).
IdKind = IntEnum("IdKind", _C.ENUMS["IdKind"])


@dataclass(frozen=True)
class RecordKindTraits:
    """What a record kind does, as ProtonEnums.td defines it (the C++
    RecordKindTraits): Python asks these, never a kind's name."""

    name: str
    id_kind: str  # the IdKind of the ids its records carry
    pairing: str  # "scope" (nested start/end), "event" (paired by name) or "point" (one site)
    closes: bool  # it ends its pair
    value_types: tuple[str, ...]  # its value operand's types; empty: none
    value_record: str | None  # the kind of the record holding the value's bits
    records: int  # buffer records a site writes
    end_bit: bool  # its record carries the tag's end bit
    recordable: bool  # proton.record (a marker) may name it

    @property
    def takes_value(self) -> bool:
        return bool(self.value_types)


@dataclass(frozen=True)
class IdKindTraits:
    """What the ids of one IdKind are: how their records pair and a value's
    dtypes (the C++ IdKindTraits)."""

    name: str
    code: int  # the IdKind's value, as the decoder's arrays hold it
    pairing: str  # as RecordKindTraits.pairing
    value_types: tuple[str, ...]  # a value's dtypes (the scope table's `dtype`); empty: none

    @property
    def has_value(self) -> bool:
        return bool(self.value_types)


#: Every RecordKind's traits, by name, in the enum's order.
RECORD_KIND_TRAITS: dict[str, RecordKindTraits] = {
    name: RecordKindTraits(name=name, **traits) for name, traits in _C.RECORD_KIND_TRAITS.items()
}
#: Every IdKind's traits, by name, in the enum's order.
ID_KIND_TRAITS: dict[str, IdKindTraits] = {
    name: IdKindTraits(name=name, code=IdKind[name].value, **traits) for name, traits in _C.ID_KIND_TRAITS.items()
}

#: A marker's inline-assembly text: PREFIX + "start "|"end " + name
#: [+ LOCATION_SUFFIX + "file:line:col"].
MARKER_PREFIX: str = _C.markers.PREFIX
MARKER_LOCATION_SUFFIX: str = _C.markers.LOCATION_SUFFIX
#: The TTGIR op users write in override files.
RECORD_OP: str = _C.markers.RECORD_OP


def marker_text(kind: str, name: str, location: str | None = None) -> str:
    """The assembly text of a `start` or `end` marker of scope `name`."""
    return f"{MARKER_PREFIX}{kind} {name}" + (f"{MARKER_LOCATION_SUFFIX}{location}" if location else "")
