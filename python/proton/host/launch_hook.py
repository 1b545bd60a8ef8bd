"""hook="triton": before each Triton launch, evaluate the kernel's
`launch_metadata` function (if it has one) and hand flops8/16/32/64 and
bytes to the runtime, which attaches them to that very launch. The hook
itself is C++ (`proton._host.triton_launch_hook`): it runs on every launch.

It is added to Triton's launch_enter_hook chain and removed at finalize, so
hooks installed by others keep running."""

from __future__ import annotations

import re

import triton
import triton.knobs

_users = []  # sessions sharing the one chain entry


def _triton_version() -> tuple[int, int]:
    parts = [int(p) for p in re.findall(r"\d+", triton.__version__)[:2]]
    return tuple(parts + [0] * (2 - len(parts)))


def install():
    from .session import _host

    from ..hooks import launch

    host = _host()
    host.set_launch_id_var(launch.id)
    # Triton 3.8+ shows launch_metadata's own kernels below the launching
    # kernel's name inside the metadata scope; 3.6 and 3.7 directly in it.
    host.set_launch_metadata_per_kernel(_triton_version() >= (3, 8))
    hook = host.triton_launch_hook
    if not _users:
        triton.knobs.runtime.launch_enter_hook.add(hook)
    _users.append(hook)
    return hook


def uninstall(hook) -> None:
    _users.remove(hook)
    if not _users:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
