"""Finding the vendor tracing libraries at run time: libcupti (NVIDIA) and
libroctracer64 (AMD). Nothing is linked at build time, so the package imports
on machines without either; a missing one is a clear ProfilerError."""

from __future__ import annotations

import glob
import importlib.util
import os

from ..errors import ProfilerError


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
            dirs += [os.path.join(root, "extras", "CUPTI", "lib64"), os.path.join(root, "lib64"),
                     os.path.join(root, "targets", "x86_64-linux", "lib")]
    dirs += sorted(glob.glob("/usr/local/cuda-*/targets/x86_64-linux/lib"), reverse=True)
    return dirs


def find_cupti() -> str:
    explicit = os.environ.get("PROTON_CUPTI_LIB")
    if explicit:
        if not os.path.isfile(explicit):
            raise ProfilerError(f"PROTON_CUPTI_LIB={explicit} is not a file")
        return explicit
    searched = cupti_candidates()
    for directory in searched:
        found = sorted(glob.glob(os.path.join(directory, "libcupti.so*")), key=len)
        if found:
            return found[0]
    raise ProfilerError("CUPTI (libcupti.so) not found; searched: " + ", ".join(searched) +
                        ". Install the CUDA toolkit's CUPTI or the nvidia-cuda-cupti-cu12 package, "
                        "or set PROTON_CUPTI_LIB to the library's path")


def find_roctracer() -> str:
    explicit = os.environ.get("PROTON_ROCTRACER_LIB")
    if explicit:
        if not os.path.isfile(explicit):
            raise ProfilerError(f"PROTON_ROCTRACER_LIB={explicit} is not a file")
        return explicit
    roots = [os.environ.get("ROCM_PATH"), os.environ.get("ROCM_HOME"), "/opt/rocm"]
    searched = [os.path.join(root, "lib") for root in roots if root]
    searched += sorted(glob.glob("/opt/rocm-*/lib"), reverse=True)
    for directory in searched:
        found = sorted(glob.glob(os.path.join(directory, "libroctracer64.so*")), key=len)
        if found:
            return found[0]
    raise ProfilerError("ROCTracer (libroctracer64.so) not found; searched: " + ", ".join(searched) +
                        ". Install ROCm (its roctracer package) or set PROTON_ROCTRACER_LIB to the library's path")
