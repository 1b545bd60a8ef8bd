#include "proton/Dialect/Proton/IR/Dialect.h"

#include "llvm/Support/FormatVariadic.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::proton;

#include "proton/Dialect/Proton/IR/ProtonEnums.cpp.inc"
#include "proton/Dialect/Proton/IR/ProtonOpsDialect.cpp.inc"

void ProtonDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "proton/Dialect/Proton/IR/ProtonOps.cpp.inc"
      >();
}

// Names travel through inline-asm strings and into trace files, so they are
// kept to printable characters that need no escaping anywhere.
LogicalResult RecordOp::verify() {
  if (getKind() == RecordKind::value_end)
    return emitOpError("kind 'value_end' is internal to proton_gpu; record a "
                       "value with kind 'value'");
  bool isValue = getKind() == RecordKind::value;
  if (isValue && !getValue())
    return emitOpError("a 'value' record needs a value operand");
  if (!isValue && getValue())
    return emitOpError("only a 'value' record takes a value operand, not '")
           << stringifyRecordKind(getKind()) << "'";
  StringRef name = getName();
  if (name.empty())
    return emitOpError("scope name must not be empty");
  for (char c : name)
    if (!(llvm::isAlnum(c) || StringRef("_-.:/[]()<>, +=#@").contains(c))) {
      // Non-printable and non-ASCII bytes are named by value: printed as
      // they are, a NUL would cut the message and a UTF-8 lead byte garble it.
      std::string shown =
          llvm::isPrint(c)
              ? "the character '" + std::string(1, c) + "'"
              : llvm::formatv(
                    "the byte {0:x2} (a control or non-ASCII character)",
                    (unsigned char)c)
                    .str();
      std::string printable;
      for (char d : name)
        printable += llvm::isPrint(d)
                         ? std::string(1, d)
                         : llvm::formatv("\\x{0:x-2}", (unsigned char)d).str();
      return emitOpError("scope name '")
             << printable << "' contains " << shown
             << "; allowed are letters, digits, spaces and _-.:/[]()<>,+=#@";
    }
  return success();
}

#define GET_OP_CLASSES
#include "proton/Dialect/Proton/IR/ProtonOps.cpp.inc"
