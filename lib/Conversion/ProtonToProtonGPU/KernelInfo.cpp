#include "proton/Conversion/ProtonToProtonGPU/KernelInfo.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

/// Triton's LLVM IR carries launch bounds as string function attributes,
/// which the LLVM IR importer keeps in `passthrough` as [key, value] pairs.
static std::optional<StringRef> passthroughValue(LLVM::LLVMFuncOp kernel,
                                                 StringRef key) {
  ArrayAttr passthrough = kernel.getPassthroughAttr();
  if (!passthrough)
    return std::nullopt;
  for (Attribute entry : passthrough) {
    auto pair = dyn_cast<ArrayAttr>(entry);
    if (!pair || pair.size() != 2)
      continue;
    auto k = dyn_cast<StringAttr>(pair[0]);
    auto v = dyn_cast<StringAttr>(pair[1]);
    if (k && v && k.getValue() == key)
      return v.getValue();
  }
  return std::nullopt;
}

static unsigned productOfList(StringRef list) {
  unsigned product = 1;
  SmallVector<StringRef> parts;
  list.split(parts, ',');
  for (StringRef part : parts) {
    unsigned n = 0;
    if (part.trim().getAsInteger(10, n))
      return 0;
    product *= n;
  }
  return product;
}

unsigned mlir::proton::getDeclaredThreadsPerCta(LLVM::LLVMFuncOp kernel) {
  for (StringRef key : {"nvvm.reqntid", "nvvm.maxntid"})
    if (auto dims = kernel->getAttrOfType<DenseI32ArrayAttr>(key)) {
      unsigned product = 1;
      for (int32_t d : dims.asArrayRef())
        product *= d;
      return product;
    }
  for (StringRef key : {"nvvm.reqntid", "nvvm.maxntid"})
    if (auto value = passthroughValue(kernel, key))
      return productOfList(*value);
  if (auto value = passthroughValue(kernel, "amdgpu-flat-work-group-size")) {
    // "min,max": the kernel is launched with exactly max threads by Triton.
    auto [lo, hi] = value->split(',');
    unsigned n = 0;
    if (!hi.trim().getAsInteger(10, n))
      return n;
  }
  return 0;
}

BlockArgument mlir::proton::getProfileScratch(LLVM::LLVMFuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumArguments() == 0) {
    kernel.emitError("kernel @")
        << kernel.getName() << " has no profile_scratch parameter";
    return {};
  }
  BlockArgument last = kernel.getArgument(kernel.getNumArguments() - 1);
  auto ptr = dyn_cast<LLVM::LLVMPointerType>(last.getType());
  if (!ptr || ptr.getAddressSpace() != 1) {
    kernel.emitError("kernel @")
        << kernel.getName()
        << ": the last parameter must be Triton's profile_scratch pointer "
           "(!llvm.ptr<1>), got "
        << last.getType();
    return {};
  }
  return last;
}
