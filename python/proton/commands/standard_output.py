"""The commands' standard output, guarded: a write that fails there (a full
disk behind `> out`, /dev/full, a pipe whose reader left) is the user's
situation, not a bug in Proton. `install` routes sys.stdout through a
writer that remembers the failure, so that the command line can say so in
one line (`failed`, `report`) instead of a traceback, also when the failure
comes from the last flush after the outputs were written."""

from __future__ import annotations

import io
import os
import sys


class _Descriptor(io.RawIOBase):
    """File descriptor 1, remembering the first error a write met."""

    def __init__(self):
        super().__init__()
        self.error: OSError | None = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return 1

    def isatty(self) -> bool:
        return os.isatty(1)

    def write(self, data) -> int:
        try:
            return os.write(1, data)
        except OSError as error:
            self.error = self.error or error
            raise


_guard: _Descriptor | None = None
_previous = None  # sys.stdout before install


def install() -> None:
    """sys.stdout (text, as it was configured) through the guard, where it
    is the process's standard output (not one a caller put in its place)."""
    global _guard, _previous
    _guard = None
    if sys.stdout is not sys.__stdout__ or sys.stdout is None:
        return
    try:
        os.fstat(1)
    except OSError:
        return  # no standard output at all: nothing to guard
    old = _previous = sys.stdout
    _guard = _Descriptor()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_guard),
        encoding=getattr(old, "encoding", None) or "utf-8",
        errors=getattr(old, "errors", None) or "strict",
        line_buffering=bool(getattr(old, "line_buffering", False)),
    )


def failed() -> OSError | None:
    """The error writing standard output met, if any."""
    return _guard.error if _guard is not None else None


def report(prog: str) -> int:
    """Says, in one line on stderr, why standard output could not be
    written; lets go of what was left unwritten there; returns status 2."""
    error = failed()
    print(f"{prog}: error: cannot write to standard output: {error.strerror or error}", file=sys.stderr)
    silence()
    return 2


def silence() -> None:
    """Standard output to /dev/null, so that nothing is retried at exit."""
    sys.stdout = open(os.devnull, "w")


def restore() -> None:
    """Puts the previous sys.stdout back (a command run in this process
    leaves it as it was), unless writing failed: then nothing more goes there."""
    global _guard
    if _guard is not None and _guard.error is None:
        sys.stdout.flush()
        sys.stdout = _previous
    _guard = None
