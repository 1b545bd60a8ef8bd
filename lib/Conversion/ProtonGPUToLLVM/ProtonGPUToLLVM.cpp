//===- ProtonGPUToLLVM.cpp - proton_gpu ops to NVPTX/AMDGPU LLVM ----------===//
//
// Two steps. prepareKernelSegments emits, in front of each kernel's
// init_segment, the values that all of the kernel's proton_gpu ops share
// (warp, lane, addresses, stack slots). Then a dialect conversion with one
// pattern per op writes the buffer of docs/buffer-format.md; a proton_gpu op
// no pattern lowers is reported by the framework. Finally mem2reg turns the
// stack slots into registers.
//
//===----------------------------------------------------------------------===//

#include "proton/Conversion/ProtonGPUToLLVM/Passes.h"

#include "LLVMBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"
#include "proton/Format/BufferFormat.h"

namespace mlir::proton {
#define GEN_PASS_DEF_CONVERTPROTONGPUTOLLVM
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;
namespace fmt = ::proton::format;

namespace {

constexpr StringLiteral kSharedSymbol = "global_smem";
constexpr unsigned kMaxStraightCopySteps = 4;

/// Byte offsets of the segment header's three 16-byte parts. Each part is
/// written as one 16-byte store (or kept in one lane's chunk), so the words
/// of a part must be consecutive and the part chunk-aligned.
constexpr unsigned kIdentityPart = 4 * fmt::kWordMagicFlags;
constexpr unsigned kEntryPart = 4 * fmt::kWordTimerStart;
constexpr unsigned kExitPart = 4 * fmt::kWordTimerEnd;
static_assert(fmt::kWordKernelId == fmt::kWordMagicFlags + 1 &&
                  fmt::kWordCount == fmt::kWordMagicFlags + 2 &&
                  fmt::kWordLocation == fmt::kWordMagicFlags + 3,
              "identity part: magic and flags, kernel id, count, location");
static_assert(fmt::kWordClockStart == fmt::kWordTimerStart + 2 &&
                  fmt::kWordClockEnd == fmt::kWordTimerEnd + 2,
              "stamp parts: global timer, then 64-bit clock");
static_assert(kIdentityPart % fmt::kChunkBytes == 0 &&
                  kEntryPart % fmt::kChunkBytes == 0 &&
                  kExitPart % fmt::kChunkBytes == 0,
              "header parts fill whole chunks");

//===----------------------------------------------------------------------===//
// The step before the patterns: each kernel's segment values.
//===----------------------------------------------------------------------===//

/// The address of Triton's dynamic shared memory, declared if the kernel
/// does not use any yet.
Value sharedMemoryBase(OpBuilder &b, Location loc, ModuleOp module) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(kSharedSymbol);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
        /*isConstant=*/false, LLVM::Linkage::External, kSharedSymbol,
        Attribute(), /*alignment=*/16, /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

/// An i32 stack slot at the start of the kernel's entry block; mem2reg
/// turns it into SSA values.
Value newSlot(OpBuilder &b, Location loc, Block &entry) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry);
  LLVMBuilder l{b, loc};
  return LLVM::AllocaOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext()),
                                b.getI32Type(), l.i32(1), /*alignment=*/4);
}

/// Sets `s.isRecorder` from the layout's warp list and returns the calling
/// warp's segment index.
Value selectSegment(LLVMBuilder &l, KernelSegment &s) {
  ArrayRef<int32_t> warps = s.layout.getWarps();
  unsigned numWarps = s.layout.getNumWarps();
  if (warps.size() == numWarps) { // every warp
    s.isRecorder = l.i1(true);
    return s.warp;
  }
  bool everyFourth = numWarps % 4 == 0 && warps.size() == numWarps / 4 &&
                     llvm::all_of(llvm::enumerate(warps), [](auto e) {
                       return e.value() == 4 * (int32_t)e.index();
                     });
  if (everyFourth) {
    Value index = l.lshr(s.warp, l.i32(2));
    s.isRecorder = l.eq(l.band(s.warp, l.i32(3)), l.i32(0));
    return index;
  }
  Value index = l.i32(0);
  s.isRecorder = l.i1(false);
  for (auto [i, w] : llvm::enumerate(warps)) {
    Value match = l.eq(s.warp, l.i32(w));
    index = l.select(match, l.i32((int64_t)i), index);
    s.isRecorder = l.select(match, match, s.isRecorder);
  }
  return index;
}

