"""TTGIR text, read line by line without an MLIR parser: the one pattern of a
`proton.record` line, of a marker, and the one scanner of braces outside
string literals, shared by the override translation, the TTGIR rewriter, the
pipelining checks and the warp-specialization layout."""

from __future__ import annotations

import functools
import re
from typing import Iterator


@functools.cache
def record_line() -> re.Pattern:
    """The pattern of a `proton.record start|end "name"` line, optionally
    followed by its `loc(...)` (the op's name is the compiler's: it loads
    the extension on first use)."""
    from ..contract.compiler_exports import RECORD_OP

    return re.compile(
        rf'^(?P<indent>\s*){re.escape(RECORD_OP)}\s+(?P<kind>start|end)\s+'
        r'"(?P<name>(?:[^"\\]|\\.)*)"\s*(?P<loc>loc\(.*\))?\s*$'
    )


@functools.cache
def record_op() -> str:
    """The op name that every `proton.record` line holds: a line without it
    needs no regex to tell that it is not a record."""
    from ..contract.compiler_exports import RECORD_OP

    return RECORD_OP


@functools.cache
def marker_pattern() -> re.Pattern:
    """A marker's assembly text in TTGIR: kind and scope name."""
    from ..contract.compiler_exports import MARKER_LOCATION_SUFFIX, MARKER_PREFIX

    return re.compile(rf'"{re.escape(MARKER_PREFIX)}(start|end) (.*?)(?:{re.escape(MARKER_LOCATION_SUFFIX)}[^"]*)?"')


def code_chars(line: str) -> Iterator[tuple[int, str]]:
    """(column, character) for each character of `line` outside string
    literals; a string literal appears once, as its opening '"'. Braces in
    attribute strings and inline assembly are thus never counted."""
    in_string = escaped = False
    for column, char in enumerate(line):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        yield column, char


#: A string literal (to its closing quote, or to the end of an unterminated
#: one, a last lone backslash included).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\)?')


def code_text(line: str) -> str:
    """`line` with each string literal replaced by its opening '"' (what
    code_chars yields, as one string: for scanners that use regexes)."""
    return _STRING.sub('"', line) if '"' in line else line


def braces(line: str) -> str:
    """The braces of `line` outside string literals, in order (e.g. "}{")."""
    return "".join(char for _, char in code_chars(line) if char in "{}")
