"""The profile buffer's layout, the compiler's enums and the markers' text,
as the compiler defines them (include/proton/Format, the ODS enums): read
from the compiler extension, never retyped in Python. Importing this module
loads the extension, so modules that host-only profiling imports read it
inside functions."""

from __future__ import annotations

from enum import IntEnum

from .compiling.compiler import extension

_C = extension()

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
#: What an id of a kernel's scope table stands for (scope, event, mark, value).
IdKind = IntEnum("IdKind", _C.ENUMS["IdKind"])

#: A marker's inline-assembly text: PREFIX + "start "|"end " + name
#: [+ LOCATION_SUFFIX + "file:line:col"].
MARKER_PREFIX: str = _C.markers.PREFIX
MARKER_LOCATION_SUFFIX: str = _C.markers.LOCATION_SUFFIX
#: The TTGIR op users write in override files.
RECORD_OP: str = _C.markers.RECORD_OP


def marker_text(kind: str, name: str, location: str | None = None) -> str:
    """The assembly text of a `start` or `end` marker of scope `name`."""
    return f"{MARKER_PREFIX}{kind} {name}" + (f"{MARKER_LOCATION_SUFFIX}{location}" if location else "")
