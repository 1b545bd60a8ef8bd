#include "proton/Conversion/ProtonGPUToLLVM/Passes.h"

#include "LLVMBuilder.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "proton/Conversion/ProtonGPUToLLVM/TargetInfo.h"

namespace mlir::proton {
#define GEN_PASS_DEF_CONVERTPROTONGPUTOLLVM
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;
using namespace mlir::proton::gpu;

namespace {

constexpr StringLiteral kSharedSymbol = "global_smem";
constexpr unsigned kChunkBytes = LayoutAttr::kChunkBytes;
constexpr unsigned kMaxStraightCopySteps = 4;
constexpr unsigned kSectorBytes = LayoutAttr::kSectorBytes;

/// The values a warp computes once at entry and every record then uses.
struct Segment {
  LayoutAttr layout;
  Value warp, lane;
  Value isRecorder; // this warp records
  Value isWriter;   // this thread writes: lane 0 of a recording warp
  Value segmentIndex;
  Value block;     // this segment's header and records in profile_scratch
  Value staging;   // where header and records are written while running:
                   // shared memory, or `block` itself with a global buffer
                   // (none with a registers buffer)
  Value records;   // the records in `staging`
  Value indexSlot; // stack slot of the record index (promoted later)
  // Registers buffer: stack slots (promoted later) of the four words of the
  // 16-byte chunk of the block this lane writes at return.
  SmallVector<Value, 4> chunkSlots;
};

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

/// Byte offsets of the segment header's three 16-byte parts
/// (docs/buffer-format.md).
enum HeaderPart : unsigned {
  kIdentityPart = 0, // magic and flags, kernel id, records written, location
  kEntryPart = 16,   // global timer and 64-bit clock at entry
  kExitPart = 32,    // global timer and 64-bit clock at return
};

/// Header word 0 below the magic: the flags bits.
constexpr unsigned kClock64Bit = 1u << 4;
constexpr unsigned kBufferTypeShift = 5;
constexpr unsigned kGranularityShift = 7;
constexpr unsigned kTimer100MHzBit = 1u << 9;
/// Header word 3: the warp id above the target's 20-bit location.
constexpr unsigned kWarpShift = 20;
/// A record's second word: clock bits 32-47, then the tag.
constexpr unsigned kTagShift = 16;
constexpr unsigned kEndTagBit = 1u << 15;

struct Lowering {
  const TargetInfo &target;
  uint32_t kernelId; // header word 1: ties a buffer to its metadata
  ModuleOp module;

  /// The global timer and the 64-bit clock as four words (lo, hi, lo, hi).
  SmallVector<Value> readStamps(OpBuilder &b, Location loc) {
    LLVMBuilder l{b, loc};
    auto [gtLo, gtHi] = l.split64(target.readGlobalTimer(b, loc));
    auto [clkLo, clkHi] = l.split64(target.readClock(b, loc, 64));
    return {gtLo, gtHi, clkLo, clkHi};
  }

  void storeHeaderPart(OpBuilder &b, Location loc, const Segment &s,
                       HeaderPart part, ArrayRef<Value> words) {
    LLVMBuilder l{b, loc};
    target.storeWords(b, loc, l.gep(s.staging, l.i32(part)), words,
                      s.isWriter);
  }

