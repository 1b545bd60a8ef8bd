#include "proton/Conversion/ProtonToProtonGPU/Passes.h"

#include "mlir/IR/Builders.h"
#include "proton/Analysis/ScopeIdAllocation.h"
#include "proton/Analysis/SourceLocation.h"
#include "proton/Conversion/ProtonToProtonGPU/KernelInfo.h"
#include "proton/Format/BufferFormat.h"

namespace mlir::proton {
#define GEN_PASS_DEF_CONVERTPROTONTOPROTONGPU
#include "proton/Conversion/ProtonToProtonGPU/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;
namespace fmt = ::proton::format;

namespace {

constexpr unsigned kInferredGlobalSegmentBytes = 4096;

// A ring for records in loops (a count the compiler cannot bound) takes, by
// default, the shared memory that keeps the CTAs per multiprocessor that
// shared memory and threads allow (registers, unknown here, often allow
// fewer), and at least kMinLoopSegmentBytes per warp (256 records) where the
// kernel leaves that much; at most kMaxLoopSegmentBytes per warp (512
// records), so that each kept launch's global copy stays small.
constexpr unsigned kMinLoopSegmentBytes = 2048;
constexpr unsigned kMaxLoopSegmentBytes = 4096;
// The most threads and CTAs a multiprocessor holds (Hopper, Ampere A100,
// CDNA3); smaller parts hold fewer, which only makes the budget smaller.
constexpr unsigned kThreadsPerMultiprocessor = 2048;
constexpr unsigned kMaxCtasPerMultiprocessor = 32;
// Shared memory CUDA reserves per CTA, beside what the kernel asks for.
constexpr unsigned kNvidiaReservedPerCta = 1024;

constexpr unsigned kMinInferredSegmentBytes = 32; // one memory sector

// The most records that share one slot computation (the layout's overhang
// is one less): longer runs compute a slot per record.
constexpr unsigned kMaxRunRecords = 16;

unsigned floorPowerOf2(unsigned n) { return n ? 1u << llvm::Log2_32(n) : 0; }

/// The largest power-of-two segment whose block (header, records, sector
/// padding) fits in `bytes`; 0 if none does.
unsigned largestSegmentFitting(unsigned bytes) {
  unsigned segment = floorPowerOf2(
      bytes > fmt::kSegmentHeaderBytes ? bytes - fmt::kSegmentHeaderBytes : 0);
  while (segment && LayoutAttr::blockBytesFor(segment) > bytes)
    segment /= 2;
  return segment;
}

/// Records a site writes: a value site its time and its value.
unsigned recordsWrittenBy(RecordOp record) { return record.traits().records; }

/// How many records a warp can write at most, when no record sits on a CFG
/// cycle (every record then runs at most once); none otherwise.
std::optional<unsigned> staticRecordBound(LLVM::LLVMFuncOp kernel) {
  unsigned records = 0;
  for (Block &block : kernel.getBody()) {
    unsigned here = 0;
    for (RecordOp record : block.getOps<RecordOp>())
      here += recordsWrittenBy(record);
    if (here == 0)
      continue;
    records += here;
    // Does the block reach itself?
    SmallVector<Block *> work(block.getSuccessors().begin(),
                              block.getSuccessors().end());
    llvm::SmallPtrSet<Block *, 16> seen;
    while (!work.empty()) {
      Block *next = work.pop_back_val();
      if (next == &block)
        return std::nullopt;
      if (seen.insert(next).second)
        work.append(next->getSuccessors().begin(), next->getSuccessors().end());
    }
  }
  return records;
}

/// Records of all the kernel's record sites.
unsigned recordSiteCount(LLVM::LLVMFuncOp kernel) {
  unsigned records = 0;
  kernel.walk([&](RecordOp record) { records += recordsWrittenBy(record); });
  return records;
}

/// What a kernel's record sites allow. Inferred sizes shrink to what
/// straight-line records need: less shared memory, and a compact global
/// block whose writes fill whole sectors.
struct RecordSites {
  /// With no record on a CFG cycle a warp writes at most `bound` records:
  /// exactly sized segments, and registers can hold them.
  std::optional<unsigned> bound;
  /// `bound` records' bytes: a power of two, one sector or more.
  unsigned boundBytes = 0;
  /// The largest segment a registers buffer holds.
  unsigned registerSegmentBytes = 0;

