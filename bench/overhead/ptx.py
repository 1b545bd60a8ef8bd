"""What a compiled kernel's PTX and metadata say about its build: the
variants must compile apart, so the plain PTX has no clock reads and the
instrumented ones do."""

import re


CLOCK_RE = re.compile(r"%clock(?:64)?\b")
GLOBALTIMER_RE = re.compile(r"%globaltimer")


def ptx_info(compiled):
    ptx = compiled.asm.get("ptx", "") if hasattr(compiled.asm, "get") else compiled.asm["ptx"]
    meta = compiled.metadata
    return {
        "kernel_name": compiled.name,
        "ptx_clock_reads": len(CLOCK_RE.findall(ptx)),
        "ptx_globaltimer_reads": len(GLOBALTIMER_RE.findall(ptx)),
        "profile_scratch_size": getattr(meta, "profile_scratch_size", None),
        "shared": getattr(meta, "shared", None),
        "num_warps": getattr(meta, "num_warps", None),
        "num_stages": getattr(meta, "num_stages", None),
        "instrumentation_mode": getattr(meta, "instrumentation_mode", None),
    }


def ptx_problems(variant, info):
    """The variants compile apart because both profilers set the compile option
    `instrumentation_mode`, which keys Triton's caches; this checks it worked."""
    clocks = info["ptx_clock_reads"]
    if variant == "plain" and clocks:
        return [f"plain PTX has {clocks} clock reads: it is not a plain build (cache mix-up?)"]
    if variant != "plain" and not clocks:
        return [
            f"{variant} PTX has no clock reads: the markers were not instrumented "
            f"(session not active at compile time, or a plain cache entry was reused)"
        ]
    return []