  Segment lowerInit(InitSegmentOp init) {
    OpBuilder b(init);
    Location loc = init.getLoc();
    LLVMBuilder l{b, loc};
    LayoutAttr layout = init.getLayout();
    Segment s;
    s.layout = layout;
    unsigned warpSize = target.getWarpSize();
    Value tid = target.threadIdX(b, loc);
    s.warp = l.lshr(tid, l.i32(llvm::Log2_32(warpSize)));
    s.lane = l.band(tid, l.i32(warpSize - 1));

    // Segment index and whether this warp records, from the warp list.
    ArrayRef<int32_t> warps = layout.getWarps();
    bool everyWarp = warps.size() == layout.getNumWarps();
    bool everyFourth = layout.getNumWarps() % 4 == 0 &&
                       warps.size() == layout.getNumWarps() / 4 &&
                       llvm::all_of(llvm::enumerate(warps), [](auto e) {
                         return e.value() == 4 * (int32_t)e.index();
                       });
    if (everyWarp) {
      s.segmentIndex = s.warp;
      s.isRecorder = l.i1(true);
    } else if (everyFourth) {
      s.segmentIndex = l.lshr(s.warp, l.i32(2));
      s.isRecorder = l.eq(l.band(s.warp, l.i32(3)), l.i32(0));
    } else {
      s.segmentIndex = l.i32(0);
      s.isRecorder = l.i1(false);
      for (auto [i, w] : llvm::enumerate(warps)) {
        Value match = l.eq(s.warp, l.i32(w));
        s.segmentIndex = l.select(match, l.i32((int64_t)i), s.segmentIndex);
        s.isRecorder = l.select(match, match, s.isRecorder);
      }
    }
    s.isWriter = l.band(s.isRecorder, l.eq(s.lane, l.i32(0)));

    Value cta = l.zext64(target.linearCtaId(b, loc));
    Value ctaBase = l.gep(init.getScratch(),
                          l.mul(cta, l.i64(layout.getBytesPerCta())));
    Value blockOffset = l.mul(s.segmentIndex, l.i32(layout.getBlockBytes()));
    s.block = l.gep(ctaBase, blockOffset);
    Block &entry = init->getParentOfType<LLVM::LLVMFuncOp>().front();
    if (layout.getBufferType() == BufferType::registers) {
      s.indexSlot = newSlot(b, loc, entry);
      l.store(l.i32(0), s.indexSlot, 4);
      // Lane 1 holds the entry stamps from now on; lanes 0 and 2 get
      // theirs at return, lanes 3 and up the records.
      Value holdsEntry = l.eq(s.lane, l.i32(kEntryPart / kChunkBytes));
      for (Value stamp : readStamps(b, loc)) {
        s.chunkSlots.push_back(newSlot(b, loc, entry));
        l.store(l.select(holdsEntry, stamp, l.i32(0)), s.chunkSlots.back(),
                4);
      }
      return s;
    }
    if (layout.getBufferType() == BufferType::shared) {
      Value smem = sharedMemoryBase(b, loc, module);
      s.staging =
          l.gep(smem, l.add(l.i32(layout.getSharedOffset()), blockOffset));
    } else {
      s.staging = s.block;
    }
    s.records = l.gep(s.staging, l.i32(LayoutAttr::kSegmentHeaderBytes));
    // The record index starts at zero; mem2reg turns the slot into SSA.
    s.indexSlot = newSlot(b, loc, entry);
    l.store(l.i32(0), s.indexSlot, 4);

    storeHeaderPart(b, loc, s, kEntryPart, readStamps(b, loc));
    return s;
  }

