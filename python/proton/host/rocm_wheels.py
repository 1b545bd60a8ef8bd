"""ROCm installed as Python wheels (AMD's TheRock `rocm_sdk` package) rather
than under /opt/rocm: where its libraries are, so that the AMD host
profiler finds them (`proton._rocm` for users, with the names Triton's
Proton uses)."""

from __future__ import annotations

import os

# Library name as rocm_sdk.find_libraries knows it -> the variable that
# points this package's host profiler at it.
_LIBRARIES = {
    "amdhip64": None,
    "rocprofiler-sdk": "PROTON_ROCPROFILER_LIB",
    "roctracer64": "PROTON_ROCTRACER_LIB",
}


def find_therock_rocm_libraries() -> dict[str, str] | None:
    """{library: path} of a TheRock ROCm install, or None when `rocm_sdk`
    is not installed or lacks the HIP runtime."""
    try:
        import rocm_sdk
    except ImportError:
        return None
    found = {}
    for name in _LIBRARIES:
        try:
            paths = rocm_sdk.find_libraries(name)
        except Exception:  # rocm_sdk raises its own errors for a missing library
            paths = []
        if paths:
            found[name] = str(paths[0])
    return found if "amdhip64" in found else None


def configure_runtime() -> dict[str, str] | None:
    """Points the host profiler at a TheRock install's libraries (variables
    the user set are kept); returns the libraries found, or None when there
    is no such install."""
    libraries = find_therock_rocm_libraries()
    if libraries is None:
        return None
    for name, variable in _LIBRARIES.items():
        if variable and name in libraries:
            os.environ.setdefault(variable, libraries[name])
    return libraries
