"""`proton.state` as a module, for scripts that import from it as they do
from Triton's Proton (`from proton.state import COMPUTE_METADATA_SCOPE_NAME`);
`proton.state` itself stays the state context manager. Host scopes and
states live in proton.host.state."""

from .host.state import (
    COMPUTE_METADATA_SCOPE_NAME,
    COMPUTE_METADATA_SCOPE_PREFIX,
    enter_state,
    exit_state,
    get_metadata_state_name,
    metadata_state,
    state,
)

__all__ = [
    "COMPUTE_METADATA_SCOPE_NAME",
    "COMPUTE_METADATA_SCOPE_PREFIX",
    "enter_state",
    "exit_state",
    "get_metadata_state_name",
    "metadata_state",
    "state",
]
