"""The Triton stage hook: wraps the `llir` stage so that Triton's LLVM IR goes
through Proton's pipeline before Triton's own ptx/cubin (or amdgcn/hsaco)
stages, and records in the kernel's metadata what the launcher and the decoder
need (profile_scratch size and alignment, shared memory, the scope table)."""

from __future__ import annotations

import json

import triton
import triton.knobs

from . import state
from .compiler import PipelineOptions, instrument_llvm_ir, triton_arch

#: Prefix of the instrumentation_mode compile option while Proton is active.
#: Triton hashes its compile options, so this keeps instrumented builds (per
#: mode) apart from plain ones in its cache. Triton itself only reacts to
#: "consan".
MODE_PREFIX = "proton-ext:"

#: Key under which the kernel's Proton metadata travels in Triton's metadata.
METADATA_KEY = "proton"


class InstrumentationHook:
    """Installs itself as triton.knobs.runtime.add_stages_inspection_hook,
    chained with any hook already there, and restores it on uninstall."""

    def __init__(self, options: PipelineOptions, label: str = "default"):
        self.options = options
        # Every option that changes the code is in the key, so that builds of
        # different modes never share a cache entry.
        self.mode_key = f"{label}:{options.to_pass_options()}"
        self._previous_hook = None
        self._previous_mode = None
        self._installed = False

    def install(self) -> None:
        if self._installed:
            return
        self._previous_hook = triton.knobs.runtime.add_stages_inspection_hook
        self._previous_mode = triton.knobs.compilation.instrumentation_mode
        triton.knobs.runtime.add_stages_inspection_hook = self
        triton.knobs.compilation.instrumentation_mode = MODE_PREFIX + self.mode_key
        state._enter()
        self._installed = True

    def uninstall(self) -> None:
        if not self._installed:
            return
        triton.knobs.runtime.add_stages_inspection_hook = self._previous_hook
        triton.knobs.compilation.instrumentation_mode = self._previous_mode
        state._exit()
        self._installed = False

    def __enter__(self):
        self.install()
        return self

    def __exit__(self, *exc):
        self.uninstall()
        return False

    def __call__(self, backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:
            # Called with no arguments: a cache key for this hook's builds.
            return MODE_PREFIX + self.mode_key
        if self._previous_hook is not None:
            self._previous_hook(backend, stages, options, language, capability)
        make_llir = stages["llir"]
        target, arch = triton_arch(backend.target)
        num_warps = getattr(options, "num_warps", 0)

        def instrumented_llir(src, metadata):
            llvm_ir = make_llir(src, metadata)
            pipeline = PipelineOptions(**{
                **self.options.__dict__,
                "target": target,
                "arch": arch,
                "num_warps": num_warps,
                "shared_offset": int(metadata.get("shared", 0) or 0),
            })
            kernel = instrument_llvm_ir(llvm_ir, pipeline)
            if not kernel.instrumented:
                return llvm_ir
            meta = kernel.metadata
            metadata["profile_scratch_size"] = meta["profile_scratch_size"]
            metadata["profile_scratch_align"] = meta["profile_scratch_align"]
            metadata["shared"] = max(int(metadata.get("shared", 0) or 0), meta["shared_memory_total"])
            metadata[METADATA_KEY] = json.dumps(meta)
            return kernel.llvm_ir

        stages["llir"] = instrumented_llir
