"""hook="triton": before each Triton launch, evaluate the kernel's
`launch_metadata` function (if it has one) and hand flops8/16/32/64 and
bytes to the runtime, which attaches them to that very launch.

The hook is added to Triton's launch_enter_hook chain and removed at
finalize, so hooks installed by others keep running."""

from __future__ import annotations

import triton.knobs

from ..errors import ProfilerError
from .records import FLOPS_METRICS

_installed = []   # one chain entry shared by all sessions that asked for it


def _on_launch(launch_metadata) -> None:
    if launch_metadata is None or not launch_metadata.extras:
        return  # the kernel defines no launch_metadata: nothing to evaluate
    data = launch_metadata.get()
    try:
        flops = [float(data.get(key, 0.0)) for key in FLOPS_METRICS]
        nbytes = float(data.get("bytes", 0.0))
    except (TypeError, ValueError):
        raise ProfilerError(f"launch_metadata of kernel {data.get('name', '?')} returned non-numeric "
                            "flops/bytes") from None
    if any(flops) or nbytes:
        from .session import _host
        _host().set_launch_metrics(*flops, nbytes)


def install():
    if not _installed:
        triton.knobs.runtime.launch_enter_hook.add(_on_launch)
    _installed.append(_on_launch)
    return _on_launch


def uninstall(hook) -> None:
    _installed.remove(hook)
    if not _installed:
        triton.knobs.runtime.launch_enter_hook.remove(_on_launch)
