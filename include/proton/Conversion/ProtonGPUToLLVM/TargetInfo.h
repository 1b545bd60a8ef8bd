#ifndef PROTON_CONVERSION_PROTONGPUTOLLVM_TARGETINFO_H
#define PROTON_CONVERSION_PROTONGPUTOLLVM_TARGETINFO_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"

#include <memory>

namespace mlir::proton {

/// What the ProtonGPU lowering needs from a GPU target. Values are i32
/// unless said otherwise.
class TargetInfo {
public:
  virtual ~TargetInfo() = default;

  /// Creates the target for `target` ("nvptx" or "amdgpu") and `arch`, or
  /// null with `error` set.
  static std::unique_ptr<TargetInfo> create(StringRef target, StringRef arch,
                                            std::string &error);

  virtual unsigned getWarpSize() const = 0;
  /// Global-timer ticks per microsecond (the header's time unit).
  virtual unsigned getGlobalTimerTicksPerMicrosecond() const = 0;

  virtual Value threadIdX(OpBuilder &b, Location loc) const = 0;
  /// x + y * nx + z * nx * ny: the CTA's index into profile_scratch.
  virtual Value linearCtaId(OpBuilder &b, Location loc) const = 0;
  /// The SM cycle counter, 32 or 64 bits; stays in order with side effects.
  virtual Value readClock(OpBuilder &b, Location loc, unsigned bits) const = 0;
  /// The device-wide timer (i64), comparable across SMs.
  virtual Value readGlobalTimer(OpBuilder &b, Location loc) const = 0;
  /// Where the warp runs, in the low 20 bits (NVIDIA: the SM id; AMD: the
  /// HW_ID register's low 16 bits and XCC_ID in bits 16-19).
  virtual Value location(OpBuilder &b, Location loc) const = 0;
  /// Stores 2 or 4 consecutive i32 words at `ptr` (shared or global) if
  /// `predicate` holds. May split the current block (through the rewriter,
  /// so that a conversion sees it); the rewriter is left after the store.
  virtual void storeWords(RewriterBase &b, Location loc, Value ptr,
                          ArrayRef<Value> words, Value predicate) const = 0;
  /// Makes the warp's shared-memory writes visible to all its lanes.
  virtual void warpSync(OpBuilder &b, Location loc) const = 0;
  /// Target-specific preparation of the kernel, before its records are
  /// lowered (prepareKernelSegments): e.g. on AMDGPU, dropping attributes
  /// that promise the backend what the lowering will break.
  virtual void prepareKernel(LLVM::LLVMFuncOp) const {}
  /// Whether a record (shared and global buffers) is stored by the next
  /// record or the return rather than right after its clock read: ptxas
  /// puts the first use of a clock read right after it, where the warp
  /// waits out its latency (measured on Hopper attention kernels, 2 warps
  /// per scheduler). Not measured on AMD: off there.
  virtual bool defersRecordStores() const { return false; }
};

} // namespace mlir::proton

#endif