/// Does the search from `from`'s successors, expanding neither `leader` nor
/// `next`, find `next` and no other block that writes records? (With `next`
/// null: does it find none of `blocks`?)
bool reachesOnly(Block *from, Block *next, Block *leader,
                 const llvm::SmallPtrSetImpl<Block *> &blocks) {
  SmallVector<Block *> work(from->getSuccessors().begin(),
                            from->getSuccessors().end());
  llvm::SmallPtrSet<Block *, 32> seen;
  bool found = false;
  while (!work.empty()) {
    Block *block = work.pop_back_val();
    if (block == leader || !seen.insert(block).second)
      continue;
    if (next && block == next) {
      found = true;
      continue;
    }
    if (blocks.contains(block))
      return false;
    work.append(block->getSuccessors().begin(), block->getSuccessors().end());
  }
  return !next || found;
}

/// Runs of records that share one slot computation, the first record's: its
/// run's records follow it in memory, into the overhang rather than around
/// the ring. A run is a chain of blocks (Triton's LLVM IR splits a loop body
/// at every select it lowers to a branch) that, once its first block runs,
/// run in order, each once, with no other record between them: each block
/// is dominated by the first, reaches the next before any other block that
/// writes records, and the last reaches none of the chain again before the
/// first block runs again.
void findRecordRuns(InitSegmentOp init, KernelSegment &s) {
  auto kernel = init->getParentOfType<LLVM::LLVMFuncOp>();
  unsigned longest = s.layout.getOverhang() + 1;
  llvm::MapVector<Block *, SmallVector<Operation *>> storesOf;
  kernel.walk([&](CircularStoreOp store) {
    if (store.getSegment() == init.getResult())
      storesOf[store->getBlock()].push_back(store);
  });
  llvm::SmallPtrSet<Block *, 32> recordBlocks;
  for (auto &entry : storesOf)
    recordBlocks.insert(entry.first);
  DominanceInfo dominance(kernel);

  SmallVector<Block *> chain;
  unsigned count = 0;
  auto emit = [&] {
    if (count >= 2) {
      unsigned position = 0;
      for (Block *block : chain)
        for (Operation *store : storesOf[block])
          s.runPosition[store] = position++;
    }
    chain.clear();
    count = 0;
  };
  for (auto &[block, stores] : storesOf) {
    if (!chain.empty() && count + stores.size() <= longest &&
        dominance.properlyDominates(chain.front(), block) &&
        reachesOnly(chain.back(), block, chain.front(), recordBlocks)) {
      llvm::SmallPtrSet<Block *, 8> later(chain.begin() + 1, chain.end());
      later.insert(block);
      if (reachesOnly(block, nullptr, chain.front(), later)) {
        chain.push_back(block);
        count += stores.size();
        continue;
      }
    }
    emit();
    if (stores.size() <= longest) {
      chain.push_back(block);
      count = stores.size();
    }
  }
  emit();
}

/// The values `init` shares with the kernel's other proton_gpu ops, emitted
/// in front of it.
KernelSegment computeSegment(InitSegmentOp init, const TargetInfo &target,
                             ModuleOp module) {
  OpBuilder b(init);
  Location loc = init.getLoc();
  LLVMBuilder l{b, loc};
  KernelSegment s;
  s.layout = init.getLayout();
  unsigned warpSize = target.getWarpSize();
  Value tid = target.threadIdX(b, loc);
  s.warp = l.lshr(tid, l.i32(llvm::Log2_32(warpSize)));
  s.lane = l.band(tid, l.i32(warpSize - 1));
  Value segmentIndex = selectSegment(l, s);
  s.isWriter = l.band(s.isRecorder, l.eq(s.lane, l.i32(0)));

  Value cta = l.zext64(target.linearCtaId(b, loc));
  Value ctaBase =
      l.gep(init.getScratch(), l.mul(cta, l.i64(s.layout.getBytesPerCta())));
  Value blockOffset = l.mul(segmentIndex, l.i32(s.layout.getBlockBytes()));
  s.block = l.gep(ctaBase, blockOffset);

  Block &entry = init->getParentOfType<LLVM::LLVMFuncOp>().front();
  s.indexSlot = newSlot(b, loc, entry);
  switch (s.layout.getBufferType()) {
  case BufferType::registers:
    for (unsigned i = 0; i < fmt::kChunkBytes / 4; ++i)
      s.chunkSlots.push_back(newSlot(b, loc, entry));
    return s;
  case BufferType::shared: {
    Value smem = sharedMemoryBase(b, loc, module);
    s.staging =
        l.gep(smem, l.add(l.i32(s.layout.getSharedOffset()), blockOffset));
    break;
  }
  default:
    s.staging = s.block;
  }
  s.records = l.gep(s.staging, l.i32(fmt::kSegmentHeaderBytes));
  if (target.defersRecordStores())
    for (unsigned i = 0; i < 4; ++i)
      s.pendingSlots.push_back(newSlot(b, loc, entry));
  if (s.layout.getOverhang() > 0) {
    s.runSlot = newSlot(b, loc, entry);
    findRecordRuns(init, s);
  }
  return s;
}

