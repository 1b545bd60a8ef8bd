// RUN: proton-opt %s -split-input-file --proton-schedule-stores | FileCheck %s

// The start's counter read stays in place; its store moves to just before
// the end's store, after the end's read, so nothing of the profiler's runs
// inside the measured window.
// CHECK-LABEL: llvm.func @single
// CHECK-NEXT:    %[[SEG:.+]] = proton_gpu.init_segment
// CHECK-NEXT:    %[[R0:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    %[[V:.+]] = llvm.load %arg0
// CHECK-NEXT:    %[[R1:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[R0]] scope 0 : i64
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[R1]] scope 0 : i64
// CHECK-NEXT:    llvm.store %[[V]], %arg0
// CHECK-NEXT:    proton_gpu.finalize
llvm.func @single(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 1024, shared_offset 0>
  %a = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %a scope 0 : i64
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %b = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %b scope 0 : i64
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// Nested scopes: the inner window holds no store; the outer window holds
// the inner scope's two stores only.
// CHECK-LABEL: llvm.func @nested
// CHECK-NEXT:    %[[SEG:.+]] = proton_gpu.init_segment
// CHECK-NEXT:    %[[OA:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    %[[IA:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    %[[IB:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[IA]] scope 1 : i32
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[IB]] scope 1 : i32
// CHECK-NEXT:    %[[OB:.+]] = proton_gpu.read_counter : i32
// CHECK-NEXT:    proton_gpu.circular_store start %[[SEG]], %[[OA]] scope 0 : i32
// CHECK-NEXT:    proton_gpu.circular_store end %[[SEG]], %[[OB]] scope 0 : i32
// CHECK-NEXT:    proton_gpu.finalize
llvm.func @nested(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg1 <global, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 1024, shared_offset 0>
  %oa = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %oa scope 0 : i32
  %ia = proton_gpu.read_counter : i32
  proton_gpu.circular_store start %s, %ia scope 1 : i32
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %ib = proton_gpu.read_counter : i32
  proton_gpu.circular_store end %s, %ib scope 1 : i32
  %ob = proton_gpu.read_counter : i32
  proton_gpu.circular_store end %s, %ob scope 0 : i32
  proton_gpu.finalize %s, %arg1
  llvm.return
}

// -----

// A scope spanning blocks: the start's store moves into the block of the
// end, where the start's read, from a dominating block, is available. A
// scope inside the loop body stays inside it.
// CHECK-LABEL: llvm.func @blocks
// CHECK:         %[[OUTER:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    %[[BODY:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    %[[BODYEND:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store start %{{.+}}, %[[BODY]] scope 1 : i64
// CHECK-NEXT:    proton_gpu.circular_store end %{{.+}}, %[[BODYEND]] scope 1 : i64
// CHECK-NEXT:    llvm.cond_br %arg2, ^bb1, ^bb2
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    %[[OUTEREND:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store start %{{.+}}, %[[OUTER]] scope 0 : i64
// CHECK-NEXT:    proton_gpu.circular_store end %{{.+}}, %[[OUTEREND]] scope 0 : i64
llvm.func @blocks(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>, %c: i1) {
  %s = proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 1024, shared_offset 0>
  %o = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %o scope 0 : i64
  llvm.br ^bb1
^bb1:
  %b = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %b scope 1 : i64
  %be = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %be scope 1 : i64
  llvm.cond_br %c, ^bb1, ^bb2
^bb2:
  %oe = proton_gpu.read_counter : i64
  proton_gpu.circular_store end %s, %oe scope 0 : i64
  proton_gpu.finalize %s, %arg1
  llvm.return
}
