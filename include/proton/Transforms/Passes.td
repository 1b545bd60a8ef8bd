#ifndef PROTON_TRANSFORMS_PASSES_TD
#define PROTON_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"
include "proton/Conversion/ProtonToProtonGPU/BufferOptions.td"

def ProtonCheckScopes : Pass<"proton-check-scopes", "::mlir::ModuleOp"> {
  let summary = "Check that proton.record scopes pair up and nest";
  let description = [{
    Runs the scope-id allocation on every function and reports, at the
    records' source locations: an end without a start, a start never closed,
    crossing scopes, and an end that does not post-dominate its start. With
    `emit-remarks`, each scope's id and parent are reported as remarks.
  }];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", "false",
           "report each scope's id, name and parent as a remark">
  ];
}

def ProtonScheduleStores : Pass<"proton-schedule-stores", "::mlir::ModuleOp"> {
  let summary = "Move a scope's start store out of its measured window";
  let description = [{
    A start record's counter read stays where it is; its store moves to just
    before the store of the matching end, after the end's counter read, so
    the window between the two reads holds no store of the profiler's.
  }];
}

def ProtonAddSchedBarriers
    : Pass<"proton-add-sched-barriers", "::mlir::ModuleOp"> {
  let summary = "AMDGPU: fence every counter read with scheduling barriers";
  let description = [{
    Places `rocdl.sched.barrier 0` before and after each
    `proton_gpu.read_counter`, so that the AMDGPU machine scheduler does not
    move the kernel's instructions across a record.
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect"];
}

def ProtonPipeline : Pass<"proton-pipeline", "::mlir::ModuleOp"> {
  let summary = "The whole instrumentation chain the Triton plugin runs";
  let description = [{
    proton-lift-markers, convert-proton-to-protongpu, optionally
    proton-schedule-stores, proton-add-sched-barriers (AMDGPU, on by
    default) and convert-protongpu-to-llvm. Target-dependent defaults
    (threads per warp, shared-memory limit) come from `target` and `arch`
    unless given.
  }];
  let options = !listconcat([
    Option<"target", "target", "std::string", "\"nvptx\"",
           "nvptx or amdgpu">,
    Option<"arch", "arch", "std::string", "\"\"",
           "sm_90, ... for nvptx; gfx942 or gfx950 for amdgpu">,
    Option<"kernelId", "kernel-id", "unsigned", "0",
           "the id convert-protongpu-to-llvm writes into CTA headers">,
    Option<"schedStores", "sched-stores", "bool", "false",
           "run proton-schedule-stores">,
    Option<"schedBarriers", "sched-barriers", "bool", "true",
           "run proton-add-sched-barriers (AMDGPU only)">
  ], ProtonBufferOptions);
  let dependentDialects = ["::mlir::proton::ProtonDialect",
                           "::mlir::proton::gpu::ProtonGPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

#endif