/// Writing through profile_scratch: Triton declared it unused.
void makeScratchWritable(LLVM::LLVMFuncOp kernel, Value scratch) {
  auto arg = dyn_cast<BlockArgument>(scratch);
  if (!arg)
    return;
  for (StringRef name :
       {"llvm.readnone", "llvm.readonly", "llvm.nocapture", "llvm.captures"})
    kernel.removeArgAttr(arg.getArgNumber(),
                         StringAttr::get(kernel.getContext(), name));
}

/// Every segment operand must come from an init_segment: the patterns find
/// a segment through its kernel, never through the value.
LogicalResult checkSegmentOrigins(ModuleOp module) {
  bool failed = false;
  module.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (isa<SegmentType>(operand.getType()) &&
          !operand.getDefiningOp<InitSegmentOp>()) {
        op->emitOpError("cannot be lowered: its segment must come from "
                        "proton_gpu.init_segment in the same kernel");
        failed = true;
      }
  });
  return failure(failed);
}

} // namespace

FailureOr<KernelSegments>
mlir::proton::prepareKernelSegments(ModuleOp module, const TargetInfo &target) {
  if (failed(checkSegmentOrigins(module)))
    return failure();
  SmallVector<InitSegmentOp> inits;
  module.walk([&](InitSegmentOp init) { inits.push_back(init); });
  KernelSegments segments;
  for (InitSegmentOp init : inits) {
    // An init_segment outside an LLVM function is left to the conversion,
    // which reports it.
    auto kernel = init->getParentOfType<LLVM::LLVMFuncOp>();
    if (!kernel)
      continue;
    if (segments.contains(kernel))
      return init.emitError("a kernel has one proton_gpu.init_segment");
    segments[kernel] = computeSegment(init, target, module);
    makeScratchWritable(kernel, init.getScratch());
    target.prepareKernel(kernel);
    // For the host side: how to read the buffer this kernel writes.
    kernel->setAttr(kLayoutAttrName, init.getLayout());
  }
  return segments;
}

//===----------------------------------------------------------------------===//
// The patterns.
//===----------------------------------------------------------------------===//

