// RUN: proton-opt %s -split-input-file --proton-mma-scopes | FileCheck %s
// RUN: proton-opt %s -split-input-file --proton-pipeline="mma-scopes=true" | FileCheck %s --check-prefix=PIPE

// No MMA instruction: nothing changes, and the pipeline leaves the kernel
// uninstrumented (no layout, no scope table), as Default mode does without
// markers. MMA mnemonics in PTX comments do not count.
// CHECK-LABEL: llvm.func ptx_kernelcc @plain
// CHECK-NOT:     proton.record
// CHECK:         llvm.return
// PIPE-LABEL:  llvm.func ptx_kernelcc @plain
// PIPE-NOT:      proton
// PIPE:          llvm.return
llvm.func ptx_kernelcc @plain(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %w = llvm.inline_asm has_side_effects "add.s32 $0, $1, 1; // not an mma.sync here: wgmma_like", "=r,r" %v : (i32) -> i32
  llvm.store %w, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}

// -----

// A user scope named like, but not under, the reserved names is fine.
// CHECK-LABEL: llvm.func ptx_kernelcc @user_named_mmax
// CHECK-NEXT:    proton.record start "mmax"
llvm.func ptx_kernelcc @user_named_mmax(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "mmax"
  proton.record end "mmax"
  llvm.return
}
