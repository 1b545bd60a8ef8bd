#ifndef PROTON_DIALECT_TD
#define PROTON_DIALECT_TD

include "mlir/IR/OpBase.td"
include "proton/Dialect/Proton/IR/ProtonEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Proton_Dialect : Dialect {
  let name = "proton";
  let cppNamespace = "::mlir::proton";
  let summary = "Source-level intra-kernel profiling markers";
  let description = [{
    The `proton` dialect holds the profiling markers a user places in a kernel:
    `proton.record start "name"` and `proton.record end "name"`. They carry no
    values; the lowering to `proton_gpu` decides how a record is measured and
    stored.
  }];
}

def Proton_RecordOp : Op<Proton_Dialect, "record",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Marks the start or the end of a named profiling scope";
  let description = [{
    Records the time at which execution reaches this point. A `start` and the
    `end` with the same name that follows it on every path delimit a scope.
    Scopes nest; a name may be reused once its scope has closed.

    ```mlir
    proton.record start "load"
    proton.record end "load"
    ```
  }];
  let arguments = (ins Proton_RecordKind:$kind, StrAttr:$name);
  let assemblyFormat = "$kind $name attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isStart() { return getKind() == RecordKind::start; }
  }];
}

#endif