namespace {

/// The global timer and the 64-bit clock as four words (lo, hi, lo, hi).
SmallVector<Value> readStamps(LLVMBuilder &l, const TargetInfo &target) {
  auto [gtLo, gtHi] = l.split64(target.readGlobalTimer(l.b, l.loc));
  auto [clkLo, clkHi] = l.split64(target.readClock(l.b, l.loc, 64));
  return {gtLo, gtHi, clkLo, clkHi};
}

/// Bytes of the block a warp writes at return: the header and the written
/// records, rounded up to whole 32-byte sectors (a partly written sector
/// costs the memory a read-modify-write).
Value usedBytes(LLVMBuilder &l, const KernelSegment &s, Value count) {
  // A run that went past the ring's end wrote the overhang only if more
  // records than the ring holds were written.
  Value recorded = l.mul(l.umin(count, l.i32(s.layout.getSlots())),
                         l.i32(s.layout.getRecordBytes()));
  Value written =
      l.add(recorded, l.i32(fmt::kSegmentHeaderBytes + fmt::kSectorBytes - 1));
  return l.band(written, l.i32(~(fmt::kSectorBytes - 1)));
}

/// Base of the patterns: the target, and the segment of the op's kernel,
/// which `lower` uses before the op is erased.
template <typename Op> struct ProtonGPUPattern : ConvertOpToLLVMPattern<Op> {
  using OpAdaptor = typename Op::Adaptor;

  ProtonGPUPattern(LLVMTypeConverter &converter, const TargetInfo &target,
                   const KernelSegments &segments, uint32_t kernelId)
      : ConvertOpToLLVMPattern<Op>(converter), target(target),
        segments(segments), kernelId(kernelId) {}

  virtual void lower(Op op, OpAdaptor adaptor, const KernelSegment &s,
                     ConversionPatternRewriter &rewriter) const = 0;

  LogicalResult
  matchAndRewrite(Op op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    auto it = segments.find(op->template getParentOfType<LLVM::LLVMFuncOp>());
    if (it == segments.end())
      return rewriter.notifyMatchFailure(op, "its kernel has no segment");
    lower(op, adaptor, it->second, rewriter);
    rewriter.eraseOp(op);
    return success();
  }

  void storeHeaderPart(RewriterBase &b, Location loc, const KernelSegment &s,
                       unsigned part, ArrayRef<Value> words) const {
    LLVMBuilder l{b, loc};
    target.storeWords(b, loc, l.gep(s.staging, l.i32(part)), words, s.isWriter);
  }

  /// Stores the pending record, where the target defers record stores.
  void storePending(RewriterBase &b, Location loc,
                    const KernelSegment &s) const {
    if (s.pendingSlots.empty())
      return;
    LLVMBuilder l{b, loc};
    SmallVector<Value> pending;
    for (Value slot : s.pendingSlots)
      pending.push_back(l.load(b.getI32Type(), slot, 4));
    target.storeWords(b, loc, l.gep(s.records, pending[3]),
                      {pending[0], l.add(pending[1], pending[2])}, s.isWriter);
  }

  const TargetInfo &target;
  const KernelSegments &segments;
  uint32_t kernelId;
};

/// A counter read needs no segment: it may appear in any function.
struct ReadCounterLowering : ConvertOpToLLVMPattern<ReadCounterOp> {
  ReadCounterLowering(LLVMTypeConverter &converter, const TargetInfo &target)
      : ConvertOpToLLVMPattern(converter), target(target) {}

  LogicalResult
  matchAndRewrite(ReadCounterOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    unsigned bits = op.getType().getIntOrFloatBitWidth();
    rewriter.replaceOp(op, target.readClock(rewriter, op.getLoc(), bits));
    return success();
  }

  const TargetInfo &target;
};

/// Zeroes the record index and stamps the entry time.
struct InitSegmentLowering : ProtonGPUPattern<InitSegmentOp> {
  using ProtonGPUPattern::ProtonGPUPattern;

  void lower(InitSegmentOp op, OpAdaptor, const KernelSegment &s,
             ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LLVMBuilder l{rewriter, loc};
    l.store(l.i32(0), s.indexSlot, 4);
    if (s.layout.getBufferType() != BufferType::registers) {
      SmallVector<Value> stamps = readStamps(l, target);
      storeHeaderPart(rewriter, loc, s, kEntryPart, stamps);
      initOverhang(rewriter, s, stamps[2], stamps[3]);
      if (s.pendingSlots.empty())
        return;
      // Until the first record, the pending one goes to the header's exit
      // part, which the return overwrites.
      int32_t exitPart = (int32_t)kExitPart - (int32_t)fmt::kSegmentHeaderBytes;
      for (auto [slot, value] : llvm::zip_equal(
               s.pendingSlots, SmallVector<Value>{l.i32(0), l.i32(0), l.i32(0),
                                                  l.i32(exitPart)}))
        l.store(value, slot, 4);
      return;
    }
    // Lane 1 holds the entry stamps from now on; lanes 0 and 2 get theirs
    // at return, lanes 3 and up the records.
    Value holdsEntry = l.eq(s.lane, l.i32(kEntryPart / fmt::kChunkBytes));
    SmallVector<Value> stamps = readStamps(l, target);
    for (auto [slot, stamp] : llvm::zip_equal(s.chunkSlots, stamps))
      l.store(l.select(holdsEntry, stamp, l.i32(0)), slot, 4);
  }

