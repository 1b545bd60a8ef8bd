#ifndef PROTON_DIALECT_PROTON_IR_DIALECT_H
#define PROTON_DIALECT_PROTON_IR_DIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "proton/Dialect/Proton/IR/ProtonEnums.h.inc"
// After the enums: what each record kind does.
#include "proton/Dialect/Proton/IR/RecordKindTraits.h"

#include "proton/Dialect/Proton/IR/ProtonOpsDialect.h.inc"
#define GET_OP_CLASSES
#include "proton/Dialect/Proton/IR/ProtonOps.h.inc"

#endif
