#ifndef PROTON_LIB_CONVERSION_PROTONGPUTOLLVM_LLVMBUILDER_H
#define PROTON_LIB_CONVERSION_PROTONGPUTOLLVM_LLVMBUILDER_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::proton {

/// Small helpers for emitting LLVM dialect code; one per idea so the
/// lowering reads as arithmetic.
struct LLVMBuilder {
  OpBuilder &b;
  Location loc;

  Value i32(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI32Type(),
                                    b.getI32IntegerAttr((int32_t)v));
  }
  Value i1(bool v) {
    return LLVM::ConstantOp::create(b, loc, b.getI1Type(), b.getBoolAttr(v));
  }
  Value i64(int64_t v) {
    return LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                    b.getI64IntegerAttr(v));
  }
  Value add(Value x, Value y) { return LLVM::AddOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return LLVM::MulOp::create(b, loc, x, y); }
  Value udiv(Value x, Value y) { return LLVM::UDivOp::create(b, loc, x, y); }
  Value lshr(Value x, Value y) { return LLVM::LShrOp::create(b, loc, x, y); }
  Value band(Value x, Value y) { return LLVM::AndOp::create(b, loc, x, y); }
  Value bor(Value x, Value y) { return LLVM::OrOp::create(b, loc, x, y); }
  Value shl(Value x, Value y) { return LLVM::ShlOp::create(b, loc, x, y); }
  Value eq(Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, x, y);
  }
  Value ult(Value x, Value y) {
    return LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ult, x, y);
  }
  Value umin(Value x, Value y) {
    return LLVM::SelectOp::create(b, loc, ult(x, y), x, y);
  }
  Value select(Value c, Value x, Value y) {
    return LLVM::SelectOp::create(b, loc, c, x, y);
  }
  Value zext64(Value x) {
    return LLVM::ZExtOp::create(b, loc, b.getI64Type(), x);
  }
  Value trunc32(Value x) {
    return LLVM::TruncOp::create(b, loc, b.getI32Type(), x);
  }
  /// Low and high words of an i64.
  std::pair<Value, Value> split64(Value x) {
    return {trunc32(x), trunc32(lshr(x, i64(32)))};
  }
  /// `base + offset` bytes; the offset is i32 or i64.
  Value gep(Value base, Value offset) {
    return LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(), base,
                               ValueRange{offset});
  }
  Value load(Type type, Value ptr, unsigned align = 0) {
    return LLVM::LoadOp::create(b, loc, type, ptr, align);
  }
  void store(Value value, Value ptr, unsigned align = 0) {
    LLVM::StoreOp::create(b, loc, value, ptr, align);
  }
  /// A side-effecting inline assembly call; `result` may be null.
  Value inlineAsm(Type result, ValueRange operands, StringRef text,
                  StringRef constraints) {
    MLIRContext *ctx = b.getContext();
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("asm_string", b.getStringAttr(text)),
        b.getNamedAttr("constraints", b.getStringAttr(constraints)),
        b.getNamedAttr("has_side_effects", b.getUnitAttr()),
        b.getNamedAttr("asm_dialect", LLVM::AsmDialectAttr::get(
                                          ctx, LLVM::AsmDialect::AD_ATT))};
    SmallVector<Type> results;
    if (result)
      results.push_back(result);
    auto op = LLVM::InlineAsmOp::create(b, loc, results, operands, attrs);
    return result ? op.getRes() : Value();
  }
  /// A call to an LLVM intrinsic; `result` may be null.
  Value intrinsic(Type result, StringRef name, ValueRange args = {}) {
    if (!result) {
      LLVM::CallIntrinsicOp::create(b, loc, b.getStringAttr(name), args);
      return Value();
    }
    return LLVM::CallIntrinsicOp::create(b, loc, result, b.getStringAttr(name),
                                         args)
        .getResult(0);
  }
};

} // namespace mlir::proton

#endif