  bool fitsRegisters() const {
    return bound && boundBytes <= registerSegmentBytes;
  }
  /// An inferred segment size: `cap`, or less where the bound allows.
  unsigned inferred(unsigned cap) const {
    return bound ? std::min(cap, boundBytes) : cap;
  }
};

/// Triton's kernels: NVIDIA's and AMD's kernel calling conventions.
bool isKernel(LLVM::LLVMFuncOp func) {
  LLVM::cconv::CConv cc = func.getCConv();
  return cc == LLVM::cconv::CConv::PTX_Kernel ||
         cc == LLVM::cconv::CConv::AMDGPU_KERNEL;
}

struct ProtonToProtonGPUPass
    : public ::mlir::proton::impl::ConvertProtonToProtonGPUBase<
          ProtonToProtonGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failed = false;
    bool moduleHasKernel = false;
    module.walk(
        [&](LLVM::LLVMFuncOp func) { moduleHasKernel |= isKernel(func); });
    module.walk([&](LLVM::LLVMFuncOp func) {
      RecordOp first;
      func->walk([&](RecordOp record) {
        first = record;
        return WalkResult::interrupt();
      });
      if (!first)
        return;
      // Only the kernel has Triton's profile_scratch and the warp's buffer;
      // a function Triton did not inline (noinline=True) has neither.
      if (moduleHasKernel && !isKernel(func)) {
        first.emitError("scope '")
            << first.getName() << "' is inside @" << func.getName()
            << ", a function Triton did not inline (noinline=True); Proton "
               "records in the kernel itself only: put the scope around the "
               "call in the kernel";
        failed = true;
        return;
      }
      if (::mlir::failed(convertKernel(func)))
        failed = true;
    });
    if (failed)
      signalPassFailure();
  }

