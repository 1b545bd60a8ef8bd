"""`proton.state` as a module, for scripts that import from it as they do
from Triton's Proton (`from proton.state import COMPUTE_METADATA_SCOPE_NAME`);
`proton.state` itself stays the state context manager (host/scope.py).

The launch hook (hook="triton") evaluates a kernel's launch_metadata in the
scope COMPUTE_METADATA_SCOPE_NAME; kernels that function launches go below
it (and, as Triton 3.8+ shows them, below the launching kernel's name)."""

from __future__ import annotations

from .host.scope import enter_state, exit_state, state

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


__all__ = [
    "COMPUTE_METADATA_SCOPE_NAME",
    "COMPUTE_METADATA_SCOPE_PREFIX",
    "enter_state",
    "exit_state",
    "get_metadata_state_name",
    "metadata_state",
    "state",
]
