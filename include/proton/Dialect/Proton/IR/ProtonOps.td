#ifndef PROTON_OPS_TD
#define PROTON_OPS_TD

include "proton/Dialect/Proton/IR/ProtonDialect.td"
include "proton/Dialect/Proton/IR/ProtonEnums.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Proton_RecordOp : Op<Proton_Dialect, "record",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "Records the time of a scope's, an event's or a mark's point";
  let description = [{
    Records the time at which execution reaches this point. A `start` and the
    `end` with the same name that follows it on every path delimit a scope.
    Scopes nest; a name may be reused once its scope has closed.

    `event_start` and `event_end` records of one name belong to one
    asynchronous event: they need not nest or pair on a path (an event may
    start in one loop iteration or warp and end in another); the decoder
    pairs them in time order. A `mark` records one instant. A `value`
    records one instant and a user value, a 32-bit integer or float (the
    only kind with the `value` operand; 64-bit values are refused, as a
    record has 32 bits for it).

    ```mlir
    proton.record start "load"
    proton.record end "load"
    proton.record event_start "tma"
    proton.record event_end "tma"
    proton.record mark "tile_done"
    proton.record value "iteration"(%i : i32)
    ```
  }];
  let arguments = (ins Proton_RecordKind:$kind, StrAttr:$name,
                       Optional<AnyTypeOf<[I32, F32]>>:$value);
  // The value in parentheses: a bare operand would take the next line's
  // result name (`%x = ...`) for one.
  let assemblyFormat =
      "$kind $name (`(` $value^ `:` type($value) `)`)? attr-dict";
  let builders = [
    OpBuilder<(ins "RecordKindAttr":$kind, "StringAttr":$name), [{
      build($_builder, $_state, kind, name, Value());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    const RecordKindTraits &traits() { return recordKindTraits(getKind()); }
  }];
}

#endif
