"""Finding the vendor tracing libraries at run time: libcupti (NVIDIA),
librocprofiler-sdk and libroctracer64 (AMD). Nothing is linked at build time, so the package imports
on machines without either; a missing one is a clear ProfilerError."""

from __future__ import annotations

import glob
import importlib.util
import os

from ..contract.errors import ProfilerError


def _package_dir(name: str) -> str | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def cupti_candidates() -> list[str]:
    """Directories searched for libcupti, in order. Triton's bundled copy
    comes first: the extension is compiled against its headers."""
    dirs = []
    triton_dir = _package_dir("triton")
    if triton_dir:
        dirs.append(os.path.join(triton_dir, "backends", "nvidia", "lib", "cupti"))
    nvidia_dir = _package_dir("nvidia")
    if nvidia_dir:
        dirs += [os.path.join(nvidia_dir, "cuda_cupti", "lib"), os.path.join(nvidia_dir, "cu13", "lib")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            dirs += [
                os.path.join(root, "extras", "CUPTI", "lib64"),
                os.path.join(root, "lib64"),
                os.path.join(root, "targets", "x86_64-linux", "lib"),
            ]
    dirs += sorted(glob.glob("/usr/local/cuda-*/targets/x86_64-linux/lib"), reverse=True)
    return dirs


def _find(variable: str, pattern: str, searched: list[str], what: str, install: str) -> str:
    """The library named by `variable`, else the first `pattern` match in
    `searched`; a ProfilerError naming every place looked at otherwise."""
    explicit = os.environ.get(variable)
    if explicit:
        if not os.path.isfile(explicit):
            raise ProfilerError(f"{variable}={explicit} is not a file")
        return explicit
    for directory in searched:
        found = sorted(glob.glob(os.path.join(directory, pattern)), key=len)
        if found:
            return found[0]
    raise ProfilerError(
        f"{what} not found; searched: " + ", ".join(searched) + f". {install}, or set {variable} to the library's path"
    )


def find_cupti() -> str:
    return _find(
        "PROTON_CUPTI_LIB",
        "libcupti.so*",
        cupti_candidates(),
        "CUPTI (libcupti.so)",
        "Install the CUDA toolkit's CUPTI or the nvidia-cuda-cupti-cu12 package",
    )


def rocm_lib_dirs() -> list[str]:
    """ROCm's library directories, in order: $ROCM_PATH, $ROCM_HOME,
    /opt/rocm, then versioned installs, newest first."""
    roots = [os.environ.get("ROCM_PATH"), os.environ.get("ROCM_HOME"), "/opt/rocm"]
    searched = [os.path.join(root, "lib") for root in roots if root]
    return searched + sorted(glob.glob("/opt/rocm-*/lib"), reverse=True)


def _configure_therock() -> None:
    # ROCm from Python wheels sets the variables below unless the user has.
    from .rocm_wheels import configure_runtime

    configure_runtime()


def find_rocprofiler() -> str:
    _configure_therock()
    # "librocprofiler-sdk.so*", not "librocprofiler-sdk*": the roctx and
    # tool libraries beside it are not the SDK.
    return _find(
        "PROTON_ROCPROFILER_LIB",
        "librocprofiler-sdk.so*",
        rocm_lib_dirs(),
        "rocprofiler-sdk (librocprofiler-sdk.so)",
        "Install ROCm 6.2 or later (its rocprofiler-sdk package)",
    )


def find_roctracer() -> str:
    _configure_therock()
    searched = rocm_lib_dirs()
    return _find(
        "PROTON_ROCTRACER_LIB",
        "libroctracer64.so*",
        searched,
        "ROCTracer (libroctracer64.so)",
        "Install ROCm (its roctracer package)",
    )