  /// Which warps record, in segment order.
  FailureOr<SmallVector<int32_t>> recordingWarps(LLVM::LLVMFuncOp kernel,
                                                 unsigned warps) {
    unsigned unit = granularity == Granularity::warp_group ? 4 : 1;
    if (granularity == Granularity::warp_group && warps % 4 != 0)
      return kernel.emitError("granularity=warp_group needs a multiple of 4 "
                              "warps; kernel @")
             << kernel.getName() << " has " << warps;
    unsigned units = granularity == Granularity::cta ? 1 : warps / unit;
    SmallVector<int32_t> selected;
    std::optional<SamplingStrategy> strategy =
        symbolizeSamplingStrategy(samplingStrategy);
    if (!strategy) {
      std::string valid;
      for (uint32_t v = 0; v <= getMaxEnumValForSamplingStrategy(); ++v)
        if (std::optional<SamplingStrategy> known =
                symbolizeSamplingStrategy(v))
          valid += (valid.empty() ? "" : ", ") +
                   stringifySamplingStrategy(*known).str();
      return kernel.emitError("unknown sampling-strategy '")
             << StringRef(samplingStrategy) << "'; valid: " << valid;
    }
    if (*strategy == SamplingStrategy::none) {
      if (!samplingOptions.empty())
        return kernel.emitError(
            "sampling-options given without sampling-strategy=selective");
      for (unsigned u = 0; u < units; ++u)
        selected.push_back(u * unit);
      return selected;
    }
    if (granularity == Granularity::cta)
      return kernel.emitError(
          "sampling-strategy=selective needs granularity warp or warp_group; "
          "granularity=cta records warp 0 only");
    if (samplingOptions.empty())
      return kernel.emitError("sampling-strategy=selective needs the ids to "
                              "record in sampling-options");
    SmallVector<int> ids(samplingOptions.begin(), samplingOptions.end());
    llvm::sort(ids);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] < 0 || (unsigned)ids[i] >= units)
        return kernel.emitError("sampling-options id ")
               << ids[i] << " is out of range: kernel @" << kernel.getName()
               << " has " << units << (unit == 4 ? " warp groups" : " warps");
      if (i > 0 && ids[i] == ids[i - 1])
        return kernel.emitError("sampling-options id ")
               << ids[i] << " is listed twice";
      selected.push_back(ids[i] * unit);
    }
    return selected;
  }

  /// Warps per CTA, from the options or the kernel's launch bounds; checks
  /// the options the layout depends on.
  FailureOr<unsigned> countWarps(LLVM::LLVMFuncOp kernel) {
    if (clockBits != 32 && clockBits != 64)
      return kernel.emitError("clock-bits must be 32 or 64, got ")
             << (unsigned)clockBits;
    if (threadsPerWarp == 0 || !llvm::isPowerOf2_32(threadsPerWarp))
      return kernel.emitError("threads-per-warp must be a power of two, got ")
             << (unsigned)threadsPerWarp;
    if (numWarps != 0)
      return (unsigned)numWarps;
    unsigned threads = getDeclaredThreadsPerCta(kernel);
    if (threads == 0)
      return kernel.emitError("kernel @")
             << kernel.getName()
             << " declares no threads per CTA (nvvm.reqntid or "
                "amdgpu-flat-work-group-size); pass num-warps";
    return std::max(1u, threads / threadsPerWarp);
  }

  /// What the kernel's record sites allow.
  RecordSites recordSites(LLVM::LLVMFuncOp kernel) {
    RecordSites sites;
    sites.bound = staticRecordBound(kernel);
    if (sites.bound)
      sites.boundBytes = std::max(
          kMinInferredSegmentBytes,
          (unsigned)llvm::PowerOf2Ceil(*sites.bound * fmt::kRecordBytes));
    // A registers buffer keeps the block in one 16-byte chunk per lane.
    sites.registerSegmentBytes =
        largestSegmentFitting(threadsPerWarp * fmt::kChunkBytes);
    return sites;
  }

  FailureOr<unsigned> registersSegmentBytes(LLVM::LLVMFuncOp kernel,
                                            const RecordSites &sites) {
    if (bufferSize != 0)
      return kernel.emitError("buffer-size does not apply to "
                              "buffer-type=registers: the block is sized by "
                              "the kernel's record sites");
    if (!sites.bound)
      return kernel.emitError("buffer-type=registers needs every record "
                              "outside loops; kernel @")
             << kernel.getName()
             << " records inside a loop: use buffer-type=shared";
    if (!sites.fitsRegisters())
      return kernel.emitError("buffer-type=registers holds at most ")
             << sites.registerSegmentBytes / fmt::kRecordBytes
             << " records per warp; kernel @" << kernel.getName() << " has "
             << *sites.bound << " record sites: use buffer-type=shared";
    return sites.boundBytes;
  }

  /// Dynamic shared memory the kernel leaves for the buffer.
  unsigned availableShared() {
    unsigned alignedOffset = llvm::alignTo(sharedOffset, 16);
    return sharedLimit > alignedOffset ? sharedLimit - alignedOffset : 0;
  }

  /// Shared memory a CTA can add without lowering the CTAs per
  /// multiprocessor that its shared memory and threads allow.
  uint64_t sharedAtSameOccupancy(unsigned warps) {
    unsigned reserved = threadsPerWarp == 32 ? kNvidiaReservedPerCta : 0;
    uint64_t capacity = uint64_t(sharedLimit) + reserved; // per multiprocessor
    uint64_t perCta = llvm::alignTo(sharedOffset, 16) + reserved;
    uint64_t ctas = std::min<uint64_t>(
        {perCta ? capacity / perCta : kMaxCtasPerMultiprocessor,
         std::max(1u, kThreadsPerMultiprocessor / (warps * threadsPerWarp)),
         kMaxCtasPerMultiprocessor});
    ctas = std::max<uint64_t>(ctas, 1);
    return capacity / ctas > perCta ? capacity / ctas - perCta : 0;
  }

  FailureOr<unsigned> sharedSegmentBytes(LLVM::LLVMFuncOp kernel,
                                         const RecordSites &sites,
                                         unsigned segments, unsigned warps) {
    unsigned available = availableShared();
    unsigned segmentBytes;
    if (bufferSize == 0 && sites.bound) {
      segmentBytes = std::min(sites.boundBytes,
                              largestSegmentFitting(available / segments));
    } else if (bufferSize == 0) {
      uint64_t free = sharedAtSameOccupancy(warps) / segments;
      segmentBytes = std::min(kMaxLoopSegmentBytes,
                              std::max(kMinLoopSegmentBytes,
                                       largestSegmentFitting(std::min<uint64_t>(
                                           free, UINT32_MAX))));
      segmentBytes =
          std::min(segmentBytes, largestSegmentFitting(available / segments));
    } else {
      segmentBytes = floorPowerOf2(bufferSize / segments);
      if (segmentBytes < 16)
        return kernel.emitError("buffer-size=")
               << (unsigned)bufferSize
               << " gives less than 16 bytes to each of " << segments
               << " recording warps";
      if (LayoutAttr::blockBytesFor(segmentBytes) * segments > available)
        return kernel.emitError("buffer-size=")
               << (unsigned)bufferSize << " does not fit: kernel @"
               << kernel.getName() << " uses " << (unsigned)sharedOffset
               << " of " << (unsigned)sharedLimit
               << " bytes of shared memory; use a smaller buffer-size or "
                  "buffer-type=global";
    }
    if (segmentBytes < 16)
      return kernel.emitError("no shared memory to spare for a profile "
                              "buffer: kernel @")
             << kernel.getName() << " uses " << (unsigned)sharedOffset << " of "
             << (unsigned)sharedLimit << " bytes and " << segments
             << " recording warps need at least "
             << LayoutAttr::blockBytesFor(16) * segments
             << "; use buffer-type=global";
    return segmentBytes;
  }

  FailureOr<unsigned> globalSegmentBytes(LLVM::LLVMFuncOp kernel,
                                         const RecordSites &sites,
                                         unsigned segments) {
    if (bufferSize == 0)
      return sites.inferred(kInferredGlobalSegmentBytes);
    unsigned segmentBytes = floorPowerOf2(bufferSize / segments);
    if (segmentBytes < 16)
      return kernel.emitError("buffer-size=")
             << (unsigned)bufferSize << " gives less than 16 bytes to each of "
             << segments << " recording warps";
    return segmentBytes;
  }

  FailureOr<LayoutAttr> buildLayout(LLVM::LLVMFuncOp kernel) {
    FailureOr<unsigned> warps = countWarps(kernel);
    if (::mlir::failed(warps))
      return failure();
    FailureOr<SmallVector<int32_t>> selected = recordingWarps(kernel, *warps);
    if (::mlir::failed(selected))
      return failure();
    unsigned segments = selected->size();
    RecordSites sites = recordSites(kernel);
    BufferType type = bufferType;
    if (type == BufferType::automatic)
      type = bufferSize == 0 && sites.fitsRegisters() ? BufferType::registers
                                                      : BufferType::shared;
    // A kernel that leaves no shared memory to spare records straight to
    // global memory, unless shared memory was asked for by name.
    if (type == BufferType::shared && bufferType == BufferType::automatic &&
        bufferSize == 0 &&
        largestSegmentFitting(availableShared() / segments) < 16)
      type = BufferType::global;
    FailureOr<unsigned> segmentBytes =
        type == BufferType::registers ? registersSegmentBytes(kernel, sites)
        : type == BufferType::shared
            ? sharedSegmentBytes(kernel, sites, segments, *warps)
            : globalSegmentBytes(kernel, sites, segments);
    if (::mlir::failed(segmentBytes))
      return failure();
    unsigned overhang =
        type == BufferType::registers
            ? 0
            : overhangFor(kernel, sites, *segmentBytes, segments, type);
    return LayoutAttr::get(&getContext(), type, granularity, clockBits, *warps,
                           *selected, *segmentBytes,
                           llvm::alignTo(sharedOffset, 16), overhang);
  }

  /// Record slots past the ring, so that the records of a block in a loop
  /// share one slot computation (three instructions per record less). Only
  /// where the index is not known at compile time (records in loops), and
  /// with 64-bit clocks, by which the decoder tells which of two records of
  /// a slot is newer; none where shared memory lacks the room.
  unsigned overhangFor(LLVM::LLVMFuncOp kernel, const RecordSites &sites,
                       unsigned segmentBytes, unsigned segments,
                       BufferType type) {
    if (sites.bound || clockBits != 64)
      return 0;
    unsigned capacity = segmentBytes / fmt::kRecordBytes;
    unsigned run =
        std::min({recordSiteCount(kernel), kMaxRunRecords, capacity});
    unsigned overhang = run > 1 ? run - 1 : 0;
    if (type == BufferType::shared &&
        LayoutAttr::blockBytesFor(segmentBytes, overhang) * segments >
            availableShared())
      return 0;
    return overhang;
  }

  LogicalResult convertKernel(LLVM::LLVMFuncOp kernel) {
    FailureOr<ScopeIdAllocation> scopes = ScopeIdAllocation::run(kernel);
    if (::mlir::failed(scopes))
      return failure();
    if (scopes->getScopes().size() > fmt::kMaxScopes)
      return kernel.emitError("kernel @")
             << kernel.getName() << " has " << scopes->getScopes().size()
             << " scopes; a record holds at most " << fmt::kMaxScopes
             << " scope ids";
    BlockArgument scratch = getProfileScratch(kernel);
    if (!scratch)
      return failure();
    FailureOr<LayoutAttr> layout = buildLayout(kernel);
    if (::mlir::failed(layout))
      return failure();

    MLIRContext *ctx = &getContext();
    OpBuilder builder(ctx);
    builder.setInsertionPointToStart(&kernel.getBody().front());
    Value segment = InitSegmentOp::create(
        builder, kernel.getLoc(), SegmentType::get(ctx), scratch, *layout);

    Type counterType = builder.getIntegerType(clockBits);
    for (RecordOp record :
         llvm::to_vector(kernel.getBody().getOps<RecordOp>())) {
      builder.setInsertionPoint(record);
      Value counter =
          ReadCounterOp::create(builder, record.getLoc(), counterType);
      IntegerAttr id = builder.getI32IntegerAttr(scopes->getScopeId(record));
      CircularStoreOp::create(builder, record.getLoc(), segment, counter,
                              RecordKindAttr::get(ctx, record.getKind()), id);
      if (Value value = record.getValue()) {
        // The record right after the time holds the value's 32 bits in
        // the counter's low word, with the end bit (its kind's valueRecord,
        // value_end).
        Location loc = record.getLoc();
        Value bits = value;
        if (!bits.getType().isInteger(32))
          bits =
              LLVM::BitcastOp::create(builder, loc, builder.getI32Type(), bits);
        if (clockBits != 32) {
          // Above the value, the time's clock bits 32-63: the decoder
          // subtracts the entry clock's from every record's second word.
          Value high = LLVM::AndOp::create(
              builder, loc, counter,
              LLVM::ConstantOp::create(
                  builder, loc, counterType,
                  builder.getI64IntegerAttr((int64_t)0xFFFFFFFF00000000ull)));
          bits = LLVM::OrOp::create(
              builder, loc, high,
              LLVM::ZExtOp::create(builder, loc, counterType, bits));
        }
        CircularStoreOp::create(
            builder, loc, segment, bits,
            RecordKindAttr::get(ctx, *record.traits().valueRecord), id);
      }
      record.erase();
    }
    kernel.walk([&](LLVM::ReturnOp ret) {
      builder.setInsertionPoint(ret);
      FinalizeOp::create(builder, ret.getLoc(), segment, scratch);
    });

    // The scope table, for the host side: one entry per id, in id order.
    SmallVector<Attribute> table;
    for (const ScopeInfo &scope : scopes->getScopes())
      table.push_back(ScopeEntryAttr::get(
          ctx, scope.id, scope.kind, scope.name, scope.parent,
          describeLocation(scope.loc), scope.dtype));
    kernel->setAttr(kScopeTableAttrName, builder.getArrayAttr(table));
    return success();
  }
};

} // namespace
