//===- MmaScopes.cpp - scopes around matrix-multiply instructions ---------===//
//
// The MMA mode: proton.record pairs around runs of MMA instructions, found in
// Triton's LLVM IR as inline assembly (wgmma, mma.sync, tcgen05), intrinsic
// calls (wgmma fence/commit, NVVM mma, AMD mfma/wmma) or NVVM/ROCDL ops.
//
//===----------------------------------------------------------------------===//
#include "proton/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "proton/Compiler/Instrument.h"
#include "llvm/ADT/ArrayRef.h"

namespace mlir::proton {
#define GEN_PASS_DEF_PROTONMMASCOPES
#include "proton/Transforms/Passes.h.inc"
} // namespace mlir::proton

using namespace mlir;
using namespace mlir::proton;

namespace {

/// What an operation is to the MMA scopes.
enum class Role {
  none,
  wgmmaFence,
  wgmmaMma,
  wgmmaCommit,
  wgmmaWait,
  tcgen05Mma,
  tcgen05Commit,
  syncMma,
};

struct Pattern {
  StringRef text;
  Role role;
};

// Order matters where one pattern is a prefix of another's context: the
// wgmma and tcgen05 forms come before the plain mma ones.
constexpr Pattern kAsmMnemonics[] = {
    {"wgmma.fence", Role::wgmmaFence},
    {"wgmma.mma_async", Role::wgmmaMma},
    {"wgmma.commit_group", Role::wgmmaCommit},
    {"wgmma.wait_group", Role::wgmmaWait},
    {"tcgen05.mma", Role::tcgen05Mma},
    {"tcgen05.commit", Role::tcgen05Commit},
    {"mma.sync", Role::syncMma},
    {"mma.sp", Role::syncMma},
};

constexpr Pattern kIntrinsicPrefixes[] = {
    {"llvm.nvvm.wgmma.fence", Role::wgmmaFence},
    {"llvm.nvvm.wgmma.mma_async", Role::wgmmaMma},
    {"llvm.nvvm.wgmma.commit_group", Role::wgmmaCommit},
    {"llvm.nvvm.wgmma.wait_group", Role::wgmmaWait},
    {"llvm.nvvm.tcgen05.mma", Role::tcgen05Mma},
    {"llvm.nvvm.tcgen05.commit", Role::tcgen05Commit},
    {"llvm.nvvm.mma.", Role::syncMma},
    {"llvm.amdgcn.mfma.", Role::syncMma},
    {"llvm.amdgcn.smfmac.", Role::syncMma},
    {"llvm.amdgcn.wmma.", Role::syncMma},
    {"llvm.amdgcn.swmmac.", Role::syncMma},
};

constexpr Pattern kOpPrefixes[] = {
    {"nvvm.wgmma.fence", Role::wgmmaFence},
    {"nvvm.wgmma.mma_async", Role::wgmmaMma},
    {"nvvm.wgmma.commit", Role::wgmmaCommit},
    {"nvvm.wgmma.wait", Role::wgmmaWait},
    {"nvvm.tcgen05.mma", Role::tcgen05Mma},
    {"nvvm.tcgen05.commit", Role::tcgen05Commit},
    {"nvvm.mma.", Role::syncMma},
    {"rocdl.mfma.", Role::syncMma},
    {"rocdl.smfmac.", Role::syncMma},
    {"rocdl.wmma.", Role::syncMma},
};

/// Whether `mnemonic` occurs in the PTX `text` as an instruction name: outside
/// `//` comments (Triton's wgmma wait follows a comment line) and not preceded
/// by a character of a longer name ("wgmma.mma_async" is not "mma.sync").
bool hasMnemonic(StringRef text, StringRef mnemonic) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    line = line.split("//").first;
    for (size_t pos = line.find(mnemonic); pos != StringRef::npos;
         pos = line.find(mnemonic, pos + 1)) {
      char before = pos ? line[pos - 1] : ' ';
      if (!llvm::isAlnum(before) && before != '_' && before != '.')
        return true;
    }
  }
  return false;
}

