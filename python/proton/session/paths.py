"""Where a session's outputs go: `<name><extension>`. As in Triton's Proton,
the name may already carry an output's extension ("run.hatchet"): it is not
doubled, and the other outputs go beside it ("run.chrome_trace").

Two optional fields come before the extension: the process's rank in a
torch.distributed run (`run.rank_1.pftrace`), so that the ranks of one job do
not overwrite each other's files, and the part of a session written in
periodic-flushing mode (`run.part_3.pftrace`, Triton's Proton's name for the
part of phase 3); both: `run.rank_1.part_3.pftrace`."""

from __future__ import annotations

import os
import sys

EXTENSIONS = (".hatchet", ".hatchet_msgpack", ".chrome_trace", ".pftrace")
#: A file name's limit on Linux and macOS; the longest suffix a session
#: gives its name (a rank and a part of up to 8 digits each).
NAME_MAX = 255
LONGEST_SUFFIX = ".rank_99999999.part_99999999.hatchet_msgpack"


def output_path(name: str, extension: str, *, rank: int | None = None, part: int | None = None) -> str:
    base = next((name[: -len(e)] for e in EXTENSIONS if name.endswith(e)), name)
    if rank is not None:
        base += f".rank_{int(rank)}"
    if part is not None:
        base += f".part_{int(part)}"
    return os.path.abspath(base + extension)


def distributed_rank() -> int | None:
    """This process's rank when it is one of several: torch.distributed's
    when initialized, else torchrun's RANK when its WORLD_SIZE is above 1
    (a session often starts before init_process_group); None otherwise.
    Never imports torch: a process that did not import torch.distributed is
    not a distributed run."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except (AttributeError, RuntimeError, ValueError):
        pass  # a half-initialized process group: fall back to the environment
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is None or world is None:
        return None
    for variable, value in (("RANK", rank), ("WORLD_SIZE", world)):
        if not (value.isascii() and value.isdigit() and len(value) <= 9):
            from ..contract.errors import ProfilerError

            raise ProfilerError(
                f"environment variable {variable}={value[:40]!r} is not a process count or rank (up to 9 "
                "decimal digits, as torchrun sets it): the outputs' names carry the rank; fix or unset it"
            )
    return int(rank) if int(world) > 1 else None


def check_session_name(name: str) -> None:
    """A session name must give file names: not empty, not a directory
    ("/", ".", "out/"), no NUL. A name with ".." is allowed (its files go
    where the path leads, which start prints)."""
    from ..contract.errors import ProfilerError

    base = os.path.basename(name)
    if not base or base in (".", "..") or "\0" in name:
        raise ProfilerError(
            f"session name {name!r} does not name a file: it is a path without extension, e.g. 'run' "
            "or 'out/run' (its outputs are <name>.hatchet, <name>.chrome_trace, ...)"
        )
    try:
        longest = os.fsencode(os.path.basename(output_path(name, LONGEST_SUFFIX)))
    except UnicodeEncodeError as e:
        raise ProfilerError(
            f"session name {name!r} cannot be a file name: character {e.start} is a lone surrogate"
        ) from None
    if len(longest) > NAME_MAX:
        raise ProfilerError(
            f"session name {name!r} is too long: its file names, such as {longest.decode(errors='replace')!r}, "
            f"would be over the {NAME_MAX} bytes a file name may have"
        )


def check_output_directory(name: str) -> None:
    """At start: the directory the outputs go to exists and is writable, so
    that a session's data is not lost at finalize."""
    from ..contract.errors import ProfilerError

    check_session_name(name)
    directory = os.path.dirname(output_path(name, "")) or "."
    if not os.path.isdir(directory):
        raise ProfilerError(
            f"cannot write the session's outputs to {directory}: no such directory (session name {name!r})"
        )
    if not os.access(directory, os.W_OK):
        raise ProfilerError(f"cannot write the session's outputs to {directory}: not writable (session name {name!r})")
    for extension in EXTENSIONS:
        if os.path.isdir(output_path(name, extension)):
            raise ProfilerError(
                f"cannot write the session's output {output_path(name, extension)}: it is a directory "
                f"(session name {name!r})"
            )
