"""Host-side states, with the semantics of Triton's own Proton (`proton.state`):
`with proton.state("tag"):` / `@proton.state("tag")`, `proton.enter_state` /
`proton.exit_state`; and the state the launch hook (hook="triton")
evaluates a kernel's launch_metadata in, COMPUTE_METADATA_SCOPE_NAME: kernels
that function launches go below it (and, as Triton 3.8+ shows them, below
the launching kernel's name). With PROTON_DISABLE=1 states do nothing."""

from __future__ import annotations

import functools

from .runtime import _host, check_name as _check_name, disabled

_state_stack: dict[int, list] = {}  # thread id -> previous states, for enter_state/exit_state


def enter_state(name: str) -> None:
    """Launches from now on (this thread) go below a node `name` under their
    calling context, until exit_state(). An inner state replaces the outer
    one (it does not nest)."""
    _check_name(name, "state")
    if disabled():
        return
    import threading

    previous = _host().set_state(name)
    _state_stack.setdefault(threading.get_ident(), []).append(previous)


def exit_state() -> None:
    """Ends the state entered last on this thread (restoring the one before)."""
    if disabled():
        return
    import threading

    stack = _state_stack.get(threading.get_ident())
    _host().set_state(stack.pop() if stack else None)


class state:
    """`with proton.state("tag"):` or `@proton.state("tag")`: launches inside
    go below a node `tag` under their calling context. An inner state
    replaces the outer one (it does not nest); the outer one is restored on
    exit."""

    def __init__(self, name: str):
        _check_name(name, "state")
        self.name = name

    def __enter__(self):
        enter_state(self.name)
        return self

    def __exit__(self, *exc):
        exit_state()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            enter_state(self.name)
            try:
                return function(*args, **kwargs)
            finally:
                exit_state()

        return wrapped


# -- the launch hook's state ----------------------------------------------------

COMPUTE_METADATA_SCOPE_NAME = "__proton_launch_metadata"
#: A state named PREFIX + kernel is shown as COMPUTE_METADATA_SCOPE_NAME,
#: then the kernel's name, below the calling context.
COMPUTE_METADATA_SCOPE_PREFIX = COMPUTE_METADATA_SCOPE_NAME + ":"


def get_metadata_state_name(kernel_name: str | None = None) -> str:
    """The state launches made while evaluating `kernel_name`'s launch
    metadata go to (COMPUTE_METADATA_SCOPE_NAME without a kernel)."""
    if not kernel_name:
        return COMPUTE_METADATA_SCOPE_NAME
    return COMPUTE_METADATA_SCOPE_PREFIX + kernel_name


class metadata_state(state):
    """`with proton.metadata_state(kernel):` launches inside go below the
    launch-metadata frames (viewers leave them out)."""

    def __init__(self, kernel_name: str | None = None):
        super().__init__(get_metadata_state_name(kernel_name))
