#ifndef PROTON_ENUMS_TD
#define PROTON_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def Proton_RecordKind : I32EnumAttr<"RecordKind", "whether a record opens or closes a scope", [
    I32EnumAttrCase<"start", 0>,
    I32EnumAttrCase<"end", 1>
  ]> {
  let cppNamespace = "::mlir::proton";
}

#endif
