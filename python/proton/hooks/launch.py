"""hook="triton": Triton's launch_metadata evaluated at every launch, its
flops and bytes attached to that launch (host sessions). One instance per
process; the work per launch is C++ (proton._host.triton_launch_hook)."""

from __future__ import annotations

import contextvars

from .hook import Hook

from ..state import COMPUTE_METADATA_SCOPE_NAME  # noqa: F401 - upstream's scripts import it from here

#: The id of the Triton launch this thread (context) made last while
#: hook="triton" is active: distinct per launch, None before the first.
id: contextvars.ContextVar[int | None] = contextvars.ContextVar("proton_launch_id", default=None)


class LaunchHook(Hook):
    priority = 100
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._handle = None
        return cls._instance

    def activate(self) -> None:
        if self._handle is None:
            from ..host import launch_hook

            try:
                self._handle = launch_hook.install()
            except Exception:
                # No host runtime (e.g. built without it): the hook is
                # registered but evaluates nothing; sessions report why.
                self._handle = None

    def deactivate(self) -> None:
        if self._handle is not None:
            from ..host import launch_hook

            launch_hook.uninstall(self._handle)
            self._handle = None

    def enter(self, metadata) -> None:
        if self._handle is not None:
            self._handle(metadata)
