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
from ..device import memory as device_memory
from ..compiling import instrumentation_state, stage_hook
from ..contract import kernel_metadata
from ..compiling import markers as pl
from ..writers.files import output
from ..session.modes import Default

EMPTY_SCOPES = 32


@triton.jit
def _back_to_back_scopes(out_address, N: tl.constexpr):
    # The address of the profiler's own memory (device_memory), not a tensor.
    for _ in tl.static_range(N):
        pl.enter_scope("empty")
        pl.exit_scope("empty")
    tl.store(out_address.to(tl.pointer_type(tl.int32)) + tl.program_id(0), 1)


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
        with output(path) as target, open(target, "w") as f:
            json.dump(cache, f, indent=1)
    return float(cache[key])


def measure(mode: Default, ctas: int = 8) -> float:
    """Median duration of an empty scope over all warps of `ctas` CTAs. All
    its memory is the profiler's own (device_memory), freed after."""
    import torch

    memory = device_memory.memory()
    allocations = []

    def allocate(size, alignment, stream):
        allocations.append(memory.allocate(size))
        return allocations[-1].slice(0, size)

    previous = _allocation._profile_allocator.get()
    out = memory.allocate(4 * ctas)
    _allocation.set_profile_allocator(allocate)
    try:
        with (
            instrumentation_state.own_kernels(),
            stage_hook.StageHook(mode.pipeline_options(), label=f"calibration:{mode}"),
        ):
            _back_to_back_scopes[(ctas,)](out.pointer, N=EMPTY_SCOPES, num_warps=4)
        torch.cuda.synchronize()
        data = allocations[-1].read()
    finally:
        _allocation.set_profile_allocator(previous)
        for allocation in [out, *allocations]:
            memory.free(allocation)
    meta = kernel_metadata.metadata_for_buffer(data, "calibration")
    events = decode.decode(data, meta, ctas, kernel="calibration")
    return float(np.median(events.duration_cycles))


def _load(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