  /// Fills the overhang with records of the entry clock (tag 0), older than
  /// any record the warp writes: where no run reached a slot of the overhang,
  /// the decoder keeps the ring's record. One lane per slot.
  void initOverhang(RewriterBase &rewriter, const KernelSegment &s,
                    Value clockLo, Value clockHi) const {
    unsigned overhang = s.layout.getOverhang();
    if (overhang == 0)
      return;
    LLVMBuilder l{rewriter, s.lane.getLoc()};
    Value slot = l.add(s.lane, l.i32(s.layout.getCapacity()));
    Value address =
        l.gep(s.records, l.mul(slot, l.i32(s.layout.getRecordBytes())));
    Value mine = l.band(s.isRecorder, l.ult(s.lane, l.i32(overhang)));
    target.storeWords(rewriter, l.loc, address, {clockLo, clockHi}, mine);
  }
};

/// Writes one record at the record index modulo the capacity (a record
/// late where the target defers record stores), and advances the index.
struct CircularStoreLowering : ProtonGPUPattern<CircularStoreOp> {
  using ProtonGPUPattern::ProtonGPUPattern;

  void lower(CircularStoreOp op, OpAdaptor adaptor, const KernelSegment &s,
             ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LLVMBuilder l{rewriter, loc};
    const LayoutAttr &layout = s.layout;
    Value index = l.load(rewriter.getI32Type(), s.indexSlot, 4);
    bool inRegisters = layout.getBufferType() == BufferType::registers;
    Value offset = inRegisters ? Value() : recordOffset(l, s, op, index);
    bool storesNow = !inRegisters && s.pendingSlots.empty();
    Value address = storesNow ? l.gep(s.records, offset) : Value();
    bool isEnd = recordKindTraits(op.getKind()).endBit;
    uint32_t tag = (uint32_t)op.getScopeId() | (isEnd ? fmt::kEndTagBit : 0u);
    Value tagBits = l.i32((int32_t)(tag << fmt::kTagShift));
    // Word 1 is clock bits 32-63 (none with 32-bit clocks) plus the tag.
    Value word0 = adaptor.getCounter(), high;
    if (layout.getClockBits() == 64)
      std::tie(word0, high) = l.split64(adaptor.getCounter());
    if (inRegisters || storesNow) {
      SmallVector<Value> words{word0, high ? l.add(high, tagBits) : tagBits};
      if (inRegisters)
        keepInChunk(l, s, slotOf(l, s, index), words);
      else
        target.storeWords(rewriter, loc, address, words, s.isWriter);
    } else {
      if (!high)
        high = l.i32(0);
      // Nothing uses the clock just read until the next record stores it:
      // ptxas puts a use right after the read, where the warp waits out
      // its latency (with two warps per scheduler nothing hides that).
      storePending(rewriter, loc, s);
      for (auto [slot, value] :
           llvm::zip_equal(s.pendingSlots,
                           SmallVector<Value>{word0, high, tagBits, offset}))
        l.store(value, slot, 4);
    }
    l.store(l.add(index, l.i32(1)), s.indexSlot, 4);
  }

  /// The ring slot of record `index`.
  static Value slotOf(LLVMBuilder &l, const KernelSegment &s, Value index) {
    return l.band(index, l.i32(s.layout.getCapacity() - 1));
  }

  /// Where the record goes, in bytes from the first slot: its slot, or, in a
  /// run, the slot its run's first record computed plus its place in the run
  /// (past the ring's end into the overhang rather than wrapping).
  static Value recordOffset(LLVMBuilder &l, const KernelSegment &s,
                            CircularStoreOp op, Value index) {
    unsigned recordBytes = s.layout.getRecordBytes();
    auto it = s.runPosition.find(op);
    if (it == s.runPosition.end()) {
      Value slot = slotOf(l, s, index);
      return l.mul(slot, l.i32(recordBytes));
    }
    Value offset;
    if (it->second == 0) {
      Value slot = slotOf(l, s, index);
      offset = l.mul(slot, l.i32(recordBytes));
      l.store(offset, s.runSlot, 4);
    } else {
      offset = l.add(l.load(l.b.getI32Type(), s.runSlot, 4),
                     l.i32(it->second * recordBytes));
    }
    return offset;
  }

