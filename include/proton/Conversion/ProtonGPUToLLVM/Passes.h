#ifndef PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_H
#define PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/Pass.h"
#include "proton/Conversion/ProtonGPUToLLVM/TargetInfo.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
class LLVMTypeConverter;
class RewritePatternSet;
} // namespace mlir

namespace mlir::proton {
#define GEN_PASS_DECL
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"

/// The values a kernel computes once, where its segment is set up, and all
/// of its proton_gpu ops then share.
struct KernelSegment {
  gpu::LayoutAttr layout;
  Value warp, lane;
  Value isRecorder; // this warp records
  Value isWriter;   // this thread writes: lane 0 of a recording warp
  Value block;      // this segment's header and records in profile_scratch
  Value staging;    // where header and records are written while running:
                    // shared memory, or `block` itself with a global buffer
                    // (none with a registers buffer)
  Value records;    // the records in `staging`
  Value indexSlot;  // stack slot of the record index (promoted later)
  Value runSlot;    // stack slot of the byte offset of the current run's first
                    // record, with an overhang (promoted later)
  // Shared and global buffers: stack slots (promoted later) of the record
  // whose store waits for the next record or the return: its word 0, clock
  // bits 32-63, tag bits and byte offset from `records`.
  SmallVector<Value, 4> pendingSlots;
  // With an overhang: each circular_store's place in its block's run of
  // records, which share the slot its first record computes. A store not
  // listed computes its own slot.
  llvm::DenseMap<Operation *, unsigned> runPosition;
  // Registers buffer: stack slots (promoted later) of the four words of the
  // 16-byte chunk of the block this lane writes at return.
  SmallVector<Value, 4> chunkSlots;
};

/// Each kernel (an LLVM::LLVMFuncOp) with a proton_gpu.init_segment, and its
/// segment.
using KernelSegments = llvm::DenseMap<Operation *, KernelSegment>;

/// The step before the patterns: computes every kernel's segment values in
/// front of its proton_gpu.init_segment and lets the kernel write through
/// profile_scratch. Fails, with a diagnostic, on a kernel with two
/// init_segment ops or an op whose segment comes from elsewhere.
FailureOr<KernelSegments> prepareKernelSegments(ModuleOp module,
                                                const TargetInfo &target);

/// One pattern per proton_gpu op; `kernelId` goes into word 1 of every
/// segment header. `segments` must outlive the patterns.
void populateProtonGPUToLLVMPatterns(LLVMTypeConverter &typeConverter,
                                     RewritePatternSet &patterns,
                                     const TargetInfo &target,
                                     const KernelSegments &segments,
                                     uint32_t kernelId);
} // namespace mlir::proton

#endif
