#ifndef PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_TD
#define PROTON_CONVERSION_PROTONGPUTOLLVM_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertProtonGPUToLLVM
    : Pass<"convert-protongpu-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower proton_gpu ops to NVPTX or AMDGPU LLVM dialect code";
  let description = [{
    Writes the buffer format of docs/buffer-format.md. NVPTX: `%clock` or
    `%clock64` for records, `%globaltimer` and `%smid` for the segment
    header, predicated `st.shared`/`st.global` stores. AMDGPU: `s_memtime`
    for records, `s_memrealtime` and the HW_ID/XCC_ID registers for the
    header, stores under a branch. With a shared or global buffer lane 0 of
    each recording warp stores the records; at return a shared buffer's
    block is copied out by all lanes, 16 bytes each, and a registers
    buffer's lanes write the chunks they hold. The record index lives in
    registers (promoted from a stack slot). Writing through
    `profile_scratch` drops Triton's `readnone`/`nocapture` on it.
  }];
  let options = [
    Option<"target", "target", "std::string", "\"nvptx\"",
           "nvptx or amdgpu">,
    Option<"arch", "arch", "std::string", "\"\"",
           "sm_90, sm_80, ... for nvptx; gfx942 or gfx950 for amdgpu">,
    Option<"kernelId", "kernel-id", "unsigned", "0",
           "written into word 1 of every segment header so that the host "
           "can match a buffer to the kernel (and metadata) that wrote it">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

#endif
