// RUN: proton-opt %s --proton-add-sched-barriers | FileCheck %s

// Every counter read is fenced by scheduling barriers with mask 0; the
// stores and the rest of the kernel get none.
// CHECK-LABEL: llvm.func amdgpu_kernelcc @k
// CHECK-NEXT:    %[[SEG:.+]] = proton_gpu.init_segment
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    %[[A:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[A]] scope 0 : i64
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    %[[B:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[B]] scope 0 : i64
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    proton_gpu.read_counter : i32
// CHECK-NEXT:    rocdl.sched.barrier 0
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    proton_gpu.finalize
// CHECK-NEXT:    llvm.return
llvm.func amdgpu_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 1024, shared_offset 0>
  %a = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %a scope 0 : i64
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %b = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %b scope 0 : i64
  llvm.br ^bb1
^bb1:
  %c = proton_gpu.read_counter : i32
  llvm.store %c, %arg0 : i32, !llvm.ptr<1>
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// A function without counter reads is unchanged.
// CHECK-LABEL: llvm.func @plain
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.return
llvm.func @plain(%arg0: !llvm.ptr<1>) {
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  llvm.return
}