  /// Registers buffer: the lane whose chunk holds record `slot` keeps its
  /// words (selects, no memory access).
  static void keepInChunk(LLVMBuilder &l, const KernelSegment &s, Value slot,
                          ArrayRef<Value> words) {
    unsigned perChunk = fmt::kChunkBytes / s.layout.getRecordBytes();
    unsigned headerChunks = fmt::kSegmentHeaderBytes / fmt::kChunkBytes;
    Value owner = l.add(l.i32(headerChunks),
                        l.lshr(slot, l.i32(llvm::Log2_32(perChunk))));
    Value mine = l.eq(s.lane, owner);
    Value position = l.band(slot, l.i32(perChunk - 1));
    Value here;
    for (auto [k, chunkSlot] : llvm::enumerate(s.chunkSlots)) {
      unsigned record = k / words.size(), word = k % words.size();
      if (word == 0)
        here = perChunk == 1
                   ? mine
                   : l.band(mine, l.eq(position, l.i32((int64_t)record)));
      Value old = l.load(l.b.getI32Type(), chunkSlot, 4);
      l.store(l.select(here, words[word], old), chunkSlot, 4);
    }
  }
};

/// Completes the header (identity and exit stamps) and writes the block to
/// profile_scratch where it is not written there already.
struct FinalizeLowering : ProtonGPUPattern<FinalizeOp> {
  using ProtonGPUPattern::ProtonGPUPattern;

  void lower(FinalizeOp op, OpAdaptor, const KernelSegment &s,
             ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LLVMBuilder l{rewriter, loc};
    Value count = l.load(rewriter.getI32Type(), s.indexSlot, 4);
    SmallVector<Value> stamps = readStamps(l, target);
    SmallVector<Value> identityWords = identity(l, s, count);
    if (s.layout.getBufferType() == BufferType::registers) {
      writeChunk(rewriter, loc, s, count, identityWords, stamps);
      return;
    }
    storePending(rewriter, loc, s);
    storeHeaderPart(rewriter, loc, s, kIdentityPart, identityWords);
    storeHeaderPart(rewriter, loc, s, kExitPart, stamps);
    if (s.layout.getBufferType() == BufferType::shared)
      copyOut(rewriter, loc, s, count);
  }

  /// The header's identity part: magic and flags, kernel id, records
  /// written, and where the warp ran.
  SmallVector<Value> identity(LLVMBuilder &l, const KernelSegment &s,
                              Value count) const {
    const LayoutAttr &layout = s.layout;
    uint32_t flags =
        fmt::kVersion | (layout.getClockBits() == 64 ? fmt::kClock64Bit : 0) |
        ((uint32_t)layout.getBufferType() << fmt::kBufferTypeShift) |
        ((uint32_t)layout.getGranularity() << fmt::kGranularityShift) |
        (target.getGlobalTimerTicksPerMicrosecond() == 100
             ? fmt::kTimer100MHzBit
             : 0);
    Value where = l.bor(target.location(l.b, l.loc),
                        l.shl(s.warp, l.i32(fmt::kWarpShift)));
    return {l.i32((int32_t)(fmt::kMagic << 16 | flags)),
            l.i32((int32_t)kernelId), count, where};
  }

  /// Registers buffer: lanes 0 and 2 take the header's identity and exit
  /// parts, and every lane with a used chunk writes it, one 16-byte store
  /// per lane for the whole block.
  void writeChunk(RewriterBase &b, Location loc, const KernelSegment &s,
                  Value count, ArrayRef<Value> identity,
                  ArrayRef<Value> exitStamps) const {
    LLVMBuilder l{b, loc};
    Value isIdentity = l.eq(s.lane, l.i32(kIdentityPart / fmt::kChunkBytes));
    Value isExit = l.eq(s.lane, l.i32(kExitPart / fmt::kChunkBytes));
    SmallVector<Value> words;
    for (auto [k, chunkSlot] : llvm::enumerate(s.chunkSlots)) {
      Value word = l.load(b.getI32Type(), chunkSlot, 4);
      word = l.select(isExit, exitStamps[k], word);
      words.push_back(l.select(isIdentity, identity[k], word));
    }
    Value offset = l.mul(s.lane, l.i32(fmt::kChunkBytes));
    Value used = l.band(s.isRecorder, l.ult(offset, usedBytes(l, s, count)));
    target.storeWords(b, loc, l.gep(s.block, offset), words, used);
  }

