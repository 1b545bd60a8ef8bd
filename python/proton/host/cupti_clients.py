"""Other CUPTI clients in the process: torch.profiler (Kineto), Nsight
Systems or Compute, or any tool that subscribes to CUPTI. CUPTI takes one
subscriber per process, so whichever starts second gets nothing.

- A host session started while another client holds CUPTI: the session
  goes on without kernel timings (scopes and metrics only), says so in one
  line when it starts and in its report, and names the likely holder
  (taken_message).
- torch.profiler started while a host session holds CUPTI records no
  kernels and says nothing: while a tracing host session is open, torch's
  profiler switch (torch.autograd.profiler._set_is_profiler_enabled, which
  torch.profiler and torch.autograd.profiler.profile call when they start)
  is watched, and its start prints one line and goes into the session's
  report (watch_torch_profiler). Without that function (another torch
  version), finalize still notes a torch.profiler that is running then.
"""

from __future__ import annotations

import os
import sys

_PROFILER_MODULE = "torch.autograd.profiler"


def torch_profiler_active() -> bool:
    """Whether torch.profiler (or torch.autograd.profiler.profile) is
    profiling now; False without torch loaded."""
    module = sys.modules.get(_PROFILER_MODULE)
    if module is not None and getattr(module, "_is_profiler_enabled", False) is True:
        return True
    torch = sys.modules.get("torch")
    enabled = getattr(getattr(torch, "autograd", None), "_profiler_enabled", None)
    try:
        return bool(enabled()) if callable(enabled) else False
    except Exception:  # noqa: BLE001 - a probe only
        return False


def likely_holder() -> str:
    """Who most likely holds CUPTI, for messages."""
    if torch_profiler_active():
        return "torch.profiler (Kineto), which is profiling this process"
    injection = os.environ.get("CUDA_INJECTION64_PATH", "")
    if injection:
        base = os.path.basename(injection)
        lowered = injection.lower()
        if "toolsinjection" in lowered or "nsys" in lowered or "nsight-systems" in lowered:
            tool = "Nsight Systems"
        elif "nsight-compute" in lowered or "ncu" in lowered:
            tool = "Nsight Compute"
        else:
            tool = "a CUDA injection library"
        return f"{tool} ({base}, from CUDA_INJECTION64_PATH)"
    return (
        "another CUPTI client (torch.profiler with CUDA activities, Nsight Systems or Compute, DCGM "
        "profiling, or another profiler in this process)"
    )


def taken_message(session_name: str) -> str:
    """One line: CUPTI is taken, by whom likely, what the session does and what to do."""
    return (
        f"CUPTI is held by {likely_holder()}: host session {session_name!r} records scopes and metrics but "
        "no kernel timings; start it outside the other tool, or profile inside kernels with "
        "backend='instrumentation', which needs no CUPTI"
    )


TORCH_STARTED = (
    "torch.profiler started while Proton's host session {names} holds CUPTI: torch.profiler records no "
    "CUDA kernels (its CPU events are unaffected); finalize the Proton session before torch.profiler starts, "
    "or use an instrumentation session (backend='instrumentation') inside torch.profiler"
)


class _Watch:
    """The wrapper around torch's profiler switch while tracing sessions are open."""

    def __init__(self, module, original, on_start):
        self.module, self.original, self.on_start = module, original, on_start

        def switch(enable, *args, **kwargs):
            if enable:
                try:
                    self.on_start()
                except Exception:  # noqa: BLE001 - a warning must never break torch.profiler
                    pass
            return self.original(enable, *args, **kwargs)

        switch.__wrapped__ = original
        switch.__name__ = getattr(original, "__name__", "_set_is_profiler_enabled")
        self.switch = switch
        module._set_is_profiler_enabled = switch

    def remove(self) -> None:
        if getattr(self.module, "_set_is_profiler_enabled", None) is self.switch:
            self.module._set_is_profiler_enabled = self.original


def watch_torch_profiler(on_start) -> _Watch | None:
    """Calls on_start() whenever torch.profiler starts; None where torch's
    profiler module is not loaded or has no switch to watch."""
    module = sys.modules.get(_PROFILER_MODULE)
    original = getattr(module, "_set_is_profiler_enabled", None) if module is not None else None
    if not callable(original):
        return None
    return _Watch(module, original, on_start)
