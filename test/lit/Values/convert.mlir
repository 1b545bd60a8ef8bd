// RUN: proton-opt %s --convert-proton-to-protongpu | FileCheck %s
// RUN: proton-opt %s --convert-proton-to-protongpu --convert-protongpu-to-llvm | FileCheck %s --check-prefix=LLVM

// A value site gets its own id after the scopes (parent: the scope open
// there; the table adds its type) and writes two records: the time, then
// the value's bits (an f32's bit pattern) as value_end, with a 64-bit
// counter below the time's clock bits 32-63 (the decoder subtracts the
// entry clock's from every record's second word).
// CHECK-LABEL: llvm.func ptx_kernelcc @values
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "loop", parent = -1, loc = "k.py:1:1">, #proton_gpu.scope_entry<id = 1, kind = value, name = "iter", parent = 0, loc = "k.py:2:1", dtype = "i32">, #proton_gpu.scope_entry<id = 2, kind = value, name = "loss", parent = -1, loc = "k.py:3:1", dtype = "f32">]
// CHECK:         proton_gpu.circular_store start %{{.+}}, %{{.+}} scope 0 : i64
// CHECK:         %[[C1:.+]] = proton_gpu.read_counter : i64
// CHECK-NEXT:    proton_gpu.circular_store value %{{.+}}, %[[C1]] scope 1 : i64
// CHECK-NEXT:    %[[HIGH:.+]] = llvm.mlir.constant(-4294967296 : i64) : i64
// CHECK-NEXT:    %[[T1:.+]] = llvm.and %[[C1]], %[[HIGH]] : i64
// CHECK-NEXT:    %[[V1:.+]] = llvm.zext %arg1 : i32 to i64
// CHECK-NEXT:    %[[W1:.+]] = llvm.or %[[T1]], %[[V1]] : i64
// CHECK-NEXT:    proton_gpu.circular_store value_end %{{.+}}, %[[W1]] scope 1 : i64
// CHECK:         proton_gpu.circular_store end %{{.+}}, %{{.+}} scope 0 : i64
// CHECK:         proton_gpu.circular_store value %{{.+}}, %{{.+}} scope 2 : i64
// CHECK-NEXT:    %[[B:.+]] = llvm.bitcast %arg2 : f32 to i32
// CHECK:         %[[V2:.+]] = llvm.zext %[[B]] : i32 to i64
// CHECK-NEXT:    %[[W2:.+]] = llvm.or %{{.+}}, %[[V2]] : i64
// CHECK-NEXT:    proton_gpu.circular_store value_end %{{.+}}, %[[W2]] scope 2 : i64
// The time record has no end bit, the value record has it: tags
// (id | end << 15) << 16.
// LLVM-LABEL: llvm.func ptx_kernelcc @values
// LLVM:         llvm.mlir.constant(65536 : i32) : i32
// LLVM:         llvm.mlir.constant(-2147418112 : i32) : i32
// LLVM:         llvm.mlir.constant(131072 : i32) : i32
// LLVM:         llvm.mlir.constant(-2147352576 : i32) : i32
llvm.func ptx_kernelcc @values(%arg0: !llvm.ptr<1>, %arg1: i32, %arg2: f32, %arg3: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "loop" loc("k.py":1:1)
  proton.record value "iter"(%arg1 : i32) loc("k.py":2:1)
  proton.record end "loop"
  proton.record value "loss"(%arg2 : f32) loc("k.py":3:1)
  llvm.return
}
