"""time_shift's cost per record, measured on this GPU with this mode's
compiler options by a microbenchmark (back-to-back empty scopes), and cached
per GPU and options in $PROTON_CACHE_DIR (default ~/.cache/proton)."""

from __future__ import annotations

import json
import os

import numpy as np
import triton
import triton.language as tl
from triton.runtime import _allocation

from . import decode
from ..compiling import instrumentation_state, stage_hook
from .. import kernel_metadata, language as pl
from ..mode import Default

EMPTY_SCOPES = 32


@triton.jit
def _back_to_back_scopes(out_ptr, N: tl.constexpr):
    for _ in tl.static_range(N):
        pl.enter_scope("empty")
        pl.exit_scope("empty")
    tl.store(out_ptr + tl.program_id(0), 1)


def cache_path() -> str:
    root = os.environ.get("PROTON_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "proton")
    return os.path.join(root, "calibration.json")


def record_cost_cycles(mode: Default) -> float:
    """Cycles one record adds to the time measured around it."""
    import torch

    options = mode.pipeline_options()
    key = f"{torch.cuda.get_device_name()}|{options.to_pass_options()}"
    path = cache_path()
    cache = _load(path)
    if key not in cache:
        cache[key] = measure(mode)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(cache, f, indent=1)
        os.replace(path + ".tmp", path)
    return float(cache[key])


def measure(mode: Default, ctas: int = 8) -> float:
    """Median duration of an empty scope over all warps of `ctas` CTAs."""
    import torch

    buffers = []

    def allocate(size, alignment, stream):
        buffers.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        return buffers[-1]

    previous = _allocation._profile_allocator.get()
    out = torch.zeros(ctas, dtype=torch.int32, device="cuda")
    _allocation.set_profile_allocator(allocate)
    try:
        with (
            instrumentation_state.own_kernels(),
            stage_hook.StageHook(mode.pipeline_options(), label=f"calibration:{mode}"),
        ):
            _back_to_back_scopes[(ctas,)](out, N=EMPTY_SCOPES, num_warps=4)
        torch.cuda.synchronize()
    finally:
        _allocation.set_profile_allocator(previous)
    data = buffers[-1].cpu().numpy()
    meta = kernel_metadata.metadata_for_buffer(data, "calibration")
    events = decode.decode(data, meta, ctas, kernel="calibration")
    return float(np.median(events.duration_cycles))


def _load(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
