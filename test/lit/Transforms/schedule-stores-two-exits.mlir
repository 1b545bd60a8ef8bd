// RUN: proton-opt %s --convert-proton-to-protongpu --proton-schedule-stores | FileCheck %s
// A scope closed on two paths keeps its start store in place, so that both
// paths record the start.
// CHECK-LABEL: llvm.func ptx_kernelcc @two_exits
// CHECK:         proton_gpu.circular_store start
// CHECK:         llvm.cond_br
// CHECK:       ^bb1:
// CHECK-NOT:     circular_store start
// CHECK:         proton_gpu.circular_store end
// CHECK:       ^bb2:
// CHECK-NOT:     circular_store start
// CHECK:         proton_gpu.circular_store end
llvm.func ptx_kernelcc @two_exits(%arg0: !llvm.ptr<1>, %c: i1, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record end "a"
  llvm.return
^bb2:
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  proton.record end "a"
  llvm.return
}