  /// Every lane of a recording warp copies 16-byte chunks of the segment
  /// header and the recorded part of the segment from shared to global
  /// memory, so that the warp writes its block with one store per lane:
  /// straight-line predicated stores for small segments (the usual case
  /// once sizes are inferred: branches at the kernel's exit cost more than
  /// the copy), a loop for large ones.
  void copyOut(RewriterBase &b, Location loc, const KernelSegment &s,
               Value count) const {
    LLVMBuilder l{b, loc};
    unsigned blockBytes = s.layout.getBlockBytes();
    target.warpSync(b, loc);
    Value used = usedBytes(l, s, count);
    Value first = l.mul(s.lane, l.i32(fmt::kChunkBytes));
    unsigned stride = target.getWarpSize() * fmt::kChunkBytes;
    unsigned steps = llvm::divideCeil(blockBytes, stride);
    auto chunk = VectorType::get({4}, b.getI32Type());

    if (steps <= kMaxStraightCopySteps) {
      for (unsigned k = 0; k < steps; ++k) {
        Value offset = l.add(first, l.i32(k * stride));
        Value more = l.band(s.isRecorder, l.ult(offset, used));
        // Loads stay inside the segment; only the stores are predicated.
        Value inside = l.umin(offset, l.i32(blockBytes - fmt::kChunkBytes));
        Value data = l.load(chunk, l.gep(s.staging, inside), fmt::kChunkBytes);
        SmallVector<Value> words;
        for (int64_t i = 0; i < 4; ++i)
          words.push_back(
              LLVM::ExtractElementOp::create(b, loc, data, l.i32(i)));
        target.storeWords(b, loc, l.gep(s.block, offset), words, more);
      }
      return;
    }

    Block *current = b.getInsertionBlock();
    Block *exit = b.splitBlock(current, b.getInsertionPoint());
    Block *header = b.createBlock(exit, {b.getI32Type()}, {loc});
    Block *body = b.createBlock(exit);
    Value offset = header->getArgument(0);

    b.setInsertionPointToEnd(current);
    LLVM::BrOp::create(b, loc, ValueRange{first}, header);

    b.setInsertionPointToEnd(header);
    Value more = l.band(s.isRecorder, l.ult(offset, used));
    LLVM::CondBrOp::create(b, loc, more, body, exit);

    b.setInsertionPointToEnd(body);
    Value data = l.load(chunk, l.gep(s.staging, offset), fmt::kChunkBytes);
    l.store(data, l.gep(s.block, offset), fmt::kChunkBytes);
    LLVM::BrOp::create(b, loc, ValueRange{l.add(offset, l.i32(stride))},
                       header);
    b.setInsertionPointToStart(exit);
  }
};

} // namespace

void mlir::proton::populateProtonGPUToLLVMPatterns(
    LLVMTypeConverter &typeConverter, RewritePatternSet &patterns,
    const TargetInfo &target, const KernelSegments &segments,
    uint32_t kernelId) {
  // A segment has no LLVM value: the patterns find it through the kernel.
  // Its type stays so that the operands of its users can be remapped.
  typeConverter.addConversion([](SegmentType type) { return type; });
  patterns.add<ReadCounterLowering>(typeConverter, target);
  patterns.add<InitSegmentLowering, CircularStoreLowering, FinalizeLowering>(
      typeConverter, target, segments, kernelId);
}

namespace {

struct ProtonGPUToLLVMPass
    : public ::mlir::proton::impl::ConvertProtonGPUToLLVMBase<
          ProtonGPUToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    std::string error;
    std::unique_ptr<TargetInfo> targetInfo =
        TargetInfo::create(target, arch, error);
    if (!targetInfo) {
      module.emitError(error);
      return signalPassFailure();
    }
    FailureOr<KernelSegments> segments =
        prepareKernelSegments(module, *targetInfo);
    if (failed(segments))
      return signalPassFailure();

    LLVMTypeConverter typeConverter(ctx);
    RewritePatternSet patterns(ctx);
    populateProtonGPUToLLVMPatterns(typeConverter, patterns, *targetInfo,
                                    *segments, kernelId);
    ConversionTarget legality(*ctx);
    legality.addIllegalDialect<ProtonGPUDialect>();
    legality.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                             ROCDL::ROCDLDialect>();
    if (failed(applyPartialConversion(module, legality, std::move(patterns))))
      return signalPassFailure();

    OpPassManager promote(ModuleOp::getOperationName());
    promote.addPass(createMem2Reg());
    if (failed(runPipeline(promote, module)))
      signalPassFailure();
  }
};

} // namespace
