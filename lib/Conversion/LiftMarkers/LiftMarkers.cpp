#include "proton/Conversion/LiftMarkers/Passes.h"

#include "mlir/IR/Builders.h"
#include "proton/Dialect/Proton/IR/Dialect.h"
#include "proton/Format/MarkerSyntax.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONLIFTMARKERS
#include "proton/Conversion/LiftMarkers/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;

namespace {

struct Marker {
  RecordKind kind;
  StringRef name;
  std::optional<Location> loc;
};

/// `<file>:<line>:<col>` as a location.
std::optional<Location> parseSourceLocation(MLIRContext *ctx, StringRef text) {
  auto [fileAndLine, colText] = text.rsplit(':');
  auto [file, lineText] = fileAndLine.rsplit(':');
  unsigned line, col;
  if (file.empty() || lineText.getAsInteger(10, line) ||
      colText.getAsInteger(10, col))
    return std::nullopt;
  return Location(FileLineColLoc::get(ctx, file, line, col));
}

/// The kinds a marker may name: those proton.record takes.
std::string recordableKinds() {
  std::string text;
  for (const RecordKindTraits &traits : allRecordKindTraits())
    if (traits.recordable)
      text +=
          (text.empty() ? "" : ", ") + stringifyRecordKind(traits.kind).str();
  return text;
}

/// Parses `// @proton <kind> <name>` (kind: a RecordKind); None for any
/// other assembly text, an error for a malformed marker.
FailureOr<std::optional<Marker>> parseMarker(LLVM::InlineAsmOp carrier) {
  StringRef text = carrier.getAsmString().trim();
  if (!text.consume_front(::proton::markers::kPrefix))
    return std::optional<Marker>();
  auto [kindText, rest] = text.split(' ');
  std::optional<RecordKind> kind = symbolizeRecordKind(kindText);
  auto [name, locText] = rest.split(::proton::markers::kLocationSuffix);
  name = name.trim();
  std::optional<Location> loc;
  if (!locText.empty())
    loc = parseSourceLocation(carrier.getContext(), locText.trim());
  if (!kind || name.empty() || (!locText.empty() && !loc)) {
    carrier.emitError("malformed proton marker '")
        << carrier.getAsmString()
        << "': expected '// @proton <kind> <name>' with <kind> one of "
        << recordableKinds()
        << ", optionally followed by ' ;loc=<file>:<line>:<col>'";
    return failure();
  }
  if (!carrier.getHasSideEffects()) {
    carrier.emitError("proton marker '")
        << carrier.getAsmString()
        << "' is not side-effecting: the compiler may have moved or "
           "dropped it";
    return failure();
  }
  // A value marker carries its value as the carrier's first operand.
  const RecordKindTraits &traits = recordKindTraits(*kind);
  if (traits.takesValue() && carrier.getNumOperands() == 0) {
    carrier.emitError("proton ")
        << kindText << " marker '" << carrier.getAsmString()
        << "' has no operand: the value is lost";
    return failure();
  }
  if (traits.takesValue()) {
    // A record has 32 bits for the value: wider types are refused here,
    // naming the kernel and the value, rather than silently truncated.
    Type type = carrier.getOperand(0).getType();
    if (!llvm::is_contained(traits.valueTypes, valueTypeName(type))) {
      auto kernel = carrier->getParentOfType<LLVM::LLVMFuncOp>();
      carrier.emitError("proton ")
          << kindText << " '" << name << "' in kernel '"
          << (kernel ? kernel.getName() : "?") << "' has type " << type
          << ": a " << kindText << " record holds 32 bits ("
          << llvm::join(traits.valueTypes, " or ") << "); cast the value";
      return failure();
    }
  }
  return std::optional<Marker>(Marker{*kind, name, loc});
}

struct LiftMarkersPass
    : public ::mlir::proton::impl::ProtonLiftMarkersBase<LiftMarkersPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](Block *block) {
      // The last record lifted in this block, for merging per-thread copies.
      RecordOp previous;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        if (isa<RecordOp>(op)) {
          previous = cast<RecordOp>(op);
          continue;
        }
        auto carrier = dyn_cast<LLVM::InlineAsmOp>(op);
        if (!carrier)
          continue;
        FailureOr<std::optional<Marker>> marker = parseMarker(carrier);
        if (::mlir::failed(marker)) {
          failed = true;
          continue;
        }
        if (!*marker)
          continue;
        if (!replaceCarrierResult(carrier)) {
          failed = true;
          continue;
        }
        ++numLifted;
        Marker m = **marker;
        const RecordKindTraits &traits = recordKindTraits(m.kind);
        Value value = traits.takesValue() ? carrier.getOperand(0) : Value();
        bool duplicate = previous && previous.getKind() == m.kind &&
                         previous.getName() == m.name &&
                         previous.getValue() == value;
        if (duplicate && !traits.closes) {
          // Keep the first copy of a kind that does not close (a start,
          // a mark).
          ++numDuplicates;
          carrier.erase();
          continue;
        }
        OpBuilder builder(carrier);
        auto record =
            RecordOp::create(builder, m.loc.value_or(carrier.getLoc()),
                             RecordKindAttr::get(&getContext(), m.kind),
                             builder.getStringAttr(m.name), value);
        if (::mlir::failed(record.verify()))
          failed = true;
        if (duplicate) {
          // Keep the last copy of a closing kind (an end).
          ++numDuplicates;
          previous.erase();
        }
        carrier.erase();
        previous = record;
      }
    });
    if (failed)
      signalPassFailure();
  }

  /// Replaces uses of the carrier's (meaningless) result by zero.
  bool replaceCarrierResult(LLVM::InlineAsmOp carrier) {
    if (carrier.getNumResults() == 0 || carrier.getRes().use_empty())
      return true;
    Type type = carrier.getRes().getType();
    if (!isa<IntegerType>(type)) {
      carrier.emitError("proton marker result of type ")
          << type << " is used; only integer results can be replaced";
      return false;
    }
    OpBuilder builder(carrier);
    Value zero = LLVM::ConstantOp::create(builder, carrier.getLoc(), type,
                                          builder.getIntegerAttr(type, 0));
    carrier.getRes().replaceAllUsesWith(zero);
    return true;
  }
};

} // namespace
