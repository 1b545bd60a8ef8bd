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
    """hook="triton" as an object: one per process (LaunchHook() is always
    the same instance). `proton.start(..., hook=LaunchHook())` is the same
    as hook="triton"."""

    priority = 100
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._handle = None
            cls._instance._include = cls._instance._exclude = None
        return cls._instance

    def configure(self, *, include: str | None = None, exclude: str | None = None) -> None:
        """Evaluates launch_metadata, and keeps its metrics, only for kernels
        whose name `re.match`es `include` and not `exclude` (checked on the
        kernel's own name before the call and on the name it returns)."""
        import re

        self._include = re.compile(include) if include else None
        self._exclude = re.compile(exclude) if exclude else None
        if self._handle is not None:
            from ..host.session import _host

            _host().set_launch_filter(self.kernel_filter())

    def kernel_filter(self):
        """The filter the C++ hook calls with a kernel name, or None."""
        include, exclude = self._include, self._exclude
        if include is None and exclude is None:
            return None

        def keep(name: str) -> bool:
            return (include is None or include.match(name) is not None) and (
                exclude is None or exclude.match(name) is None
            )

        return keep

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