  /// An i32 stack slot at the start of the kernel's entry block.
  static Value newSlot(OpBuilder &b, Location loc, Block &entry) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&entry);
    LLVMBuilder l{b, loc};
    return LLVM::AllocaOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), b.getI32Type(),
        l.i32(1), /*alignment=*/4);
  }

  /// The header's identity part: magic and flags, kernel id, records
  /// written, and where the warp ran.
  SmallVector<Value> identity(OpBuilder &b, Location loc, const Segment &s,
                              Value count) {
    LLVMBuilder l{b, loc};
    const LayoutAttr &layout = s.layout;
    uint32_t flags = LayoutAttr::kVersion |
                     (layout.getClockBits() == 64 ? kClock64Bit : 0) |
                     ((uint32_t)layout.getBufferType() << kBufferTypeShift) |
                     ((uint32_t)layout.getGranularity() << kGranularityShift) |
                     (target.getGlobalTimerTicksPerMicrosecond() == 100
                          ? kTimer100MHzBit
                          : 0);
    Value where =
        l.bor(target.location(b, loc), l.shl(s.warp, l.i32(kWarpShift)));
    return {l.i32((int32_t)(LayoutAttr::kMagic << 16 | flags)),
            l.i32((int32_t)kernelId), count, where};
  }

  void lowerStore(CircularStoreOp store, const Segment &s) {
    OpBuilder b(store);
    Location loc = store.getLoc();
    LLVMBuilder l{b, loc};
    const LayoutAttr &layout = s.layout;
    Value index = l.load(b.getI32Type(), s.indexSlot, 4);
    Value slot = l.band(index, l.i32(layout.getCapacity() - 1));
    bool inRegisters = layout.getBufferType() == BufferType::registers;
    Value address =
        inRegisters
            ? Value()
            : l.gep(s.records, l.mul(slot, l.i32(layout.getRecordBytes())));
    uint32_t tag = (uint32_t)store.getScopeId() |
                   (store.getKind() == RecordKind::end ? kEndTagBit : 0u);
    Value tagBits = l.i32((int32_t)(tag << kTagShift));
    SmallVector<Value> words;
    if (layout.getClockBits() == 64) {
      auto [lo, hi] = l.split64(store.getCounter());
      words = {lo, l.bor(l.band(hi, l.i32(0xFFFF)), tagBits)};
    } else {
      words = {store.getCounter(), tagBits};
    }
    if (inRegisters)
      keepInChunk(l, s, slot, words);
    else
      target.storeWords(b, loc, address, words, s.isWriter);
    l.store(l.add(index, l.i32(1)), s.indexSlot, 4);
    store->erase();
  }

  /// Registers buffer: the lane whose chunk holds record `slot` keeps its
  /// words (selects, no memory access).
  void keepInChunk(LLVMBuilder &l, const Segment &s, Value slot,
                   ArrayRef<Value> words) {
    unsigned perChunk = kChunkBytes / s.layout.getRecordBytes();
    unsigned headerChunks = LayoutAttr::kSegmentHeaderBytes / kChunkBytes;
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

  void lowerFinalize(FinalizeOp finalize, const Segment &s) {
    OpBuilder b(finalize);
    Location loc = finalize.getLoc();
    LLVMBuilder l{b, loc};
    Value count = l.load(b.getI32Type(), s.indexSlot, 4);
    SmallVector<Value> stamps = readStamps(b, loc);
    SmallVector<Value> identityWords = identity(b, loc, s, count);
    if (s.layout.getBufferType() == BufferType::registers) {
      writeChunk(b, loc, s, count, identityWords, stamps);
      finalize->erase();
      return;
    }
    storeHeaderPart(b, loc, s, kIdentityPart, identityWords);
    storeHeaderPart(b, loc, s, kExitPart, stamps);
    if (s.layout.getBufferType() == BufferType::shared)
      copyOut(b, loc, s, count);
    finalize->erase();
  }

  /// Bytes of the block a warp writes at return: the header and the written
  /// records, rounded up to whole 32-byte sectors (a partly written sector
  /// costs the memory a read-modify-write).
  Value usedBytes(LLVMBuilder &l, const Segment &s, Value count) {
    const LayoutAttr &layout = s.layout;
    Value recorded = l.mul(l.umin(count, l.i32(layout.getCapacity())),
                           l.i32(layout.getRecordBytes()));
    Value written = l.add(recorded, l.i32(LayoutAttr::kSegmentHeaderBytes +
                                          kSectorBytes - 1));
    return l.band(written, l.i32(~(kSectorBytes - 1)));
  }

  /// Registers buffer: lanes 0 and 2 take the header's identity and exit
  /// parts, and every lane with a used chunk writes it, one 16-byte store
  /// per lane for the whole block.
  void writeChunk(OpBuilder &b, Location loc, const Segment &s, Value count,
                  ArrayRef<Value> identity, ArrayRef<Value> exitStamps) {
    LLVMBuilder l{b, loc};
    Value isIdentity = l.eq(s.lane, l.i32(kIdentityPart / kChunkBytes));
    Value isExit = l.eq(s.lane, l.i32(kExitPart / kChunkBytes));
    SmallVector<Value> words;
    for (auto [k, chunkSlot] : llvm::enumerate(s.chunkSlots)) {
      Value word = l.load(b.getI32Type(), chunkSlot, 4);
      word = l.select(isExit, exitStamps[k], word);
      words.push_back(l.select(isIdentity, identity[k], word));
    }
    Value offset = l.mul(s.lane, l.i32(kChunkBytes));
    Value used = l.band(s.isRecorder, l.ult(offset, usedBytes(l, s, count)));
    target.storeWords(b, loc, l.gep(s.block, offset), words, used);
  }

  /// Every lane of a recording warp copies 16-byte chunks of the segment
  /// header and the recorded part of the segment from shared to global
  /// memory, so that the warp writes its block with one store per lane:
  /// straight-line
  /// predicated stores for small segments (the usual case once sizes are
  /// inferred: branches at the kernel's exit cost more than the copy),
  /// a loop for large ones.
  void copyOut(OpBuilder &b, Location loc, const Segment &s, Value count) {
    LLVMBuilder l{b, loc};
    const LayoutAttr &layout = s.layout;
    target.warpSync(b, loc);
    Value used = usedBytes(l, s, count);
    Value first = l.mul(s.lane, l.i32(kChunkBytes));
    unsigned stride = target.getWarpSize() * kChunkBytes;
    unsigned steps = llvm::divideCeil(layout.getBlockBytes(), stride);
    auto chunk = VectorType::get({4}, b.getI32Type());

    if (steps <= kMaxStraightCopySteps) {
      for (unsigned k = 0; k < steps; ++k) {
        Value offset = l.add(first, l.i32(k * stride));
        Value more = l.band(s.isRecorder, l.ult(offset, used));
        // Loads stay inside the segment; only the stores are predicated.
        Value inside = l.umin(offset, l.i32(layout.getBlockBytes() -
                                            kChunkBytes));
        Value data = l.load(chunk, l.gep(s.staging, inside), kChunkBytes);
        SmallVector<Value> words;
        for (int64_t i = 0; i < 4; ++i)
          words.push_back(LLVM::ExtractElementOp::create(b, loc, data,
                                                         l.i32(i)));
        target.storeWords(b, loc, l.gep(s.block, offset), words, more);
      }
      return;
    }

    Block *current = b.getInsertionBlock();
    Block *exit = current->splitBlock(b.getInsertionPoint());
    Block *header = new Block(), *body = new Block();
    header->insertBefore(exit);
    body->insertBefore(exit);
    Value offset = header->addArgument(b.getI32Type(), loc);

    b.setInsertionPointToEnd(current);
    LLVM::BrOp::create(b, loc, ValueRange{first}, header);

    b.setInsertionPointToEnd(header);
    Value more = l.band(s.isRecorder, l.ult(offset, used));
    LLVM::CondBrOp::create(b, loc, more, body, exit);

    b.setInsertionPointToEnd(body);
    Value data = l.load(chunk, l.gep(s.staging, offset), kChunkBytes);
    l.store(data, l.gep(s.block, offset), kChunkBytes);
    LLVM::BrOp::create(b, loc, ValueRange{l.add(offset, l.i32(stride))},
                       header);
    b.setInsertionPointToStart(exit);
  }

  /// Writing through profile_scratch: Triton declared it unused.
  static void makeScratchWritable(LLVM::LLVMFuncOp kernel, Value scratch) {
    auto arg = dyn_cast<BlockArgument>(scratch);
    if (!arg)
      return;
    for (StringRef name :
         {"llvm.readnone", "llvm.readonly", "llvm.nocapture", "llvm.captures"})
      kernel.removeArgAttr(arg.getArgNumber(),
                           StringAttr::get(kernel.getContext(), name));
  }

  LogicalResult lowerKernel(LLVM::LLVMFuncOp kernel) {
    kernel.walk([&](ReadCounterOp read) {
      OpBuilder b(read);
      unsigned bits = read.getType().getIntOrFloatBitWidth();
      read.replaceAllUsesWith(target.readClock(b, read.getLoc(), bits));
      read->erase();
    });
    SmallVector<InitSegmentOp> inits =
        llvm::to_vector(kernel.getBody().getOps<InitSegmentOp>());
    if (inits.empty())
      return success();
    if (inits.size() > 1)
      return inits[1].emitError("a kernel has one proton_gpu.init_segment");
    Value scratch = inits[0].getScratch();
    Value segmentValue = inits[0].getSegment();
    SmallVector<Operation *> users(segmentValue.getUsers().begin(),
                                   segmentValue.getUsers().end());
    Segment s = lowerInit(inits[0]);
    for (Operation *user : users) {
      if (auto store = dyn_cast<CircularStoreOp>(user))
        lowerStore(store, s);
      else if (auto finalize = dyn_cast<FinalizeOp>(user))
        lowerFinalize(finalize, s);
    }
    inits[0]->erase();
    makeScratchWritable(kernel, scratch);
    target.prepareKernel(kernel);
    // For the host side: how to read the buffer this kernel writes.
    kernel->setAttr("proton.layout", s.layout);
    return success();
  }
};

struct ProtonGPUToLLVMPass
    : public ::mlir::proton::impl::ConvertProtonGPUToLLVMBase<ProtonGPUToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    std::unique_ptr<TargetInfo> targetInfo =
        TargetInfo::create(target, arch, error);
    if (!targetInfo) {
      module.emitError(error);
      return signalPassFailure();
    }
    Lowering lowering{*targetInfo, kernelId, module};
    bool failed = false;
    module.walk([&](LLVM::LLVMFuncOp kernel) {
      if (::mlir::failed(lowering.lowerKernel(kernel)))
        failed = true;
    });
    if (failed)
      return signalPassFailure();
    WalkResult leftover = module.walk([&](Operation *op) {
      if (isa_and_nonnull<ProtonGPUDialect>(op->getDialect())) {
        op->emitError("proton_gpu op left after lowering: its segment must "
                      "come from proton_gpu.init_segment in the same kernel");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();

    OpPassManager promote(ModuleOp::getOperationName());
    promote.addPass(createMem2Reg());
    if (::mlir::failed(runPipeline(promote, module)))
      signalPassFailure();
  }
};

} // namespace
