#ifndef PROTON_TRANSFORMS_PASSES_TD
#define PROTON_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def ProtonStripMetadata : Pass<"proton-strip-metadata", "::mlir::ModuleOp"> {
  let summary = "Drop the layout and scope table the lowering leaves on kernels";
  let description = [{
    Removes `proton.layout` (the buffer layout, a `proton_gpu` attribute)
    and `proton.scopes` (the scope table) from every function. The compiler
    reads them back for the kernel's metadata; other tools, such as stock
    `mlir-translate`, cannot parse the layout. `--proton-pipeline` runs this
    pass last with `strip-metadata=true`.
  }];
}

#endif
