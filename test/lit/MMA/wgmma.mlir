// RUN: proton-opt %s -split-input-file --proton-mma-scopes | FileCheck %s

// Hopper, as Triton 3.6 writes a K-loop body: the fence and commit are
// intrinsic calls (hidden by the bridge), the multiplies inline assembly with
// extractvalues between them, the wait inline assembly after a comment.
// One mma.issue scope from before the fence to after the commit, one
// mma.wait scope around the wait; the loads before and the store after stay
// outside.
// CHECK-LABEL: llvm.func ptx_kernelcc @k_loop
// CHECK:         llvm.load
// CHECK-NEXT:    proton.record start "mma.issue"
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    llvm.extractvalue
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    llvm.extractvalue
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:    proton.record end "mma.issue"
// CHECK-NEXT:    proton.record start "mma.wait"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "// wait for regs: $0\0A\09wgmma.wait_group.sync.aligned 0;"
// CHECK-NEXT:    proton.record end "mma.wait"
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    llvm.br
// CHECK-NOT:     proton.record
llvm.func @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
llvm.func @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
llvm.func ptx_kernelcc @k_loop(%arg0: !llvm.ptr<1>, %arg1: i64, %arg2: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.br ^loop
^loop:
  %a = llvm.load %arg0 : !llvm.ptr<1> -> f32
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned() : () -> ()
  %0 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0,$1}, $2, $3, 1, 1, 0, 1;", "=f,=f,l,l,0,1" %arg1, %arg1, %a, %a : (i64, i64, f32, f32) -> !llvm.struct<(f32, f32)>
  %1 = llvm.extractvalue %0[0] : !llvm.struct<(f32, f32)>
  %2 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {$0,$1}, $2, $3, 1, 1, 0, 1;", "=f,=f,l,l,0,1" %arg1, %arg1, %1, %a : (i64, i64, f32, f32) -> !llvm.struct<(f32, f32)>
  %3 = llvm.extractvalue %2[0] : !llvm.struct<(f32, f32)>
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned() : () -> ()
  %4 = llvm.inline_asm has_side_effects "// wait for regs: $0\0A\09wgmma.wait_group.sync.aligned 0;", "=f,0" %3 : (f32) -> f32
  llvm.store %4, %arg0 : f32, !llvm.ptr<1>
  llvm.br ^loop
}

// -----

// A fence or commit without a multiply is no scope; a wait is one on its
// own. Multiplies split by a load are two runs.
// CHECK-LABEL: llvm.func ptx_kernelcc @split
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    proton.record start "mma.issue"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    proton.record end "mma.issue"
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    proton.record start "mma.issue"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:    proton.record end "mma.issue"
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:    proton.record start "mma.wait"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;"
// CHECK-NEXT:    proton.record end "mma.wait"
// CHECK-NEXT:    llvm.return
llvm.func @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
llvm.func @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
llvm.func ptx_kernelcc @split(%arg0: !llvm.ptr<1>, %arg1: i64) {
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned() : () -> ()
  %a = llvm.load %arg0 : !llvm.ptr<1> -> f32
  %0 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, $1, $2, 1, 1, 0, 1;", "=f,l,l,0" %arg1, %arg1, %a : (i64, i64, f32) -> f32
  %b = llvm.load %arg0 : !llvm.ptr<1> -> f32
  %1 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, $1, $2, 1, 1, 0, 1;", "=f,l,l,0" %arg1, %arg1, %b : (i64, i64, f32) -> f32
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned() : () -> ()
  %c = llvm.load %arg0 : !llvm.ptr<1> -> f32
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned() : () -> ()
  llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;", "" : () -> ()
  llvm.return
}

// -----

// The fence, commit and wait as NVVM operations and unhidden intrinsic
// calls.
// CHECK-LABEL: llvm.func ptx_kernelcc @nvvm_ops
// CHECK-NEXT:    proton.record start "mma.issue"
// CHECK-NEXT:    nvvm.wgmma.fence.aligned
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    llvm.call_intrinsic "llvm.nvvm.wgmma.commit_group.sync.aligned"()
// CHECK-NEXT:    proton.record end "mma.issue"
// CHECK-NEXT:    proton.record start "mma.wait"
// CHECK-NEXT:    nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NEXT:    proton.record end "mma.wait"
llvm.func ptx_kernelcc @nvvm_ops(%arg0: i64, %arg1: f32) {
  nvvm.wgmma.fence.aligned
  %0 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, $1, $2, 1, 1, 0, 1;", "=f,l,l,0" %arg0, %arg0, %arg1 : (i64, i64, f32) -> f32
  llvm.call_intrinsic "llvm.nvvm.wgmma.commit_group.sync.aligned"() : () -> ()
  nvvm.wgmma.wait.group.sync.aligned 0
  llvm.return
}
