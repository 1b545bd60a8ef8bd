// REQUIRES: mlir-translate
// RUN: proton-opt %s --proton-pipeline="arch=sm_90 strip-metadata=true" | mlir-translate --mlir-to-llvmir | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="arch=sm_90" | FileCheck %s --check-prefix=KEPT

// With strip-metadata the output holds only upstream dialects, so stock
// mlir-translate turns it into LLVM IR. The records (outside loops: kept in
// registers by default) read the 64-bit clock around the kernel's load; at
// return the warp's block goes to profile_scratch (%1) with global stores.
// CHECK-LABEL: define ptx_kernel void @k(ptr addrspace(1) %0, ptr addrspace(1) %1)
// CHECK-NOT:   proton
// CHECK:         asm sideeffect "mov.u64 $0, %globaltimer;"
// CHECK:         asm sideeffect "mov.u64 $0, %clock64;"
// CHECK:         load i32, ptr addrspace(1) %0
// CHECK-NEXT:    asm sideeffect "mov.u64 $0, %clock64;"
// CHECK:         store i32 %{{.+}}, ptr addrspace(1) %0
// CHECK:         asm sideeffect "mov.u32 $0, %smid;"
// CHECK:         asm sideeffect "@$5 st.global.v4.b32
// CHECK:         ret void
// CHECK-NOT:   proton
// CHECK:       attributes #0 = { "nvvm.reqntid"="256" }

// Without it, the compiler's metadata stays on the kernel.
// KEPT: llvm.func ptx_kernelcc @k({{.*}}proton.layout = #proton_gpu.layout<{{.*}}proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "load", parent = -1, loc = "kernel.py:5:9">]

llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "256"]]} {
  %0 = llvm.inline_asm has_side_effects "// @proton start load", "=r" : () -> i32 loc("kernel.py":5:9)
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton end load", "=r" : () -> i32
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}
