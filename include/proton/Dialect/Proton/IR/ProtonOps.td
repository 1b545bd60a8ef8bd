#ifndef PROTON_OPS_TD
#define PROTON_OPS_TD

include "proton/Dialect/Proton/IR/ProtonDialect.td"
include "proton/Dialect/Proton/IR/ProtonEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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
