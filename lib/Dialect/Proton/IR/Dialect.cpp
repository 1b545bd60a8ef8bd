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

/// "a 'k'" for every recordable kind that takes a value, joined by "or".
static std::string kindsTakingValue() {
  std::string text;
  for (const RecordKindTraits &traits : allRecordKindTraits())
    if (traits.recordable && traits.takesValue())
      text += (text.empty() ? "a '" : " or '") +
              stringifyRecordKind(traits.kind).str() + "'";
  return text;
}

// What a kind takes (a value operand, whether proton.record may name it) is
// its traits'.
LogicalResult RecordOp::verify() {
  const RecordKindTraits &kindTraits = traits();
  StringRef kind = stringifyRecordKind(getKind());
  if (!kindTraits.recordable) {
    InFlightDiagnostic diag = emitOpError("kind '")
                              << kind << "' is internal to proton_gpu";
    for (const RecordKindTraits &owner : allRecordKindTraits())
      if (owner.valueRecord == getKind())
        diag << "; record a value with kind '"
             << stringifyRecordKind(owner.kind) << "'";
    return diag;
  }
  if (kindTraits.takesValue() && !getValue())
    return emitOpError("a '") << kind << "' record needs a value operand";
  if (!kindTraits.takesValue() && getValue())
    return emitOpError("only ")
           << kindsTakingValue() << " record takes a value operand, not '"
           << kind << "'";
  if (Value value = getValue()) {
    std::string type = valueTypeName(value.getType());
    if (!llvm::is_contained(kindTraits.valueTypes, type))
      return emitOpError("a '")
             << kind << "' record's value is "
             << llvm::join(kindTraits.valueTypes, " or ") << ", not " << type;
  }
  // Names travel through inline-asm strings and into trace files, so they
  // are kept to printable characters that need no escaping anywhere.
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