Role byPrefix(StringRef name, ArrayRef<Pattern> patterns) {
  for (const Pattern &p : patterns)
    if (name.starts_with(p.text))
      return p.role;
  return Role::none;
}

Role roleOf(Operation &op) {
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
    for (const Pattern &p : kAsmMnemonics)
      if (hasMnemonic(asmOp.getAsmString(), p.text))
        return p.role;
    return Role::none;
  }
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    std::optional<StringRef> callee = call.getCallee();
    if (!callee)
      return Role::none;
    // The Python bridge hides Triton's intrinsics behind a prefix
    // (kHiddenIntrinsicPrefix, Instrument.h).
    StringRef name = *callee;
    name.consume_front(::proton::kHiddenIntrinsicPrefix);
    return byPrefix(name, kIntrinsicPrefixes);
  }
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op))
    return byPrefix(call.getIntrin(), kIntrinsicPrefixes);
  return byPrefix(op.getName().getStringRef(), kOpPrefixes);
}

/// Which runs the role's instructions form (none: the role ends any run or
/// stands alone).
enum class Family { none, wgmma, tcgen05, sync };

Family familyOf(Role role) {
  switch (role) {
  case Role::wgmmaFence:
  case Role::wgmmaMma:
  case Role::wgmmaCommit:
    return Family::wgmma;
  case Role::tcgen05Mma:
  case Role::tcgen05Commit:
    return Family::tcgen05;
  case Role::syncMma:
    return Family::sync;
  case Role::none:
  case Role::wgmmaWait:
    return Family::none;
  }
  return Family::none;
}

bool isMultiply(Role role) {
  return role == Role::wgmmaMma || role == Role::tcgen05Mma ||
         role == Role::syncMma;
}

/// One scope to add: from before `first` to after `last`, both in one block.
struct Span {
  Operation *first;
  Operation *last;
  StringRef name;
};

/// The spans of one block: runs of one family, and each wgmma wait.
void collectSpans(Block &block, SmallVectorImpl<Span> &spans) {
  Family family = Family::none;
  Operation *first = nullptr, *last = nullptr;
  bool multiplies = false;
  auto close = [&] {
    if (first && multiplies)
      spans.push_back(
          {first, last, family == Family::sync ? "mma" : "mma.issue"});
    family = Family::none;
    first = last = nullptr;
    multiplies = false;
  };
  for (Operation &op : block) {
    Role role = roleOf(op);
    Family opFamily = familyOf(role);
    if (opFamily != Family::none) {
      if (opFamily != family)
        close();
      if (!first)
        first = &op;
      family = opFamily;
      last = &op;
      multiplies |= isMultiply(role);
      continue;
    }
    if (role == Role::wgmmaWait) {
      close();
      spans.push_back({&op, &op, "mma.wait"});
      continue;
    }
    // Pure values (the multiplies' extractvalues) stay inside a run; any
    // other effect ends it.
    if (!isMemoryEffectFree(&op))
      close();
  }
  close();
}

/// The names this pass gives its scopes: `mma` and anything under `mma.`.
bool isReserved(StringRef name) {
  return name == "mma" || name.starts_with("mma.");
}

struct MmaScopesPass
    : public ::mlir::proton::impl::ProtonMmaScopesBase<MmaScopesPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](RecordOp record) {
      if (isReserved(record.getName())) {
        record.emitError("the name '")
            << record.getName()
            << "' is reserved in MMA mode for the scopes it adds (mma, "
               "mma.*): rename this scope";
        failed = true;
      }
    });
    if (failed)
      return signalPassFailure();
    SmallVector<Span> spans;
    getOperation()->walk([&](Block *block) { collectSpans(*block, spans); });
    for (const Span &span : spans) {
      OpBuilder b(span.first);
      StringAttr name = b.getStringAttr(span.name);
      RecordOp::create(b, span.first->getLoc(),
                       RecordKindAttr::get(&getContext(), RecordKind::start),
                       name);
      b.setInsertionPointAfter(span.last);
      RecordOp::create(b, span.last->getLoc(),
                       RecordKindAttr::get(&getContext(), RecordKind::end),
                       name);
    }
  }
};

} // namespace
