"""`proton.hooks.launch`, as Triton's Proton has it: hook="triton" (one
per process), the id of each launch it sees, and the scope its
launch_metadata runs in (proton.host.launch_hook)."""

from ..host.launch_hook import LaunchHook, id
from ..host.state import COMPUTE_METADATA_SCOPE_NAME

__all__ = ["COMPUTE_METADATA_SCOPE_NAME", "LaunchHook", "id"]
