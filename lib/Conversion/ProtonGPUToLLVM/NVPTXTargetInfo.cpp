#include "LLVMBuilder.h"
#include "TargetInfos.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::proton;

namespace {

class NVPTXTargetInfo : public TargetInfo {
public:
  unsigned getWarpSize() const override { return 32; }
  bool defersRecordStores() const override { return true; }
  unsigned getGlobalTimerTicksPerMicrosecond() const override {
    return 1000; // %globaltimer counts nanoseconds
  }

  Value threadIdX(OpBuilder &b, Location loc) const override {
    return NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  }

  Value linearCtaId(OpBuilder &b, Location loc) const override {
    LLVMBuilder l{b, loc};
    Type i32 = b.getI32Type();
    Value x = NVVM::BlockIdXOp::create(b, loc, i32);
    Value y = NVVM::BlockIdYOp::create(b, loc, i32);
    Value z = NVVM::BlockIdZOp::create(b, loc, i32);
    Value nx = NVVM::GridDimXOp::create(b, loc, i32);
    Value ny = NVVM::GridDimYOp::create(b, loc, i32);
    return l.add(x, l.mul(nx, l.add(y, l.mul(ny, z))));
  }

  // Inline assembly rather than the NVVM intrinsics: side-effecting asm keeps
  // its place among Triton's own side-effecting loads and stores.
  Value readClock(OpBuilder &b, Location loc, unsigned bits) const override {
    LLVMBuilder l{b, loc};
    if (bits == 64)
      return l.inlineAsm(b.getI64Type(), {}, "mov.u64 $0, %clock64;", "=l");
    return l.inlineAsm(b.getI32Type(), {}, "mov.u32 $0, %clock;", "=r");
  }

  Value readGlobalTimer(OpBuilder &b, Location loc) const override {
    return LLVMBuilder{b, loc}.inlineAsm(b.getI64Type(), {},
                                         "mov.u64 $0, %globaltimer;", "=l");
  }

  Value location(OpBuilder &b, Location loc) const override {
    return LLVMBuilder{b, loc}.inlineAsm(b.getI32Type(), {},
                                         "mov.u32 $0, %smid;", "=r");
  }

  void storeWords(RewriterBase &b, Location loc, Value ptr,
                  ArrayRef<Value> words, Value predicate) const override {
    auto pointer = cast<LLVM::LLVMPointerType>(ptr.getType());
    bool shared = pointer.getAddressSpace() == 3;
    unsigned n = words.size();
    SmallVector<std::string> slots;
    for (unsigned i = 1; i <= n; ++i)
      slots.push_back("$" + std::to_string(i));
    std::string text = "@$" + std::to_string(n + 1) + " st." +
                       (shared ? "shared" : "global") + ".v" +
                       std::to_string(n) + ".b32 [$0], {" +
                       llvm::join(slots, ", ") + "};";
    std::string constraints = shared ? "r" : "l";
    for (unsigned i = 0; i < n; ++i)
      constraints += ",r";
    constraints += ",b";
    SmallVector<Value> operands = {ptr};
    operands.append(words.begin(), words.end());
    operands.push_back(predicate);
    LLVMBuilder{b, loc}.inlineAsm(Type(), operands, text, constraints);
  }

  void warpSync(OpBuilder &b, Location loc) const override {
    LLVMBuilder{b, loc}.inlineAsm(Type(), {}, "bar.warp.sync 0xffffffff;",
                                  "~{memory}");
  }
};

} // namespace

std::unique_ptr<TargetInfo> mlir::proton::createNVPTXTargetInfo() {
  return std::make_unique<NVPTXTargetInfo>();
}
