"""Where a session's outputs go: `<name><extension>`. As in Triton's Proton,
the name may already carry an output's extension ("run.hatchet"): it is not
doubled, and the other outputs go beside it ("run.chrome_trace")."""

from __future__ import annotations

import os

EXTENSIONS = (".hatchet", ".chrome_trace", ".pftrace")


def output_path(name: str, extension: str) -> str:
    base = next((name[:-len(e)] for e in EXTENSIONS if name.endswith(e)), name)
    return os.path.abspath(base + extension)
