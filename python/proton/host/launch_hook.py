"""hook="triton": before each Triton launch, evaluate the kernel's
`launch_metadata` function (if it has one) and hand flops8/16/32/64 and
bytes to the runtime, which attaches them to that very launch (host
sessions). The hook itself is C++ (`proton._host.triton_launch_hook`): it
runs on every launch. `LaunchHook` is the hook as upstream's object (one per
process), `proton.hooks.launch` its name for users.

It is added to Triton's launch_enter_hook chain and removed at finalize, so
hooks installed by others keep running."""

from __future__ import annotations

import contextvars
import re

from ..session.hooks import Hook

#: The id of the Triton launch this thread (context) made last while
#: hook="triton" is active: distinct per launch, None before the first.
id: contextvars.ContextVar[int | None] = contextvars.ContextVar("proton_launch_id", default=None)

_users = []  # sessions sharing the one chain entry
_metadata_per_kernel = True  # the kernel's frame below the metadata scope (Triton 3.8+), set at install


def _triton_version() -> tuple[int, int]:
    import triton

    parts = [int(p) for p in re.findall(r"\d+", triton.__version__)[:2]]
    return tuple(parts + [0] * (2 - len(parts)))


def install():
    import triton.knobs

    from .runtime import _host

    host = _host()
    host.set_launch_id_var(id)
    # Triton 3.8+ shows launch_metadata's own kernels below the launching
    # kernel's name inside the metadata scope; 3.6 and 3.7 directly in it.
    global _metadata_per_kernel
    _metadata_per_kernel = _triton_version() >= (3, 8)
    host.set_launch_metadata_per_kernel(_metadata_per_kernel)
    host.set_launch_extras(launch_extras)
    host.set_launch_filter(LaunchHook().kernel_filter())
    hook = host.triton_launch_hook
    if not _users:
        triton.knobs.runtime.launch_enter_hook.add(hook)
    _users.append(hook)
    return hook


# Keys Triton itself puts in the metadata, never metrics.
RESERVED_KEYS = frozenset(["name", "function", "stream"])
_KEPT_BY_RUNTIME = frozenset(["flops8", "flops16", "flops32", "flops64", "bytes"])


def _metric_value(value) -> bool:
    from numbers import Number

    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_metric_value(v) for v in value)
    return isinstance(value, Number) or hasattr(value, "data_ptr")


def launch_extras(data: dict, raw_kernel: str | None, kernel: str | None) -> None:
    """Called by the C++ hook for what it does not keep itself: metrics
    other than flops8..64 and bytes (numbers, lists, tensors), and those
    five when they are not plain numbers (device tensors); other values
    (strings, objects) are not metrics and are left out."""
    from .state import metadata_state
    from .runtime import _host, active_sessions

    for key in _KEPT_BY_RUNTIME:
        if key in data and not _metric_value(data[key]):
            raise ValueError(f"launch_metadata of kernel {kernel or raw_kernel} gave a non-numeric {key!r}")
    metrics = {
        key: value
        for key, value in data.items()
        if key not in RESERVED_KEYS
        and _metric_value(value)
        and not (key in _KEPT_BY_RUNTIME and not isinstance(value, bool) and isinstance(value, (int, float)))
    }
    if not metrics or kernel is None:
        return
    node = _host().current_launch_node()  # where the launch about to be made goes
    with metadata_state(raw_kernel if _metadata_per_kernel else None):
        for session in active_sessions():
            session.add_kernel_metrics(node, kernel, metrics, data.get("stream"))


def uninstall(hook) -> None:
    import triton.knobs

    _users.remove(hook)
    if not _users:
        triton.knobs.runtime.launch_enter_hook.remove(hook)


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
        self._include = re.compile(include) if include else None
        self._exclude = re.compile(exclude) if exclude else None
        if self._handle is not None:
            from .runtime import _host

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
            try:
                self._handle = install()
            except Exception:
                # No host runtime (e.g. built without it): the hook is
                # registered but evaluates nothing; sessions report why.
                self._handle = None

    def deactivate(self) -> None:
        if self._handle is not None:
            uninstall(self._handle)
            self._handle = None

    def enter(self, metadata) -> None:
        if self._handle is not None:
            self._handle(metadata)
