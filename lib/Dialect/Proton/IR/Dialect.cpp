#include "proton/Dialect/Proton/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::proton;

#include "proton/Dialect/Proton/IR/ProtonDialect.cpp.inc"
#include "proton/Dialect/Proton/IR/ProtonEnums.cpp.inc"

void ProtonDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "proton/Dialect/Proton/IR/ProtonOps.cpp.inc"
      >();
}

// Names travel through inline-asm strings and into trace files, so they are
// kept to printable characters that need no escaping anywhere.
LogicalResult RecordOp::verify() {
  StringRef name = getName();
  if (name.empty())
    return emitOpError("scope name must not be empty");
  for (char c : name)
    if (!(llvm::isAlnum(c) || StringRef("_-.:/[]()<>, +=#@").contains(c)))
      return emitOpError("scope name '")
             << name << "' contains the character '" << c
             << "'; allowed are letters, digits, spaces and _-.:/[]()<>,+=#@";
  return success();
}

#define GET_OP_CLASSES
#include "proton/Dialect/Proton/IR/ProtonOps.cpp.inc"
