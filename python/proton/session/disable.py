"""Whether profiling is switched off for this process, so that other
profilers can run: PROTON_DISABLE=1, or Triton's own switch
(TRITON_PROTON_DISABLE=1 or triton.knobs.proton.disable), which scripts
written for Triton's Proton already use."""

from __future__ import annotations

import os


def profiling_disabled() -> bool:
    for variable in ("PROTON_DISABLE", "TRITON_PROTON_DISABLE"):
        if os.environ.get(variable, "0").strip().lower() not in ("", "0", "false", "off", "no"):
            return True
    try:
        import triton.knobs
    except ImportError:
        return False
    proton_knobs = getattr(triton.knobs, "proton", None)
    return bool(getattr(proton_knobs, "disable", False))
