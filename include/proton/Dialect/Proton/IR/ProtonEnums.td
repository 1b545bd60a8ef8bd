#ifndef PROTON_ENUMS_TD
#define PROTON_ENUMS_TD

include "mlir/IR/EnumAttr.td"

// `start`/`end` delimit a scope (nested, end post-dominating start);
// `event_start`/`event_end` an asynchronous event, which may start and end in
// different iterations or warps and is paired only when decoded; `mark` is a
// single timestamp; `value` a timestamp and a user value (two records: the
// time, then the value's 32 bits with the end bit). `value_end` is that second
// record's kind in proton_gpu.circular_store only: proton.record refuses it.
def Proton_RecordKind : I32EnumAttr<"RecordKind", "what a record marks", [
    I32EnumAttrCase<"start", 0>,
    I32EnumAttrCase<"end", 1>,
    I32EnumAttrCase<"event_start", 2>,
    I32EnumAttrCase<"event_end", 3>,
    I32EnumAttrCase<"mark", 4>,
    I32EnumAttrCase<"value", 5>,
    I32EnumAttrCase<"value_end", 6>
  ]> {
  let cppNamespace = "::mlir::proton";
}

// What an id of a kernel's scope table stands for (ScopeIdAllocation): a
// scope is a start record and the end that closes it, an event every
// event_start and event_end record of one name, a mark or a value one record
// site. Exported to Python as `_C.ENUMS["IdKind"]`.
def Proton_IdKind : I32EnumAttr<"IdKind", "what a scope-table id stands for", [
    I32EnumAttrCase<"scope", 0>,
    I32EnumAttrCase<"event", 1>,
    I32EnumAttrCase<"mark", 2>,
    I32EnumAttrCase<"value", 3>
  ]> {
  let cppNamespace = "::mlir::proton";
}

#endif
