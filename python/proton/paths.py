"""Where a session's outputs go: `<name><extension>`. As in Triton's Proton,
the name may already carry an output's extension ("run.hatchet"): it is not
doubled, and the other outputs go beside it ("run.chrome_trace")."""

from __future__ import annotations

import os

EXTENSIONS = (".hatchet", ".chrome_trace", ".pftrace")


def output_path(name: str, extension: str) -> str:
    base = next((name[:-len(e)] for e in EXTENSIONS if name.endswith(e)), name)
    return os.path.abspath(base + extension)


def check_output_directory(name: str) -> None:
    """At start: the directory the outputs go to exists and is writable, so
    that a session's data is not lost at finalize."""
    from .errors import ProfilerError
    directory = os.path.dirname(output_path(name, "")) or "."
    if not os.path.isdir(directory):
        raise ProfilerError(f"cannot write the session's outputs to {directory}: no such directory "
                            f"(session name {name!r})")
    if not os.access(directory, os.W_OK):
        raise ProfilerError(f"cannot write the session's outputs to {directory}: not writable (session name {name!r})")


def write_or_fall_back(path: str, write, warnings: list) -> str:
    """Writes an output with `write(path)`; if that fails (the directory went
    away, the disk is full), writes it to the temporary directory instead and
    says where in `warnings`: recorded data is never thrown away."""
    try:
        write(path)
        return path
    except OSError as error:
        import tempfile
        handle, fallback = tempfile.mkstemp(prefix="proton-", suffix="-" + os.path.basename(path))
        os.close(handle)
        write(fallback)
        warnings.append(f"could not write {path} ({error.strerror or error}); wrote {fallback} instead")
        return fallback
