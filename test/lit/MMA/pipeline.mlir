// RUN: proton-opt %s --proton-pipeline="mma-scopes=true arch=sm_90" | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="arch=sm_90" | FileCheck %s --check-prefix=DEFAULT

// The MMA mode through the whole pipeline: the scope table holds the
// user's scope and the MMA scopes nested in it, with the multiplies' source
// lines; a clock read sits before the fence, after the commit and on either
// side of the wait.
// CHECK-LABEL: llvm.func ptx_kernelcc @k
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "iteration", parent = -1, loc = "kernel.py:5:9">, #proton_gpu.scope_entry<id = 1, kind = scope, name = "mma.issue", parent = 0, loc = "kernel.py:7:11">, #proton_gpu.scope_entry<id = 2, kind = scope, name = "mma.wait", parent = 0, loc = "kernel.py:7:11">]
// CHECK-NOT:     proton.record
// CHECK:         %clock64
// CHECK:         "mov.u64 $0, %clock64;"
// CHECK:         "mov.u64 $0, %clock64;"
// CHECK-NOT:     wgmma
// CHECK:         llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
// CHECK-NEXT:    llvm.inline_asm has_side_effects "wgmma.mma_async
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
// CHECK-NEXT:    "mov.u64 $0, %clock64;"
// CHECK:         "mov.u64 $0, %clock64;"
// CHECK-NOT:     wgmma
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT:    "mov.u64 $0, %clock64;"
// Without the mode only the user's scope is recorded.
// DEFAULT:       proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "iteration", parent = -1, loc = "kernel.py:5:9">]
llvm.func @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned()
llvm.func @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned()
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: i64, %arg2: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %s = llvm.inline_asm has_side_effects "// @proton start iteration ;loc=kernel.py:5:9", "=r" : () -> i32
  %a = llvm.load %arg0 : !llvm.ptr<1> -> f32
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.fence.sync.aligned() : () -> () loc("kernel.py":7:11)
  %0 = llvm.inline_asm has_side_effects "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0}, $1, $2, 1, 1, 0, 1;", "=f,l,l,0" %arg1, %arg1, %a : (i64, i64, f32) -> f32 loc("kernel.py":7:11)
  llvm.call @__proton_hidden.llvm.nvvm.wgmma.commit_group.sync.aligned() : () -> () loc("kernel.py":7:11)
  %1 = llvm.inline_asm has_side_effects "// wait for regs: $0\0A\09wgmma.wait_group.sync.aligned 0;", "=f,0" %0 : (f32) -> f32 loc("kernel.py":7:11)
  llvm.store %1, %arg0 : f32, !llvm.ptr<1>
  %e = llvm.inline_asm has_side_effects "// @proton end iteration ;loc=kernel.py:5:9", "=r" : () -> i32
  llvm.return
}
