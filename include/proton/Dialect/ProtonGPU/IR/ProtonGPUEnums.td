#ifndef PROTONGPU_ENUMS_TD
#define PROTONGPU_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def ProtonGPU_BufferType : I32EnumAttr<"BufferType",
    "where records are kept while the kernel runs", [
    I32EnumAttrCase<"shared", 0>,
    I32EnumAttrCase<"global", 1>,
    I32EnumAttrCase<"registers", 2>,
    // An option value only: the pass picks registers or shared per kernel.
    I32EnumAttrCase<"automatic", 3, "auto">
  ]> {
  let cppNamespace = "::mlir::proton::gpu";
}

def ProtonGPU_Granularity : I32EnumAttr<"Granularity",
    "which threads' view of time a segment records", [
    I32EnumAttrCase<"warp", 0>,
    I32EnumAttrCase<"warp_group", 1>,
    I32EnumAttrCase<"cta", 2>
  ]> {
  let cppNamespace = "::mlir::proton::gpu";
}

def ProtonGPU_SamplingStrategy : I32EnumAttr<"SamplingStrategy",
    "which warps record: all of them, or those sampling-options names", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"selective", 1>
  ]> {
  let cppNamespace = "::mlir::proton::gpu";
}

#endif
