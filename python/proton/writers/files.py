"""How Proton reads its inputs and writes its outputs: every writer, every
command and the sessions go through `output`, `write_or_fall_back` and
`open_input` here (docs/output-formats.md, "Output files", states the rules).

Outputs. A destination that exists and is not a regular file (a device
node such as /dev/null, a FIFO, a path through /proc naming a process's
open file) is written directly, never renamed over; one of this process's
own open files (/dev/stdout, /dev/fd/2) and a socket get the bytes once
they are complete, through the descriptor or a connection; "-" is
standard output where a command writes one file (also complete before the
first byte goes out). A symbolic link is followed: its target
is replaced and the link kept. Anything else (a regular file, or nothing
yet) is written beside its final name and renamed over it when complete,
so that a failure leaves the old file or nothing, never a partial one.

Inputs must be regular files: a FIFO, device or socket is refused at once
(reading one can block forever or never end)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import socket
import stat
import sys
import tempfile
import time
import uuid

STDOUT = "-"
#: How long a FIFO destination may wait for a process to open it for reading.
FIFO_READER_WAIT_S = 10.0

#: False while open sessions are finalized at the program's end: the
#: interpreter may refuse new threads then (Python 3.12 does, once its
#: shutdown began), so the writers do in the calling thread what they would
#: have handed to threads (profiling/at_exit.py sets it).
_threads_allowed = True


def threads_allowed() -> bool:
    """Whether the writers may start threads (pools, background writes)."""
    return _threads_allowed


def allow_threads(allowed: bool) -> None:
    global _threads_allowed
    _threads_allowed = allowed


class InputFileError(OSError):
    """An input that is not a regular file; str() is one line naming it."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def destination(path: str) -> tuple[str, object]:
    """How `path` is written: ("descriptor", n) for one of this process's
    open files (/dev/stdout, /dev/fd/n); ("direct", path) for a device, FIFO
    or another process's open file; ("socket", path); or ("replace", the
    file a chain of symbolic links ends at). OSError for a directory or a
    path that cannot be looked at."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None  # nothing there yet (or a link to nothing: its target is created)
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    hop = _proc_hop(path)
    if hop is not None and hop[0] == f"/proc/{os.getpid()}/fd" and hop[1].isdigit():
        return "descriptor", int(hop[1])
    if mode is not None and stat.S_ISSOCK(mode):
        return "socket", path
    if (mode is not None and not stat.S_ISREG(mode)) or hop is not None:
        return "direct", path
    return "replace", os.path.realpath(path)


def _proc_hop(path: str) -> tuple[str, str] | None:
    """Where `path` first leads into /proc, as (folder, name) with the
    folder's links resolved ("/proc/<pid>/fd", "1" for /dev/stdout); None
    if it does not. Such a path names a file some process holds open, such
    as a log the shell appends to, which renaming over it would take away."""
    path = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links followed
        folder = os.path.realpath(os.path.dirname(path))
        if folder == "/proc" or folder.startswith("/proc/"):
            return folder, os.path.basename(path)
        path = os.path.join(folder, os.path.basename(path))
        if not os.path.islink(path):
            return None
        path = os.path.join(folder, os.readlink(path))
    return None


@contextlib.contextmanager
def output(path: str, *, stdout: bool = False):
    """Yields the file name to write `path` through (see the module's
    rules); `stdout=True` lets "-" mean standard output. OSError (its
    filename the destination, never a temporary name) when it cannot be
    written; the block's own exceptions pass through, nothing left behind."""
    if path == STDOUT and stdout:
        with _spooled(_to_stdout) as spool:
            yield spool
        return
    how, target = destination(path)
    if how == "descriptor":  # written at the descriptor's own offset, after what was printed there
        with _spooled(lambda f: _to_descriptor(f, target)) as spool:
            yield spool
    elif how == "socket":
        with _spooled(lambda f: _to_socket(f, path)) as spool:
            yield spool
    elif how == "direct":
        with _reader_waiting(path):
            yield path
    else:
        partial = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.{uuid.uuid4().hex[:12]}.partial")
        try:
            yield partial
            os.replace(partial, target)
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.unlink(partial)
            if isinstance(error, OSError) and error.filename == partial:
                error.filename = path  # name what the user named
            raise


@contextlib.contextmanager
def _spooled(deliver):
    """A temporary file to write; `deliver(file)` sends it on when complete."""
    handle, spool = tempfile.mkstemp(prefix="proton-", suffix=".spool")
    os.close(handle)
    try:
        yield spool
        with open(spool, "rb") as f:
            deliver(f)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(spool)


def _to_stdout(f) -> None:
    sys.stdout.flush()  # what was printed before comes first
    shutil.copyfileobj(f, sys.stdout.buffer)
    sys.stdout.buffer.flush()


