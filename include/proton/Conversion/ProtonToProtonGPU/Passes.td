#ifndef PROTON_CONVERSION_PROTONTOPROTONGPU_PASSES_TD
#define PROTON_CONVERSION_PROTONTOPROTONGPU_PASSES_TD

include "mlir/Pass/PassBase.td"
include "proton/Conversion/ProtonToProtonGPU/BufferOptions.td"

def ConvertProtonToProtonGPU
    : Pass<"convert-proton-to-protongpu", "::mlir::ModuleOp"> {
  let summary = "Lower proton.record to counter reads and circular stores";
  let description = [{
    For every kernel that holds records: checks that scopes pair up and nest
    (see ScopeIdAllocation), sizes the profile buffer, sets up the calling
    warp's segment at entry, turns each record into a counter read plus a
    circular store, and finalizes the segment before every return. The
    kernel's last parameter must be Triton's `profile_scratch` pointer.
    The scope table is attached to the kernel as `proton.scopes`, an array
    of `#proton_gpu.scope_entry`, one per id.
  }];
  let options = ProtonBufferOptions;
  let dependentDialects = ["::mlir::proton::gpu::ProtonGPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif
