"""`proton._rocm`, as Triton's Proton has it: where a ROCm installed as
Python wheels (AMD's TheRock `rocm_sdk`) keeps its libraries
(proton.host.rocm_wheels)."""

from .host.rocm_wheels import configure_runtime, find_therock_rocm_libraries

__all__ = ["configure_runtime", "find_therock_rocm_libraries"]
