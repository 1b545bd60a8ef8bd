#include "proton/Dialect/ProtonGPU/IR/Dialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;

#include "proton/Dialect/ProtonGPU/IR/ProtonGPUEnums.cpp.inc"
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOpsDialect.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUAttrs.cpp.inc"
#define GET_TYPEDEF_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOpsTypes.cpp.inc"

void ProtonGPUDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOps.cpp.inc"
      >();
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 BufferType bufferType, Granularity granularity,
                                 unsigned clockBits, unsigned numWarps,
                                 ArrayRef<int32_t> warps, unsigned segmentBytes,
                                 unsigned sharedOffset, unsigned overhang) {
  if (bufferType == BufferType::automatic)
    return emitError() << "a layout's buffer type is shared, global or "
                          "registers; auto is resolved by the conversion";
  if (clockBits != 32 && clockBits != 64)
    return emitError() << "clock must be 32 or 64 bits, got " << clockBits;
  if (numWarps == 0)
    return emitError() << "num_warps must be positive";
  if (warps.empty())
    return emitError() << "at least one warp must record";
  for (size_t i = 0; i < warps.size(); ++i) {
    if (warps[i] < 0 || warps[i] >= (int32_t)numWarps)
      return emitError() << "recording warp " << warps[i]
                         << " is out of range for " << numWarps << " warps";
    if (i > 0 && warps[i] <= warps[i - 1])
      return emitError() << "recording warps must be strictly increasing";
  }
  // The copy-out moves 16-byte chunks, so a segment holds at least one.
  if (segmentBytes < 16 || !llvm::isPowerOf2_32(segmentBytes))
    return emitError() << "segment_bytes must be a power of two of at least "
                          "16 bytes, got "
                       << segmentBytes;
  if (sharedOffset % 16 != 0)
    return emitError() << "shared_offset must be a multiple of 16, got "
                       << sharedOffset;
  // A run continues into the overhang at most once around the ring.
  unsigned capacity = segmentBytes / ::proton::format::kRecordBytes;
  if (overhang >= capacity)
    return emitError() << "overhang must be smaller than the ring's "
                       << capacity << " records, got " << overhang;
  if (overhang != 0 && bufferType == BufferType::registers)
    return emitError() << "a registers buffer has no overhang";
  return success();
}

LogicalResult
ScopeEntryAttr::verify(function_ref<InFlightDiagnostic()> emitError, int32_t id,
                       IdKind kind, StringRef name, int32_t parent,
                       StringRef loc, StringRef dtype) {
  // Ids are record tags (CircularStoreOp's scope_id).
  if (id < 0 || id >= (int32_t)LayoutAttr::kMaxScopes)
    return emitError() << "a scope id is in [0, " << LayoutAttr::kMaxScopes
                       << "), got " << id;
  if (parent < -1 || parent == id)
    return emitError() << "a parent is another entry's id or -1, got "
                       << parent;
  // The decoder reads a value's 32 bits as its dtype says.
  const IdKindTraits &traits = idKindTraits(kind);
  if (traits.hasValue() && !llvm::is_contained(traits.valueTypes, dtype))
    return emitError() << "a " << stringifyIdKind(kind) << "'s dtype is "
                       << llvm::join(traits.valueTypes, " or ") << ", got '"
                       << dtype << "'";
  if (!traits.hasValue() && !dtype.empty()) {
    std::string owners;
    for (const IdKindTraits &other : allIdKindTraits())
      if (other.hasValue())
        owners += (owners.empty() ? "a " : " or a ") +
                  stringifyIdKind(other.kind).str();
    return emitError() << "only " << owners << " has a dtype, got '" << dtype
                       << "'";
  }
  return success();
}

static LayoutAttr layoutOf(Value segment) {
  if (auto init = segment.getDefiningOp<InitSegmentOp>())
    return init.getLayout();
  return {};
}

LogicalResult CircularStoreOp::verify() {
  if ((unsigned)getScopeId() >= LayoutAttr::kMaxScopes)
    return emitOpError("scope id ")
           << getScopeId() << " does not fit in a record's 15 bits";
  if (LayoutAttr layout = layoutOf(getSegment())) {
    unsigned width = getCounter().getType().getIntOrFloatBitWidth();
    if (width != layout.getClockBits())
      return emitOpError("stores a ")
             << width << "-bit counter into a segment laid out for "
             << layout.getClockBits() << "-bit clocks";
  }
  return success();
}

LogicalResult FinalizeOp::verify() {
  if (!getSegment().getDefiningOp<InitSegmentOp>() &&
      !isa<BlockArgument>(getSegment()))
    return emitOpError("segment must come from proton_gpu.init_segment");
  return success();
}

#define GET_OP_CLASSES
#include "proton/Dialect/ProtonGPU/IR/ProtonGPUOps.cpp.inc"