def _to_descriptor(f, descriptor: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    with os.fdopen(os.dup(descriptor), "wb") as out:
        shutil.copyfileobj(f, out)


def _to_socket(f, path: str) -> None:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendfile(f)
            s.shutdown(socket.SHUT_WR)
    except OSError as error:
        raise OSError(error.errno, f"cannot send to the socket: {error.strerror or error}", path) from None


@contextlib.contextmanager
def _reader_waiting(path: str):
    """For a FIFO: waits (bounded) until a process opens it for reading,
    and holds it open for writing meanwhile, so that the reader sees no
    end of file before the writer's own open; nothing for other files."""
    try:
        is_fifo = stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        is_fifo = False
    if not is_fifo:
        yield
        return
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            held = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            if time.monotonic() >= deadline:
                raise OSError(
                    errno.ENXIO, f"no process opened the FIFO for reading within {FIFO_READER_WAIT_S:g} s", path
                ) from None
            time.sleep(0.02)
    try:
        yield
    finally:
        os.close(held)


def write_or_fall_back(path: str, write, warnings: list) -> str:
    """Writes a session's output with `write(name)` through `output`;
    where that fails (the directory went away, the disk is full), writes it
    to the temporary directory instead, says where in `warnings` and
    returns that path. Where both fail, raises ProfilerError and nothing is
    left behind: the caller still holds the data and may try again."""
    from ..contract.errors import ProfilerError

    try:
        with output(path) as target:
            write(target)
        return os.path.abspath(path)
    except OSError as error:
        first = error
    fallback = os.path.join(tempfile.gettempdir(), f"proton-{uuid.uuid4().hex[:8]}-{os.path.basename(path)[-120:]}")
    try:
        with output(fallback) as target:
            write(target)
    except OSError as error:
        raise ProfilerError(
            f"could not write {path} ({_reason(first)}), nor {fallback} instead ({_reason(error)})"
        ) from error
    warnings.append(f"could not write {path} ({_reason(first)}); wrote {fallback} instead")
    return fallback


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def open_input(path: str, binary: bool = True):
    """`path` opened for reading if it is a regular file; InputFileError
    naming it otherwise, before it is opened (opening a FIFO waits for a
    writer, a device may act), IsADirectoryError, FileNotFoundError and
    other OSErrors as the system gives them."""
    _check_regular(os.stat(path).st_mode, path)
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # swapped for a FIFO since: no wait
    try:
        _check_regular(os.fstat(handle).st_mode, path)
        os.set_blocking(handle, True)
        return os.fdopen(handle, "rb" if binary else "r", closefd=True)
    except BaseException:
        os.close(handle)
        raise


def _check_regular(mode: int, path: str) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", path)
    if not stat.S_ISREG(mode):
        raise InputFileError(errno.EINVAL, f"is {_kind(mode)}, not a regular file", path)


def read_input(path: str) -> bytes:
    """The bytes of the regular file `path` (open_input's errors)."""
    with open_input(path) as f:
        return f.read()


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


class BackgroundWrites:
    """Writes handed to `write` go to `file` on a thread of its own, in
    order, at most `depth` waiting (the system call runs without the GIL,
    so the writer builds its next bytes meanwhile). The caller must leave
    the bytes it hands over unchanged until `wait(count)` says the first
    `count` writes are done (`submitted` counts the writes handed over).
    An error of a write is raised by the next call; `close` waits for all
    (and raises the first error), `abandon` drops what waits."""

    def __init__(self, file, depth: int = 2):
        import queue
        import threading

        self.file = file
        self.submitted = 0
        self._done = 0
        self._error: BaseException | None = None
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._cond = threading.Condition()
        self._thread = None  # None: each write is made at once, in the caller's thread
        if threads_allowed():
            self._thread = threading.Thread(target=self._run, name="proton-file-writes", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            try:
                if self._error is None:
                    self.file.write(data)
            except BaseException as error:  # noqa: BLE001 - raised in the writer's thread
                self._error = error
            with self._cond:
                self._done += 1
                self._cond.notify_all()

    def _check(self) -> None:
        if self._error is not None:
            raise self._error

    def write(self, data) -> None:
        self._check()
        self.submitted += 1
        if self._thread is None:
            self.file.write(data)
            self._done += 1
            return
        self._queue.put(data)

    def wait(self, count: int) -> None:
        """Until the first `count` writes are done."""
        with self._cond:
            self._cond.wait_for(lambda: self._done >= count)
        self._check()

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        self._check()

    def abandon(self) -> None:
        """Stops after the write under way (on an error of the caller's)."""
        self._error = self._error or OSError("abandoned")
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()


class BackgroundCalls:
    """`call(*args)` run on a thread of its own, in order, at most `depth`
    waiting: a context manager whose value submits a call; leaving it
    waits for all and raises the first error of a call (an error of the
    block drops the calls still waiting)."""

    def __init__(self, call, depth: int = 2):
        import queue
        import threading

        self.call = call
        self._error: BaseException | None = None
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._thread = threading.Thread(target=self._run, name="proton-background", daemon=True)

    def _run(self) -> None:
        while True:
            args = self._queue.get()
            if args is None:
                return
            if self._error is None:
                try:
                    self.call(*args)
                except BaseException as error:  # noqa: BLE001 - raised in the submitter's thread
                    self._error = error

    def submit(self, *args) -> None:
        if self._error is not None:
            raise self._error
        if self._thread is None:
            self.call(*args)  # no threads at the program's end: at once
            return
        self._queue.put(args)

    def __enter__(self):
        if threads_allowed():
            self._thread.start()
        else:
            self._thread = None
        return self.submit

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None:
            self._error = self._error or value
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
        if kind is None and self._error is not None:
            raise self._error
