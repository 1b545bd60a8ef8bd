"""hook="triton": before each Triton launch, evaluate the kernel's
`launch_metadata` function (if it has one) and hand flops8/16/32/64 and
bytes to the runtime, which attaches them to that very launch. The hook
itself is C++ (`proton._host.triton_launch_hook`): it runs on every launch.

It is added to Triton's launch_enter_hook chain and removed at finalize, so
hooks installed by others keep running."""

from __future__ import annotations

import triton.knobs

_users = []  # sessions sharing the one chain entry


def install():
    from .session import _host

    from ..hooks import launch

    host = _host()
    host.set_launch_id_var(launch.id)
    hook = host.triton_launch_hook
    if not _users:
        triton.knobs.runtime.launch_enter_hook.add(hook)
    _users.append(hook)
    return hook


def uninstall(hook) -> None:
    _users.remove(hook)
    if not _users:
        triton.knobs.runtime.launch_enter_hook.remove(hook)
