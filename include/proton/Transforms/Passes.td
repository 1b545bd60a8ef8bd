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

def ProtonMmaScopes : Pass<"proton-mma-scopes", "::mlir::ModuleOp"> {
  let summary = "Add scopes around the kernel's matrix-multiply instructions";
  let description = [{
    The MMA mode's pass: places `proton.record start/end` pairs around the
    matrix-multiply instructions of every LLVM function, so that each warp
    records when it issued MMAs and how long it waited for them without any
    marker in the kernel. It runs after `proton-lift-markers` and before
    scope ids are allocated.

    A run is a maximal sequence of MMA instructions of one family in one
    block; operations free of memory effects (`llvm.extractvalue`, constants,
    arithmetic) may sit between them, any other operation (a load, a store,
    a barrier, a call, a user's record) ends the run. Each run that holds a
    multiply becomes one scope:

    - `mma.issue`: Hopper `wgmma.fence` / `wgmma.mma_async` /
      `wgmma.commit_group` runs (a fence just before the first
      `mma_async` is inside, so that no record lies between a fence and the
      multiplies it orders) and Blackwell `tcgen05.mma` / `tcgen05.commit`
      runs.
    - `mma.wait`: each `wgmma.wait_group`.
    - `mma`: runs of synchronous multiplies: `mma.sync` / `mma.sp`
      (Ampere, and small dots on Hopper), NVVM `mma` intrinsics, AMD
      `mfma`, `smfmac`, `wmma` and `swmmac` intrinsics.

    Instructions are recognised in inline assembly (by mnemonic), in calls
    of intrinsics (also under the bridge's hidden-intrinsic prefix) and as
    NVVM / ROCDL operations. The names `mma` and `mma.*` are reserved: a
    user record with one of them is an error. A function without MMA
    instructions is left as it is.
  }];
  let dependentDialects = ["::mlir::proton::ProtonDialect"];
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
