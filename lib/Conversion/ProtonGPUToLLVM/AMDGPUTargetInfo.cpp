#include "LLVMBuilder.h"
#include "TargetInfos.h"

#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"

using namespace mlir;
using namespace mlir::proton;

namespace {

class AMDGPUTargetInfo : public TargetInfo {
public:
  unsigned getWarpSize() const override { return 64; }
  unsigned getGlobalTimerTicksPerMicrosecond() const override {
    return 100; // s_memrealtime runs at a constant 100 MHz on CDNA
  }

  Value threadIdX(OpBuilder &b, Location loc) const override {
    return ROCDL::ThreadIdXOp::create(b, loc, b.getI32Type());
  }

  // The number of workgroups is not a register on AMDGPU: it comes from the
  // HSA dispatch packet (grid size and workgroup size per dimension).
  Value linearCtaId(OpBuilder &b, Location loc) const override {
    LLVMBuilder l{b, loc};
    Type i32 = b.getI32Type(), i16 = b.getI16Type();
    Value x = ROCDL::BlockIdXOp::create(b, loc, i32);
    Value y = ROCDL::BlockIdYOp::create(b, loc, i32);
    Value z = ROCDL::BlockIdZOp::create(b, loc, i32);
    Value packet = l.intrinsic(LLVM::LLVMPointerType::get(b.getContext(), 4),
                               "llvm.amdgcn.dispatch.ptr");
    auto groups = [&](int sizeOffset, int gridOffset) {
      Value wg = LLVM::ZExtOp::create(
          b, loc, i32, l.load(i16, l.gep(packet, l.i32(sizeOffset)), 2));
      Value grid = l.load(i32, l.gep(packet, l.i32(gridOffset)), 4);
      return l.udiv(l.add(grid, l.add(wg, l.i32(-1))), wg);
    };
    Value nx = groups(4, 12), ny = groups(6, 16);
    return l.add(x, l.mul(nx, l.add(y, l.mul(ny, z))));
  }

  Value readClock(OpBuilder &b, Location loc, unsigned bits) const override {
    LLVMBuilder l{b, loc};
    Value clock = l.intrinsic(b.getI64Type(), "llvm.amdgcn.s.memtime");
    return bits == 64 ? clock : l.trunc32(clock);
  }

  Value readGlobalTimer(OpBuilder &b, Location loc) const override {
    return LLVMBuilder{b, loc}.intrinsic(b.getI64Type(),
                                         "llvm.amdgcn.s.memrealtime");
  }

  Value location(OpBuilder &b, Location loc) const override {
    LLVMBuilder l{b, loc};
    // HW_ID bits 0-15: wave, SIMD, pipe, CU, SH, SE ids; XCC_ID bits 0-3:
    // the die on MI300/MI350.
    Value hw = l.inlineAsm(b.getI32Type(), {},
                           "s_getreg_b32 $0, hwreg(HW_REG_HW_ID)", "=s");
    Value xcc = l.inlineAsm(b.getI32Type(), {},
                            "s_getreg_b32 $0, hwreg(HW_REG_XCC_ID)", "=s");
    return l.bor(l.band(hw, l.i32(0xFFFF)),
                 l.shl(l.band(xcc, l.i32(0xF)), l.i32(16)));
  }

  void storeWords(RewriterBase &b, Location loc, Value ptr,
                  ArrayRef<Value> words, Value predicate) const override {
    LLVMBuilder l{b, loc};
    Block *current = b.getInsertionBlock();
    Block *rest = b.splitBlock(current, b.getInsertionPoint());
    Block *then = b.createBlock(rest);
    b.setInsertionPointToEnd(current);
    LLVM::CondBrOp::create(b, loc, predicate, then, rest);
    b.setInsertionPointToStart(then);
    auto vectorType = VectorType::get({(int64_t)words.size()}, b.getI32Type());
    Value vector = LLVM::PoisonOp::create(b, loc, vectorType);
    for (auto [i, word] : llvm::enumerate(words))
      vector = LLVM::InsertElementOp::create(b, loc, vector, word,
                                             l.i32((int64_t)i));
    l.store(vector, ptr, /*align=*/8);
    LLVM::BrOp::create(b, loc, rest);
    b.setInsertionPointToStart(rest);
  }

  void warpSync(OpBuilder &b, Location loc) const override {
    LLVMBuilder{b, loc}.intrinsic(Type(), "llvm.amdgcn.wave.barrier");
  }

  void prepareKernel(LLVM::LLVMFuncOp kernel) const override {
    // The lowering reads the dispatch packet; an earlier attribute inference
    // may have promised the backend that the kernel does not.
    ArrayAttr passthrough = kernel.getPassthroughAttr();
    if (!passthrough)
      return;
    SmallVector<Attribute> kept;
    for (Attribute entry : passthrough) {
      auto name = dyn_cast<StringAttr>(entry);
      if (auto pair = dyn_cast<ArrayAttr>(entry); pair && !pair.empty())
        name = dyn_cast<StringAttr>(pair[0]);
      if (name && name.getValue() == "amdgpu-no-dispatch-ptr")
        continue;
      kept.push_back(entry);
    }
    kernel.setPassthroughAttr(ArrayAttr::get(kernel.getContext(), kept));
  }
};

} // namespace

std::unique_ptr<TargetInfo> mlir::proton::createAMDGPUTargetInfo() {
  return std::make_unique<AMDGPUTargetInfo>();
}
